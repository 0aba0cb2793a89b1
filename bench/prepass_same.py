"""Are two builds of libsageattn bit-identical in what the int8 modes compute, and how fast is each?

python3 bench/prepass_same.py --lib-a A/libsageattn.so --lib-b B/libsageattn.so [--quick]
                              [--json OUT.json] [--skip-timing] [--compare-smoothed]
                              [--modes M1,M2]

Made to check a change of the pre-pass (kernels/src/attn/quant.cu) that must keep every bit: both
libraries run the same inputs in one process (each through its own handle), and per call this
compares O, the LSE, the non-finite flag (ABI 1.2) and the whole workspace the call left behind
(zeroed before each call, so the bytes no kernel writes compare equal): K mean, V scales, int8
Q/K and their scales, the E4M3 Vᵀ and the LSE's q·k̄ term, in the order each mode stores them.
Every int8 mode the GPU runs, over fp16/bf16, D 17/40/64/96/100/128 (17 and 100 in padded
storage: a channel chunk cut by d), HND/NHD, GQA, lengths 1..4113 (Lq = Lkv and not), causal or
not, with and without the LSE.
Exit 1 when any finite case differs (non-finite inputs are reported apart). int8-fp8-wgmma where
it smooths V (sa_smooth_v) is not compared unless --compare-smoothed (for two builds that both
smooth V): the reference pre-pass of the rewrite (quant.cu before it, bench/prepare_prepass.sh)
predates V smoothing.

Timing (unless --skip-timing): the whole call, median of 20 after warm-up, A and B interleaved,
at D=128 L=1024 B=16 H=32 (fp16 and bf16), D=64 L=1024 B=16 H=32, D=128 L=2048 B=8 H=32 and
D=128 L=16384 B=1 H=32 (fp16 unless said, HND, not causal); the attention kernel is the same
source in both, so the difference is the pre-pass (cases where int8-fp8-wgmma smooths V are
marked). --modes limits both parts to the modes listed.
"""
import argparse
import ctypes
import json
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import time_interleaved  # noqa: E402  (A and B one call each in turn, median of 20)
from sageattn_ctypes import SageAttn  # noqa: E402

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
# (Lq, Lkv): equal lengths around the tiles (64 keys, 128 queries, 256-row statistics chunks)
# and unequal ones (decode-like Lq=1, Lq < Lkv with several statistics chunks); 257, 1793 and
# 2048 keys: two, seven and eight chunks (the fused pre-pass's clusters, up to its largest).
LENGTHS = [(1, 1), (77, 77), (257, 257), (1000, 1000), (1024, 1024), (2048, 2048), (4113, 4113),
           (1, 1000), (100, 1793), (300, 4113)]
QUICK_LENGTHS = [(77, 77), (1024, 1024), (100, 1793), (2048, 2048), (300, 4113)]


def int8_modes(sa):
    return [m for m in sa.modes if m not in ("auto", "fp16")]


def header_define(name, default):
    """An integer #define of kernels/src/sa_internal.h (the source both libraries were built from
    by bench/prepare_prepass.sh), or default."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels", "src",
                        "sa_internal.h")
    try:
        m = re.search(r"^#define %s (\d+)" % name, open(path).read(), re.M)
    except OSError:
        m = None
    return int(m.group(1)) if m else default


def v_smoothed(mode, d, lk):
    """sa_internal.h's sa_smooth_v: int8-fp8-wgmma smooths V where its warp-specialized kernel
    runs. The reference pre-pass (before its rewrite) has no V smoothing, so there the two
    libraries compute different things by design, and the case is reported, not compared."""
    if mode != "int8-fp8-wgmma":
        return False
    ws = header_define("SA_H_WS", 2)
    d_pad = 64 if d <= 64 else 128
    return ws == 1 or (ws == 2 and (d_pad == 128 or lk >= header_define("SA_HW_D64_MIN_KV", 2049)))


def make_qkv(b, hq, hkv, lq, lk, d, layout, dtype, kind, seed):
    """Inputs with per-channel offsets in K (the mean matters) and a spread of magnitudes in V
    (the per-channel scales differ); kind "nonfinite" plants an inf and a NaN in K and V."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(b, hq, lq, d, generator=g, device="cuda") * 2.0
    k = torch.randn(b, hkv, lk, d, generator=g, device="cuda")
    k = k + 8.0 * torch.randn(1, hkv, 1, d, generator=g, device="cuda")
    v = torch.randn(b, hkv, lk, d, generator=g, device="cuda")
    v = v * torch.exp(2.0 * torch.randn(1, hkv, 1, d, generator=g, device="cuda"))
    if kind == "large":  # fp16's range: |x| up to ~60000
        q, k, v = (t / t.abs().amax() * 60000.0 for t in (q, k, v))
    if kind == "nonfinite":
        k[0, 0, lk // 2, 0] = float("inf")
        k[0, -1, lk - 1, d - 1] = float("nan")
        v[0, 0, 0, 1 % d] = float("nan")
        v[-1, -1, lk // 3, d // 2] = float("-inf")
    q, k, v = (t.to(dtype) for t in (q, k, v))
    if layout == "NHD":
        q, k, v = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    if d % 8:
        q, k, v = (padded(t, d) for t in (q, k, v))
    return q, k, v


def padded(t, d):
    """t's first d channels as a view whose rows stay 16-byte aligned (storage padded to 8)."""
    store = torch.zeros(*t.shape[:-1], (d + 7) // 8 * 8, dtype=t.dtype, device=t.device)
    store[..., :d] = t
    return store[..., :d]


def run_one(sa, q, k, v, layout, causal, mode, want_lse):
    """One call with a zeroed workspace and the non-finite flag (ABI 1.2); returns O, the LSE (or
    None), the workspace bytes and the flag."""
    o = torch.full_like(q, float("nan"))
    if q.shape[-1] % 8:
        o = padded(o, q.shape[-1])
    lse = None
    if want_lse:
        hd, ld = (1, 2) if layout == "HND" else (2, 1)
        lse = torch.full((q.shape[0], q.shape[hd], q.shape[ld]), float("nan"), device="cuda",
                         dtype=torch.float32)
    p = sa.params(q, k, v, o, layout, causal, mode, lse)
    ws, n = sa.workspace(p)
    ws.zero_()
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    p12 = sa.params12(p, sa.context(torch.cuda.current_device()), flag.data_ptr())
    st = sa.run_any(ctypes.byref(p12), ctypes.c_void_p(ws.data_ptr()), ws.numel(),
                    ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
    if st != 0:
        raise RuntimeError("sageattn_run: %d %s" % (st, sa.error()))
    return o, lse, ws[:n].clone(), flag


def first_diff(a, b):
    """Where two byte tensors first differ, and how many bytes do."""
    ne = (a != b).nonzero()
    return {"bytes_differing": int(ne.numel()), "first_at": int(ne[0, 0]) if ne.numel() else -1}


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def cases(quick):
    lengths = QUICK_LENGTHS if quick else LENGTHS
    for dtype in DTYPES:
        for d in (17, 40, 64, 96, 100, 128):
            for layout in ("HND", "NHD"):
                for hq, hkv in ((2, 2), (8, 2)):
                    for lq, lk in lengths:
                        yield dtype, d, layout, hq, hkv, lq, lk, "random"
    # fp16 at its range, and non-finite inputs (reported apart)
    for kind in ("large", "nonfinite"):
        for d in (64, 128):
            for layout in ("HND", "NHD"):
                yield "fp16", d, layout, 4, 2, 1000, 1000, kind


def try_run(sa, *args):
    try:
        return run_one(sa, *args), None
    except RuntimeError as e:  # the library refuses the call (a mode this GPU does not run)
        return None, str(e)[:160]


def compare(sa_a, sa_b, quick, log, compare_smoothed=False, only=None):
    modes = [m for m in int8_modes(sa_a) if m in sa_b.modes and (not only or m in only)]
    ran = {m: 0 for m in modes}
    results = []
    n_fail = n_nonfinite_fail = n_run = n_refused = n_smoothed = 0
    for ci, (dt, d, layout, hq, hkv, lq, lk, kind) in enumerate(cases(quick)):
        q, k, v = make_qkv(2, hq, hkv, lq, lk, d, layout, DTYPES[dt], kind, seed=1000 + ci)
        for mode in modes:
            for causal in (False, True):
                for want_lse in (False, True):
                    name = "%s %s D=%d %s Hq=%d Hkv=%d Lq=%d Lkv=%d %s%s %s" % (
                        mode, dt, d, layout, hq, hkv, lq, lk, "causal" if causal else "full",
                        " lse" if want_lse else "", kind)
                    if v_smoothed(mode, d, lk) and not compare_smoothed:
                        n_smoothed += 1
                        continue
                    call = (q, k, v, layout, causal, mode, want_lse)
                    ra, ea = try_run(sa_a, *call)
                    rb, eb = try_run(sa_b, *call)
                    if ea and eb:  # both refuse: the same answer
                        n_refused += 1
                        continue
                    n_run += 1
                    ran[mode] += 1
                    if ea or eb:
                        r = {"case": name, "o": False, "lse": False, "workspace": False,
                             "flag": False, "error_a": ea, "error_b": eb}
                    else:
                        (oa, la, wa, fa), (ob, lb, wb, fb) = ra, rb
                        r = {"case": name, "o": same(oa, ob), "lse": same(la, lb),
                             "workspace": same(wa, wb), "flag": same(fa, fb)}
                        if not r["workspace"] and wa.shape == wb.shape:
                            r["workspace_diff"] = first_diff(wa, wb)
                    if not (r["o"] and r["lse"] and r["workspace"] and r["flag"]):
                        if kind == "nonfinite":
                            n_nonfinite_fail += 1
                        else:
                            n_fail += 1
                        log("DIFF %s: o %s lse %s workspace %s flag %s %s%s" % (
                            name, r["o"], r["lse"], r["workspace"], r["flag"],
                            r.get("workspace_diff", ""),
                            " errors: %s | %s" % (ea, eb) if ea or eb else ""))
                    results.append(r)
        del q, k, v
    torch.cuda.empty_cache()
    return {"modes": [m for m in modes if ran[m]],
            "skipped_modes": [m for m in modes if not ran[m]],
            "calls_compared": n_run, "calls_refused_by_both": n_refused,
            "calls_not_compared_v_smoothed": n_smoothed,
            "finite_differing": n_fail, "nonfinite_differing": n_nonfinite_fail,
            "cases": results}


def timing(sa_a, sa_b, log, only=None):
    shapes = [(128, 1024, 16, "fp16"), (128, 1024, 16, "bf16"), (64, 1024, 16, "fp16"),
              (128, 2048, 8, "fp16"), (128, 16384, 1, "fp16")]
    modes = [m for m in ("int8-fp8-wgmma", "int8-fp8", "int8-fp16")
             if m in sa_a.modes and (not only or m in only)]
    rows = []
    for d, L, b, dt in shapes:
        q, k, v = make_qkv(b, 32, 32, L, L, d, "HND", DTYPES[dt], "random", seed=7)
        for mode in modes:
            o = torch.empty_like(q)
            pa = sa_a.params(q, k, v, o, "HND", False, mode)
            pb = sa_b.params(q, k, v, o, "HND", False, mode)
            try:
                sa_a.run(pa)
                sa_b.run(pb)
            except RuntimeError as e:
                log("timing: %s skipped: %s" % (mode, str(e)[:120]))
                continue
            med = {key: ms * 1000.0 for key, ms in time_interleaved(
                [("a", lambda: sa_a.run(pa)), ("b", lambda: sa_b.run(pb))]).items()}
            row = {"mode": mode, "dtype": dt, "d": d, "l": L, "b": b, "h": 32, "us_a": med["a"],
                   "us_b": med["b"], "saved_us": med["a"] - med["b"]}
            rows.append(row)
            row["v_smoothed"] = v_smoothed(mode, d, L)
            log("%-15s %s D=%-3d L=%-5d B=%-2d H=32 | A %9.1f us | B %9.1f us | B-A %+8.1f us "
                "(%+.1f %%)%s" % (mode, dt, d, L, b, med["a"], med["b"], med["b"] - med["a"],
                                 100.0 * (med["b"] - med["a"]) / med["a"],
                                 " (V smoothed)" if row["v_smoothed"] else ""))
        del q, k, v
        torch.cuda.empty_cache()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib-a", required=True, help="the reference build (main)")
    ap.add_argument("--lib-b", required=True, help="the build under test")
    ap.add_argument("--quick", action="store_true", help="fewer lengths")
    ap.add_argument("--skip-timing", action="store_true")
    ap.add_argument("--compare-smoothed", action="store_true",
                    help="compare int8-fp8-wgmma where it smooths V too (both builds smooth it)")
    ap.add_argument("--modes", help="comma-separated modes to compare and time (default: all)")
    ap.add_argument("--json", help="write every case's result here")
    args = ap.parse_args()
    if os.path.realpath(args.lib_a) == os.path.realpath(args.lib_b):
        sys.exit("prepass_same.py: --lib-a and --lib-b are the same file")

    def log(s):
        print(s, flush=True)

    sa_a, sa_b = SageAttn(args.lib_a), SageAttn(args.lib_b)
    log("GPU %s; A %s (%s); B %s (%s)" % (
        torch.cuda.get_device_name(0), args.lib_a, sa_a.lib.sageattn_built_archs().decode(),
        args.lib_b, sa_b.lib.sageattn_built_archs().decode()))
    res = {"lib_a": args.lib_a, "lib_b": args.lib_b, "gpu": torch.cuda.get_device_name(0)}
    only = args.modes.split(",") if args.modes else None
    res["same"] = compare(sa_a, sa_b, args.quick, log, args.compare_smoothed, only)
    s = res["same"]
    log("bit-identical check: %d calls over modes %s (skipped: %s; %d int8-fp8-wgmma calls with V "
        "smoothed not compared); finite cases differing: %d; non-finite cases differing: %d" % (
            s["calls_compared"], ",".join(s["modes"]), ",".join(s["skipped_modes"]) or "none",
            s["calls_not_compared_v_smoothed"], s["finite_differing"], s["nonfinite_differing"]))
    if not args.skip_timing:
        res["timing"] = timing(sa_a, sa_b, log, only)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    ok = s["calls_compared"] > 0 and s["finite_differing"] == 0
    log("RESULT: %s" % ("bit-identical" if ok else "DIFFERENT (or nothing compared)"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
