"""The kernel path: one attention call through libsageattn on the tensors' device and torch's
current stream there, with the workspace bounded by the memory cap (heads run in parts when
needed) and the non-finite check: the quantized kernels raise a device flag when they write
NaN/inf, and an fp16-mode run queued behind them computes only when the flag is up, so the
check never makes the host wait for the GPU (_device.FiniteCheck). With an ABI 1.2 library the
library queues that run itself (recompute_nonfinite) and takes the device's facts from its
sageattn_context: one library call per attention call.

Host time per call is the cost at small shapes, so a call whose signature (_prepared) ran
before skips what its first call did: the workspace queries, the params built field by field,
the alignment checks; it copies the signature's params, sets its pointers and launches. Eager
calls without a mask or LSE go further (FastCall, from _fast): their output, the template with
this call's pointers and flag, and one library call. The library validates every struct it
runs, so nothing it would refuse gets through."""

import ctypes
import logging
import sys

import torch

from . import _device, _dispatch, _lib, _settings

log = logging.getLogger("sageattention")
_warned_nonfinite = False

_TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}
_ABI_DTYPES = {torch.float16: _lib.DTYPE_FP16, torch.bfloat16: _lib.DTYPE_BF16}


def _abi_view(t):
    """t itself when its rows meet the C ABI's alignment rule, else an aligned copy (a view
    of a zero-padded buffer when head_dim is not a multiple of 8)."""
    if _dispatch.rows_aligned(t.data_ptr(), t.element_size(), t.stride(), t.shape):
        return t
    d = t.shape[-1]
    dp = _dispatch.padded_head_dim(d)
    if dp == d:
        return t.clone(memory_format=torch.contiguous_format)
    return torch.nn.functional.pad(t, (0, dp - d))[..., :d]


def _bht_strides(t, layout):
    """Element strides for (batch, head, token) of a rank-4 tensor in `layout`."""
    s = t.stride()
    return (s[0], s[1], s[2]) if layout == "HND" else (s[0], s[2], s[1])


class _Call:
    """The fixed parts of one call's params; parts of it are filled per chunk."""

    def __init__(self, q, k, v, o, lse, layout, dims, sm_scale, causal, flag_ptr,
                 capturing=False, context=None):
        self.q, self.k, self.v, self.o, self.lse = q, k, v, o, lse
        self.ptrs = (q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr())
        self.qs, self.ks = _bht_strides(q, layout), _bht_strides(k, layout)
        self.vs, self.os = _bht_strides(v, layout), _bht_strides(o, layout)
        self.esz = q.element_size()
        self.dims = dims
        self.group = dims.q_heads // dims.kv_heads
        self.dtype = _ABI_DTYPES[q.dtype]
        self.sm_scale = sm_scale
        self.causal = causal
        self.flag_ptr = flag_ptr
        self.capturing = capturing
        self.context = context  # the device's sageattn_context (ABI 1.2 libraries), or None

    def params(self, mode, b0, b1, kh0, kh1, lse_ptr, with_flag, only_if=None, recompute=False):
        """Params for batches b0..b1 and kv heads kh0..kh1 (their q heads with them); with_flag:
        raise the non-finite flag; only_if: a device int the (fp16) call is conditional on;
        recompute: the library queues the fp16 recompute itself (ABI 1.2)."""
        p = _lib.Params()
        if self.context is not None:
            p.struct_size = _lib.PARAMS_V12_SIZE
            p.context = self.context
            p.recompute_nonfinite = 1 if recompute else 0
        else:
            p.struct_size = (_lib.PARAMS_V11_SIZE if with_flag or only_if
                             else _lib.PARAMS_V1_SIZE)
        p.batch = b1 - b0
        p.num_kv_heads = kh1 - kh0
        p.num_q_heads = (kh1 - kh0) * self.group
        p.q_len = self.dims.q_len
        p.kv_len = self.dims.kv_len
        p.head_dim = self.dims.head_dim
        p.dtype = self.dtype
        qh0 = kh0 * self.group
        qp, kp, vp, op = self.ptrs
        p.q = qp + (b0 * self.qs[0] + qh0 * self.qs[1]) * self.esz
        p.o = op + (b0 * self.os[0] + qh0 * self.os[1]) * self.esz
        p.k = kp + (b0 * self.ks[0] + kh0 * self.ks[1]) * self.esz
        p.v = vp + (b0 * self.vs[0] + kh0 * self.vs[1]) * self.esz
        p.q_stride[:] = self.qs
        p.k_stride[:] = self.ks
        p.v_stride[:] = self.vs
        p.o_stride[:] = self.os
        p.lse = lse_ptr
        p.sm_scale = self.sm_scale
        p.causal = 1 if self.causal else 0
        p.mode = mode
        if with_flag:
            p.nonfinite_flag = self.flag_ptr
        p.only_if_nonzero = only_if
        return p


# torch's current stream on a device as a raw handle (what the C ABI takes), without making a
# torch.cuda.Stream object per call; torch.cuda.current_stream where torch lacks the call.
_raw_stream_of = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def current_raw_stream(index):
    if _raw_stream_of is not None:
        return _raw_stream_of(index)
    return torch.cuda.current_stream(index).cuda_stream


class _Prepared:
    """What a call of one signature needs besides its pointers: the params struct with every
    other field filled (a template, copied per call), the workspace of the quantized call and
    of its queued fp16 recompute, and that recompute's mode (None when the library queues the
    recompute itself, ABI 1.2). Made from the library's own answers on the first call of the
    signature, which ran as one part."""

    __slots__ = ("as_given", "template", "need", "safe_mode", "safe_need")

    def __init__(self, as_given, params, need, safe_mode, safe_need):
        self.as_given = as_given  # q, k, v went to the library as given (no cast, no copy)
        self.template = bytes(params)
        self.need = need
        self.safe_mode = safe_mode
        self.safe_need = safe_need


# Signature -> _Prepared. The signature is everything a struct field, a workspace size or the
# need for a cast or an aligned copy depends on except the (16-byte aligned) pointers: device,
# dtype, layout, the shapes and element strides of q, k and v, mode, causal, sm_scale, LSE or
# not, the check on or off and the workspace cap. Bounded: cleared when it grows past
# PREPARED_MAX (varlen makes one per sequence length).
_prepared = {}
PREPARED_MAX = 512


def attention(q, k, v, layout, dims, compute_dtype, is_causal, sm_scale, return_lse, function,
              pv_accum_dtype):
    """(o, lse or None) through libsageattn; o is contiguous in q's layout and dtype."""
    current = torch.cuda.current_device()
    index = q.device.index
    if index is None or index == current:
        return _attention_on(current, q, k, v, layout, dims, compute_dtype, is_causal, sm_scale,
                             return_lse, function, pv_accum_dtype)
    with torch.cuda.device(index):
        return _attention_on(index, q, k, v, layout, dims, compute_dtype, is_causal, sm_scale,
                             return_lse, function, pv_accum_dtype)


def _signature(index, q, k, v, layout, is_causal, sm_scale, return_lse, function,
               pv_accum_dtype):
    """(lib, state, mode value, mode name, check on?, workspace cap, _prepared key) of a call
    on device `index`."""
    lib = _lib.library()
    state = _device.state(index)
    mode, mode_name = state.mode(lib, function, pv_accum_dtype)
    check = (_settings.check_finite() and lib.has_nonfinite_flag
             and mode_name != _dispatch.SAFE_MODE)
    limit = _settings.workspace_limit()
    key = (index, q.dtype, layout, mode, is_causal, sm_scale, return_lse, check, limit,
           q.shape, q.stride(), k.shape, k.stride(), v.shape, v.stride())
    return lib, state, mode, mode_name, check, limit, key


def _attention_on(index, q, k, v, layout, dims, compute_dtype, is_causal, sm_scale, return_lse,
                  function, pv_accum_dtype):
    """attention() with device `index` current."""
    lib, state, mode, mode_name, check, limit, key = _signature(
        index, q, k, v, layout, is_causal, sm_scale, return_lse, function, pv_accum_dtype)
    compute = _TORCH_DTYPES[compute_dtype]
    d = dims.head_dim
    dp = _dispatch.padded_head_dim(d)
    # Whether the library can read q, k, v as given depends on their strides, shapes and
    # dtype (all in the signature) and on their base pointers' alignment: a signature is
    # only looked up when all three are 16-byte aligned.
    aligned = not ((q.data_ptr() | k.data_ptr() | v.data_ptr()) % _dispatch.ROW_ALIGN_BYTES)
    prepared = _prepared.get(key) if aligned else None
    if prepared is not None and prepared.as_given:
        qc, kc, vc = q, k, v
    else:
        qc, kc, vc = (_abi_view(t if t.dtype == compute else t.to(compute))
                      for t in (q, k, v))
    o_buf = torch.empty(tuple(q.shape[:3]) + (dp,), dtype=compute, device=q.device)
    o = o_buf if dp == d else o_buf[..., :d]
    lse = (torch.empty((dims.batch, dims.q_heads, dims.q_len), dtype=torch.float32,
                       device=q.device) if return_lse else None)
    stream = current_raw_stream(index)
    capturing = torch.cuda.is_current_stream_capturing()
    if prepared is not None and not capturing:
        _run_prepared(lib, state, prepared, qc, kc, vc, o, lse, stream, check, mode_name)
    else:
        as_given = qc is q and kc is k and vc is v
        _run_first(lib, state, key if aligned else None, as_given, qc, kc, vc, o, lse,
                   layout, dims, mode, mode_name, sm_scale, is_causal, stream, capturing,
                   check, limit)
    if dp != d:
        o = o.contiguous()
    if o.dtype != q.dtype:
        o = o.to(q.dtype)
    return o, lse


def _flag_for_call(state, stream, capturing, mode_name):
    """The pointer of a zeroed non-finite flag for this call on `stream` (and the warning, once
    the host learns that an earlier call was recomputed)."""
    checker = state.finite_check(stream)
    if capturing:
        return checker, checker.capture_flag()
    ptr, recomputed = checker.next_flag(not _warned_nonfinite)
    if recomputed:
        _warn_nonfinite(mode_name)
    return checker, ptr


def _run_prepared(lib, state, prepared, q, k, v, o, lse, stream, check, mode_name):
    """A call whose signature ran before as one part: the template with this call's pointers,
    no workspace query (the library validates the struct again when it runs)."""
    p = _lib.Params.from_buffer_copy(prepared.template)
    p.q = q.data_ptr()
    p.k = k.data_ptr()
    p.v = v.data_ptr()
    p.o = o.data_ptr()
    if lse is not None:
        p.lse = lse.data_ptr()
    if not check:
        _launch(lib, state, p, prepared.need, stream, False)
        return
    _, flag = _flag_for_call(state, stream, False, mode_name)
    p.nonfinite_flag = flag
    _launch(lib, state, p, prepared.need, stream, False)
    if prepared.safe_mode is None:
        return  # ABI 1.2: the library queued the recompute (the template's recompute_nonfinite)
    # The fp16 recompute, queued behind the quantized call: its kernel computes only if that
    # call raised the flag, so the host never waits for the GPU here.
    p.mode = prepared.safe_mode
    p.nonfinite_flag = None
    p.only_if_nonzero = flag
    _launch(lib, state, p, prepared.safe_need, stream, False)


def _run_first(lib, state, key, as_given, qc, kc, vc, o, lse, layout, dims, mode, mode_name,
               sm_scale, is_causal, stream, capturing, check, limit):
    """A call of a new signature, or one being captured into a CUDA graph: the workspace is
    asked of the library and the heads run in parts when it exceeds the cap. When it ran as one
    part (out of a capture), its params become the signature's template."""
    checker, flag = (_flag_for_call(state, stream, capturing, mode_name) if check
                     else (None, None))
    context = state.context(lib)
    call = _Call(qc, kc, vc, o, lse, layout, dims, sm_scale or 0.0, is_causal, flag, capturing,
                 context)
    # ABI 1.2: the library queues the fp16 recompute in the same call (one crossing, one
    # validation); older libraries get a second, conditional fp16 call.
    fold = check and context is not None
    whole = _run(lib, state, call, mode, stream, check, limit, recompute=fold)
    safe_whole, safe_mode = None, None
    if check and not fold:
        safe_mode = lib.mode_value(_dispatch.SAFE_MODE)
        safe_whole = _run(lib, state, call, safe_mode, stream, False, limit, only_if=flag)
    if check and capturing:
        checker.after_captured_call()
    if key is None or capturing or whole is None or (safe_mode is not None and safe_whole is None):
        return
    if len(_prepared) >= PREPARED_MAX:
        _prepared.clear()
    _prepared[key] = _Prepared(as_given, whole[0], whole[1], safe_mode,
                               safe_whole[1] if safe_whole is not None else 0)


def _run(lib, state, call, mode, stream, with_flag, limit, only_if=None, recompute=False):
    """Runs the call, in parts whose workspace fits the cap when the whole does not. Returns
    (params, workspace bytes) when it ran as one part, else None."""
    dims = call.dims
    index = state.index
    whole = (0, dims.batch, 0, dims.kv_heads)
    lse_ptr = call.lse.data_ptr() if call.lse is not None else None
    p = call.params(mode, *whole, lse_ptr, with_flag, only_if, recompute)
    need = lib.workspace_size(p, index)
    if limit is None or need <= limit:
        _launch(lib, state, p, need, stream, call.capturing)
        return p, need

    def workspace_bytes(nb, nkv):
        # The LSE's pointer only tells the library that a part writes one (more workspace).
        return lib.workspace_size(call.params(mode, 0, nb, 0, nkv, lse_ptr, with_flag), index)

    for b0, b1, kh0, kh1 in _dispatch.plan_chunks(dims.batch, dims.kv_heads, limit,
                                                  workspace_bytes):
        lse_part, lse_tmp = None, None
        if call.lse is not None:
            lse_part = call.lse[b0:b1, kh0 * call.group:kh1 * call.group]
            if not lse_part.is_contiguous():  # the ABI's LSE is contiguous [b][h][q_len]
                lse_tmp = torch.empty(lse_part.shape, dtype=torch.float32,
                                      device=call.lse.device)
        part_lse = lse_tmp if lse_tmp is not None else lse_part
        p = call.params(mode, b0, b1, kh0, kh1,
                        part_lse.data_ptr() if part_lse is not None else None, with_flag,
                        only_if, recompute)
        _launch(lib, state, p, lib.workspace_size(p, index), stream, call.capturing)
        if lse_tmp is not None:
            lse_part.copy_(lse_tmp)
    return None


def _launch(lib, state, p, need, stream, capturing):
    ws, ws_bytes, owner = state.workspace(stream, need, capturing)
    try:
        lib.run(p, ws, ws_bytes, stream)
    except _lib.LibraryError as e:
        _raise_no_code(lib, state, e)
        raise
    del owner  # a capture's workspace goes back to the graph's pool once launched


def _raise_no_code(lib, state, error):
    """The RuntimeError that names the GPU and the rebuild, for a library without its code."""
    if error.status == _lib.ERR_NO_CODE_FOR_GPU:
        raise RuntimeError(_dispatch.no_code_message(
            state.name, state.cc, lib.built_archs, sys.executable, str(error))) from None


# ---- the fast path: eager calls of a signature that ran before --------------------------------

_is_capturing = getattr(torch._C, "_cuda_isCurrentStreamCapturing", None) or \
    torch.cuda.is_current_stream_capturing


class FastCall:
    """One signature's whole call once it has run as one part with q, k, v as given (no cast,
    copy or padding) on an ABI 1.2 library: per call, an output tensor, the template with this
    call's pointers and flag, and one library call that runs the quantized kernels and queues
    their fp16 recompute. Returns None (the caller takes the full path) when this call's
    pointers are not 16-byte aligned or a CUDA graph is being captured."""

    __slots__ = ("lib", "state", "template", "need", "check", "mode_name", "shape", "dtype",
                 "device", "run")

    def __init__(self, lib, state, prepared, q, check, mode_name):
        self.lib = lib
        self.state = state
        self.template = prepared.template
        self.need = prepared.need
        self.check = check
        self.mode_name = mode_name
        self.shape = tuple(q.shape)
        self.dtype = q.dtype
        self.device = q.device
        self.run = lib.run_raw

    def __call__(self, q, k, v):
        qp, kp, vp = q.data_ptr(), k.data_ptr(), v.data_ptr()
        if (qp | kp | vp) % _dispatch.ROW_ALIGN_BYTES or _is_capturing():
            return None
        state = self.state
        stream = current_raw_stream(state.index)
        o = torch.empty(self.shape, dtype=self.dtype, device=self.device)
        p = _lib.Params.from_buffer_copy(self.template)
        p.q = qp
        p.k = kp
        p.v = vp
        p.o = o.data_ptr()
        if self.check:
            checker = state.flags.get(stream)
            if checker is not None and checker.next < _device.FLAG_SLOTS:
                p.nonfinite_flag = checker.ring_ptr + 4 * checker.next
                checker.next += 1
            else:
                p.nonfinite_flag = _flag_for_call(state, stream, False, self.mode_name)[1]
        ws, ws_bytes, _ = state.workspace(stream, self.need)
        status = self.run(ctypes.byref(p), ws, ws_bytes, stream)
        if status != _lib.OK:
            try:
                self.lib.check(status, "sageattn_run")
            except _lib.LibraryError as e:
                _raise_no_code(self.lib, state, e)
                raise
        return o


def fast_call(q, k, v, layout, dims, compute_dtype, is_causal, sm_scale, function,
              pv_accum_dtype):
    """(FastCall or None, never): the fast path of this eager call's signature (no mask, no
    LSE) once its first call has run; never is True when the signature can never take it (a
    cast, a padded head dim, a copy for alignment, an ABI 1.1 library)."""
    if _TORCH_DTYPES[compute_dtype] != q.dtype or \
            _dispatch.padded_head_dim(dims.head_dim) != dims.head_dim:
        return None, True
    index = torch.cuda.current_device()
    if q.get_device() != index:
        return None, False
    lib, state, _, mode_name, check, _, key = _signature(
        index, q, k, v, layout, is_causal, sm_scale, False, function, pv_accum_dtype)
    if not lib.has_v12:
        return None, True
    prepared = _prepared.get(key)
    if prepared is None:  # not run yet, or in parts, or captured: maybe next time
        return None, False
    if not prepared.as_given:
        return None, True
    return FastCall(lib, state, prepared, q, check, mode_name), False


def _warn_nonfinite(mode_name):
    global _warned_nonfinite
    if not _warned_nonfinite:
        _warned_nonfinite = True
        log.warning("sageattention: a call in mode %s wrote NaN or infinite values; such calls "
                    "are recomputed in fp16 mode on the GPU (SAGEATTENTION_CHECK_FINITE=0 turns "
                    "this off; warned once per process)", mode_name)
