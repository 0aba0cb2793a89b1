"""Accuracy of K groups of adjacent absmax rank on the GPU, before any kernel formed them (issue 13,
round 48; the kernels form them since round 49: SA_H_RANK_GROUPS, kernels/src/sa_internal.h).

A library built with SA_H_KGROUP=1 (a build switch of round 48's source, d1d9d37; since removed)
gives each lane quad of a 64-key tile one K scale: keys
j % 8 in {2 tq, 2 tq + 1} of the tile share it. Without a causal mask attention does not depend
on the order of the keys, so calling that library with K and V permuted (the same permutation)
changes only which keys share a scale. This script permutes them so that each group holds keys
of adjacent absmax rank within windows of --window keys (the C reference's k_lane_groups 2,
kernels/ref/sa_ref.c) and compares, against fp64 attention of the unpermuted inputs:
  per-token    --lib-token (the landed library), inputs as they are
  lane groups  --lib-kg, inputs as they are (what SA_H_KGROUP measured: faster, less accurate)
  rank groups  --lib-kg, K and V permuted
The ranks come from K less its mean over all keys (the kernels' smoothing samples every fourth
key; any subtracted vector leaves softmax as it was, only the rounding moves).

python3 bench/rank_groups_check.py --lib-token A.so --lib-kg B.so [--window 1024] [--seeds 4]
    [--out results.json]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import make_inputs, metrics, reference  # noqa: E402
from sageattn_ctypes import SageAttn  # noqa: E402

MODE = "int8-fp8-wgmma"
TILE, GROUP = 64, 16
# name, (B, Hq, Hkv, Lq, Lkv, D), kind: the self-test's Q x10 shapes, random ones, a long one,
# inputs near fp16's limits and V with channel offsets
CASES = [
    ("q_x10_d128", (1, 4, 4, 1024, 1024, 128), "q_x10"),
    ("q_x10_d64", (1, 4, 4, 1024, 1024, 64), "q_x10"),
    ("q_x10_4k_d128", (1, 2, 2, 512, 4096, 128), "q_x10"),
    ("random_4k_d128", (1, 4, 4, 4096, 4096, 128), "random"),
    ("random_4k_d64", (1, 4, 4, 4096, 4096, 64), "random"),
    ("k_offset_d128", (1, 4, 4, 1024, 1024, 128), "k_offset"),
    ("long_16k_d128", (1, 2, 2, 1024, 16384, 128), "random"),
    ("near_limits_d128", (1, 2, 2, 1024, 1024, 128), "near_limits"),
    ("v_offset_4k_d128", (1, 4, 4, 4096, 4096, 128), "v_offset"),
]


def position_in_tile(r):
    """Where the key of rank r (0..63 within its tile) goes: group r // 16 is the lane quad
    whose keys are j % 8 in {2 g, 2 g + 1}, its i-th key the i-th of those positions."""
    g, i = r // GROUP, r % GROUP
    return (i // 2) * 8 + g * 2 + (i % 2)


def rank_permutation(k, window):
    """perm[b, h, pos] = the key placed at position pos (K in HND, [B, H, L, D])."""
    b, h, lk, _ = k.shape
    if lk % TILE or window % TILE:
        sys.exit("rank_groups_check.py: key count and window must be multiples of 64")
    kf = k.float()
    amax = (kf - kf.mean(dim=2, keepdim=True)).abs().amax(dim=3)  # [B, H, L]
    place = torch.tensor([position_in_tile(r) for r in range(TILE)], device=k.device)
    perm = torch.empty(b, h, lk, dtype=torch.long, device=k.device)
    for w0 in range(0, lk, window):
        n = min(window, lk - w0)
        order = torch.sort(amax[:, :, w0:w0 + n], dim=2, descending=True, stable=True).indices
        ranks = torch.arange(n, device=k.device)
        pos = w0 + (ranks // TILE) * TILE + place[ranks % TILE]
        perm[:, :, pos] = order + w0
    return perm


def gather_keys(t, perm):
    return torch.gather(t, 2, perm[..., None].expand(-1, -1, -1, t.shape[3])).contiguous()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib-token", required=True, help="libsageattn.so with per-token K scales")
    ap.add_argument("--lib-kg", required=True, help="libsageattn.so built with SA_H_KGROUP=1")
    ap.add_argument("--window", type=int, default=1024, help="keys ranked together")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--out", help="JSON file of every figure")
    args = ap.parse_args()
    token, kg = SageAttn(args.lib_token), SageAttn(args.lib_kg)
    rows = []
    print("%-16s %4s | %-19s | %-19s | %-19s" % ("case", "seed", "per-token cos/rel",
                                                 "lane groups", "rank groups"))
    for name, shape, kind in CASES:
        for seed in range(args.seeds):
            q, k, v = make_inputs(shape, "HND", torch.float16, kind, seed=5000 + seed)
            ref_o, _ = reference(q, k, v, "HND", False)
            perm = rank_permutation(k, args.window)
            kp, vp = gather_keys(k, perm), gather_keys(v, perm)
            out = {}
            for label, sa, kk, vv in (("token", token, k, v), ("lane", kg, k, v),
                                      ("rank", kg, kp, vp)):
                o, _ = sa.attn(q, kk, vv, "HND", False, MODE, want_lse=False)
                torch.cuda.synchronize()
                out[label] = metrics(o, ref_o)
            rows.append({"case": name, "shape": list(shape), "kind": kind, "seed": seed,
                         "window": args.window, **out})
            print("%-16s %4d | %.6f / %.4f | %.6f / %.4f | %.6f / %.4f" % (
                name, seed, out["token"]["cos"], out["token"]["rel_l1"], out["lane"]["cos"],
                out["lane"]["rel_l1"], out["rank"]["cos"], out["rank"]["rel_l1"]))
            del q, k, v, kp, vp, ref_o
            torch.cuda.empty_cache()
    print("worst over seeds (cos min / rel-L1 max):")
    for name, _, _ in CASES:
        rs = [r for r in rows if r["case"] == name]
        print("%-16s " % name + " | ".join(
            "%s %.6f / %.4f" % (lab, min(r[lab]["cos"] for r in rs),
                                max(r[lab]["rel_l1"] for r in rs))
            for lab in ("token", "lane", "rank")))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"mode": MODE, "device": torch.cuda.get_device_name(), "rows": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
