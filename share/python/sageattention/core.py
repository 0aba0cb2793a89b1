"""SageAttention 2.2.0's public functions, with upstream's names, parameters and defaults, over
libsageattn. Parameters that do not apply to libsageattn are accepted and ignored (see the
package docstring's table); every call goes through one torch.library operation (_ops)."""


_ops = None  # imported on the first call: it imports torch and registers the operations
_fast = None


def _call(function, q, k, v, attn_mask, tensor_layout, is_causal, sm_scale, return_lse,
          pv_accum_dtype):
    global _ops, _fast
    if _ops is None:
        from . import _fast as fast
        from . import _ops as ops  # registers the torch.library operations
        _ops, _fast = ops, fast

    # Eager calls on plain tensors run the op's implementation directly (the dispatcher would
    # add tens of microseconds per call), those without a mask or LSE through the fast path of
    # their signature; torch.compile, export, fake or proxy tensors and autograd see the op
    # (_ops.traced).
    is_causal = bool(is_causal)
    sm_scale = None if sm_scale is None else float(sm_scale)
    if _ops.traced(q, k, v):
        op = _ops.attention
    elif attn_mask is None and not return_lse:
        return _fast.call(function, q, k, v, tensor_layout, is_causal, sm_scale, pv_accum_dtype)
    else:
        op = _ops.attention_eager
    o, lse = op(q, k, v, attn_mask, tensor_layout, is_causal, sm_scale, bool(return_lse),
                function, pv_accum_dtype)
    return (o, lse) if return_lse else o


def sageattn(q, k, v, tensor_layout="HND", is_causal=False, sm_scale=None, return_lse=False,
             **kwargs):
    """Attention in the mode chosen for this GPU: the self-test's recommendation when one was
    recorded for this library and GPU, else libsageattn's AUTO choice. `attn_mask` (a keyword,
    as ComfyUI passes it) runs exactly through SDPA. Returns o, or (o, lse) with return_lse."""
    return _call("sageattn", q, k, v, kwargs.get("attn_mask"), tensor_layout, is_causal,
                 sm_scale, return_lse, "")


def sageattn_qk_int8_pv_fp16_triton(q, k, v, tensor_layout="HND", quantization_backend="triton",
                                    is_causal=False, attn_mask=None, sm_scale=None,
                                    smooth_k=True, return_lse=False, **kwargs):
    """Upstream's Triton kernel; here libsageattn's int8-fp16 mode (no Triton involved)."""
    return _call("sageattn_qk_int8_pv_fp16_triton", q, k, v, attn_mask, tensor_layout,
                 is_causal, sm_scale, return_lse, "")


def sageattn_qk_int8_pv_fp16_cuda(q, k, v, tensor_layout="HND", is_causal=False,
                                  qk_quant_gran="per_thread", sm_scale=None,
                                  pv_accum_dtype="fp32", smooth_k=True, smooth_v=False,
                                  return_lse=False, **kwargs):
    """INT8 Q·Kᵀ, FP16 P·V: libsageattn's int8-fp16 mode (FP32 accumulation)."""
    return _call("sageattn_qk_int8_pv_fp16_cuda", q, k, v, kwargs.get("attn_mask"),
                 tensor_layout, is_causal, sm_scale, return_lse, pv_accum_dtype)


def sageattn_qk_int8_pv_fp8_cuda(q, k, v, tensor_layout="HND", is_causal=False,
                                 qk_quant_gran="per_thread", sm_scale=None,
                                 pv_accum_dtype="fp32+fp16", smooth_k=True, smooth_v=False,
                                 return_lse=False, **kwargs):
    """INT8 Q·Kᵀ, FP8 P·V: libsageattn's int8-fp8 mode (int8-fp16 on GPUs before 8.9)."""
    return _call("sageattn_qk_int8_pv_fp8_cuda", q, k, v, kwargs.get("attn_mask"),
                 tensor_layout, is_causal, sm_scale, return_lse, pv_accum_dtype)


def sageattn_qk_int8_pv_fp8_cuda_sm90(q, k, v, tensor_layout="HND", is_causal=False,
                                      qk_quant_gran="per_thread", sm_scale=None,
                                      pv_accum_dtype="fp32+fp32", smooth_k=True,
                                      return_lse=False, **kwargs):
    """Upstream's Hopper kernel; here libsageattn's int8-fp8 mode on any GPU."""
    return _call("sageattn_qk_int8_pv_fp8_cuda_sm90", q, k, v, kwargs.get("attn_mask"),
                 tensor_layout, is_causal, sm_scale, return_lse, pv_accum_dtype)


def sageattn_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                    is_causal=False, sm_scale=None, smooth_k=True, **kwargs):
    """Packed sequences: q [total_q, Hq, D], k and v [total_k, Hkv, D], cu_seqlens_* the
    int32/int64 offsets of each sequence. Runs each sequence as its own int8-fp16 call on views
    (the offsets are read on the host; max_seqlen_* are not needed). Returns o like q."""
    from . import _ops

    op = _ops.varlen if _ops.traced(q, k, v) else _ops.varlen_eager
    return op(q, k, v, cu_seqlens_q, cu_seqlens_k, bool(is_causal),
              None if sm_scale is None else float(sm_scale), "sageattn_varlen")
