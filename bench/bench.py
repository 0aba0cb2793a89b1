"""Accuracy and speed of libsageattn next to torch SDPA (flash, cuDNN) on one GPU.

python3 bench/bench.py --lib PATH [--out results.json] [--quick] [--skip-accuracy] [--skip-speed]

Accuracy: every mode against an fp64 reference computed on the GPU (per head), on fresh random
and adversarial inputs, odd lengths, GQA, HND and NHD, fp16 and bf16, padded head dims; outputs
poisoned first. Speed: TOPS = 4·B·H·Lq·Lkv·D / time (halved when causal), end to end from fp16
Q/K/V to fp16 O (quantization included), median of CUDA-event timings after warm-up.
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sageattn_ctypes import SageAttn  # noqa: E402

MODES = ["int8-fp16", "int8-fp8", "fp16"]


def to_hnd(t, layout):
    return t if layout == "HND" else t.transpose(1, 2)


def reference(q, k, v, layout, causal, sm_scale=None, heads=None):
    """fp64 attention, one (batch, head) at a time; returns O [B,H,L,D] fp64 (HND) and LSE."""
    q, k, v = (to_hnd(t, layout) for t in (q, k, v))
    b, hq, lq, d = q.shape
    hkv, lk = k.shape[1], k.shape[2]
    scale = sm_scale if sm_scale else 1.0 / math.sqrt(d)
    heads = range(hq) if heads is None else heads
    o = torch.zeros(b, len(heads), lq, d, dtype=torch.float64, device=q.device)
    lse = torch.full((b, len(heads), lq), -math.inf, dtype=torch.float64, device=q.device)
    mask = None
    if causal:
        i = torch.arange(lq, device=q.device)[:, None]
        j = torch.arange(lk, device=q.device)[None, :]
        mask = j > i + (lk - lq)
    for bi in range(b):
        for n, h in enumerate(heads):
            hk = h // (hq // hkv)
            s = (q[bi, h].double() @ k[bi, hk].double().T) * scale
            if mask is not None:
                s = s.masked_fill(mask, -math.inf)
            m = s.max(dim=-1, keepdim=True).values
            seen = torch.isfinite(m)
            m = torch.where(seen, m, torch.zeros_like(m))
            p = torch.exp(s - m)
            den = p.sum(-1, keepdim=True)
            o[bi, n] = torch.where(seen, (p @ v[bi, hk].double()) / den.clamp_min(1e-300),
                                   torch.zeros(1, dtype=torch.float64, device=q.device))
            lse[bi, n] = torch.where(seen[:, 0], (m + den.log())[:, 0],
                                     torch.full_like(m[:, 0], -math.inf))
    return o, lse


def metrics(out, ref):
    out = out.double().flatten()
    ref = ref.flatten()
    bad = bool((~torch.isfinite(out)).any())
    out = torch.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)
    cos = float(F.cosine_similarity(out, ref, dim=0)) if ref.norm() > 0 else 1.0
    l1 = float((out - ref).abs().sum() / ref.abs().sum().clamp_min(1e-300))
    return {"cos": cos, "rel_l1": l1, "max_abs": float((out - ref).abs().max()),
            "nan_or_inf": bad}


def make_inputs(shape, layout, dtype, kind, seed):
    b, hq, hkv, lq, lk, d = shape
    g = torch.Generator(device="cuda").manual_seed(seed)

    def rnd(h, n):
        t = torch.randn(b, h, n, d, generator=g, device="cuda", dtype=torch.float32)
        return t
    q, k, v = rnd(hq, lq), rnd(hkv, lk), rnd(hkv, lk)
    if kind == "k_offset":  # large per-channel offsets in K (what smoothing K is for)
        k = k + 30.0 * torch.randn(1, hkv, 1, d, generator=g, device="cuda")
    elif kind == "q_x10":
        q = q * 10.0
    elif kind == "near_limits":  # |x| up to ~60000: fp16's largest finite is 65504
        q = q / q.abs().amax() * 60000.0
        k = k / k.abs().amax() * 60000.0
        v = v / v.abs().amax() * 60000.0
    elif kind == "v_offset":
        v = v + 5.0 * torch.randn(1, hkv, 1, d, generator=g, device="cuda")
    q, k, v = (t.to(dtype) for t in (q, k, v))
    if layout == "NHD":
        q, k, v = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    return q, k, v


def padded_view(t, d):
    """A view of t with head_dim d whose rows stay 16-byte aligned (storage padded to 8)."""
    dp = (d + 7) // 8 * 8
    store = torch.zeros(*t.shape[:-1], dp, dtype=t.dtype, device=t.device)
    store[..., :d] = t[..., :d]
    return store[..., :d]


ACC_CASES = [
    # name, (B, Hq, Hkv, Lq, Lkv, D), layout, dtype, causal, kind
    ("random", (2, 8, 8, 1000, 1000, 64), "HND", torch.float16, False, "random"),
    ("random_d128", (1, 8, 8, 4096, 4096, 128), "HND", torch.float16, False, "random"),
    ("causal_gqa_nhd", (1, 8, 2, 77, 1000, 128), "NHD", torch.float16, True, "random"),
    ("causal_lq_gt_lk", (1, 4, 4, 300, 100, 64), "HND", torch.float16, True, "random"),
    ("lq1", (2, 4, 1, 1, 17, 64), "HND", torch.float16, False, "random"),
    ("lk1_causal", (1, 4, 4, 17, 1, 128), "NHD", torch.float16, True, "random"),
    ("d40", (1, 4, 4, 333, 517, 40), "HND", torch.float16, False, "random"),
    ("d96_bf16", (1, 4, 2, 1000, 1000, 96), "NHD", torch.bfloat16, True, "random"),
    ("d17_padded", (1, 2, 2, 129, 65, 17), "HND", torch.float16, False, "random"),
    ("bf16_d128", (1, 8, 8, 1000, 1000, 128), "HND", torch.bfloat16, False, "random"),
    ("k_offset", (1, 8, 8, 2048, 2048, 128), "HND", torch.float16, False, "k_offset"),
    ("q_x10", (1, 8, 8, 2048, 2048, 128), "HND", torch.float16, False, "q_x10"),
    ("near_limits", (1, 8, 8, 1024, 1024, 64), "HND", torch.float16, False, "near_limits"),
    ("v_offset", (1, 8, 8, 2048, 2048, 64), "HND", torch.float16, True, "v_offset"),
    ("long_16k", (1, 4, 4, 16384, 16384, 128), "HND", torch.float16, False, "random"),
    # D=64 past 2K keys: int8-fp8-wgmma's warp-specialized kernel at D=64 (the cases above run
    # its one-warpgroup kernel there), with P·V accumulated in O across the whole row
    ("long_16k_d64", (1, 4, 4, 16384, 16384, 64), "HND", torch.float16, False, "random"),
    ("causal_gqa_d64_5k", (1, 8, 2, 4100, 5003, 64), "NHD", torch.bfloat16, True, "random"),
    # small enough for the sanitizers (Lq·Lkv <= 2^20) with more than 2K keys at D=64: the
    # warp-specialized kernel, in a build that runs its 128-key-step form there (SA_HW_PAIR)
    ("causal_gqa_d64_3k", (1, 4, 2, 257, 3001, 64), "NHD", torch.float16, True, "random"),
    # small enough for the sanitizers, without a causal mask and past SA_H_RANK_MIN_KV keys:
    # int8-fp8-wgmma's rank groups (the rank kernel, a partial window and tile, GQA)
    ("rank_gqa_3k", (1, 4, 2, 256, 3001, 128), "NHD", torch.float16, False, "random"),
    # ... and with a causal mask, past SA_H_RANK_MIN_KV_CAUSAL keys (keys masked by position)
    ("rank_causal_8k", (1, 4, 2, 120, 8200, 64), "NHD", torch.float16, True, "random"),
    # V's channel offsets over a long row: where P·V accumulates in O across the row (the
    # warp-specialized kernel), a column sum of same-sign terms, as a row sum is
    ("v_offset_16k", (1, 4, 4, 16384, 16384, 128), "HND", torch.float16, False, "v_offset"),
    ("v_offset_16k_d64", (1, 4, 4, 16384, 16384, 64), "HND", torch.float16, False, "v_offset"),
]


def accuracy(sa, quick, log, small_only=False, want_lse=True, only=None):
    rows = []
    cases = ACC_CASES[:6] if quick else ACC_CASES
    if small_only:
        cases = [c for c in ACC_CASES if c[1][3] * c[1][4] <= 1 << 20]
    if only:
        unknown = set(only) - {c[0] for c in ACC_CASES}
        if unknown:
            sys.exit("bench.py: no accuracy case %s (see ACC_CASES)" % ", ".join(sorted(unknown)))
        cases = [c for c in cases if c[0] in only]
    for case in cases:
        name, shape, layout, dtype, causal, kind = case
        ci = ACC_CASES.index(case)  # the case's seed does not depend on the selection
        b, hq, hkv, lq, lk, d = shape
        q, k, v = make_inputs(shape, layout, dtype, kind, seed=1000 + ci)
        if d % 8:
            q, k, v = (padded_view(t, d) for t in (q, k, v))
        ref_o, ref_lse = reference(q, k, v, layout, causal)
        for mode in MODES:
            if d % 8:
                o = padded_view(torch.full_like(q, 777.0), d)
            else:
                o = torch.full_like(q, float("nan"))  # poison: every element must be written
            try:
                o, lse = sa.attn(q, k, v, layout, causal, mode, want_lse=want_lse, out=o)
                torch.cuda.synchronize()
            except RuntimeError as e:
                rows.append({"case": name, "mode": mode, "error": str(e)})
                log("%-16s %-9s ERROR %s" % (name, mode, e))
                continue
            m = metrics(to_hnd(o, layout), ref_o)
            lse_ref = ref_lse
            finite = torch.isfinite(lse_ref)
            lse_ok, lse_err = True, 0.0  # --no-lse: not asked for, not checked
            if want_lse:
                lse_ok = bool((torch.isfinite(lse) == finite).all())
                lse_err = float((lse.double()[finite] - lse_ref[finite]).abs().max()) \
                    if finite.any() else 0.0
            cover = True
            if d % 8:
                store = o._base if o._base is not None else o
                cover = bool((store[..., d:] == 0).all())  # padding of o untouched
            m.update({"case": name, "mode": mode, "shape": list(shape), "layout": layout,
                      "dtype": str(dtype).replace("torch.", ""), "causal": causal,
                      "kind": kind, "lse_max_err": lse_err, "lse_inf_ok": lse_ok,
                      "pad_untouched": cover})
            rows.append(m)
            log("%-16s %-9s cos %.6f rel_l1 %.5f max_abs %.3g nan %s lse_err %.2e lse_inf %s" % (
                name, mode, m["cos"], m["rel_l1"], m["max_abs"], m["nan_or_inf"], lse_err,
                lse_ok))
        del q, k, v, ref_o, ref_lse
        torch.cuda.empty_cache()
    return rows


def api_checks(sa, log):
    """Bad arguments must come back as the documented status with a message, never a crash."""
    import ctypes
    q = torch.randn(1, 4, 64, 64, device="cuda", dtype=torch.float16)
    k, v = torch.randn_like(q), torch.randn_like(q)
    o = torch.empty_like(q)
    out = []

    def expect(name, want, mutate, ws_bytes=None):
        p = sa.params(q, k, v, o, "HND", False, "int8-fp16")
        mutate(p)
        ws, n = sa._ws, 0
        if ws is None:
            ws = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
        st = sa.lib.sageattn_run(ctypes.byref(p), ctypes.c_void_p(ws.data_ptr()),
                                 ws.numel() if ws_bytes is None else ws_bytes, None)
        ok = st == want and (st == 0 or sa.error() != "")
        out.append({"check": name, "want": want, "got": st, "message": sa.error(), "ok": ok})
        log("api %-22s want %2d got %2d %s  %s" % (name, want, st, "ok" if ok else "FAIL",
                                                   sa.error()))
    expect("valid", 0, lambda p: None)
    expect("null_q", 1, lambda p: setattr(p, "q", None))
    expect("misaligned_q", 2, lambda p: setattr(p, "q", p.q + 2))
    expect("zero_batch", 3, lambda p: setattr(p, "batch", 0))
    expect("gqa_not_dividing", 3, lambda p: setattr(p, "num_kv_heads", 3))
    expect("negative_stride", 4, lambda p: p.k_stride.__setitem__(2, -64))
    expect("overlapping_o", 4, lambda p: p.o_stride.__setitem__(2, 8))
    expect("head_dim_129", 5, lambda p: setattr(p, "head_dim", 129))
    expect("dtype_7", 6, lambda p: setattr(p, "dtype", 7))
    expect("mode_9", 7, lambda p: setattr(p, "mode", 9))
    expect("workspace_small", 9, lambda p: None, ws_bytes=16)
    expect("struct_size", 11, lambda p: setattr(p, "struct_size", 8))
    expect("sm_scale_nan", 3, lambda p: setattr(p, "sm_scale", float("nan")))
    torch.cuda.synchronize()
    return out


def time_fn(fn, warmup=5, reps=20):
    """Median ms of one synchronized call of fn (reps calls after warmup)."""
    return time_interleaved([(None, fn)], warmup, reps)[None]


def time_interleaved(named_fns, warmup=5, reps=20):
    """{name: median ms} of one call of each (name, fn) in turn, reps rounds: a GPU state that
    drifts (clocks after a heavy shape, the order of the first calls) reaches them all alike."""
    for _ in range(warmup):
        for _, fn in named_fns:
            fn()
    torch.cuda.synchronize()
    ts = {name: [] for name, _ in named_fns}
    for _ in range(reps):
        for name, fn in named_fns:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            ts[name].append(s.elapsed_time(e))
    return {name: sorted(t)[len(t) // 2] for name, t in ts.items()}


def sdpa_fn(q, k, v, causal, backend):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    be = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[backend]

    def f():
        with sdpa_kernel(be):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return f


def speed(sa, quick, log, acc_heads=2, key_only=False, lens=(16384, 4096, 1024), dims=(128, 64)):
    rows = []
    shapes = []
    for d in dims:
        for L in lens:
            for causal in (False, True):
                shapes.append((d, L, causal))
    if quick:
        shapes = [(128, 16384, False), (128, 16384, True), (64, 4096, False)]
    if key_only:
        shapes = [(128, 16384, False), (128, 16384, True), (64, 16384, False),
                  (128, 1024, False), (64, 4096, False), (64, 1024, False), (64, 1024, True)]
    for d, L, causal in shapes:
        b, h = max(1, 16384 // L), 32
        q, k, v = make_inputs((b, h, h, L, L, d), "HND", torch.float16, "random", seed=L + d)
        ops = 4.0 * b * h * L * L * d / (2 if causal else 1)
        heads = list(range(acc_heads))
        ref_o, _ = reference(q[:1], k[:1], v[:1], "HND", causal, heads=heads)
        entry = {"d": d, "l": L, "b": b, "h": h, "causal": causal}
        impls = [(m, None) for m in MODES]
        if not NO_SDPA:
            impls += [("sdpa_flash", "flash"), ("sdpa_cudnn", "cudnn")]
        timed = []  # (name, fn) of every implementation that ran
        for name, backend in impls:
            try:
                if backend:
                    fn = sdpa_fn(q, k, v, causal, backend)
                else:
                    o = torch.empty_like(q)
                    p = sa.params(q, k, v, o, "HND", causal, name)

                    def fn(p=p):
                        sa.run(p)
                out = fn()
                torch.cuda.synchronize()
                if not backend:
                    out = o
                acc = metrics(out[:1, heads], ref_o)
                entry[name] = {"cos": acc["cos"], "rel_l1": acc["rel_l1"],
                               "nan_or_inf": acc["nan_or_inf"]}
                if not INTERLEAVE:
                    entry[name]["ms"] = time_fn(fn)
                timed.append((name, fn))
            except Exception as e:  # a backend that refuses the shape is reported, not fatal
                entry[name] = {"error": str(e)[:200]}
        if INTERLEAVE:  # one call of each implementation in turn: the GPU's state is shared
            for name, ms in time_interleaved(timed).items():
                entry[name]["ms"] = ms
        for name, _ in timed:
            entry[name]["tops"] = ops / entry[name]["ms"] / 1e9
        rows.append(entry)
        log(speed_line(entry))
        del q, k, v, ref_o
        torch.cuda.empty_cache()
    return rows


IMPLS = MODES + ["sdpa_flash", "sdpa_cudnn"]
NO_SDPA = False
INTERLEAVE = False  # --interleave: implementations timed one call each in turn


def speed_line(e):
    cells = []
    for n in IMPLS:
        r = e.get(n, {})
        cells.append("%7.1f" % r["tops"] if "tops" in r else "    err")
    return "D=%-3d L=%-5d B=%-2d H=%d %-6s | " % (
        e["d"], e["l"], e["b"], e["h"], "causal" if e["causal"] else "full") + " ".join(cells)


def profile(sa, log, d=128, L=16384, causal=False, b=1):
    """Per-kernel GPU time of one call of each mode (torch.profiler), to split quantization
    from attention."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as tprofile
    q, k, v = make_inputs((b, 32, 32, L, L, d), "HND", torch.float16, "random", seed=7)
    o = torch.empty_like(q)
    out = {}
    for mode in MODES:
        p = sa.params(q, k, v, o, "HND", causal, mode)
        for _ in range(3):
            sa.run(p)
        torch.cuda.synchronize()
        with tprofile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                sa.run(p)
            torch.cuda.synchronize()
        per = {}
        for ev in prof.key_averages():
            if ev.device_type is not None and "CUDA" in str(ev.device_type):
                t = getattr(ev, "device_time_total", None) or getattr(ev, "cuda_time_total", 0)
                per[ev.key[:60]] = t / 5.0 / 1000.0
        out[mode] = per
        log("profile %s D=%d L=%d B=%d%s: " % (mode, d, L, b, " causal" if causal else "") + "; ".join(
            "%s %.3f ms" % (kname, ms) for kname, ms in sorted(per.items(), key=lambda x: -x[1])))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cases", help="comma-separated accuracy cases by name (default: all)")
    ap.add_argument("--skip-accuracy", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--profile", action="store_true",
                    help="per-kernel GPU time of each mode at D=128 L=16384 B=1 H=32")
    ap.add_argument("--profile-shapes",
                    help="per-kernel GPU time at these shapes instead: D:L:B[:causal],... "
                    "(H=32), e.g. 128:1024:16,64:1024:16:causal")
    ap.add_argument("--speed-shapes", default="all", help="all | key")
    ap.add_argument("--interleave", action="store_true",
                    help="time the implementations one call each in turn (20 rounds) instead "
                         "of 20 calls of one, then the next")
    ap.add_argument("--speed-lens", default="16384,4096,1024",
                    help="sequence lengths of --speed-shapes all (B = 16384 / L)")
    ap.add_argument("--speed-dims", default="128,64", help="head dims of --speed-shapes all")
    ap.add_argument("--sanitize", action="store_true",
                    help="small accuracy cases only (for compute-sanitizer)")
    ap.add_argument("--no-sdpa", action="store_true")
    ap.add_argument("--no-lse", action="store_true",
                    help="accuracy cases without the LSE output (a kernel may take another path "
                    "then, e.g. int8-fp8-wgmma quantizing Q itself)")
    ap.add_argument("--modes", help="comma-separated modes by name (default: %s; the library's "
                    "own names, e.g. int8-fp16-f16acc, are accepted)" % ",".join(MODES))
    args = ap.parse_args()
    global NO_SDPA, IMPLS, INTERLEAVE
    NO_SDPA = args.no_sdpa
    INTERLEAVE = args.interleave

    def log(s):
        print(s, flush=True)

    sa = SageAttn(args.lib)
    if args.modes:
        wanted = args.modes.split(",")
        unknown = [m for m in wanted if m not in sa.modes or m == "auto"]
        if unknown:
            sys.exit("bench.py: unknown mode(s) %s; this library has %s" % (
                ",".join(unknown), ",".join(m for m in sa.modes if m != "auto")))
        MODES[:] = wanted
        IMPLS = MODES + ["sdpa_flash", "sdpa_cudnn"]
    dev = torch.cuda.get_device_properties(0)
    st, auto = sa.resolve("auto")
    info = {"card": dev.name, "cc": "%d.%d" % (dev.major, dev.minor),
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "lib": args.lib, "archs": sa.lib.sageattn_built_archs().decode(),
            "auto_mode": sa.lib.sageattn_mode_name(auto).decode() if st == 0 else sa.error(),
            "command": " ".join(sys.argv), "time": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                 time.gmtime())}
    log(json.dumps(info))
    res = {"info": info, "api": api_checks(sa, log)}
    if not args.skip_accuracy:
        res["accuracy"] = accuracy(sa, args.quick, log, args.sanitize, want_lse=not args.no_lse,
                                   only=args.cases.split(",") if args.cases else None)
    if args.profile or args.profile_shapes:
        res["profile"] = {}
        for shape in (args.profile_shapes or "128:16384:1").split(","):
            f = shape.split(":")
            if len(f) not in (3, 4) or (len(f) == 4 and f[3] != "causal"):
                sys.exit("bench.py: --profile-shapes wants D:L:B[:causal], got %r" % shape)
            d, L, b = (int(x) for x in f[:3])
            res["profile"][shape] = profile(sa, log, d=d, L=L, causal=len(f) == 4, b=b)
    if not args.skip_speed:
        res["speed"] = speed(sa, args.quick, log, key_only=args.speed_shapes == "key",
                             lens=[int(x) for x in args.speed_lens.split(",")],
                             dims=[int(x) for x in args.speed_dims.split(",")])
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)
    if "speed" in res:
        log("\nTOPS (end to end, fp16 in/out) on %s | %s" % (dev.name, " ".join(
            "%7s" % n[:7] for n in IMPLS)))
        for e in res["speed"]:
            log(speed_line(e))
        e = res["speed"][0]
        log("accuracy at %s: " % speed_line(e)[:28] + "; ".join(
            "%s cos %.5f l1 %.4f" % (n, e[n]["cos"], e[n]["rel_l1"])
            for n in IMPLS if "cos" in e.get(n, {})))
    if "accuracy" in res:
        worst = {}
        for r in res["accuracy"]:
            if "cos" not in r:
                worst.setdefault(r["mode"], []).append("ERROR " + r["case"])
                continue
            w = worst.setdefault(r["mode"], [1.0, 0.0, False, True])
            if isinstance(w, list) and len(w) == 4 and not isinstance(w[0], str):
                w[0] = min(w[0], r["cos"])
                w[1] = max(w[1], r["rel_l1"])
                w[2] = w[2] or r["nan_or_inf"]
                w[3] = w[3] and r["lse_inf_ok"] and r["pad_untouched"]
        for m, w in worst.items():
            log("accuracy %-9s worst cos %s worst rel_l1 %s nan %s lse/pad ok %s" % (
                m, *(w if len(w) == 4 else [w, "", "", ""])))


if __name__ == "__main__":
    main()
