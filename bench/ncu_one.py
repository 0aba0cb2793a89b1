"""One call of each mode at D=128, L=16384, B=1, H=32 (for ncu: profile the last launch).

python3 bench/ncu_one.py --lib PATH [--modes int8-fp16,fp16] [--len L] [--batch B] [--dim D]
                         [--causal]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sageattn_ctypes import SageAttn  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--modes", default="int8-fp16,fp16")
ap.add_argument("--len", type=int, default=16384)
ap.add_argument("--batch", type=int, default=1)
ap.add_argument("--dim", type=int, default=128)
ap.add_argument("--causal", action="store_true")
args = ap.parse_args()
sa = SageAttn(args.lib)
q, k, v = (torch.randn(args.batch, 32, args.len, args.dim, device="cuda", dtype=torch.float16)
           for _ in range(3))
for mode in args.modes.split(","):
    o, _ = sa.attn(q, k, v, "HND", args.causal, mode)
torch.cuda.synchronize()
print("done", flush=True)
