"""Does a call's time depend on what the inputs hold? One shape, two input distributions, the
same timing protocol as bench.py and prepass_same.py (events around one call, synchronized,
median of 20), then each kernel's GPU time (torch.profiler, 5 calls).

python3 bench/input_sensitivity.py --lib LIB [--dim 64] [--len 1024] [--batch 16] [--mode M]

Inputs: "bench" (bench.py's random: q, k, v standard normal) and "offset" (prepass_same.py's:
q x 2, K with per-channel offsets x 8, V with per-channel magnitudes exp(2 N(0,1))). Round 39's
D=64 L=1K calls were 591 us in bench.py and 481-507 us in prepass_same.py's timing on the same
library; the profiler's kernels summed to ~490 us.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import time_fn  # noqa: E402  (bench.py's protocol: median of 20 synchronized calls)
from sageattn_ctypes import SageAttn  # noqa: E402


def inputs(kind, b, h, L, d, seed=7):
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(b, h, L, d, generator=g, device="cuda")
    k = torch.randn(b, h, L, d, generator=g, device="cuda")
    v = torch.randn(b, h, L, d, generator=g, device="cuda")
    if kind == "offset":
        q = q * 2.0
        k = k + 8.0 * torch.randn(1, h, 1, d, generator=g, device="cuda")
        v = v * torch.exp(2.0 * torch.randn(1, h, 1, d, generator=g, device="cuda"))
    return (t.half() for t in (q, k, v))


def kernels_us(fn):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
    out = []
    for ev in prof.key_averages():
        t = getattr(ev, "device_time_total", None) or getattr(ev, "cuda_time_total", 0)
        if t:
            out.append((t / 5.0, ev.key[:60]))
    return sorted(out, reverse=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--len", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--mode", default="int8-fp8-wgmma")
    a = ap.parse_args()
    sa = SageAttn(a.lib)
    ops = 4.0 * a.batch * 32 * a.len * a.len * a.dim
    for kind in ("bench", "offset", "bench"):
        q, k, v = inputs(kind, a.batch, 32, a.len, a.dim)
        o = torch.empty_like(q)
        p = sa.params(q, k, v, o, "HND", False, a.mode)

        def fn(p=p):
            sa.run(p)
        us = time_fn(fn) * 1000.0
        ks = kernels_us(fn)
        print("%-6s D=%d L=%d B=%d H=32 %s: call %.1f us (%.1f TOPS); kernels %.1f us: %s" % (
            kind, a.dim, a.len, a.batch, a.mode, us, ops / us / 1e6, sum(t for t, _ in ks),
            "; ".join("%s %.1f" % (n, t) for t, n in ks)))
        del q, k, v, o


if __name__ == "__main__":
    main()
