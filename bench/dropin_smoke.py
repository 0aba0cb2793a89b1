"""Smoke test of the drop-in `sageattention` package on a GPU, in one call from the repository
root:
    python3 bench/dropin_smoke.py            # builds libsageattn for sm_90 with bench/build.sh
    SAGEATTENTION_LIBRARY=/path/libsageattn.so python3 bench/dropin_smoke.py
Runs each public function once on small cases against torch SDPA (fp32 reference) and the
package's promises (views, dtypes, GQA, masks, LSE, varlen, torch.compile, the non-finite
recompute, the workspace cap, errors), printing one PASS/FAIL line each and a summary; the same
lines go to $OUT/dropin_smoke.txt when $OUT is set. Exit status 1 if anything failed."""

import itertools
import logging
import os
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "share", "python"))
if not os.environ.get("SAGEATTENTION_LIBRARY"):
    out = "/tmp/dropin-smoke-lib"
    subprocess.run(["bash", os.path.join(ROOT, "bench", "build.sh"), out, "sm_90"], check=True,
                   stdout=subprocess.DEVNULL)
    os.environ["SAGEATTENTION_LIBRARY"] = os.path.join(out, "libsageattn.so")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import sageattention  # noqa: E402
from sageattention import _device, _kernel, _lib  # noqa: E402

lines = []
failures = 0


def report(ok, name, detail=""):
    global failures
    failures += 0 if ok else 1
    line = "%s %s %s" % ("PASS" if ok else "FAIL", name, detail)
    lines.append(line)
    print(line, flush=True)


def case(fn):
    def run():
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - a crash is a FAIL line, then go on
            report(False, fn.__name__, "raised %s: %s" % (type(e).__name__, e))
            traceback.print_exc()
    return run


def ref(q, k, v, layout="HND", causal=False, mask=None, scale=None):
    """fp32 SDPA on HND views; causal aligned bottom-right like the library."""
    if layout == "NHD":
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    q, k, v = q.float(), k.float(), v.float()
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    if causal:
        lq, lk = q.shape[2], k.shape[2]
        allowed = (torch.arange(lk, device=q.device)[None, :]
                   <= torch.arange(lq, device=q.device)[:, None] + (lk - lq))
        mask = allowed if mask is None else (mask & allowed if mask.dtype == torch.bool else
                                             mask.float().masked_fill(~allowed, float("-inf")))
    if mask is not None and mask.dtype != torch.bool:
        mask = mask.float()
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    return o.transpose(1, 2) if layout == "NHD" else o


def ref_lse(q, k, scale=None, layout="HND"):
    if layout == "NHD":
        q, k = q.transpose(1, 2), k.transpose(1, 2)
    g = q.shape[1] // k.shape[1]
    k = k.float().repeat_interleave(g, 1)
    s = torch.matmul(q.float(), k.transpose(-1, -2)) * (scale or q.shape[-1] ** -0.5)
    return torch.logsumexp(s, -1)


def metrics(o, r):
    o, r = o.double().flatten(), r.double().flatten()
    cos = float(torch.nn.functional.cosine_similarity(o, r, dim=0))
    rel = float((o - r).abs().sum() / r.abs().sum().clamp_min(1e-30))
    return cos, rel, bool(torch.isfinite(o).all())


def close(name, o, r, cos_min=0.999, rel_max=0.05):
    cos, rel, finite = metrics(o, r)
    report(finite and cos >= cos_min and rel <= rel_max, name,
           "cos %.6f rel-L1 %.4f finite %s" % (cos, rel, finite))


def rand(*shape, dtype=torch.float16, device="cuda"):
    return torch.randn(*shape, device=device, dtype=torch.float32).to(dtype)


@case
def info():
    i = sageattention.library_info()
    report(i["nonfinite_flag"] and "int8-fp16" in i["modes"], "library_info",
           "%s archs %s modes %s version %s" % (i["library"], i["built_archs"], i["modes"],
                                                 sageattention.__version__))


@case
def each_function_hnd():
    q, k, v = (rand(2, 4, 256, 64) for _ in range(3))
    r = ref(q, k, v)
    for f in (sageattention.sageattn, sageattention.sageattn_qk_int8_pv_fp16_cuda,
              sageattention.sageattn_qk_int8_pv_fp16_triton,
              sageattention.sageattn_qk_int8_pv_fp8_cuda,
              sageattention.sageattn_qk_int8_pv_fp8_cuda_sm90):
        o = f(q, k, v)
        ok_shape = o.shape == q.shape and o.dtype == q.dtype and o.is_contiguous()
        cos, rel, fin = metrics(o, r)
        report(ok_shape and fin and cos >= 0.999 and rel <= 0.05, f.__name__,
               "cos %.6f rel-L1 %.4f" % (cos, rel))


@case
def comfyui_nhd_views():
    b, L, h, d = 1, 300, 8, 128
    x = rand(b, L, 3 * h * d, dtype=torch.bfloat16)
    q, k, v = (t.view(b, -1, h, d) for t in x.chunk(3, dim=-1))  # strided views, no copies
    o = sageattention.sageattn(q, k, v, attn_mask=None, is_causal=False, tensor_layout="NHD")
    close("comfyui NHD views bf16", o, ref(q, k, v, "NHD"))


@case
def fp32_in_fp32_out():
    q, k, v = (rand(1, 4, 200, 64, dtype=torch.float32) for _ in range(3))
    o = sageattention.sageattn(q, k, v)
    report(o.dtype == torch.float32, "fp32 returns fp32", str(o.dtype))
    close("fp32 via bf16", o, ref(q, k, v), 0.998, 0.06)


@case
def gqa_unequal_causal():
    q, k, v = rand(2, 8, 100, 64), rand(2, 2, 300, 64), rand(2, 2, 300, 64)
    for causal in (False, True):
        close("gqa Lq=100 Lk=300 causal=%s" % causal,
              sageattention.sageattn(q, k, v, is_causal=causal), ref(q, k, v, causal=causal))


@case
def head_dims():
    for d in (20, 40, 80, 96, 128, 256):
        q, k, v = (rand(1, 4, 129, d) for _ in range(3))
        o = sageattention.sageattn(q, k, v)
        tol = (0.99999, 0.002) if d > 128 else (0.999, 0.05)
        close("head_dim %d" % d, o, ref(q, k, v), *tol)


@case
def masks():
    q, k, v = (rand(2, 4, 64, 64) for _ in range(3))
    keep = torch.rand(2, 1, 64, 64, device="cuda") > 0.3
    keep[..., 0] = True
    add = torch.zeros(64, 64, device="cuda", dtype=torch.float16).masked_fill(
        torch.rand(64, 64, device="cuda") > 0.5, -10000.0)
    for name, m in (("bool rank4", keep), ("additive rank2", add)):
        o = sageattention.sageattn(q, k, v, attn_mask=m)
        close("mask %s" % name, o, ref(q, k, v, mask=m), 0.99999, 0.003)
    o = sageattention.sageattn(q, k, v, attn_mask=keep, is_causal=True)
    close("mask bool + causal", o, ref(q, k, v, causal=True, mask=keep), 0.99999, 0.003)


@case
def lse():
    q, k, v = rand(1, 4, 150, 64), rand(1, 2, 170, 64), rand(1, 2, 170, 64)
    o, l = sageattention.sageattn(q, k, v, return_lse=True)
    rl = ref_lse(q, k)
    err = float((l - rl).abs().max())
    report(l.shape == (1, 4, 150) and l.dtype == torch.float32 and err < 0.05,
           "lse kernel path", "max abs err %.4f" % err)
    q2, k2, v2 = (rand(1, 2, 70, 160) for _ in range(3))
    o2, l2 = sageattention.sageattn(q2, k2, v2, return_lse=True)
    err2 = float((l2 - ref_lse(q2, k2)).abs().max())
    report(err2 < 1e-3, "lse sdpa path (head_dim 160)", "max abs err %.2e" % err2)


@case
def varlen():
    lens_q, lens_k = [5, 130, 64], [7, 200, 64]
    cu_q = torch.tensor([0] + list(itertools.accumulate(lens_q)), dtype=torch.int32,
                        device="cuda")
    cu_k = torch.tensor([0] + list(itertools.accumulate(lens_k)), dtype=torch.int32,
                        device="cuda")
    q, k, v = rand(sum(lens_q), 4, 64), rand(sum(lens_k), 2, 64), rand(sum(lens_k), 2, 64)
    o = sageattention.sageattn_varlen(q, k, v, cu_q, cu_k, max(lens_q), max(lens_k))
    parts = []
    for i in range(3):
        qs, ks = slice(int(cu_q[i]), int(cu_q[i + 1])), slice(int(cu_k[i]), int(cu_k[i + 1]))
        parts.append(ref(q[qs][None], k[ks][None], v[ks][None], "NHD")[0])
    close("varlen 3 sequences", o, torch.cat(parts))


@case
def compiled():
    class Attn(torch.nn.Module):
        def forward(self, q, k, v):
            return sageattention.sageattn(q, k, v, tensor_layout="NHD") * 2

    q, k, v = (rand(1, 256, 4, 64) for _ in range(3))
    m = torch.compile(Attn(), fullgraph=True)
    o = m(q, k, v)
    eager = Attn()(q, k, v)
    report(torch.equal(o, eager), "torch.compile(fullgraph=True)",
           "max diff %.2e" % float((o.float() - eager.float()).abs().max()))


@case
def workspace_cap():
    q, k, v = (rand(2, 16, 2048, 128) for _ in range(3))
    sageattention.set_workspace_limit(None)
    full = sageattention.sageattn_qk_int8_pv_fp16_cuda(q, k, v)
    _device.release_workspaces()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    sageattention.set_workspace_limit(4 << 20)
    capped = sageattention.sageattn_qk_int8_pv_fp16_cuda(q, k, v)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    sageattention.set_workspace_limit("default")
    report(torch.equal(full, capped) and peak < full.numel() * 2 + (16 << 20),
           "workspace cap 4 MiB: same result in parts", "extra peak %.1f MiB" % (peak / 2 ** 20))


@case
def nonfinite_recompute():
    lib = _lib.library()
    stream = torch.cuda.current_stream().cuda_stream
    dims = sageattention._dispatch.Dims(1, 2, 2, 128, 128, 64, 64)

    def run(q, k, v, o, mode, flag=None, only_if=None, recompute=False):
        call = _kernel._Call(q, k, v, o, None, "HND", dims, 0.0, False,
                             flag.data_ptr() if flag is not None else None,
                             context=_device.state(0).context(lib) if recompute else None)
        p = call.params(lib.mode_value(mode), 0, 1, 0, 2, None, flag is not None,
                        only_if.data_ptr() if only_if is not None else None, recompute)
        ws, n, _ = _device.state(0).workspace(stream, lib.workspace_size(p, 0))
        lib.run(p, ws, n, stream)

    # The kernels: an inf in V makes the output non-finite and the epilogue raises the flag;
    # finite output leaves it down.
    q, k, v = (rand(1, 2, 128, 64) for _ in range(3))
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    o = torch.empty_like(q)
    run(q, k, v, o, "int8-fp16", flag)
    report(int(flag.item()) == 0 and bool(torch.isfinite(o).all()), "kernel flag stays down")
    bad_v = v.clone()
    bad_v[0, 0, 3, 5] = float("inf")
    run(q, k, bad_v, o, "int8-fp16", flag)
    report(int(flag.item()) == 1 and not bool(torch.isfinite(o).all()), "kernel flag on inf")
    # only_if_nonzero: the fp16 run computes only when the flag is up.
    o.fill_(7.0)
    flag.zero_()
    run(q, k, v, o, "fp16", only_if=flag)
    report(bool((o == 7.0).all()), "fp16 run skipped while the flag is down")
    flag.fill_(1)
    run(q, k, v, o, "fp16", only_if=flag)
    close("fp16 run computes once the flag is up", o, ref(q, k, v), 0.99999, 0.003)
    # ABI 1.2's recompute_nonfinite: the same call queues its fp16 recompute, which computes
    # only when the flag is up when it runs (raised here by hand before the call: the library
    # never lowers it).
    plain = torch.empty_like(q)
    run(q, k, v, plain, "int8-fp16")
    if lib.has_v12:
        flag.zero_()
        run(q, k, v, o, "int8-fp16", flag, recompute=True)
        report(torch.equal(o, plain) and int(flag.item()) == 0,
               "one call with recompute_nonfinite: finite output, nothing recomputed")
        flag.fill_(1)
        run(q, k, v, o, "int8-fp16", flag, recompute=True)
        close("one call with recompute_nonfinite: flag up, fp16 result", o, ref(q, k, v),
              0.99999, 0.003)
    # The package: checked and unchecked calls agree when nothing is non-finite (the queued
    # fp16 run did nothing) ...
    os.environ["SAGEATTENTION_CHECK_FINITE"] = "0"
    unchecked = sageattention.sageattn_qk_int8_pv_fp16_cuda(q, k, v)
    os.environ.pop("SAGEATTENTION_CHECK_FINITE")
    checked = sageattention.sageattn_qk_int8_pv_fp16_cuda(q, k, v)
    report(torch.equal(checked, unchecked), "checked call equals unchecked one when finite")
    # ... and a quantized call whose flag is up comes back computed in fp16 mode (the flag slot
    # the call takes from the stream's ring is raised by hand before it: the call is on the
    # fast path by now), with one warning once the ring has wrapped (the host reads the folded
    # flags then, never per call).
    checker = _device.state(0).flags[stream]
    while checker.next >= _device.FLAG_SLOTS - 1:
        sageattention.sageattn_qk_int8_pv_fp16_cuda(q, k, v)
    checker.ring[checker.next].fill_(1)
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("sageattention").addHandler(handler)
    o = sageattention.sageattn_qk_int8_pv_fp16_cuda(q, k, v)
    try:
        for _ in range(2 * _device.FLAG_SLOTS + 1):
            torch.cuda.synchronize()  # each wrap's copy has arrived by the next one
            sageattention.sageattn_qk_int8_pv_fp16_cuda(q, k, v)
    finally:
        logging.getLogger("sageattention").removeHandler(handler)
    fp16 = ref(q, k, v)
    close("flagged call comes back in fp16 accuracy", o, fp16, 0.99999, 0.003)
    report(any("recomputed in fp16" in r.getMessage() for r in records), "warning logged",
           str([r.getMessage()[:80] for r in records]))


@case
def errors():
    q = torch.randn(1, 2, 16, 64)
    for name, call, kind, words in (
            ("cpu tensors", lambda: sageattention.sageattn(q, q, q), ValueError, "CUDA tensor"),
            ("rank 3", lambda: sageattention.sageattn(q[0].cuda(), q[0].cuda(), q[0].cuda()),
             ValueError, "4 dimensions"),
            ("dtype mix", lambda: sageattention.sageattn(q.cuda().half(), q.cuda(), q.cuda()),
             ValueError, "same dtype"),
            ("layout", lambda: sageattention.sageattn(q.cuda(), q.cuda(), q.cuda(),
                                                      tensor_layout="BHSD"), ValueError, "NHD")):
        try:
            call()
            report(False, "error " + name, "no exception")
        except kind as e:
            report(words in str(e), "error " + name, str(e)[:100])


@case
def other_device():
    if torch.cuda.device_count() < 2:
        report(True, "second device", "skipped: one GPU")
        return
    q, k, v = (rand(1, 4, 128, 64, device="cuda:1") for _ in range(3))
    o = sageattention.sageattn(q, k, v)
    report(o.device == q.device, "second device", str(o.device))
    close("second device accuracy", o, ref(q, k, v))


@case
def overhead():
    q, k, v = (rand(1, 8, 128, 64) for _ in range(3))
    for check in ("1", "0"):
        os.environ["SAGEATTENTION_CHECK_FINITE"] = check
        for _ in range(20):
            sageattention.sageattn(q, k, v)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(200):
            sageattention.sageattn(q, k, v)
        torch.cuda.synchronize()
        report(True, "per-call time L=128 check_finite=%s" % check,
               "%.1f us" % ((time.perf_counter() - t) / 200 * 1e6))
    os.environ.pop("SAGEATTENTION_CHECK_FINITE")


for test in (info, each_function_hnd, comfyui_nhd_views, fp32_in_fp32_out, gqa_unequal_causal,
             head_dims, masks, lse, varlen, compiled, workspace_cap, nonfinite_recompute, errors,
             other_device, overhead):
    test()
summary = "dropin smoke: %d checks, %d failed (%s, torch %s)" % (
    len(lines), failures, torch.cuda.get_device_name(0), torch.__version__)
lines.append(summary)
print(summary)
if os.environ.get("OUT"):
    with open(os.path.join(os.environ["OUT"], "dropin_smoke.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
sys.exit(1 if failures else 0)
