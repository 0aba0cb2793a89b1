"""Where one call's GPU time goes, kernel by kernel, from the GPU's own timestamps.

python3 bench/call_timeline.py --lib PATH [--mode int8-fp8-wgmma] [--shapes D:L:B[:causal],...]
    [--calls 8] [--out timeline.json]

torch.profiler's per-kernel durations (bench.py --profile) count a programmatic dependent
kernel's wait for its predecessor as its own time, so they neither add up to the call nor show
the idle time between kernels. This reads the kernels' start and end times from the profiler's
trace instead and prints, per shape (median over --calls calls): the call's span from its first
kernel's start to its last kernel's end, the time some kernel of the call is running, each kernel's
start and end relative to the call's first start, and the same call timed by CUDA events as
bench.py times it (event before, call, event after, synchronize): that figure minus the span is
what the host adds (launching the first kernel after an idle GPU).
"""
import argparse
import json
import os
import sys
import tempfile

# torch and the library binding are imported where a GPU run needs them, so that the trace
# arithmetic below loads (and is tested: tests/python/test_call_timeline.py) without torch.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def kernel_events(trace_path):
    """[(start_us, end_us, name)] of the trace's GPU kernels, in start order."""
    with open(trace_path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    out = []
    for ev in events:
        if ev.get("ph") == "X" and ev.get("cat") == "kernel":
            out.append((float(ev["ts"]), float(ev["ts"]) + float(ev["dur"]), ev["name"]))
    return sorted(out)


def split_calls(kernels, calls):
    """The kernels in groups of one call each: every call launches the same kernels, so the
    count divides; raises if it does not."""
    if not kernels or len(kernels) % calls:
        raise SystemExit("call_timeline.py: %d kernels for %d calls" % (len(kernels), calls))
    per = len(kernels) // calls
    return [kernels[i * per:(i + 1) * per] for i in range(calls)]


def busy_time(group):
    """Microseconds during which at least one of the group's kernels runs."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e, _ in group:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0.0)


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def short_name(name):
    return name.split("<")[0].split("(")[0].replace("void ", "")[:40]


def profiled_calls(fn, calls, idle_between):
    """fn() called `calls` times under torch.profiler: the kernels of each call from the trace,
    a list per call. idle_between: synchronize after each call (each after an idle GPU, as
    bench.py times it), else once after all."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
            if idle_between:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        return split_calls(kernel_events(path), calls)


def one_shape(sa, mode, d, L, b, causal, calls):
    import torch

    from bench import make_inputs, time_fn
    q, k, v = make_inputs((b, 32, 32, L, L, d), "HND", torch.float16, "random", seed=7)
    o = torch.empty_like(q)
    p = sa.params(q, k, v, o, "HND", causal, mode)
    event_ms = time_fn(lambda: sa.run(p))
    groups = profiled_calls(lambda: sa.run(p), calls, idle_between=True)
    names = [short_name(n) for _, _, n in groups[0]]
    rows = []
    for i, name in enumerate(names):
        rows.append({
            "kernel": name,
            "start_us": median([g[i][0] - g[0][0] for g in groups]),
            "end_us": median([g[i][1] - g[0][0] for g in groups]),
            "dur_us": median([g[i][1] - g[i][0] for g in groups]),
        })
    span = median([max(e for _, e, _ in g) - g[0][0] for g in groups])
    busy = median([busy_time(g) for g in groups])
    ops = 4.0 * b * 32 * L * L * d / (2 if causal else 1)
    return {"d": d, "l": L, "b": b, "causal": causal, "mode": mode, "calls": calls,
            "event_ms": event_ms, "span_us": span, "busy_us": busy,
            "tops_event": ops / (event_ms * 1e-3) / 1e12, "tops_span": ops / (span * 1e-6) / 1e12,
            "kernels": rows}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--mode", default="int8-fp8-wgmma")
    ap.add_argument("--shapes", default="128:4096:4,128:4096:4:causal,64:4096:4,64:4096:4:causal,"
                    "128:16384:1,64:16384:1")
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--out")
    args = ap.parse_args()
    import torch

    from sageattn_ctypes import SageAttn
    sa = SageAttn(args.lib)
    res = {"gpu": torch.cuda.get_device_name(0), "lib": args.lib, "shapes": []}
    for shape in args.shapes.split(","):
        f = shape.split(":")
        if len(f) not in (3, 4) or (len(f) == 4 and f[3] != "causal"):
            sys.exit("call_timeline.py: --shapes wants D:L:B[:causal], got %r" % shape)
        r = one_shape(sa, args.mode, int(f[0]), int(f[1]), int(f[2]), len(f) == 4, args.calls)
        res["shapes"].append(r)
        print("D=%d L=%d B=%d%s: event %.1f us (%.1f TOPS), kernels' span %.1f us (%.1f TOPS), "
              "busy %.1f us" % (r["d"], r["l"], r["b"], " causal" if r["causal"] else "",
                                r["event_ms"] * 1e3, r["tops_event"], r["span_us"],
                                r["tops_span"], r["busy_us"]))
        for k in r["kernels"]:
            print("    %-40s %8.1f .. %8.1f us (%6.1f)" % (k["kernel"], k["start_us"], k["end_us"],
                                                           k["dur_us"]))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
