"""Whether the Hopper attention kernel's time follows whole waves of its row blocks.

python3 bench/wave_probe.py --lib PATH [--shapes D:L:B:H,...] [--calls 10] [--reps 20]
    [--rows128 192] [--rows64 256] [--out probe.json]

The warp-specialized kernel runs one row block per SM (rows 192 at D=128, 256 at D=64: its
consumers times 64), a block per (row block, head, batch), all blocks of a call about equally
long without a mask. If the last, partly filled wave costs a whole one, the kernel's time over
ceil(blocks / SMs) is the same for every shape of one (D, L), and a head count that fills the
last wave does more work in the same time; if not, its time over blocks / SMs is. Per shape
(fp16, HND, no mask, one mode): the attention kernel's own time from the profiler's trace (its
end less the end of the kernel before it, when its inputs are complete: it is launched early and
waits), and the whole call timed by CUDA events in turn with the other shapes. The spread of each
normalised series over a (D, L) group says which model the kernel follows.
"""
import argparse
import json
import math
import os
import sys

# torch and the library binding are imported where a GPU run needs them, so that the arithmetic
# below loads (and is tested: tests/python/test_wave_probe.py) without torch.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DEFAULT_SHAPES = ("128:4096:4:30,128:4096:4:31,128:4096:4:32,128:4096:4:33,"
                  "128:4032:4:32,128:4032:4:33,"
                  "64:4096:4:30,64:4096:4:31,64:4096:4:32,64:4096:4:33,"
                  "128:16384:1:30,128:16384:1:32,128:16384:1:33,"
                  "64:16384:1:32,64:16384:1:33")


def parse_shape(text):
    """(d, L, b, h) from 'D:L:B:H'; raises ValueError with the reason."""
    f = text.split(":")
    if len(f) != 4:
        raise ValueError("a shape is D:L:B:H, got %r" % text)
    d, L, b, h = (int(x) for x in f)
    if d not in (64, 128) or L < 1 or b < 1 or h < 1:
        raise ValueError("D is 64 or 128 and L, B, H positive, got %r" % text)
    return d, L, b, h


def row_blocks(L, b, h, rows):
    """The kernel's blocks for Lq = L: its 64-row chunks in blocks of rows / 64 (the partial
    block of a head counts whole), per head and batch."""
    chunks = (L + 63) // 64
    per = rows // 64
    return (chunks + per - 1) // per * b * h


def waves(blocks, sms):
    """(fractional waves, whole waves) of blocks at one block per SM."""
    w = blocks / sms
    return w, math.ceil(w - 1e-9)


def spread(xs):
    """max / min - 1 of positive values (0 for fewer than two)."""
    xs = [x for x in xs if x > 0]
    if len(xs) < 2:
        return 0.0
    return max(xs) / min(xs) - 1.0


def fit(rows):
    """Per (d, L) group of result rows (each with d, l, attn_us, waves, whole_waves): the spread of
    attn_us / whole_waves and of attn_us / waves. The smaller says which model the times follow."""
    groups = {}
    for r in rows:
        groups.setdefault((r["d"], r["l"]), []).append(r)
    out = []
    for (d, L), rs in sorted(groups.items()):
        out.append({"d": d, "l": L, "shapes": len(rs),
                    "spread_per_whole_wave": spread([r["attn_us"] / r["whole_waves"] for r in rs]),
                    "spread_per_wave": spread([r["attn_us"] / r["waves"] for r in rs])})
    return out


def attn_span(group):
    """The last kernel's end less the end of the one before it (or its own start when alone), us."""
    if len(group) == 1:
        return group[0][1] - group[0][0]
    return group[-1][1] - group[-2][1]


def measure(sa, mode, shapes, calls, reps, rows_of, log):
    import torch

    from bench import make_inputs, time_interleaved
    from call_timeline import median, profiled_calls
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    results, fns = [], []
    alive = []  # each shape's tensors and parameters, until the calls in turn have run
    for d, L, b, h in shapes:
        q, k, v = make_inputs((b, h, h, L, L, d), "HND", torch.float16, "random", seed=L + d)
        o = torch.empty_like(q)
        p = sa.params(q, k, v, o, "HND", False, mode)
        fn = (lambda p=p: sa.run(p))
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        groups = profiled_calls(fn, calls, idle_between=False)
        alive.append((q, k, v, o, p))
        blocks = row_blocks(L, b, h, rows_of[d])
        w, whole = waves(blocks, sms)
        attn = median([attn_span(g) for g in groups])
        results.append({"d": d, "l": L, "b": b, "h": h, "blocks": blocks, "sms": sms,
                        "waves": w, "whole_waves": whole, "attn_us": attn,
                        "us_per_whole_wave": attn / whole, "us_per_wave": attn / w,
                        "ops": 4.0 * b * h * L * L * d})
        fns.append(("%d:%d:%d:%d" % (d, L, b, h), fn))
        log("D=%d L=%d B=%d H=%d: %d blocks, %.2f waves (%d whole), attention %.1f us: %.2f us "
            "per whole wave, %.2f per wave" % (d, L, b, h, blocks, w, whole, attn, attn / whole,
                                               attn / w))
    ms = time_interleaved(fns, warmup=3, reps=reps)
    for r, (name, _) in zip(results, fns):
        r["call_ms"] = ms[name]
        r["tops_call"] = r["ops"] / (ms[name] * 1e-3) / 1e12
        r["tops_attn"] = r["ops"] / (r["attn_us"] * 1e-6) / 1e12
        log("  %s: call %.3f ms in turn (%.1f TOPS), attention kernel %.1f TOPS"
            % (name, ms[name], r["tops_call"], r["tops_attn"]))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--mode", default="int8-fp8-wgmma")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rows128", type=int, default=192)
    ap.add_argument("--rows64", type=int, default=256)
    ap.add_argument("--out")
    args = ap.parse_args()
    try:
        shapes = [parse_shape(s) for s in args.shapes.split(",")]
    except ValueError as e:
        sys.exit("wave_probe.py: %s" % e)
    import torch

    from sageattn_ctypes import SageAttn
    sa = SageAttn(args.lib)
    res = {"gpu": torch.cuda.get_device_name(0), "lib": args.lib, "mode": args.mode}
    res["shapes"] = measure(sa, args.mode, shapes, args.calls, args.reps,
                            {128: args.rows128, 64: args.rows64}, lambda s: print(s, flush=True))
    res["fit"] = fit(res["shapes"])
    for f in res["fit"]:
        print("D=%d L=%d (%d shapes): spread of time per whole wave %.1f %%, per wave %.1f %%"
              % (f["d"], f["l"], f["shapes"], 100 * f["spread_per_whole_wave"],
                 100 * f["spread_per_wave"]))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
