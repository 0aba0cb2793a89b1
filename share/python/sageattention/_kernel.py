"""The kernel path: one attention call through libsageattn on the tensors' device and torch's
current stream there, with the workspace bounded by the memory cap (heads run in parts when
needed) and the non-finite check: the quantized kernels raise a device flag when they write
NaN/inf, and an fp16-mode run queued behind them computes only when the flag is up, so the
check never makes the host wait for the GPU (_device.FiniteCheck)."""

import contextlib
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
                 capturing=False):
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

    def params(self, mode, b0, b1, kh0, kh1, lse_ptr, with_flag, only_if=None):
        """Params for batches b0..b1 and kv heads kh0..kh1 (their q heads with them); with_flag:
        raise the non-finite flag; only_if: a device int the (fp16) call is conditional on."""
        p = _lib.Params()
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


def attention(q, k, v, layout, dims, compute_dtype, is_causal, sm_scale, return_lse, function,
              pv_accum_dtype):
    """(o, lse or None) through libsageattn; o is contiguous in q's layout and dtype."""
    lib = _lib.library()
    index = q.device.index if q.device.index is not None else torch.cuda.current_device()
    state = _device.state(index)
    compute = _TORCH_DTYPES[compute_dtype]
    guard = (torch.cuda.device(index) if index != torch.cuda.current_device()
             else contextlib.nullcontext())
    with guard:
        mode, mode_name = state.mode(lib, function, pv_accum_dtype)
        qc, kc, vc = (_abi_view(t if t.dtype == compute else t.to(compute)) for t in (q, k, v))
        d = dims.head_dim
        dp = _dispatch.padded_head_dim(d)
        o_buf = torch.empty(tuple(q.shape[:3]) + (dp,), dtype=compute, device=q.device)
        o = o_buf if dp == d else o_buf[..., :d]
        lse = (torch.empty((dims.batch, dims.q_heads, dims.q_len), dtype=torch.float32,
                           device=q.device) if return_lse else None)
        torch_stream = torch.cuda.current_stream(index)
        stream = torch_stream.cuda_stream
        capturing = torch.cuda.is_current_stream_capturing()
        check = (_settings.check_finite() and lib.has_nonfinite_flag
                 and mode_name != _dispatch.SAFE_MODE)
        checker = state.finite_check(stream) if check else None
        if checker is not None:
            checker.flag.zero_()
        call = _Call(qc, kc, vc, o, lse, layout, dims, sm_scale or 0.0, is_causal,
                     checker.flag.data_ptr() if checker is not None else None, capturing)
        _run(lib, state, call, mode, stream, check)
        if checker is not None:
            # The fp16 recompute, queued behind the quantized call: its kernel computes only if
            # that call raised the flag, so the host never waits for the GPU here.
            _run(lib, state, call, lib.mode_value(_dispatch.SAFE_MODE), stream, False,
                 only_if=checker.flag.data_ptr())
            if not _warned_nonfinite:  # after the one warning, the host needs to know no more
                checker.after_call()
                if not capturing and checker.recomputed(torch_stream):
                    _warn_nonfinite(mode_name)
    if dp != d:
        o = o.contiguous()
    if o.dtype != q.dtype:
        o = o.to(q.dtype)
    return o, lse


def _run(lib, state, call, mode, stream, with_flag, only_if=None):
    """Runs the call, in parts whose workspace fits the cap when the whole does not."""
    dims = call.dims
    index = state.index
    whole = (0, dims.batch, 0, dims.kv_heads)
    lse_ptr = call.lse.data_ptr() if call.lse is not None else None
    p = call.params(mode, *whole, lse_ptr, with_flag, only_if)
    need = lib.workspace_size(p, index)
    limit = _settings.workspace_limit()
    if limit is None or need <= limit:
        _launch(lib, state, p, need, stream, call.capturing)
        return

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
                        part_lse.data_ptr() if part_lse is not None else None, with_flag)
        _launch(lib, state, p, lib.workspace_size(p, index), stream, call.capturing)
        if lse_tmp is not None:
            lse_part.copy_(lse_tmp)


def _launch(lib, state, p, need, stream, capturing):
    ws, ws_bytes, owner = state.workspace(stream, need, capturing)
    try:
        lib.run(p, ws, ws_bytes, stream)
    except _lib.LibraryError as e:
        if e.status == _lib.ERR_NO_CODE_FOR_GPU:
            raise RuntimeError(_dispatch.no_code_message(
                state.name, state.cc, lib.built_archs, sys.executable, str(e))) from None
        raise
    del owner  # a capture's workspace goes back to the graph's pool once launched


def _warn_nonfinite(mode_name):
    global _warned_nonfinite
    if not _warned_nonfinite:
        _warned_nonfinite = True
        log.warning("sageattention: a call in mode %s wrote NaN or infinite values; such calls "
                    "are recomputed in fp16 mode on the GPU (SAGEATTENTION_CHECK_FINITE=0 turns "
                    "this off; warned once per process)", mode_name)
