"""The drop-in's dispatch rules as pure functions: no torch, no ctypes, no I/O.

Everything that decides *what* a call does (which libsageattn mode an upstream function asks
for, when the exact SDPA path runs instead of the kernels, which tensors need a copy, how the
heads are split under the memory cap, how settings are parsed) lives here so that CI can test it
without a GPU or torch (tests/python/test_dispatch*.py).
"""

import re

# What `sageattn` asks for: the self-test's recommendation for this GPU, else the library's AUTO.
RECOMMENDED = "recommended"

# The libsageattn mode each upstream function asks for (contract 3: modes are names).
FUNCTION_MODES = {
    "sageattn": RECOMMENDED,
    "sageattn_qk_int8_pv_fp16_cuda": "int8-fp16",
    "sageattn_qk_int8_pv_fp16_triton": "int8-fp16",
    "sageattn_qk_int8_pv_fp8_cuda": "int8-fp8",
    "sageattn_qk_int8_pv_fp8_cuda_sm90": "int8-fp8",
    "sageattn_varlen": "int8-fp16",
}

# Faster P·V accumulation variants (issue 9) that an upstream pv_accum_dtype asks for, by
# (base mode, pv_accum_dtype): the first name the library exposes *and* the GPU's self-test
# passed (its recommendation record's safe_modes) is used; otherwise the base mode runs.
# The names are the library's (sageattn_mode_name): f16acc = FP16 accumulation inside a key
# tile, FP32 across tiles (SageAttention2++'s scheme); bs = int8-fp8's FP32 arithmetic through
# the block-scaled MMA (full rate on sm_120a).
PV_ACCUM_VARIANTS = {
    ("int8-fp8", "fp32+fp16"): ("int8-fp8-f16acc", "int8-fp8-bs"),
    ("int8-fp8", "fp32+fp32"): ("int8-fp8-bs",),
    ("int8-fp8", "fp32"): ("int8-fp8-bs",),
    ("int8-fp16", "fp16+fp32"): ("int8-fp16-f16acc",),
    ("int8-fp16", "fp16"): ("int8-fp16-f16acc",),
}

# Modes that need FP8 tensor cores: on a GPU without them, int8-fp16 runs instead. Which GPUs
# have them is the library's arch table's fact (Library.cc_has_fp8); a library before ABI 1.3
# cannot say, and hard-coded 8.9 and newer itself, so for it that rule is the exact one.
FP8_MODE_PREFIX = "int8-fp8"
FP8_MIN_CC_BEFORE_ABI_1_3 = (8, 9)
FALLBACK_FOR_FP8 = "int8-fp16"

# The mode a call is recomputed in when a quantized one wrote a non-finite value.
SAFE_MODE = "fp16"

KERNEL_MAX_HEAD_DIM = 128
KERNEL_DTYPES = ("float16", "bfloat16")
# fp32 inputs run through the kernels in bf16 (same exponent range) and come back as fp32.
COMPUTE_DTYPE = {"float16": "float16", "bfloat16": "bfloat16", "float32": "bfloat16"}
# dtypes only the exact path takes.
SDPA_ONLY_DTYPES = ("float64",)

DEFAULT_WORKSPACE_LIMIT = 256 << 20
ROW_ALIGN_BYTES = 16
ROW_ALIGN_ELEMS = 8

LAYOUTS = ("HND", "NHD")


class Dims:
    """The logical sizes of one attention call."""

    __slots__ = ("batch", "q_heads", "kv_heads", "q_len", "kv_len", "head_dim", "v_head_dim")

    def __init__(self, batch, q_heads, kv_heads, q_len, kv_len, head_dim, v_head_dim):
        self.batch = batch
        self.q_heads = q_heads
        self.kv_heads = kv_heads
        self.q_len = q_len
        self.kv_len = kv_len
        self.head_dim = head_dim
        self.v_head_dim = v_head_dim

    def __repr__(self):
        return "Dims(%s)" % ", ".join("%s=%r" % (n, getattr(self, n)) for n in self.__slots__)


def parse_layout(tensor_layout):
    """'HND' or 'NHD' as given; anything else is a ValueError (never a silent reinterpretation)."""
    if tensor_layout not in LAYOUTS:
        raise ValueError("tensor_layout must be 'HND' ([batch, heads, seq, head_dim]) or 'NHD' "
                         "([batch, seq, heads, head_dim]), got %r" % (tensor_layout,))
    return tensor_layout


def axes(layout):
    """(head axis, sequence axis) of a rank-4 tensor in `layout`."""
    return (1, 2) if layout == "HND" else (2, 1)


def dims_from_shapes(q_shape, k_shape, v_shape, layout):
    """The call's Dims from rank-4 shapes, or ValueError saying what was expected."""
    for name, shape in (("q", q_shape), ("k", k_shape), ("v", v_shape)):
        if len(shape) != 4:
            raise ValueError("%s must have 4 dimensions (%s), got shape %s" % (
                name, "[batch, heads, seq, head_dim]" if layout == "HND"
                else "[batch, seq, heads, head_dim]", tuple(shape)))
    h, s = axes(layout)
    dims = Dims(q_shape[0], q_shape[h], k_shape[h], q_shape[s], k_shape[s], q_shape[3],
                v_shape[3])
    if not (k_shape[0] == v_shape[0] == dims.batch):
        raise ValueError("q, k and v must have the same batch size, got %d, %d, %d"
                         % (q_shape[0], k_shape[0], v_shape[0]))
    if k_shape[h] != v_shape[h] or k_shape[s] != v_shape[s]:
        raise ValueError("k and v must have the same number of heads and sequence length, got "
                         "k %s and v %s (%s)" % (tuple(k_shape), tuple(v_shape), layout))
    if k_shape[3] != dims.head_dim:
        raise ValueError("q and k must have the same head_dim, got %d and %d"
                         % (dims.head_dim, k_shape[3]))
    if dims.kv_heads == 0 or dims.q_heads % dims.kv_heads != 0:
        raise ValueError("the number of k/v heads (%d) must divide the number of q heads (%d)"
                         % (dims.kv_heads, dims.q_heads))
    if dims.head_dim == 0 or dims.v_head_dim == 0:
        raise ValueError("head_dim must be at least 1, got q/k %d and v %d"
                         % (dims.head_dim, dims.v_head_dim))
    return dims


def is_empty(dims):
    """Whether the output has no elements (nothing to compute)."""
    return dims.batch == 0 or dims.q_heads == 0 or dims.q_len == 0


class Plan:
    """Which path a call takes and in which dtype it computes."""

    __slots__ = ("path", "compute_dtype", "reason")

    def __init__(self, path, compute_dtype, reason):
        self.path = path  # "kernel" or "sdpa"
        self.compute_dtype = compute_dtype
        self.reason = reason

    def __repr__(self):
        return "Plan(%r, %r, %r)" % (self.path, self.compute_dtype, self.reason)


def plan_call(dtype, dims, has_mask, sm_scale=None):
    """The path for inputs of `dtype` (torch name without 'torch.'), Dims, a mask or not and
    the caller's sm_scale (None: 1/sqrt(head_dim)).

    The kernels take fp16/bf16 (fp32 computed in bf16), head_dim 1..128 with v's head_dim equal
    to q's, and no mask; everything else that is well defined runs exactly through
    torch.nn.functional.scaled_dot_product_attention in the input dtype. A mask is never ignored.
    """
    if dtype not in COMPUTE_DTYPE and dtype not in SDPA_ONLY_DTYPES:
        raise ValueError("q, k and v must be float16, bfloat16 or float32 (float64 runs exactly "
                         "through SDPA), got %s" % dtype)
    if has_mask:
        return Plan("sdpa", dtype, "attn_mask is given")
    if dtype in SDPA_ONLY_DTYPES:
        return Plan("sdpa", dtype, "%s inputs" % dtype)
    if dims.head_dim > KERNEL_MAX_HEAD_DIM:
        return Plan("sdpa", dtype, "head_dim %d > %d" % (dims.head_dim, KERNEL_MAX_HEAD_DIM))
    if sm_scale is not None and not (0.0 < sm_scale < float("inf")):
        return Plan("sdpa", dtype, "sm_scale %r is not a positive finite number" % (sm_scale,))
    if dims.v_head_dim != dims.head_dim:
        return Plan("sdpa", dtype, "v's head_dim %d differs from q's %d"
                    % (dims.v_head_dim, dims.head_dim))
    return Plan("kernel", COMPUTE_DTYPE[dtype], "")


def discover_modes(names_by_value):
    """{name: value} from sageattn_mode_name(i) for i = 0, 1, ...: values whose name is
    'unknown' (or empty, or a repeat of an earlier value's name) are not modes."""
    modes = {}
    for value, name in enumerate(names_by_value):
        if name and name != "unknown" and name not in modes:
            modes[name] = value
    return modes


def requested_mode(function, pv_accum_dtype, forced, known_modes, safe_modes):
    """The mode name a call of upstream `function` asks the library for, or RECOMMENDED.

    forced: $SAGEATTENTION_MODE (or "" / None), which wins when set and must name a mode of the
    library; known_modes: the library's mode names; safe_modes: the modes this GPU's
    self-test passed (from its recommendation record; empty when there is none).
    """
    if forced:
        if forced not in known_modes:
            raise ValueError("SAGEATTENTION_MODE=%s is not a mode of this libsageattn (it has: "
                             "%s)" % (forced, ", ".join(sorted(known_modes))))
        return forced
    if function not in FUNCTION_MODES:
        raise ValueError("unknown sageattention function %r" % (function,))
    base = FUNCTION_MODES[function]
    if base == RECOMMENDED:
        return base
    for name in PV_ACCUM_VARIANTS.get((base, pv_accum_dtype), ()):
        if name in known_modes and name in safe_modes:
            return name
    return base


def recommended_or_auto(record_mode, known_modes):
    """What RECOMMENDED means: the record's mode when the library has it, else 'auto'."""
    return record_mode if record_mode and record_mode in known_modes else "auto"


def mode_for_device(mode, has_fp8):
    """The mode that runs on a GPU with (has_fp8) or without FP8 tensor cores: without them an
    FP8 P·V mode runs int8-fp16 (upstream's fp8 functions fail there instead)."""
    if mode.startswith(FP8_MODE_PREFIX) and not has_fp8:
        return FALLBACK_FOR_FP8
    return mode


def rows_aligned(ptr, elem_size, strides, extents):
    """Whether a tensor view meets the C ABI's row rule: last dim contiguous (strides[-1] == 1
    or a single element), a 16-byte aligned base, and every other stride whose dimension is
    longer than 1 a multiple of 8 elements. strides/extents: per dimension, in elements."""
    if extents[-1] > 1 and strides[-1] != 1:
        return False
    if ptr % ROW_ALIGN_BYTES != 0:
        return False
    for stride, extent in zip(strides[:-1], extents[:-1]):
        if extent > 1 and stride % ROW_ALIGN_ELEMS != 0:
            return False
    return True


def padded_head_dim(head_dim):
    """The row length (elements) that makes rows of head_dim elements 16-byte aligned."""
    return (head_dim + ROW_ALIGN_ELEMS - 1) // ROW_ALIGN_ELEMS * ROW_ALIGN_ELEMS


def plan_chunks(batch, kv_heads, limit, workspace_bytes):
    """Splits a call so that each part's workspace fits `limit` bytes.

    workspace_bytes(batches, kv_heads) gives the workspace of a part (the library's figure; it
    grows with both). Parts keep whole GQA groups (a kv head with all its q heads). Returns a
    list of (batch_start, batch_end, kv_head_start, kv_head_end); one part when everything fits
    or limit is None. A single (1 batch, 1 kv head) part runs even when it alone exceeds the
    limit: the cap bounds the split, it does not refuse work.
    """
    if limit is None or workspace_bytes(batch, kv_heads) <= limit:
        return [(0, batch, 0, kv_heads)]
    if workspace_bytes(batch, 1) <= limit:
        per_head = largest_fitting(kv_heads, lambda n: workspace_bytes(batch, n) <= limit)
        return [(0, batch, h, min(h + per_head, kv_heads)) for h in range(0, kv_heads, per_head)]
    per_batch = largest_fitting(batch, lambda n: workspace_bytes(n, 1) <= limit)
    return [(b, min(b + per_batch, batch), h, h + 1)
            for b in range(0, batch, per_batch) for h in range(kv_heads)]


def largest_fitting(upper, fits):
    """The largest n in 1..upper with fits(n) (fits is monotone: true, ..., true, false...);
    1 when none fits."""
    lo, hi = 1, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def lse_rows_per_chunk(batch, heads, q_len, kv_len, limit):
    """Query rows per step of the SDPA path's LSE: one step holds fp32 scores of
    batch x heads x rows x kv_len, at most `limit` bytes (None: all rows at once); >= 1 row."""
    if limit is None:
        return max(1, q_len)
    per_row = max(1, batch * heads * kv_len * 4)
    return max(1, min(q_len, limit // per_row))


def check_offsets(name, offsets, total):
    """cu_seqlens as a list: batch_size + 1 offsets from 0, never decreasing, ending at the
    number of tokens. Returns them, or raises ValueError."""
    if len(offsets) < 1 or offsets[0] != 0 or offsets[-1] != total or \
            any(b < a for a, b in zip(offsets, offsets[1:])):
        raise ValueError("%s must start at 0, never decrease and end at the number of tokens "
                         "(%d), got %s%s" % (name, total, offsets[:8],
                                             "..." if len(offsets) > 8 else ""))
    return offsets


def causal_offset(q_len, kv_len):
    """Causal masking with q_len != kv_len is aligned to the bottom-right corner, as the
    library does: query i sees keys j <= i + offset."""
    return kv_len - q_len


def parse_workspace_limit(text):
    """$SAGEATTENTION_WORKSPACE_LIMIT_MB: unset/empty -> the default (256 MiB); '0', 'none' or
    'off' -> no cap; a positive number of MiB otherwise (ValueError for anything else)."""
    if text is None or text.strip() == "":
        return DEFAULT_WORKSPACE_LIMIT
    t = text.strip().lower()
    if t in ("0", "none", "off", "unlimited"):
        return None
    try:
        mib = float(t)
    except ValueError:
        raise ValueError("SAGEATTENTION_WORKSPACE_LIMIT_MB=%r is not a number of MiB (or 0 for "
                         "no cap)" % text) from None
    if mib < 0 or mib != mib:
        raise ValueError("SAGEATTENTION_WORKSPACE_LIMIT_MB=%r must be >= 0" % text)
    return max(1, int(mib * (1 << 20)))


def parse_flag(text, default):
    """An on/off environment setting: 0/false/no/off and 1/true/yes/on; unset -> default."""
    if text is None or text.strip() == "":
        return default
    t = text.strip().lower()
    if t in ("0", "false", "no", "off"):
        return False
    if t in ("1", "true", "yes", "on"):
        return True
    raise ValueError("expected 0 or 1 (or false/true), got %r" % text)


def arch_name(cc, library_message=""):
    """The `sagebuild build --arch` name of compute capability (major, minor): the one the
    library's "no code for this GPU" message names (it reads the arch table,
    kernels/archs/archs.def: sm_86 for 8.7), else sm_XY with the arch-specific 'a' from 10.0
    on (sm_90, sm_120a)."""
    named = re.search(r"--arch (sm_[0-9]+[a-z]?)", library_message or "")
    if named:
        return named.group(1)
    major, minor = cc
    return "sm_%d%d%s" % (major, minor, "a" if major >= 10 else "")


def no_code_message(gpu_name, cc, built_archs, python, library_message):
    """The RuntimeError text for a GPU the library has no code for."""
    arch = arch_name(cc, library_message)
    return ("libsageattn has no code for %s (compute capability %d.%d, %s): this library was "
            "built for %s. Rebuild it for this GPU with `sagebuild build --arch %s` and "
            "reinstall with `sagebuild install --python %s`, or run `sagebuild install "
            "--python %s` on this machine, which builds for the GPUs it finds. (%s)"
            % (gpu_name, cc[0], cc[1], arch, built_archs or "unknown archs", arch, python,
               python, library_message))


def version_string(upstream, sagebuild_version):
    """__version__: upstream's API version, with this implementation as a PEP 440 local label,
    e.g. '2.2.0+sagebuild.0.9.1' (any character PEP 440 does not allow becomes '.')."""
    if not sagebuild_version:
        return upstream + "+sagebuild"
    label = re.sub(r"[^A-Za-z0-9]+", ".", str(sagebuild_version)).strip(".")
    return upstream + "+sagebuild" + ("." + label if label else "")
