"""Times one mode of one libsageattn build at the bench's key shape (B=1, H=32, L=16384, D=128,
non-causal, fp16; --shapes for others), for bench/device_fullrate.sh --overlap and
bench/device_overlap9.sh: builds that add N extra FP32
instructions per key tile (SA_TEST_EXTRA_ALU / SA_TEST_EXTRA_ALU_PV, sa_internal.h) against
the plain build show how much non-tensor issue work costs next to the tensor work, the one
structural assumption of bench/model_throughput.py (no overlap: round = T + max(I, M)).

    python3 bench/overlap_probe.py --lib build/lib/libsageattn.so [--mode int8-fp16] [--label X]
        [--shapes 128x16384,64x4096]   (DxL, B=1 H=32)

Prints one JSON line per shape: label, mode, d, L, ms, tops and a checksum of the output (the
extra instructions, or a schedule change such as SA_PIPE_QK, must not change a single output
bit, so every build's checksum must be the plain build's).
One library per process: two builds of the same soname are not loaded side by side.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sageattn_ctypes import SageAttn  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--mode", default="int8-fp16")
    ap.add_argument("--label", default="")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--shapes", default="128x16384", help="comma-separated DxL (B=1, H=32)")
    a = ap.parse_args(argv)
    sa = SageAttn(a.lib)
    for shape in a.shapes.split(","):
        d, L = (int(x) for x in shape.split("x"))
        print(json.dumps(time_one(sa, a, 1, 32, L, d)), flush=True)
    return 0


def time_one(sa, a, b, h, L, d):
    g = torch.Generator(device="cuda").manual_seed(L + d)
    q, k, v = (torch.randn(b, h, L, d, generator=g, device="cuda", dtype=torch.float32)
               .to(torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    p = sa.params(q, k, v, o, "HND", False, a.mode)
    for _ in range(5):
        sa.run(p)
    torch.cuda.synchronize()
    times = []
    for _ in range(a.reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        sa.run(p)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    ms = times[len(times) // 2]
    return {"label": a.label, "mode": a.mode, "d": d, "L": L, "ms": ms,
            "tops": 4.0 * b * h * L * L * d / ms / 1e9,
            "checksum": float(o.double().sum().item()), "finite": bool(torch.isfinite(o).all())}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
