"""Validation and benchmark of the drop-in `sageattention` package on one GPU (issue 8).

    python3 bench/dropin_check.py --lib PATH/libsageattn.so [--out results.json] [--only A,B]
    python3 bench/dropin_check.py --self-check        # the pure helpers, no torch, no GPU

Imports share/python/sageattention with SAGEATTENTION_LIBRARY=PATH and checks, each output poisoned
first (the caching allocator is handed NaN-filled blocks before the call) and compared with an fp64
reference (cosine, rel-L1 = sum|o-r| / sum|r|, non-finite count):

  matrix   every public function (and pv_accum_dtype variant) x fp16/bf16/fp32 x HND/NHD, inputs
           made as non-contiguous views the way ComfyUI and fused-QKV models make them
  gqa      32/8 and 16/1 heads;   odd     L = 1, 17, 77, 1000, 4097, causal or not
  lqlk     Lq != Lk (causal aligned bottom-right, as the C ABI documents)
  hdim     head dims 40/64/80/96/128 (kernels) and 256 (SDPA, compared with SDPA too)
  mask     bool and additive float masks of rank 2, 3, 4 (SDPA with the same mask must agree);
           return_lse with a mask or D=256 must be right or refused with an exception
  lse      return_lse against the reference's natural-log LSE (float32 [B, H, Lq])
  varlen   sageattn_varlen with cu_seqlens, GQA, causal
  stream   the call runs on torch's current stream (a side stream with queued work before it)
  graph    a call captured in a CUDA graph and replayed on new inputs equals the eager call bit
           for bit (int8-fp8-wgmma's kernels are programmatic dependents: the capture keeps the
           edges), full and causal
  compile  torch.compile(fullgraph=True) of a module that calls sageattn on NHD views (the first
           call of the package in the process, then a second sequence length), vs eager
  comfyui  ComfyUI's attention_sage loop (views, try/except fallback) on diffusion shapes: 0
           fallbacks allowed
  speed    sageattn at B=1 H=24 L=4096 D=128 and B=1 H=32 L=16384 D=128 against the raw C ABI
           (same mode) and torch SDPA; per-call overhead at L=128; the cost of the non-finite
           check (a child process with SAGEATTENTION_CHECK_FINITE=0)
  memory   peak extra memory and time at B=1 H=40 L=75600 D=128 with the default workspace cap
           and with the cap lifted (one child process each)
  import   `import sageattention` leaves CUDA uninitialised (child process)

The bars each path must meet are BARS below. SAGEATTENTION_* settings in the environment are
cleared first (defaults are measured); the children set the one they measure.
Results (every figure measured here, none copied) go to --out as JSON; a compact table and a
summary are printed last. Exit status 1 when any correctness check fails (speed goals are
reported, not enforced), 2 on a usage or setup error.
"""
import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PACKAGE_PARENT = os.path.join(ROOT, "share", "python")

# Knobs of the package (share/python/sageattention/_settings.py; both read at call time).
CHECK_FINITE_ENV = "SAGEATTENTION_CHECK_FINITE"
WORKSPACE_CAP_LIFT_DEFAULT = "SAGEATTENTION_WORKSPACE_LIMIT_MB=0"
DEFAULT_CAP_MIB = 256  # the package's default cap (_dispatch.DEFAULT_WORKSPACE_LIMIT)
CAP_SLACK_MIB = 16  # the caching allocator rounds large blocks up
# Settings that would change what is measured: cleared at start (and recorded when they were set).
PACKAGE_ENV = ("SAGEATTENTION_MODE", "SAGEATTENTION_WORKSPACE_LIMIT_MB", CHECK_FINITE_ENV,
               "SAGEATTENTION_RECOMMENDATION")

# compile runs before any eager call, so that the package's first call is inside torch.compile
# (as with KJNodes' allow_compile).
SECTIONS = ["import", "compile", "matrix", "gqa", "odd", "lqlk", "hdim", "mask", "lse", "varlen",
            "stream", "graph", "comfyui", "speed", "memory"]

# ---------------------------------------------------------------------------------------------
# Accuracy bars: what each computation path must meet against the fp64 reference, per input
# dtype. Quantized bars are the (random inputs); fp32 inputs are computed in bf16, so
# rounding the inputs to bf16 is allowed for on top. The exact paths (fp16 mode, SDPA) must stay
# within output rounding. lse: largest |LSE - reference| in natural-log units.
BARS = {
    "int8-fp16": {"float16": {"cos": 0.9999, "rel_l1": 0.012, "lse": 0.05},
                  "bfloat16": {"cos": 0.9999, "rel_l1": 0.012, "lse": 0.05},
                  "float32": {"cos": 0.9999, "rel_l1": 0.015, "lse": 0.05}},
    "int8-fp8": {"float16": {"cos": 0.9992, "rel_l1": 0.04, "lse": 0.05},
                 "bfloat16": {"cos": 0.9992, "rel_l1": 0.04, "lse": 0.05},
                 "float32": {"cos": 0.9992, "rel_l1": 0.042, "lse": 0.05}},
    "fp16": {"float16": {"cos": 0.99999, "rel_l1": 0.001, "lse": 0.001},
             "bfloat16": {"cos": 0.99995, "rel_l1": 0.005, "lse": 0.001},
             "float32": {"cos": 0.99995, "rel_l1": 0.006, "lse": 0.02}},
    # SDPA path (head_dim > 128, any mask): vs fp64 like fp16 mode, and vs torch SDPA given the
    # same tensors and mask (vs_sdpa: rel-L1 between the two outputs).
    "sdpa": {"float16": {"cos": 0.99999, "rel_l1": 0.002, "lse": 0.001, "vs_sdpa": 0.001},
             "bfloat16": {"cos": 0.99995, "rel_l1": 0.008, "lse": 0.001, "vs_sdpa": 0.004},
             "float32": {"cos": 0.99995, "rel_l1": 0.008, "lse": 0.02, "vs_sdpa": 0.008}},
}
# The ComfyUI loop only asks "no fallback, finite, sane": a loose bar against SDPA in fp32.
COMFY_BAR = {"cos": 0.999, "rel_l1": 0.05}
SPEED_GOAL = 0.03  # the package within 3 % of the raw C ABI (issue 8)

# (label, public function, extra keyword arguments, expected mode; None = what auto resolves to)
FUNCTIONS = [
    ("sageattn", "sageattn", {}, None),
    ("fp16_cuda:fp32", "sageattn_qk_int8_pv_fp16_cuda", {"pv_accum_dtype": "fp32"}, "int8-fp16"),
    ("fp16_cuda:fp16+fp32", "sageattn_qk_int8_pv_fp16_cuda", {"pv_accum_dtype": "fp16+fp32"},
     "int8-fp16"),
    ("fp16_triton", "sageattn_qk_int8_pv_fp16_triton", {}, "int8-fp16"),
    ("fp8_cuda:fp32+fp32", "sageattn_qk_int8_pv_fp8_cuda", {"pv_accum_dtype": "fp32+fp32"},
     "int8-fp8"),
    ("fp8_cuda:fp32+fp16", "sageattn_qk_int8_pv_fp8_cuda", {"pv_accum_dtype": "fp32+fp16"},
     "int8-fp8"),
    ("fp8_cuda_sm90", "sageattn_qk_int8_pv_fp8_cuda_sm90", {}, "int8-fp8"),
]
CORE_FUNCS = ["sageattn", "fp16_cuda:fp32", "fp8_cuda:fp32+fp32"]


# ---------------------------------------------------------------------------------------------
# Pure helpers (stdlib only: --self-check runs them without torch)

def cosine(xs, ys):
    """Cosine similarity of two equal-length sequences of numbers (1.0 when both are zero)."""
    dot = sum(x * y for x, y in zip(xs, ys))
    nx = math.sqrt(sum(x * x for x in xs))
    ny = math.sqrt(sum(y * y for y in ys))
    if nx == 0.0 and ny == 0.0:
        return 1.0
    if nx == 0.0 or ny == 0.0:
        return 0.0
    return dot / (nx * ny)


def rel_l1(xs, refs):
    """sum |x - r| / sum |r| (0.0 when both are all zero, inf when only the reference is)."""
    num = sum(abs(x - r) for x, r in zip(xs, refs))
    den = sum(abs(r) for r in refs)
    if den == 0.0:
        return 0.0 if num == 0.0 else math.inf
    return num / den


def naive_attention(q, k, v, scale, causal=False, mask=None):
    """One head of attention on lists: q [Lq][D], k/v [Lk][D]; mask [Lq][Lk] of bools (True =
    attend) or additive floats. Causal is aligned bottom-right: query i sees key j when
    j <= i + Lk - Lq. Returns (O [Lq][D], natural-log LSE [Lq]); a row that sees nothing gives
    zeros and -inf."""
    lq, lk = len(q), len(k)
    out, lse = [], []
    for i in range(lq):
        scores = []
        for j in range(lk):
            s = scale * sum(a * b for a, b in zip(q[i], k[j]))
            if causal and j > i + lk - lq:
                s = -math.inf
            if mask is not None:
                m = mask[i][j]
                if isinstance(m, bool):
                    s = s if m else -math.inf
                else:
                    s = s + m
            scores.append(s)
        top = max(scores)
        if top == -math.inf:
            out.append([0.0] * len(v[0]))
            lse.append(-math.inf)
            continue
        w = [math.exp(s - top) for s in scores]
        den = sum(w)
        out.append([sum(w[j] * v[j][c] for j in range(lk)) / den for c in range(len(v[0]))])
        lse.append(top + math.log(den))
    return out, lse


def comfy_mask_rank4(shape):
    """The shape ComfyUI's attention_sage gives a mask before calling sageattn (rank 2 and 3 get
    batch then head axes)."""
    shape = list(shape)
    if len(shape) == 2:
        shape = [1] + shape
    if len(shape) == 3:
        shape = shape[:1] + [1] + shape[1:]
    return shape


def bar_for(path, dtype):
    """The bar (dict) for a computation path ('int8-fp16', 'int8-fp8', 'fp16', 'sdpa') and an
    input dtype name ('float16', 'bfloat16', 'float32')."""
    # Variants of a mode (int8-fp8-bs, int8-fp16-f16acc, ...) answer to their family's bar.
    family = path if path in BARS else next((f for f in BARS if path.startswith(f + "-")), path)
    return BARS[family][dtype]


def judge(row):
    """Why a measured accuracy row fails its bar ([] when it passes)."""
    why = []
    if row.get("error"):
        return ["error: " + row["error"]]
    try:
        bar = bar_for(row["path"], row["dtype"])
    except KeyError:
        return ["no bar for path %r and dtype %r (add it to BARS)" % (row.get("path"),
                                                                     row.get("dtype"))]
    if row.get("nonfinite", 0):
        why.append("%d non-finite outputs" % row["nonfinite"])
    if row.get("out_dtype") not in (None, row["dtype"]):
        why.append("returned %s for %s input" % (row["out_dtype"], row["dtype"]))
    if row.get("shape_ok") is False:
        why.append("output shape %s, expected %s" % (row.get("out_shape"), row.get("want_shape")))
    if row["cos"] < bar["cos"]:
        why.append("cos %.6f < %.6f" % (row["cos"], bar["cos"]))
    if row["rel_l1"] > bar["rel_l1"]:
        why.append("rel_l1 %.5f > %.5f" % (row["rel_l1"], bar["rel_l1"]))
    if row.get("lse_err") is not None and not row["lse_err"] <= bar["lse"]:
        why.append("lse err %.3g > %.3g" % (row["lse_err"], bar["lse"]))
    if row.get("lse_nonfinite", 0):
        why.append("%d non-finite LSE values" % row["lse_nonfinite"])
    if row.get("vs_sdpa") is not None and not row["vs_sdpa"] <= bar.get("vs_sdpa", 0.0):
        why.append("vs SDPA rel_l1 %.3g > %.3g" % (row["vs_sdpa"], bar.get("vs_sdpa", 0.0)))
    return why


def speed_verdict(pkg_ms, raw_ms, goal=SPEED_GOAL):
    """(ratio package/raw, whether it is within the goal)."""
    if not pkg_ms or not raw_ms:
        return None, False
    r = pkg_ms / raw_ms
    return r, r <= 1.0 + goal


def accuracy_line(row):
    if row.get("error") or row.get("refused"):
        return "%-7s %-20s %-34s %s %s" % (row["section"], row["func"], row["case"],
                                            "ERROR" if row.get("error") else "refused (allowed)",
                                            (row.get("error") or row["refused"])[:90])
    lse = " lse %.1e" % row["lse_err"] if row.get("lse_err") is not None else ""
    sd = " sdpa %.1e" % row["vs_sdpa"] if row.get("vs_sdpa") is not None else ""
    return "%-7s %-20s %-34s %-9s cos %.6f l1 %.5f nf %d%s%s %s" % (
        row["section"], row["func"], row["case"], row["path"], row["cos"], row["rel_l1"],
        row.get("nonfinite", 0), lse, sd, "ok" if not row.get("fail") else "FAIL")


def accuracy_table(rows):
    """Worst figures per (section, path, dtype), plus every failing row."""
    groups = {}
    for r in rows:
        key = (r["section"], r.get("path", "?"), r.get("dtype", "?"))
        g = groups.setdefault(key, {"n": 0, "fail": 0, "cos": 1.0, "rel_l1": 0.0, "nf": 0,
                                    "err": 0})
        g["n"] += 1
        g["fail"] += 1 if r.get("fail") else 0
        if r.get("error") or r.get("refused"):
            g["err"] += 1
            continue
        g["cos"] = min(g["cos"], r["cos"])
        g["rel_l1"] = max(g["rel_l1"], r["rel_l1"])
        g["nf"] += r.get("nonfinite", 0)
    lines = ["%-7s %-9s %-8s %4s %4s %9s %8s %4s %4s" % (
        "section", "path", "dtype", "n", "fail", "worst cos", "worst l1", "nf", "err")]
    for (sec, path, dt), g in sorted(groups.items()):
        lines.append("%-7s %-9s %-8s %4d %4d %9.6f %8.5f %4d %4d" % (
            sec, path, dt, g["n"], g["fail"], g["cos"], g["rel_l1"], g["nf"], g["err"]))
    for r in rows:
        if r.get("fail"):
            lines.append("FAIL " + accuracy_line(r) + " :: " + "; ".join(r["why"]))
    return lines


def self_check():
    """Runs the pure helpers on data with known answers; returns the number of failures."""
    fails = []
    checks = [0]

    def expect(name, cond):
        checks[0] += 1
        print("self-check %-44s %s" % (name, "ok" if cond else "FAIL"))
        if not cond:
            fails.append(name)

    near = lambda a, b, tol=1e-12: abs(a - b) <= tol  # noqa: E731
    expect("cosine identical", near(cosine([1, 2, 3], [1, 2, 3]), 1.0))
    expect("cosine orthogonal", near(cosine([1, 0], [0, 5]), 0.0))
    expect("cosine opposite", near(cosine([1, -2], [-1, 2]), -1.0))
    expect("rel_l1 known value", near(rel_l1([1.1, 2.0, -3.0], [1.0, 2.0, -3.5]), 0.6 / 6.5))
    expect("rel_l1 zero reference", rel_l1([0.0], [0.0]) == 0.0 and rel_l1([1.0], [0.0]) == math.inf)
    # Equal keys: uniform weights, output = mean of V, LSE = s + log(Lk).
    q = [[0.5, -1.0]]
    k = [[1.0, 2.0]] * 4
    v = [[1.0, 0.0], [3.0, 1.0], [5.0, 2.0], [7.0, 3.0]]
    o, lse = naive_attention(q, k, v, 0.5)
    s = 0.5 * (0.5 * 1.0 - 1.0 * 2.0)
    expect("attention equal keys -> mean of V", near(o[0][0], 4.0) and near(o[0][1], 1.5))
    expect("attention LSE natural log", near(lse[0], s + math.log(4.0)))
    # Causal bottom-right: Lq=2, Lk=3: query 0 sees keys 0..1, query 1 sees 0..2.
    q2 = [[0.0, 0.0], [0.0, 0.0]]
    k3 = [[0.0, 0.0]] * 3
    v3 = [[3.0, 0.0], [6.0, 0.0], [9.0, 0.0]]
    o, lse = naive_attention(q2, k3, v3, 1.0, causal=True)
    expect("causal aligned bottom-right", near(o[0][0], 4.5) and near(o[1][0], 6.0))
    # A bool mask and the additive -inf mask with the same holes agree; a fully masked row -> -inf.
    bm = [[True, False, True], [False, False, False]]
    am = [[0.0, -math.inf, 0.0], [-math.inf] * 3]
    ob, lb = naive_attention(q2, k3, v3, 1.0, mask=bm)
    oa, la = naive_attention(q2, k3, v3, 1.0, mask=am)
    expect("bool and additive masks agree", ob == oa and near(ob[0][0], 6.0))
    expect("fully masked row gives -inf LSE", lb[1] == -math.inf and la[1] == -math.inf)
    # Additive finite mask shifts a score: weights e^1 : e^0.
    o, _ = naive_attention([[0.0]], [[0.0], [0.0]], [[1.0], [0.0]], 1.0, mask=[[1.0, 0.0]])
    expect("additive mask shifts scores", near(o[0][0], math.e / (math.e + 1.0)))
    expect("comfy mask rank 2 -> 4", comfy_mask_rank4([77, 1000]) == [1, 1, 77, 1000])
    expect("comfy mask rank 3 -> 4", comfy_mask_rank4([2, 77, 1000]) == [2, 1, 77, 1000])
    expect("comfy mask rank 4 unchanged", comfy_mask_rank4([2, 8, 7, 9]) == [2, 8, 7, 9])
    good = {"section": "matrix", "func": "sageattn", "case": "x", "path": "int8-fp16",
            "dtype": "float16", "cos": 0.99996, "rel_l1": 0.009, "nonfinite": 0,
            "out_dtype": "float16", "lse_err": 0.004}
    expect("judge passes a good row", judge(good) == [])
    expect("judge: cos below bar", len(judge(dict(good, cos=0.9998))) == 1)
    expect("judge: non-finite outputs", len(judge(dict(good, nonfinite=3))) == 1)
    expect("judge: fp32 must come back fp32",
           len(judge(dict(good, dtype="float32", out_dtype="bfloat16"))) == 1)
    expect("judge: NaN LSE error fails", len(judge(dict(good, lse_err=math.nan))) == 1)
    expect("judge: error row", judge({"error": "boom"}) == ["error: boom"])
    sd = dict(good, path="sdpa", vs_sdpa=0.01, cos=0.999999, rel_l1=0.0005, lse_err=None)
    expect("judge: SDPA path must agree with SDPA", len(judge(sd)) == 1)
    expect("judge: fp8 bar is looser", judge(dict(good, path="int8-fp8", cos=0.9993,
                                                  rel_l1=0.038)) == [])
    r, ok = speed_verdict(10.2, 10.0)
    expect("speed within 3 %", ok and near(r, 1.02))
    expect("speed beyond 3 %", speed_verdict(10.4, 10.0)[1] is False)
    bad = dict(good, cos=0.5)
    bad["why"] = judge(bad)
    bad["fail"] = True
    lines = accuracy_table([dict(good, fail=False), bad, {"section": "odd", "func": "f",
                                                          "case": "c", "error": "x", "fail": True,
                                                          "why": ["error: x"]}])
    expect("table lists groups and failures", len(lines) == 1 + 2 + 2 and "FAIL" in lines[-1])
    print("self-check: %d passed, %d failed" % (checks[0] - len(fails), len(fails)))
    return len(fails)


# ---------------------------------------------------------------------------------------------
# GPU part (torch imported only here)

class Run:
    """State of one run: torch, the package, the raw ABI, results and failures."""

    def __init__(self, args):
        import torch
        import torch.nn.functional as F
        self.torch, self.F, self.args = torch, F, args
        self.results = {"measured": True, "sections": {}}
        self.failures = []
        self.log_lines = []
        sys.path.insert(0, HERE)
        from sageattn_ctypes import SageAttn
        self.raw = SageAttn(args.lib)
        self.sa = None
        self.auto_mode = None
        self.modes = {}

    def log(self, s):
        print(s, flush=True)

    def fail(self, section, what):
        self.failures.append("%s: %s" % (section, what))

    # ---- inputs -------------------------------------------------------------------------

    def dt(self, name):
        return {"float16": self.torch.float16, "bfloat16": self.torch.bfloat16,
                "float32": self.torch.float32}[name]

    def make_qkv(self, b, hq, hkv, lq, lk, d, dtype, layout, seed, scale=1.0):
        """Q, K, V as non-contiguous views with a contiguous last dim. NHD: chunks of one fused
        [B, L, (Hq + 2 Hkv) D] projection (row stride larger than H*D) when Lq == Lk, else a
        Q buffer twice as wide and a fused K|V buffer; HND: those NHD views transposed, as
        models that permute a fused QKV produce them. Values are N(0, scale^2), never zeros."""
        torch = self.torch
        g = torch.Generator(device="cuda").manual_seed(seed)
        t = self.dt(dtype)
        if lq == lk:
            buf = (torch.randn(b, lq, (hq + 2 * hkv) * d, generator=g, device="cuda") * scale).to(t)
            q, k, v = buf.split([hq * d, hkv * d, hkv * d], dim=-1)
        else:
            qb = (torch.randn(b, lq, 2 * hq * d, generator=g, device="cuda") * scale).to(t)
            kvb = (torch.randn(b, lk, 2 * hkv * d, generator=g, device="cuda") * scale).to(t)
            q = qb[..., :hq * d]
            k, v = kvb.chunk(2, dim=-1)
        q = q.view(b, lq, hq, d)
        k = k.view(b, lk, hkv, d)
        v = v.view(b, lk, hkv, d)
        if layout == "HND":
            q, k, v = (x.transpose(1, 2) for x in (q, k, v))
        return q, k, v

    def poison(self, nbytes):
        """Leaves a NaN-filled block of nbytes in the caching allocator, so that an output the
        package allocates next is likely to start as NaN (every element must be written)."""
        torch = self.torch
        n = max(1, (nbytes + 1) // 2)
        x = torch.full((n,), float("nan"), dtype=torch.float16, device="cuda")
        del x

    # ---- reference ------------------------------------------------------------------------

    def reference(self, q, k, v, layout, causal=False, mask=None, scale=None, heads=None,
                  rows=None):
        """fp64 attention: O [B, len(heads), nrows, D] (HND) and natural-log LSE
        [B, len(heads), nrows]. GQA by head groups; causal bottom-right; mask broadcast like
        torch SDPA (bool True = attend, float added). Chunked over query rows."""
        torch = self.torch
        if layout == "NHD":
            q, k, v = (x.transpose(1, 2) for x in (q, k, v))
        b, hq, lq, d = q.shape
        hkv, lk = k.shape[1], k.shape[2]
        scale = scale if scale else 1.0 / math.sqrt(d)
        heads = list(range(hq)) if heads is None else list(heads)
        rows = torch.arange(lq, device="cuda") if rows is None else rows
        nr = rows.numel()
        m4 = None
        if mask is not None:
            m4 = mask
            while m4.dim() < 4:
                m4 = m4.unsqueeze(0)
            m4 = m4.expand(b, hq, lq, lk)
        o = torch.empty(b, len(heads), nr, d, dtype=torch.float64, device="cuda")
        lse = torch.empty(b, len(heads), nr, dtype=torch.float64, device="cuda")
        chunk = max(1, (1 << 26) // max(lk, 1))
        cols = torch.arange(lk, device="cuda")[None, :]
        for bi in range(b):
            for n, h in enumerate(heads):
                hk = h // (hq // hkv)
                kk = k[bi, hk].double()
                vv = v[bi, hk].double()
                for r0 in range(0, nr, chunk):
                    ri = rows[r0:r0 + chunk]
                    s = (q[bi, h][ri].double() @ kk.T) * scale
                    if causal:
                        s = s.masked_fill(cols > ri[:, None] + (lk - lq), -math.inf)
                    if m4 is not None:
                        mc = m4[bi, h][ri]
                        if mc.dtype == torch.bool:
                            s = s.masked_fill(~mc, -math.inf)
                        else:
                            s = s + mc.double()
                    mx = s.amax(dim=-1, keepdim=True)
                    seen = torch.isfinite(mx)
                    mx = torch.where(seen, mx, torch.zeros_like(mx))
                    p = torch.exp(s - mx)
                    den = p.sum(dim=-1, keepdim=True)
                    o[bi, n, r0:r0 + len(ri)] = torch.where(
                        seen, (p @ vv) / den.clamp_min(1e-300), torch.zeros_like(mx))
                    lse[bi, n, r0:r0 + len(ri)] = torch.where(
                        seen[:, 0], (mx + den.log())[:, 0], torch.full_like(mx[:, 0], -math.inf))
        return o, lse

    def check_reference(self):
        """The torch reference against the stdlib one on a tiny causal GQA masked case."""
        torch = self.torch
        q, k, v = self.make_qkv(1, 2, 1, 3, 5, 4, "float32", "NHD", seed=5)
        mask = torch.rand(3, 5, device="cuda") > 0.3
        mask[:, 0] = True
        o, lse = self.reference(q, k, v, "NHD", causal=True, mask=mask, scale=0.7)
        worst = 0.0
        for h in range(2):
            qh = q[0, :, h].double().tolist()
            kh = k[0, :, 0].double().tolist()
            vh = v[0, :, 0].double().tolist()
            on, ln = naive_attention(qh, kh, vh, 0.7, causal=True, mask=mask.tolist())
            for i in range(3):
                for c in range(4):
                    worst = max(worst, abs(on[i][c] - float(o[0, h, i, c])))
                if math.isfinite(ln[i]):
                    worst = max(worst, abs(ln[i] - float(lse[0, h, i])))
        return worst

    def metrics(self, out, ref):
        torch = self.torch
        o = out.double()
        nonfinite = int((~torch.isfinite(o)).sum())
        o = torch.nan_to_num(o, nan=0.0, posinf=0.0, neginf=0.0)
        r = ref
        den = float(o.norm() * r.norm())
        cos = float((o * r).sum()) / den if den > 0 else (1.0 if float(r.norm()) == 0 else 0.0)
        l1 = float((o - r).abs().sum() / r.abs().sum().clamp_min(1e-300))
        return {"cos": cos, "rel_l1": l1, "max_abs": float((o - r).abs().max()) if o.numel()
                else 0.0, "nonfinite": nonfinite}

    def sdpa(self, q, k, v, layout, causal=False, mask=None, scale=None):
        """torch SDPA on the same tensors (HND views), GQA by repeating K/V heads."""
        F = self.F
        if layout == "NHD":
            q, k, v = (x.transpose(1, 2) for x in (q, k, v))
        rep = q.shape[1] // k.shape[1]
        if rep > 1:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale)
        return o if layout == "HND" else o.transpose(1, 2)

    # ---- one checked call -------------------------------------------------------------------

    def func(self, label):
        """(public function, its extra keyword arguments, the mode whose bar applies)."""
        for lab, name, kw, mode in FUNCTIONS:
            if lab == label:
                return getattr(self.sa, name), dict(kw), self.modes.get(label) or mode or \
                    self.auto_mode
        raise KeyError(label)

    def package_modes(self):
        """{label: mode name} each public function runs on this GPU, asked of the package's
        own dispatch (internal API: when it moves, the FUNCTIONS table's modes apply)."""
        modes = {}
        try:
            from sageattention import _device, _lib
            st = _device.state(self.torch.cuda.current_device())
            lib = _lib.library()
            for label, name, kw, _ in FUNCTIONS + [("sageattn_varlen", "sageattn_varlen", {},
                                                     None)]:
                modes[label] = st.mode(lib, name, kw.get("pv_accum_dtype", ""))[1]
            self.results.setdefault("info", {})["lib_has_nonfinite_flag"] = bool(
                getattr(lib, "has_nonfinite_flag", False))
        except Exception as e:
            modes = {"error": "%s: %s" % (type(e).__name__, str(e)[:200])}
        return modes

    def checked(self, section, label, case, q, k, v, layout, causal=False, mask=None,
                lse=False, scale=None, heads=None, rows=None, path=None, sdpa_too=False,
                extra=None, may_refuse=False):
        """Calls one public function on q/k/v, compares with fp64, judges, records a row."""
        torch = self.torch
        dtype = str(q.dtype).replace("torch.", "")
        row = {"section": section, "func": label, "case": case, "dtype": dtype,
               "layout": layout, "causal": causal, "shape_q": list(q.shape),
               "shape_k": list(k.shape), "mask": None if mask is None else
               [str(mask.dtype).replace("torch.", ""), list(mask.shape)], "return_lse": lse}
        try:
            fn, kw, mode = self.func(label)
            d = q.shape[-1]
            row["path"] = path or ("sdpa" if (mask is not None or d > 128) else mode)
            kw.update(extra or {})
            if mask is not None:
                kw["attn_mask"] = mask
            if scale is not None:
                kw["sm_scale"] = scale
            self.poison(q.numel() * 4)
            res = fn(q, k, v, tensor_layout=layout, is_causal=causal, return_lse=lse, **kw)
            torch.cuda.synchronize()
            out, got_lse = (res if lse else (res, None))
            row["out_dtype"] = str(out.dtype).replace("torch.", "")
            row["out_shape"] = list(out.shape)
            row["want_shape"] = list(q.shape)
            row["shape_ok"] = list(out.shape) == list(q.shape) and out.device == q.device
            ref_o, ref_lse = self.reference(q, k, v, layout, causal, mask, scale, heads, rows)
            ho = out if layout == "HND" else out.transpose(1, 2)
            if heads is not None:
                ho = ho[:, list(heads)]
            if rows is not None:
                ho = ho[:, :, rows]
            row["nonfinite"] = int((~torch.isfinite(out)).sum())
            m = self.metrics(ho, ref_o)
            m.pop("nonfinite")
            row.update(m)
            if lse:
                gl = got_lse
                row["lse_dtype"] = str(gl.dtype).replace("torch.", "")
                hnd = layout == "HND"
                row["lse_shape_ok"] = list(gl.shape) == [q.shape[0], q.shape[1 if hnd else 2],
                                                         q.shape[2 if hnd else 1]]
                if heads is not None:
                    gl = gl[:, list(heads)]
                if rows is not None:
                    gl = gl[:, :, rows]
                fin = torch.isfinite(ref_lse)
                row["lse_nonfinite"] = int((~torch.isfinite(gl.double()) & fin).sum())
                row["lse_err"] = float((gl.double()[fin] - ref_lse[fin]).abs().max()) \
                    if bool(fin.any()) else 0.0
                if row["lse_dtype"] != "float32" or not row["lse_shape_ok"]:
                    row["lse_err"] = math.inf
            if sdpa_too or row["path"] == "sdpa":
                so = self.sdpa(q, k, v, layout, causal, mask, scale)
                a = out.double()
                bsd = so.double()
                row["vs_sdpa"] = float((a - bsd).abs().sum() / bsd.abs().sum().clamp_min(1e-300))
            del ref_o, ref_lse
        except Exception as e:  # one failing case must not stop the others
            row["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
            row["trace"] = traceback.format_exc()[-1500:]
            row.setdefault("path", path or "?")
            if may_refuse and isinstance(e, (ValueError, NotImplementedError, RuntimeError)):
                # An exception is the package's documented answer for what it cannot compute
                # (ComfyUI falls back on it): recorded, not failed.
                row["refused"] = row.pop("error")
        row["why"] = judge(row) if "cos" in row or row.get("error") else (
            [] if row.get("refused") else ["no result"])
        row["fail"] = bool(row["why"])
        if row["fail"]:
            self.fail(section, "%s %s: %s" % (label, case, "; ".join(row["why"])))
        self.results.setdefault("accuracy", []).append(row)
        if self.args.verbose or row["fail"] or row.get("refused"):
            self.log(accuracy_line(row))
        return row

    # ---- sections ---------------------------------------------------------------------------

    def sec_matrix(self):
        """Every function x dtype x layout at one shape (sm_scale given on half of them)."""
        n = 0
        for label, _, _, _ in FUNCTIONS:
            for dtype in ("float16", "bfloat16", "float32"):
                for layout in ("HND", "NHD"):
                    q, k, v = self.make_qkv(2, 8, 8, 1000, 1000, 64, dtype, layout, seed=100 + n)
                    self.checked("matrix", label, "B2 H8 L1000 D64", q, k, v, layout,
                                 scale=0.1 if n % 2 else None)
                    n += 1

    def sec_gqa(self):
        n = 0
        for label in CORE_FUNCS + ["fp8_cuda_sm90"]:
            for hq, hkv in ((32, 8), (16, 1)):
                for layout in ("HND", "NHD"):
                    for dtype in ("float16", "bfloat16"):
                        q, k, v = self.make_qkv(1, hq, hkv, 1024, 1024, 128, dtype, layout,
                                                seed=200 + n)
                        self.checked("gqa", label, "Hq%d Hkv%d L1024 D128" % (hq, hkv), q, k, v,
                                     layout, causal=bool(n % 3 == 0))
                        n += 1

    def sec_odd(self):
        n = 0
        for label in CORE_FUNCS:
            for L in (1, 17, 77, 1000, 4097):
                for causal in (False, True):
                    for dtype in ("float16", "bfloat16"):
                        if dtype == "bfloat16" and L not in (17, 4097):
                            continue
                        q, k, v = self.make_qkv(2, 8, 8, L, L, 128, dtype, "NHD", seed=300 + n)
                        heads = [0, 7] if L >= 4097 else None
                        self.checked("odd", label, "L%d%s" % (L, " causal" if causal else ""),
                                     q, k, v, "NHD", causal=causal, heads=heads)
                        n += 1

    def sec_lqlk(self):
        n = 0
        for label in CORE_FUNCS:
            for lq, lk in ((1, 4097), (77, 1000), (1000, 77), (4097, 17)):
                for causal in (False, True):
                    q, k, v = self.make_qkv(2, 8, 4, lq, lk, 128, "float16", "NHD", seed=400 + n)
                    self.checked("lqlk", label, "Lq%d Lk%d%s" % (lq, lk, " causal-br"
                                                                   if causal else ""),
                                 q, k, v, "NHD", causal=causal)
                    n += 1

    def sec_hdim(self):
        n = 0
        for d in (40, 64, 80, 96, 128, 256):
            labels = [f[0] for f in FUNCTIONS] if d in (40, 256) else \
                CORE_FUNCS + ["fp16_triton"]
            for label in labels:
                for dtype in ("float16", "bfloat16"):
                    layout = "HND" if n % 2 else "NHD"
                    q, k, v = self.make_qkv(1, 8, 8, 777, 777, d, dtype, layout, seed=500 + n)
                    self.checked("hdim", label, "D%d L777" % d, q, k, v, layout,
                                 causal=bool(n % 4 == 1), sdpa_too=(d == 256))
                    n += 1

    def make_mask(self, kind, shape, dtype, seed):
        """A bool (True = attend) or additive float mask of `shape`, with key 0 always visible
        so no row is fully masked."""
        torch = self.torch
        g = torch.Generator(device="cuda").manual_seed(seed)
        keep = torch.rand(*shape, generator=g, device="cuda") > 0.3
        keep[..., 0] = True
        if kind == "bool":
            return keep
        add = torch.randn(*shape, generator=g, device="cuda")
        add = add.masked_fill(~keep, -math.inf)
        return add.to(self.dt(dtype))

    def sec_mask(self):
        b, h, lq, lk, d = 2, 4, 333, 517, 64
        n = 0
        shapes = {2: [lq, lk], 3: [h, lq, lk], "4-comfy": [b, 1, lq, lk], 4: [b, h, lq, lk]}
        for kind in ("bool", "float"):
            for rank, shape in shapes.items():
                for dtype in ("float16", "bfloat16", "float32"):
                    layout = "NHD" if n % 2 == 0 else "HND"
                    labels = ["sageattn"] if rank != "4-comfy" else CORE_FUNCS
                    for label in labels:
                        q, k, v = self.make_qkv(b, h, h, lq, lk, d, dtype, layout, seed=600 + n)
                        mask = self.make_mask(kind, shape, dtype, seed=650 + n)
                        self.checked("mask", label, "%s rank %s %s" % (kind, rank, shape), q, k,
                                     v, layout, mask=mask)
                        n += 1
        # GQA with a mask (the SDPA path with grouped heads), both layouts.
        for i, layout in enumerate(("NHD", "HND")):
            q, k, v = self.make_qkv(2, 8, 2, lq, lk, 128, "bfloat16", layout, seed=680 + i)
            mask = self.make_mask("bool" if i else "float", [b, 1, lq, lk], "bfloat16",
                                  seed=685 + i)
            self.checked("mask", "sageattn", "GQA 8/2 %s mask" % ("bool" if i else "float"), q,
                         k, v, layout, mask=mask)
        # return_lse with a mask or head_dim > 128 (SDPA path): values must be right, or the
        # call must refuse with an exception (never a wrong LSE).
        for i, (d, mk) in enumerate(((64, "bool"), (64, "float"), (256, None))):
            q, k, v = self.make_qkv(2, 4, 4, 333, 517, d, "float16", "NHD", seed=690 + i)
            mask = self.make_mask(mk, [b, 1, 333, 517], "float16", seed=695 + i) if mk else None
            self.checked("mask", "sageattn", "return_lse D%d mask %s" % (d, mk), q, k, v, "NHD",
                         mask=mask, lse=True, may_refuse=True)

    def sec_lse(self):
        n = 0
        for label, _, _, _ in FUNCTIONS:
            for layout in ("HND", "NHD"):
                for causal in (False, True):
                    dtype = "float16" if n % 3 else "bfloat16"
                    q, k, v = self.make_qkv(2, 8, 2, 513, 1000, 128, dtype, layout, seed=700 + n)
                    self.checked("lse", label, "Lq513 Lk1000 GQA%s" % (" causal" if causal
                                                                       else ""),
                                 q, k, v, layout, causal=causal, lse=True)
                    n += 1
        # fp32 input: LSE still float32, natural log.
        q, k, v = self.make_qkv(1, 4, 4, 300, 300, 64, "float32", "NHD", seed=790)
        self.checked("lse", "sageattn", "fp32 L300", q, k, v, "NHD", lse=True)

    def sec_varlen(self):
        torch = self.torch
        n = 0
        for dtype in ("float16", "bfloat16", "float32"):
            for causal in (False, True):
                lq = [77, 1000, 17, 1]
                lk = list(lq) if causal else [100, 1000, 1, 4097]
                h, hkv, d = 8, 2, 128
                g = torch.Generator(device="cuda").manual_seed(800 + n)
                t = self.dt(dtype)
                q = torch.randn(sum(lq), h, d, generator=g, device="cuda").to(t)
                kv = torch.randn(sum(lk), 2, hkv, d, generator=g, device="cuda").to(t)
                k, v = kv[:, 0], kv[:, 1]  # non-contiguous, last dim contiguous
                cq = torch.tensor([0] + lq, device="cuda").cumsum(0).to(torch.int32)
                ck = torch.tensor([0] + lk, device="cuda").cumsum(0).to(torch.int32)
                row = {"section": "varlen", "func": "sageattn_varlen",
                       "case": "lq %s lk %s%s" % (lq, lk, " causal" if causal else ""),
                       "dtype": dtype, "path": self.modes.get("sageattn_varlen", "int8-fp16"),
                       "causal": causal}
                try:
                    self.poison(q.numel() * 4)
                    out = self.sa.sageattn_varlen(q, k, v, cq, ck, max(lq), max(lk),
                                                  is_causal=causal)
                    torch.cuda.synchronize()
                    row["out_dtype"] = str(out.dtype).replace("torch.", "")
                    row["shape_ok"] = list(out.shape) == list(q.shape)
                    row["nonfinite"] = int((~torch.isfinite(out)).sum())
                    outs, refs = [], []
                    for i in range(len(lq)):
                        qs = q[int(cq[i]):int(cq[i + 1])].unsqueeze(0)
                        ks = k[int(ck[i]):int(ck[i + 1])].unsqueeze(0)
                        vs = v[int(ck[i]):int(ck[i + 1])].unsqueeze(0)
                        r, _ = self.reference(qs, ks, vs, "NHD", causal)
                        refs.append(r.transpose(1, 2).reshape(-1))
                        outs.append(out[int(cq[i]):int(cq[i + 1])].reshape(-1))
                    m = self.metrics(torch.cat(outs), torch.cat(refs))
                    m.pop("nonfinite")
                    row.update(m)
                except Exception as e:
                    row["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
                    row["trace"] = traceback.format_exc()[-1500:]
                row["why"] = judge(row)
                row["fail"] = bool(row["why"])
                if row["fail"]:
                    self.fail("varlen", "%s: %s" % (row["case"], "; ".join(row["why"])))
                self.results.setdefault("accuracy", []).append(row)
                if self.args.verbose or row["fail"]:
                    self.log(accuracy_line(row))
                n += 1

    def sec_stream(self):
        """The call must run on torch's current stream: on a side stream, Q is written only
        after a queue of matmuls; a call placed on any other stream reads the old Q."""
        torch = self.torch
        out = {"kind": "measured"}
        try:
            q, k, v = self.make_qkv(1, 8, 8, 2048, 2048, 128, "float16", "NHD", seed=900)
            want = self.sa.sageattn(q, k, v, tensor_layout="NHD")
            torch.cuda.synchronize()
            stale = self.make_qkv(1, 8, 8, 2048, 2048, 128, "float16", "NHD", seed=901)[0]
            qs = stale.clone()  # a contiguous copy of old values, viewed NHD below
            big = torch.randn(8192, 8192, device="cuda", dtype=torch.float16) * 0.01
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                x = big
                for _ in range(6):
                    x = (x @ big).clamp_(-1, 1)
                qs.copy_(q)
                got = self.sa.sageattn(qs, k, v, tensor_layout="NHD")
                done = torch.cuda.Event()
                done.record(side)
            done.synchronize()
            torch.cuda.synchronize()
            diff = float((got.double() - want.double()).abs().max())
            stale_o = self.sa.sageattn(stale, k, v, tensor_layout="NHD")
            torch.cuda.synchronize()
            out["max_abs_vs_default_stream"] = diff
            out["max_abs_stale_vs_fresh"] = float((stale_o.double() - want.double()).abs().max())
            out["ok"] = diff <= 1e-3 and out["max_abs_stale_vs_fresh"] > 1e-2
        except Exception as e:
            out["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
            out["ok"] = False
        if not out["ok"]:
            self.fail("stream", json.dumps(out))
        self.results["sections"]["stream"] = out
        self.log("stream  side-stream call vs default-stream call max|diff| %s  %s" % (
            out.get("max_abs_vs_default_stream"), "ok" if out["ok"] else "FAIL"))

    def sec_graph(self):
        """A call captured in a CUDA graph (torch.cuda.graph), replayed after new Q, K, V are
        copied into the captured tensors, must give what the same call gives eagerly, bit for
        bit: every kernel of the call is in the graph, in order (with SAGEATTENTION_LIBRARY's
        int8-fp8-wgmma, as programmatic dependents of each other), none reads stale inputs."""
        torch = self.torch
        out = {"kind": "measured", "cases": []}
        try:
            for causal in (False, True):
                shape = (1, 8, 8, 1000, 1000, 128, "float16", "HND")
                sq, sk, sv = (x.clone() for x in self.make_qkv(*shape, seed=950))
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):  # warm-up outside the capture (workspace, flags)
                    self.sa.sageattn(sq, sk, sv, tensor_layout="HND", is_causal=causal)
                torch.cuda.current_stream().wait_stream(side)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    so = self.sa.sageattn(sq, sk, sv, tensor_layout="HND", is_causal=causal)
                for seed in (951, 952):
                    q, k, v = self.make_qkv(*shape, seed=seed)
                    sq.copy_(q)
                    sk.copy_(k)
                    sv.copy_(v)
                    g.replay()
                    want = self.sa.sageattn(q, k, v, tensor_layout="HND", is_causal=causal)
                    torch.cuda.synchronize()
                    out["cases"].append({"causal": causal, "seed": seed,
                                         "equal": bool(torch.equal(so, want)),
                                         "max_abs": float((so.double() - want.double())
                                                          .abs().max())})
                del g
            out["ok"] = all(c["equal"] for c in out["cases"])
        except Exception as e:
            out["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
            out["ok"] = False
        if not out["ok"]:
            self.fail("graph", json.dumps(out))
        self.results["sections"]["graph"] = out
        self.log("graph   CUDA graph replays vs eager calls: %s  %s" % (
            " ".join("%s/%d %s" % ("causal" if c["causal"] else "full", c["seed"],
                                   "equal" if c["equal"] else "max|diff| %g" % c["max_abs"])
                     for c in out["cases"]), "ok" if out["ok"] else "FAIL"))

    def sec_compile(self):
        torch = self.torch
        sa = self.sa
        out = {"kind": "measured"}

        class Block(torch.nn.Module):
            def __init__(self, dim, heads):
                super().__init__()
                self.heads = heads
                self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
                self.proj = torch.nn.Linear(dim, dim)

            def forward(self, x):
                b = x.shape[0]
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                d = q.shape[-1] // self.heads
                q, k, v = (t.view(b, -1, self.heads, d) for t in (q, k, v))
                o = sa.sageattn(q, k, v, tensor_layout="NHD", is_causal=False)
                return self.proj(o.reshape(b, -1, self.heads * d))

        m = x1 = None
        try:
            torch.manual_seed(0)
            m = Block(1024, 8).cuda().half().eval()
            x1 = torch.randn(2, 1000, 1024, device="cuda", dtype=torch.float16)
            x2 = torch.randn(2, 333, 1024, device="cuda", dtype=torch.float16)
            torch._dynamo.reset()
            compiled = torch.compile(m, fullgraph=True)
            with torch.no_grad():
                t0 = time.time()
                c1 = compiled(x1)  # the package's first call in this process, when run first
                torch.cuda.synchronize()
                out["first_compile_s"] = time.time() - t0
                t0 = time.time()
                c2 = compiled(x2)  # a second length: a recompile with dynamic shapes
                torch.cuda.synchronize()
                out["second_shape_s"] = time.time() - t0
                e1, e2 = m(x1), m(x2)
            for name, c, e in (("L1000", c1, e1), ("L333", c2, e2)):
                mm = self.metrics(c, e.double())
                out[name] = mm
            out["ok"] = all(out[n]["cos"] >= 0.99999 and out[n]["nonfinite"] == 0
                            for n in ("L1000", "L333"))
        except Exception as e:
            out["error"] = "%s: %s" % (type(e).__name__, str(e)[:600])
            out["trace"] = traceback.format_exc()[-2500:]
            out["ok"] = False
            # Tell a Dynamo trace failure (graph break) from a backend one.
            if m is not None and x1 is not None:
                try:
                    torch._dynamo.reset()
                    with torch.no_grad():
                        torch.compile(m, fullgraph=True, backend="eager")(x1)
                    out["eager_backend_traces"] = True
                except Exception as e2:
                    out["eager_backend_traces"] = False
                    out["eager_backend_error"] = "%s: %s" % (type(e2).__name__, str(e2)[:600])
        if not out["ok"]:
            self.fail("compile", out.get("error", "compiled output differs from eager"))
        self.results["sections"]["compile"] = out
        self.log("compile fullgraph=True: %s  (first %.1f s) %s" % (
            "ok" if out["ok"] else "FAIL", out.get("first_compile_s", -1),
            out.get("error", "") or "cos %s / %s vs eager" % (
                out.get("L1000", {}).get("cos"), out.get("L333", {}).get("cos"))))

    def comfy_attention_sage(self, q, k, v, heads, mask=None):
        """ComfyUI's attention_sage for [B, L, heads*dim] inputs (skip_reshape=False): NHD views,
        rank-4 mask, any exception logged and the call falls back to PyTorch attention."""
        F = self.F
        b, _, dim_head = q.shape
        dim_head //= heads
        q, k, v = map(lambda t: t.view(b, -1, heads, dim_head), (q, k, v))
        if mask is not None:
            if mask.ndim == 2:
                mask = mask.unsqueeze(0)
            if mask.ndim == 3:
                mask = mask.unsqueeze(1)
        try:
            out = self.sa.sageattn(q, k, v, attn_mask=mask, is_causal=False, tensor_layout="NHD")
            fell = None
        except Exception as e:
            fell = "%s: %s" % (type(e).__name__, str(e)[:200])
            self.log("Error running sage attention: %s, using pytorch attention instead." % fell)
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2)
        return out.reshape(b, -1, heads * dim_head), fell

    def sec_comfyui(self):
        torch = self.torch
        F = self.F
        shapes = [  # B, heads, Lq, Lk, dim_head, mask
            (2, 10, 4096, 4096, 64, None), (2, 10, 4096, 77, 64, None),
            (2, 20, 1024, 1024, 64, None), (2, 20, 1024, 77, 64, None),
            (1, 24, 4608, 4608, 128, None), (2, 24, 4096, 4096, 128, None),
            (1, 16, 9216, 9216, 64, None), (1, 24, 9216, 9216, 128, None),
            (2, 24, 1024, 1024, 128, "bool2"), (2, 10, 1024, 333, 64, "float3"),
        ]
        rows = []
        fallbacks = 0
        n = 0
        for b, h, lq, lk, d, mk in shapes:
            for variant in ("float16", "bfloat16", "float32", "kjnodes-fp32->fp16"):
                base = "float32" if variant.startswith("kj") else variant
                t = self.dt(base)
                g = torch.Generator(device="cuda").manual_seed(1000 + n)
                n += 1
                x = torch.randn(b, lq, h * d, generator=g, device="cuda").to(t)
                y = torch.randn(b, lk, 2 * h * d, generator=g, device="cuda").to(t)
                kk, vv = y.chunk(2, dim=-1)
                kk, vv = kk.contiguous(), vv.contiguous()  # separate to_k/to_v outputs
                mask = None
                if mk == "bool2":
                    mask = self.make_mask("bool", [lq, lk], base, seed=n)
                elif mk == "float3":
                    mask = self.make_mask("float", [b, lq, lk], base, seed=n)
                r = {"shape": [b, h, lq, lk, d], "variant": variant, "mask": mk}
                try:
                    if variant.startswith("kj"):  # KJNodes casts fp32 to fp16 and back
                        m16 = mask.half() if mask is not None and mask.is_floating_point() \
                            else mask
                        o, fell = self.comfy_attention_sage(x.half(), kk.half(), vv.half(), h, m16)
                        o = o.float()
                    else:
                        o, fell = self.comfy_attention_sage(x, kk, vv, h, mask)
                    torch.cuda.synchronize()
                    r["fallback"] = fell
                    fallbacks += 1 if fell else 0
                    qh = x.float().view(b, lq, h, d).transpose(1, 2)
                    kh = kk.float().view(b, lk, h, d).transpose(1, 2)
                    vh = vv.float().view(b, lk, h, d).transpose(1, 2)
                    m4 = None
                    if mask is not None:
                        m4 = mask if mask.dtype == torch.bool else mask.float()
                        while m4.dim() < 4:
                            m4 = m4.unsqueeze(1) if m4.dim() == 3 else m4.unsqueeze(0)
                    ref = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=m4)
                    ref = ref.transpose(1, 2).reshape(b, lq, h * d).double()
                    mm = self.metrics(o, ref)
                    r.update(mm)
                    r["out_dtype"] = str(o.dtype).replace("torch.", "")
                    r["ok"] = (not fell and mm["nonfinite"] == 0 and mm["cos"] >= COMFY_BAR["cos"]
                               and mm["rel_l1"] <= COMFY_BAR["rel_l1"] and o.dtype == x.dtype)
                except Exception as e:  # the loop itself broke (not the package's exception)
                    r["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
                    r["ok"] = False
                if not r["ok"]:
                    self.fail("comfyui", json.dumps({k2: r.get(k2) for k2 in (
                        "shape", "variant", "mask", "fallback", "cos", "rel_l1", "nonfinite",
                        "error")}))
                rows.append(r)
                del x, y, kk, vv
        self.results["sections"]["comfyui"] = {"kind": "measured", "calls": len(rows),
                                               "fallbacks": fallbacks, "rows": rows,
                                               "bar": COMFY_BAR}
        worst = min((r.get("cos", 0.0) for r in rows), default=0.0)
        self.log("comfyui attention_sage loop: %d calls, %d fallbacks, %d not ok, worst cos vs "
                 "SDPA fp32 %.6f" % (len(rows), fallbacks, sum(1 for r in rows if not r["ok"]),
                                     worst))

    # ---- speed --------------------------------------------------------------------------

    def events_ms(self, fn, warmup=3, reps=10):
        """Median of per-call CUDA-event times (as bench/bench.py measures the C ABI)."""
        torch = self.torch
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e))
        ts.sort()
        return ts[len(ts) // 2]

    def paired(self, fn_a, fn_b, rounds=5, reps=5):
        """fn_a's time over fn_b's, measured in alternating rounds so that clock and thermal
        drift fall on both alike: medians of the per-round ratios, per call (CUDA events) and
        back to back (loop)."""
        per_call, loop = [], []
        for _ in range(rounds):
            a = self.events_ms(fn_a, warmup=1, reps=reps)
            b = self.events_ms(fn_b, warmup=1, reps=reps)
            per_call.append(a / b)
            la = self.loop_ms(fn_a, n=reps)
            lb = self.loop_ms(fn_b, n=reps)
            loop.append(la / lb)
        per_call.sort()
        loop.sort()
        return {"ratio": per_call[len(per_call) // 2], "loop_ratio": loop[len(loop) // 2],
                "rounds": rounds, "reps": reps}

    def loop_ms(self, fn, n=10):
        """Back-to-back calls between two events, per call (what a model sees)."""
        torch = self.torch
        fn()
        torch.cuda.synchronize()
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n):
            fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e) / n

    def wall_us(self, fn, n):
        """Host wall time per call over n back-to-back calls, synchronised at the end."""
        torch = self.torch
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / n * 1e6

    def raw_call(self, q, k, v, layout, mode, variant="legacy"):
        """A lean raw C ABI call (params, output and workspace prepared once, kept alive by the
        closure): the ABI's own cost, with no per-call Python work beyond the ctypes call.
        variant: "legacy" the ABI 1.0 struct (the library asks the driver for the device's
        facts on every call); "context" ABI 1.2 with the device's sageattn_context (what a C
        program that keeps one gets); "recompute" the same plus the non-finite flag and the fp16
        recompute queued in the same call (what the package asks of the library); "fp16_gated"
        that recompute's launch alone (fp16 mode with a context, only_if_nonzero on a zero flag:
        one launch whose blocks exit at once)."""
        import ctypes
        torch = self.torch
        o = torch.empty_like(q)
        p = self.raw.params(q, k, v, o, layout, False, "int8-fp16")
        p.mode = self.raw_mode_values()[mode]  # any mode the library names (issue 9 variants)
        dev = torch.cuda.current_device()
        flag = None
        if variant != "legacy":
            if not self.raw.has_context:
                raise RuntimeError("this library has no sageattn_context (ABI 1.2)")
            flag = torch.zeros(1, dtype=torch.int32, device="cuda")
            p = self.raw.params12(p, self.raw.context(dev),
                                  flag.data_ptr() if variant == "recompute" else None,
                                  variant == "recompute")
            if variant == "fp16_gated":  # the recompute's launch alone: fp16, flag down
                p.mode = self.raw_mode_values()["fp16"]
                p.only_if_nonzero = flag.data_ptr()
        need = ctypes.c_size_t(0)
        st = self.raw.workspace_any(ctypes.addressof(p), dev, ctypes.byref(need))
        if st != 0:
            raise RuntimeError("sageattn_workspace_size %d: %s" % (st, self.raw.error()))
        ws = torch.empty(max(need.value, 1), dtype=torch.uint8, device="cuda")
        run = self.raw.run_any
        addr, wsp, wsn = ctypes.addressof(p), ws.data_ptr(), ws.numel()
        stream_of = getattr(torch._C, "_cuda_getCurrentRawStream", None) or \
            (lambda i: torch.cuda.current_stream(i).cuda_stream)
        keep = (q, k, v, o, p, ws, flag)

        def fn(keep=keep):
            st = run(addr, wsp, wsn, stream_of(dev))
            if st != 0:
                raise RuntimeError("sageattn_run %d: %s" % (st, self.raw.error()))
        return fn, o

    def raw_mode_values(self):
        """{mode name: value} as the library names them (sageattn_mode_name(0..31))."""
        if not hasattr(self, "_raw_modes"):
            self._raw_modes = {}
            for i in range(32):
                name = self.raw.lib.sageattn_mode_name(i)
                name = name.decode() if name else ""
                if name and name != "unknown" and name not in self._raw_modes:
                    self._raw_modes[name] = i
        return self._raw_modes

    def speed_shapes(self):
        return [("B1 H24 L4096 D128", 1, 24, 4096, 128), ("B1 H32 L16384 D128", 1, 32, 16384,
                                                          128)]

    def measure_package_speed(self):
        """Package timings only (also run by the SAGEATTENTION_CHECK_FINITE=0 child)."""
        torch = self.torch
        out = {}
        for name, b, h, L, d in self.speed_shapes():
            out[name] = self.package_speed_one(b, h, L, d)
            torch.cuda.empty_cache()
        out["overhead_L128"] = self.measure_overhead(package_only=True)
        return out

    def package_speed_one(self, b, h, L, d):
        q, k, v = self.make_hnd_contiguous(b, h, L, d)
        return {"sageattn_hnd_ms": self.events_ms(lambda: self.sa.sageattn(q, k, v)),
                "sageattn_hnd_loop_ms": self.loop_ms(lambda: self.sa.sageattn(q, k, v))}

    def make_hnd_contiguous(self, b, h, L, d, seed=7):
        torch = self.torch
        g = torch.Generator(device="cuda").manual_seed(seed)
        return tuple(torch.randn(b, h, L, d, generator=g, device="cuda", dtype=torch.float16)
                     for _ in range(3))

    def host_only_us(self, fn, n=100, reps=5):
        """Host time per call with the GPU kept busy (torch.cuda._sleep ahead of the calls), so
        that launches only queue: the CPU cost of issuing a call, whatever the GPU's speed.
        n calls stay well inside the launch queue (a few launches each)."""
        torch = self.torch
        sleep = getattr(torch.cuda, "_sleep", None)
        if sleep is None:
            return None
        best = None
        for _ in range(reps):
            fn()
            torch.cuda.synchronize()
            sleep(200_000_000)  # ~0.1 s of GPU time ahead of the calls
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            us = (time.perf_counter() - t0) / n * 1e6
            torch.cuda.synchronize()
            best = us if best is None or us < best else best
        return best

    def kernels_per_call(self, fn, n=20):
        """GPU kernels per call (torch.profiler's CUDA activity over n calls), or None."""
        torch = self.torch
        try:
            from torch.profiler import ProfilerActivity, profile
            fn()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(n):
                    fn()
                torch.cuda.synchronize()
            names = [e.name for e in prof.events()
                     if getattr(e, "device_type", None) is not None
                     and "CUDA" in str(e.device_type)
                     and not e.name.lower().startswith(("memcpy", "memset"))]
            per = {}
            for name in names:
                short = name.split("(")[0].split("<")[0][-48:]
                per[short] = per.get(short, 0) + 1
            return {"per_call": len(names) / n,
                    "kernels": {k2: v2 / n for k2, v2 in sorted(per.items())}}
        except Exception as e:  # no CUPTI in this image, or a profiler change
            return {"error": "%s: %s" % (type(e).__name__, str(e)[:200])}

    def measure_overhead(self, package_only=False):
        """Per-call cost at a small shape (B1 H24 L128 D128, ComfyUI's NHD views), where the
        host is the cost: wall time of back-to-back calls (synchronised at the end), host-only
        time (GPU kept busy), CUDA-event time of one isolated call, and kernels per call; for
        the package with and without the non-finite check, the raw C ABI (ABI 1.0 struct; ABI
        1.2 with a context; with a context and the recompute, as the package asks), and SDPA."""
        torch = self.torch
        F = self.F
        g = torch.Generator(device="cuda").manual_seed(11)
        x = torch.randn(3, 1, 128, 24 * 128, generator=g, device="cuda", dtype=torch.float16)
        q, k, v = (t.view(1, 128, 24, 128) for t in x)
        n = self.args.overhead_calls

        def pkg():
            return self.sa.sageattn(q, k, v, tensor_layout="NHD")
        res = {"shape": "B1 H24 L128 D128 NHD", "calls": n, "sageattn_us": self.wall_us(pkg, n)}
        if package_only:
            res["sageattn_host_us"] = self.host_only_us(pkg)
            return res
        fns = {"sageattn": pkg}
        os.environ[CHECK_FINITE_ENV] = "0"
        try:
            res["sageattn_no_check_us"] = self.wall_us(pkg, n)
            res["sageattn_no_check_host_us"] = self.host_only_us(pkg)
            res["gpu_ms_sageattn_no_check"] = self.events_ms(pkg)
        finally:
            os.environ.pop(CHECK_FINITE_ENV, None)
        mode = self.modes.get("sageattn") or self.auto_mode
        res["mode"] = mode
        qh, kh, vh = (t.transpose(1, 2) for t in (q, k, v))
        fns["sdpa"] = lambda: F.scaled_dot_product_attention(qh, kh, vh)
        for variant in ("legacy", "context", "recompute", "fp16_gated"):
            try:
                fn, _ = self.raw_call(q, k, v, "NHD", mode, variant)
                fn()  # a call the library refuses is reported here, never timed
                fns["raw_" + variant] = fn
            except Exception as e:  # an older library, or a mode the binding does not name
                res["raw_%s_error" % variant] = "%s: %s" % (type(e).__name__, str(e)[:200])
        for name, fn in fns.items():
            if name != "sageattn":
                res[name + "_us"] = self.wall_us(fn, n)
            res[name + "_host_us"] = self.host_only_us(fn)
            res["gpu_ms_" + name] = self.events_ms(fn)
        # Whether host-only time depends on how deep the launch queue is (100 calls queue
        # 300-400 launches behind the sleep; 10 calls 30-40).
        for name in ("sageattn", "raw_context", "raw_recompute"):
            if name in fns:
                res[name + "_host_us_n10"] = self.host_only_us(fns[name], n=10)
        res["ring_wrap_host_us"] = self.ring_wrap_host_us()
        # The names the previous sessions' results used.
        res["raw_abi_us"] = res.get("raw_context_us", res.get("raw_legacy_us"))
        res["gpu_ms_raw"] = res.get("gpu_ms_raw_context", res.get("gpu_ms_raw_legacy"))
        try:
            res["raw_abi_bench_wrapper_us"] = self.wall_us(
                lambda: self.raw.attn(q, k, v, "NHD", False, mode), n)
        except Exception as e:
            res["raw_error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
        # Kernels per call last: a torch.profiler session can leave CUPTI attached to the
        # process (pytorch/pytorch#144455), which slows every later launch; the previous
        # check's package host-only figure (55.5 us) was the first timing taken after one.
        for name, fn in fns.items():
            if name != "sdpa":
                res["kernels_" + name] = self.kernels_per_call(fn)
        os.environ[CHECK_FINITE_ENV] = "0"
        try:
            res["kernels_sageattn_no_check"] = self.kernels_per_call(pkg)
        finally:
            os.environ.pop(CHECK_FINITE_ENV, None)
        # The same host-only timing again after the profiler ran: whether it still costs.
        res["sageattn_host_us_after_profiler"] = self.host_only_us(pkg)
        res["raw_context_host_us_after_profiler"] = (
            self.host_only_us(fns["raw_context"]) if "raw_context" in fns else None)
        return res

    def ring_wrap_host_us(self, wraps=20):
        """Host time of one wrap of the package's non-finite flag ring (fold into `seen`, zero
        the ring, copy `seen` to pinned memory, record an event) with the GPU kept busy, or an
        error text: what a checked call pays once per FLAG_SLOTS calls."""
        torch = self.torch
        try:
            from sageattention import _device
            checker = _device.FiniteCheck(torch.device("cuda", torch.cuda.current_device()))
            sleep = getattr(torch.cuda, "_sleep", None)
            checker.next = _device.FLAG_SLOTS
            checker.next_flag(True)  # the pinned buffer and event, made once per stream
            torch.cuda.synchronize()
            if sleep is not None:
                sleep(200_000_000)
            t0 = time.perf_counter()
            for _ in range(wraps):
                checker.next = _device.FLAG_SLOTS
                checker.next_flag(True)
            us = (time.perf_counter() - t0) / wraps * 1e6
            torch.cuda.synchronize()
            return {"us": us, "flag_slots": _device.FLAG_SLOTS,
                    "per_call_us": us / _device.FLAG_SLOTS}
        except Exception as e:
            return {"error": "%s: %s" % (type(e).__name__, str(e)[:200])}

    def overhead_line(self, o):
        def f(key):
            val = o.get(key)
            return "%.1f" % val if isinstance(val, (int, float)) else "n/a"

        def kc(key):
            val = o.get(key) or {}
            return "%g" % val["per_call"] if "per_call" in val else "?"

        def us(key):
            val = o.get(key)
            return "%.1f" % (val * 1e3) if isinstance(val, (int, float)) else "n/a"

        def wrap(key):
            val = (o.get("ring_wrap_host_us") or {}).get(key)
            return "%.2f" % val if isinstance(val, (int, float)) else "n/a"
        return ("overhead L=128 (wall per call, back to back | host only, GPU busy | kernels): "
                "sageattn %s | %s us | %s; no check %s | %s us | %s; raw ABI with context %s | "
                "%s us | %s; with context + recompute %s | %s us | %s; ABI 1.0 struct %s | %s us "
                "| %s; SDPA %s | %s us; bench wrapper %s us; host only with 10 calls queued: "
                "sageattn %s, raw with context %s, + recompute %s us; raw fp16 gated launch "
                "alone %s | %s us; flag ring wrap %s us (%s us per call); host only after "
                "the profiler ran: sageattn %s, raw with context %s us; isolated call (CUDA "
                "events): sageattn %s, no check %s, raw with context %s, + recompute %s us" % (
                    f("sageattn_us"), f("sageattn_host_us"), kc("kernels_sageattn"),
                    f("sageattn_no_check_us"), f("sageattn_no_check_host_us"),
                    kc("kernels_sageattn_no_check"), f("raw_context_us"),
                    f("raw_context_host_us"), kc("kernels_raw_context"), f("raw_recompute_us"),
                    f("raw_recompute_host_us"), kc("kernels_raw_recompute"), f("raw_legacy_us"),
                    f("raw_legacy_host_us"), kc("kernels_raw_legacy"), f("sdpa_us"),
                    f("sdpa_host_us"), f("raw_abi_bench_wrapper_us"),
                    f("sageattn_host_us_n10"), f("raw_context_host_us_n10"),
                    f("raw_recompute_host_us_n10"), f("raw_fp16_gated_us"),
                    f("raw_fp16_gated_host_us"), wrap("us"), wrap("per_call_us"),
                    f("sageattn_host_us_after_profiler"), f("raw_context_host_us_after_profiler"),
                    us("gpu_ms_sageattn"), us("gpu_ms_sageattn_no_check"),
                    us("gpu_ms_raw_context"), us("gpu_ms_raw_recompute")))

    def sec_speed(self):
        torch = self.torch
        rows = []
        for name, b, h, L, d in self.speed_shapes():
            e = self.speed_one(name, b, h, L, d)
            rows.append(e)
            self.log(self.speed_line(e))
            torch.cuda.empty_cache()
        self.speed_tail(rows)

    def speed_one(self, name, b, h, L, d):
        """One speed shape: the package, its pv variants, the raw ABI per mode, SDPA."""
        torch = self.torch
        F = self.F
        q, k, v = self.make_hnd_contiguous(b, h, L, d)
        nhd = tuple(t.transpose(1, 2).contiguous() for t in (q, k, v))
        e = {"shape": name, "causal": False, "dtype": "float16",
             "auto_mode": self.modes.get("sageattn") or self.auto_mode}
        ops = 4.0 * b * h * L * L * d
        impls = [("sageattn (HND)", lambda: self.sa.sageattn(q, k, v, tensor_layout="HND")),
                 ("sageattn (NHD)", lambda: self.sa.sageattn(*nhd, tensor_layout="NHD"))]
        for label, fname, kw, mode in FUNCTIONS[1:]:
            if label in ("fp16_cuda:fp32", "fp8_cuda:fp32+fp32"):
                f = getattr(self.sa, fname)
                impls.append(("%s (HND)" % label,
                              lambda f=f, kw=kw: f(q, k, v, tensor_layout="HND", **kw)))
        used = [self.modes.get(x) for x in ("sageattn", "fp16_cuda:fp32", "fp8_cuda:fp32+fp32")]
        # The raw ABI's own figure: ABI 1.2 with the device's context where the library has
        # one (what a C program keeping a context gets), the ABI 1.0 struct otherwise; for the
        # package's mode also the ABI 1.0 struct and the context with the recompute queued.
        best = "context" if self.raw.has_context else "legacy"
        m_sa = self.modes.get("sageattn") or self.auto_mode
        raws = [("raw ABI %s" % m, m, best)
                for m in dict.fromkeys(["int8-fp16", "int8-fp8", "fp16"] + [m for m in used if m])]
        if self.raw.has_context:
            raws += [("raw ABI %s (ABI 1.0 struct)" % m_sa, m_sa, "legacy"),
                     ("raw ABI %s + recompute" % m_sa, m_sa, "recompute")]
        for label, mode, variant in raws:
            try:
                fn, _ = self.raw_call(q, k, v, "HND", mode, variant)
                impls.append((label, fn))
            except Exception as ex:
                e[label] = {"error": str(ex)[:200]}
        impls.append(("torch SDPA (default)", lambda: F.scaled_dot_product_attention(q, k, v)))
        fns = {}
        for label, fn in impls:
            try:
                ms = self.events_ms(fn)
                e[label] = {"ms": ms, "loop_ms": self.loop_ms(fn), "tops": ops / ms / 1e9}
                fns[label] = fn
            except Exception as ex:
                e[label] = {"error": "%s: %s" % (type(ex).__name__, str(ex)[:200])}
        # The non-finite check (read per call from the environment): the same call without it.
        def no_check():
            os.environ[CHECK_FINITE_ENV] = "0"
            try:
                return self.sa.sageattn(q, k, v, tensor_layout="HND")
            finally:
                os.environ.pop(CHECK_FINITE_ENV, None)
        try:
            ms = self.events_ms(no_check)
            e["sageattn (HND, no check)"] = {"ms": ms, "loop_ms": self.loop_ms(no_check),
                                             "tops": ops / ms / 1e9}
            fns["sageattn (HND, no check)"] = no_check
        except Exception as ex:
            e["sageattn (HND, no check)"] = {"error": "%s: %s" % (type(ex).__name__,
                                                                  str(ex)[:200])}
        # The workspace cap may split this call into parts: the same call with no cap.
        setter = getattr(self.sa, "set_workspace_limit", None)
        if setter is not None:
            def no_cap():
                setter(None)
                try:
                    return self.sa.sageattn(q, k, v, tensor_layout="HND")
                finally:
                    setter("default")
            try:
                ms = self.events_ms(no_cap)
                e["sageattn (HND, no cap)"] = {"ms": ms, "loop_ms": self.loop_ms(no_cap),
                                               "tops": ops / ms / 1e9}
                fns["sageattn (HND, no cap)"] = no_cap
            except Exception as ex:
                e["sageattn (HND, no cap)"] = {"error": "%s: %s" % (type(ex).__name__,
                                                                    str(ex)[:200])}
        # Accuracy at this shape: two heads, 1024 sampled rows against fp64.
        try:
            rws = torch.randperm(L, device="cuda")[:1024].sort().values
            ref, _ = self.reference(q, k, v, "HND", heads=[0, h - 1], rows=rws)
            o = self.sa.sageattn(q, k, v, tensor_layout="HND")
            e["sageattn_accuracy"] = self.metrics(o[:, [0, h - 1]][:, :, rws], ref)
        except Exception as ex:
            e["sageattn_accuracy"] = {"error": str(ex)[:200]}
        for pkg, raw in (("sageattn (HND)", "raw ABI %s" % m_sa),
                         ("sageattn (HND)", "raw ABI %s (ABI 1.0 struct)" % m_sa),
                         ("sageattn (HND)", "raw ABI %s + recompute" % m_sa),
                         ("sageattn (NHD)", "raw ABI %s" % m_sa),
                         ("sageattn (HND, no cap)", "raw ABI %s" % m_sa),
                         ("sageattn (HND, no check)", "raw ABI %s" % m_sa),
                         ("fp16_cuda:fp32 (HND)",
                          "raw ABI %s" % self.modes.get("fp16_cuda:fp32", "int8-fp16")),
                         ("fp8_cuda:fp32+fp32 (HND)",
                          "raw ABI %s" % self.modes.get("fp8_cuda:fp32+fp32", "int8-fp8"))):
            entry = {"raw": raw}
            if pkg in fns and raw in fns:
                try:
                    pr = self.paired(fns[pkg], fns[raw])
                    entry.update(pr)
                    entry["within_3pct"] = pr["ratio"] <= 1.0 + SPEED_GOAL
                    entry["loop_within_3pct"] = pr["loop_ratio"] <= 1.0 + SPEED_GOAL
                except Exception as ex:
                    entry["error"] = "%s: %s" % (type(ex).__name__, str(ex)[:200])
            entry.setdefault("ratio", None)
            entry.setdefault("loop_ratio", None)
            vs = e.setdefault("vs_raw", {})
            vs[pkg if pkg not in vs else "%s vs %s" % (pkg, raw)] = entry
        # The check's own cost, measured the same way (on / off alternately).
        if "sageattn (HND)" in fns and "sageattn (HND, no check)" in fns:
            try:
                e["check_cost"] = self.paired(fns["sageattn (HND)"],
                                              fns["sageattn (HND, no check)"])
            except Exception as ex:
                e["check_cost"] = {"error": str(ex)[:200]}
        return e

    def speed_tail(self, rows):
        """Overhead at L=128 and the non-finite check's cost (child with the check off)."""
        over = self.measure_overhead()
        self.log(self.overhead_line(over))
        raw = over.get("raw_context_us")
        if raw:
            self.log("overhead L=128: sageattn - raw ABI with context = %+.1f us wall (goal <= "
                     "+5), %+.1f us host only" % (
                         over["sageattn_us"] - raw,
                         (over.get("sageattn_host_us") or 0) -
                         (over.get("raw_context_host_us") or 0)))
        nocheck = self.child("speed-nocheck", {CHECK_FINITE_ENV: "0"})
        cost = {"env": "%s=0" % CHECK_FINITE_ENV, "child": nocheck}
        for e in rows:  # in this process (the setting is read per call), on/off alternated
            on, off = e.get("sageattn (HND)", {}), e.get("sageattn (HND, no check)", {})
            pc = e.get("check_cost", {})
            if off.get("ms") and pc.get("ratio"):
                cost[e["shape"] + " (in process)"] = {
                    "check_off_ms": off["ms"], "cost_ms": (pc["ratio"] - 1.0) * off["ms"],
                    "cost_pct": (pc["ratio"] - 1.0) * 100,
                    "loop_cost_ms": (pc["loop_ratio"] - 1.0) * off["loop_ms"],
                    "loop_cost_pct": (pc["loop_ratio"] - 1.0) * 100}
        if "error" not in nocheck:
            for name, _, _, _, _ in self.speed_shapes():
                on = next(r for r in rows if r["shape"] == name)["sageattn (HND)"].get("ms")
                off = nocheck.get(name, {}).get("sageattn_hnd_ms")
                if on and off:
                    cost[name] = {"check_on_ms": on, "check_off_ms": off,
                                  "cost_ms": on - off, "cost_pct": (on - off) / off * 100}
            off_us = nocheck.get("overhead_L128", {}).get("sageattn_us")
            if off_us:
                cost["overhead_L128"] = {"check_on_us": over["sageattn_us"],
                                         "check_off_us": off_us,
                                         "cost_us": over["sageattn_us"] - off_us}
        self.results["sections"]["speed"] = {"kind": "measured", "rows": rows, "overhead": over,
                                             "finite_check_cost": cost,
                                             "method": "CUDA-event median of 10 calls after 3 "
                                             "warm-ups (ms), and 10 back-to-back calls between two "
                                             "events (loop_ms); fp16, non-causal, HND contiguous "
                                             "unless NHD is named"}
        for name in [s[0] + t for s in self.speed_shapes() for t in ("", " (in process)")] + \
                ["overhead_L128"]:
            c = cost.get(name)
            if c:
                self.log("non-finite check cost %s: %s" % (name, json.dumps(
                    {k2: round(v2, 4) for k2, v2 in c.items()})))
        if "error" in nocheck:
            self.log("non-finite check cost: child failed: %s" % nocheck["error"][:300])

    def speed_line(self, e):
        cells = []
        for k2, v2 in e.items():
            if isinstance(v2, dict) and "ms" in v2:
                cells.append("%s %.3f ms" % (k2, v2["ms"]))
        verdicts = ["%s/%s %.3f%s" % (p.split(" ")[0], v2["raw"].replace("raw ABI ", ""),
                                      v2["ratio"], "" if v2["within_3pct"] else " (>3%)")
                    for p, v2 in e.get("vs_raw", {}).items() if v2["ratio"]]
        return "speed %s: %s | ratio %s" % (e["shape"], "; ".join(cells), ", ".join(verdicts))

    # ---- memory (children) -------------------------------------------------------------

    def sec_memory(self):
        lift = self.args.cap_lift
        env_name, _, env_val = lift.partition("=")
        res = {"kind": "measured", "shape": "B1 H40 L75600 D128 fp16 NHD views",
               "default_cap": self.child("memory", {}),
               "cap_lifted": self.child("memory", {env_name: env_val}), "lift_setting": lift}
        for k2 in ("default_cap", "cap_lifted"):
            r = res[k2]
            if "error" in r:
                self.fail("memory", "%s: %s" % (k2, r["error"][:300]))
                continue
            a = r.get("accuracy", {})
            bar = bar_for(r.get("path", self.auto_mode) or "int8-fp8", "float16")
            if a.get("nonfinite", 1) or a.get("cos", 0) < bar["cos"] or \
                    a.get("rel_l1", 1) > bar["rel_l1"]:
                self.fail("memory", "%s accuracy %s" % (k2, a))
            if k2 == "default_cap":
                # The cap bounds the call's extra memory (allocator rounding allowed for).
                cap_mib = r.get("cap_mib") or DEFAULT_CAP_MIB
                r["cap_respected"] = r["peak_extra_mib"] <= cap_mib + CAP_SLACK_MIB
                if not r["cap_respected"]:
                    self.fail("memory", "peak extra %.1f MiB > the default cap %.0f MiB + %d" % (
                        r["peak_extra_mib"], cap_mib, CAP_SLACK_MIB))
            self.log("memory %-11s peak extra %8.1f MiB resident after %8.1f MiB first %.1f ms "
                     "then %.1f ms (ABI full workspace %.1f MiB) cos %.6f" % (
                         k2, r["peak_extra_mib"], r["resident_extra_mib"], r["first_call_ms"],
                         r["second_call_ms"], r.get("abi_workspace_mib") or -1,
                         a.get("cos", -1)))
        self.results["sections"]["memory"] = res

    def child(self, what, env_extra):
        """Runs this script in a fresh interpreter (so import-time settings apply)."""
        env = dict(os.environ)
        env.update(env_extra)
        path = "/tmp/dropin_child_%d_%s.json" % (os.getpid(), what)
        cmd = [sys.executable, os.path.abspath(__file__), "--lib", self.args.lib,
               "--child", what, "--child-out", path,
               "--overhead-calls", str(self.args.overhead_calls)]
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                               timeout=self.args.child_timeout)
            if p.returncode != 0 or not os.path.exists(path):
                return {"error": "child %s exit %d: %s" % (what, p.returncode,
                                                           (p.stderr or p.stdout)[-1500:]),
                        "env": env_extra}
            with open(path) as f:
                r = json.load(f)
            os.unlink(path)
            r["env"] = env_extra
            return r
        except subprocess.TimeoutExpired:
            return {"error": "child %s timed out after %d s" % (what, self.args.child_timeout),
                    "env": env_extra}

    def sec_import(self):
        r = self.child("import", {})
        ok = "error" not in r and r.get("cuda_initialized_after_import") is False
        if not ok:
            self.fail("import", json.dumps(r)[:500])
        r["kind"] = "measured"
        self.results["sections"]["import"] = r
        self.log("import  sageattention %s in %.2f s; CUDA initialised by the import: %s  %s" % (
            r.get("version"), r.get("import_s", -1), r.get("cuda_initialized_after_import"),
            "ok" if ok else "FAIL"))


# ---------------------------------------------------------------------------------------------

def load_package(lib):
    os.environ["SAGEATTENTION_LIBRARY"] = os.path.abspath(lib)
    sys.path.insert(0, PACKAGE_PARENT)
    import sageattention
    return sageattention


def child_main(args):
    """--child: one measurement in a fresh interpreter, JSON to --child-out."""
    out = {}
    if args.child == "import":
        import torch
        t0 = time.time()
        m = load_package(args.lib)
        out["import_s"] = time.time() - t0
        out["version"] = getattr(m, "__version__", None)
        out["file"] = getattr(m, "__file__", None)
        out["cuda_initialized_after_import"] = bool(torch.cuda.is_initialized())
    else:
        run = Run(args)
        run.sa = load_package(args.lib)
        run.auto_mode = resolve_auto(run)
        torch = run.torch
        if args.child == "speed-nocheck":
            out = run.measure_package_speed()
        elif args.child == "memory":
            out = memory_child(run, torch)
    with open(args.child_out, "w") as f:
        json.dump(out, f)


def memory_child(run, torch):
    """Peak extra memory of one sageattn call at a Wan-like shape, beyond inputs and output."""
    import ctypes
    b, h, L, d = 1, 40, 75600, 128
    g = torch.Generator(device="cuda").manual_seed(3)
    x = [torch.randn(b, L, h * d, generator=g, device="cuda", dtype=torch.float16)
         for _ in range(3)]
    q, k, v = (t.view(b, -1, h, d) for t in x)
    out_bytes = q.numel() * q.element_size()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    o = run.sa.sageattn(q, k, v, tensor_layout="NHD")
    e.record()
    e.synchronize()
    r = {"first_call_ms": s.elapsed_time(e),
         "peak_extra_mib": (torch.cuda.max_memory_allocated() - base - out_bytes) / 2**20,
         "resident_extra_mib": (torch.cuda.memory_allocated() - base - out_bytes) / 2**20,
         "inputs_mib": 3 * out_bytes / 2**20, "output_mib": out_bytes / 2**20,
         "path": run.package_modes().get("sageattn") or run.auto_mode}
    getter = getattr(run.sa, "get_workspace_limit", None)
    if getter is not None:
        lim = getter()
        r["cap_mib"] = lim / 2**20 if lim else None
    del o
    torch.cuda.reset_peak_memory_stats()
    base2 = torch.cuda.memory_allocated()
    s.record()
    o = run.sa.sageattn(q, k, v, tensor_layout="NHD")
    e.record()
    e.synchronize()
    r["second_call_ms"] = s.elapsed_time(e)
    r["second_call_peak_extra_mib"] = (torch.cuda.max_memory_allocated() - base2 -
                                       out_bytes) / 2**20
    r["reserved_mib"] = torch.cuda.memory_reserved() / 2**20
    rows = torch.randperm(L, device="cuda")[:2048].sort().values
    ref, _ = run.reference(q, k, v, "NHD", heads=[0, h - 1], rows=rows)
    r["accuracy"] = run.metrics(o.transpose(1, 2)[:, [0, h - 1]][:, :, rows], ref)
    r["accuracy"]["nonfinite_whole_output"] = int((~torch.isfinite(o)).sum())
    r["accuracy"]["nonfinite"] = r["accuracy"]["nonfinite_whole_output"]
    try:  # what the C ABI would take for the whole call at once (context for the cap)
        p = run.raw.params(q, k, v, o, "NHD", False, run.auto_mode)
        n = ctypes.c_size_t(0)
        st = run.raw.lib.sageattn_workspace_size(ctypes.byref(p), torch.cuda.current_device(),
                                                 ctypes.byref(n))
        r["abi_workspace_mib"] = n.value / 2**20 if st == 0 else None
    except Exception as ex:
        r["abi_workspace_error"] = str(ex)[:200]
    return r


def resolve_auto(run):
    st, mode = run.raw.resolve("auto")
    if st != 0:
        raise RuntimeError("sageattn_resolve_mode(auto): %d %s" % (st, run.raw.error()))
    return run.raw.lib.sageattn_mode_name(mode).decode()


def info_block(run, args):
    torch = run.torch
    dev = torch.cuda.get_device_properties(0)
    with open(args.lib, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    try:
        import triton
        triton_v = triton.__version__
    except Exception:
        triton_v = None
    rev = args.rev
    if not rev:
        try:
            rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True, timeout=10).stdout.strip()
        except Exception:
            rev = None
    try:
        drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:
        drv = None
    return {"card": dev.name, "cc": "%d.%d" % (dev.major, dev.minor), "driver": drv,
            "torch": torch.__version__, "cuda": torch.version.cuda, "triton": triton_v,
            "python": sys.version.split()[0], "package_version": getattr(run.sa, "__version__",
                                                                          None),
            "package_file": getattr(run.sa, "__file__", None), "lib": os.path.abspath(args.lib),
            "lib_sha256": sha, "lib_archs": run.raw.lib.sageattn_built_archs().decode(),
            "auto_mode": run.auto_mode, "rev": rev,
            "command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default=os.environ.get("SAGEATTENTION_LIBRARY"),
                    help="libsageattn.so to load (default: $SAGEATTENTION_LIBRARY)")
    ap.add_argument("--out", help="results JSON")
    ap.add_argument("--only", help="comma-separated sections: " + ",".join(SECTIONS))
    ap.add_argument("--skip", help="comma-separated sections to leave out")
    ap.add_argument("--cap-lift", default=WORKSPACE_CAP_LIFT_DEFAULT,
                    help="ENV=VALUE that lifts the package's workspace cap (default %(default)s)")
    ap.add_argument("--overhead-calls", type=int, default=2000)
    ap.add_argument("--child-timeout", type=int, default=240)
    ap.add_argument("--rev", help="source revision to record (default: git rev-parse)")
    ap.add_argument("--verbose", action="store_true", help="print every accuracy row")
    ap.add_argument("--self-check", action="store_true",
                    help="run the pure helpers on known data (no torch, no GPU) and exit")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.self_check:
        sys.exit(1 if self_check() else 0)
    if not args.lib or not os.path.exists(args.lib):
        print("dropin_check: --lib PATH (or SAGEATTENTION_LIBRARY) must name libsageattn.so",
              file=sys.stderr)
        sys.exit(2)
    if args.child:
        child_main(args)
        return
    started = time.time()
    cleared = {n: os.environ.pop(n) for n in PACKAGE_ENV if n in os.environ}
    try:
        run = Run(args)
    except (ImportError, OSError, AttributeError) as e:  # no torch, or not libsageattn
        print("dropin_check: cannot start: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        sys.exit(2)
    run.auto_mode = resolve_auto(run)
    wanted = [s for s in (args.only.split(",") if args.only else SECTIONS)]
    wanted = [s for s in wanted if s not in (args.skip or "").split(",")]
    unknown = [s for s in wanted if s not in SECTIONS]
    if unknown:
        print("dropin_check: unknown sections %s" % unknown, file=sys.stderr)
        sys.exit(2)
    try:
        run.sa = load_package(args.lib)
    except Exception:
        print("dropin_check: import sageattention failed:\n" + traceback.format_exc())
        sys.exit(1)
    run.results["info"] = info = info_block(run, args)
    info["settings_cleared"] = cleared
    if not os.path.realpath(info["package_file"] or "").startswith(
            os.path.realpath(PACKAGE_PARENT) + os.sep):
        run.fail("import", "imported %s, not this tree's share/python" % info["package_file"])
    modes = run.package_modes()
    info["package_modes"] = modes
    if "error" not in modes:
        run.modes = modes
    run.log(json.dumps(info))
    worst_ref = run.check_reference()
    run.results["reference_self_check_max_err"] = worst_ref
    if worst_ref > 1e-9:
        run.fail("reference", "torch fp64 reference differs from the stdlib one by %g" % worst_ref)
    run.results["bars"] = BARS
    timings = {}
    for sec in wanted:
        t0 = time.time()
        run.log("== %s" % sec)
        try:
            getattr(run, "sec_" + sec)()
        except Exception as e:  # a broken section is reported; the others still run
            run.fail(sec, "section aborted: %s: %s" % (type(e).__name__, str(e)[:300]))
            run.log(traceback.format_exc()[-2000:])
        timings[sec] = round(time.time() - t0, 2)
        run.torch.cuda.empty_cache()
    run.results["section_seconds"] = timings
    run.results["total_seconds"] = round(time.time() - started, 1)
    run.results["failures"] = run.failures
    rows = run.results.get("accuracy", [])
    if args.out:
        with open(args.out, "w") as f:
            json.dump(run.results, f, indent=1, default=str)
    # Compact table, then the summary last.
    run.log("")
    for line in accuracy_table(rows):
        run.log(line)
    run.log("")
    summary = ["dropin_check on %s (torch %s, package %s, auto mode %s), %.0f s" % (
        info["card"], info["torch"], info["package_version"], info["auto_mode"],
        run.results["total_seconds"])]
    if rows:
        summary.append("accuracy: %d checks, %d failed, %d non-finite outputs in all" % (
            len(rows), sum(1 for r in rows if r["fail"]), sum(r.get("nonfinite", 0) for r in rows)))
    secs = run.results["sections"]
    if "comfyui" in secs:
        summary.append("comfyui loop: %d calls, %d fallbacks" % (secs["comfyui"]["calls"],
                                                                 secs["comfyui"]["fallbacks"]))
    if "compile" in secs:
        summary.append("torch.compile fullgraph: %s" % ("ok" if secs["compile"]["ok"] else "FAIL"))
    if "stream" in secs:
        summary.append("current stream: %s" % ("ok" if secs["stream"]["ok"] else "FAIL"))
    if "graph" in secs:
        summary.append("CUDA graph capture: %s" % ("ok" if secs["graph"]["ok"] else "FAIL"))
    if "speed" in secs:
        for e in secs["speed"]["rows"]:
            v = e.get("vs_raw", {}).get("sageattn (HND)", {})
            summary.append("speed %s: sageattn %.3f ms, raw ABI %s %.3f ms, ratio %s (goal <= "
                           "1.03), SDPA %.3f ms" % (
                               e["shape"], e.get("sageattn (HND)", {}).get("ms", -1),
                               e["auto_mode"], e.get("raw ABI %s" % e["auto_mode"],
                                                     {}).get("ms", -1),
                               "%.3f" % v["ratio"] if v.get("ratio") else "n/a",
                               e.get("torch SDPA (default)", {}).get("ms", -1)))
            summary.append("  back to back: sageattn/raw ABI %s %s" % (
                e["auto_mode"], "%.3f" % v["loop_ratio"] if v.get("loop_ratio") else "n/a"))
            others = []
            for label, w in e.get("vs_raw", {}).items():
                if label != "sageattn (HND)" and w.get("ratio"):
                    others.append("%s %.3f (back-to-back %.3f)" % (
                        label if " vs " in label else "%s vs %s" % (label, w["raw"]),
                        w["ratio"], w["loop_ratio"] or -1))
            if others:
                summary.append("  ratio to the raw ABI: " + "; ".join(others))
        o = secs["speed"]["overhead"]
        summary.append("per-call " + run.overhead_line(o))
        c = secs["speed"]["finite_check_cost"]
        for name, v in c.items():
            if isinstance(v, dict) and "loop_cost_ms" in v:
                summary.append("non-finite check at %s: +%.3f ms per call (%.2f %%), "
                               "back-to-back +%.3f ms (%.2f %%)" % (
                                   name, v["cost_ms"], v["cost_pct"], v["loop_cost_ms"],
                                   v["loop_cost_pct"]))
            elif isinstance(v, dict) and "cost_ms" in v:
                summary.append("non-finite check at %s (child): +%.3f ms (%.2f %%)" % (
                    name, v["cost_ms"], v["cost_pct"]))
            elif isinstance(v, dict) and "cost_us" in v:
                summary.append("non-finite check at L=128: +%.1f us per call" % v["cost_us"])
    if "memory" in secs:
        for k2 in ("default_cap", "cap_lifted"):
            r = secs["memory"][k2]
            if "error" not in r:
                summary.append("memory %s: peak extra %.0f MiB%s, %.1f ms per call" % (
                    k2, r["peak_extra_mib"], "" if "cap_respected" not in r else
                    " (within the %.0f MiB cap: %s)" % (r.get("cap_mib") or DEFAULT_CAP_MIB,
                                                        r["cap_respected"]),
                    r["second_call_ms"]))
            else:
                summary.append("memory %s: ERROR" % k2)
    if "import" in secs:
        summary.append("import leaves CUDA uninitialised: %s" % (
            secs["import"].get("cuda_initialized_after_import") is False))
    summary.append("correctness: %s (%d failures)" % ("PASS" if not run.failures else "FAIL",
                                                      len(run.failures)))
    for f in run.failures[:30]:
        summary.append("  FAIL " + f[:300])
    for line in summary:
        run.log(line)
    sys.exit(1 if run.failures else 0)


if __name__ == "__main__":
    main()
