"""The whole of one call, eagerly: check the inputs, choose the path (_dispatch.plan_call), run
it (_kernel or _sdpa). This is what the torch.library op runs, so fallbacks happen inside it."""

import logging

import torch

from . import _dispatch, _kernel, _lib, _sdpa


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _check_tensors(q, k, v, attn_mask):
    if (isinstance(q, torch.Tensor) and isinstance(k, torch.Tensor)
            and isinstance(v, torch.Tensor) and q.is_cuda and k.is_cuda and v.is_cuda
            and q.get_device() == k.get_device() == v.get_device()
            and q.dtype == k.dtype == v.dtype and attn_mask is None):
        return  # the common call, in fewer steps; anything else gets the checks below
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise ValueError("%s must be a torch.Tensor, got %s" % (name, type(t).__name__))
        if t.device.type != "cuda":
            raise ValueError("%s must be a CUDA tensor (sageattention runs on NVIDIA GPUs), got a "
                             "tensor on %s" % (name, t.device))
    if not (q.device == k.device == v.device):
        raise ValueError("q, k and v must be on the same device, got %s, %s, %s"
                         % (q.device, k.device, v.device))
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError("q, k and v must have the same dtype, got %s, %s, %s"
                         % (q.dtype, k.dtype, v.dtype))
    if attn_mask is not None:
        if not isinstance(attn_mask, torch.Tensor):
            raise ValueError("attn_mask must be a torch.Tensor or None, got %s"
                             % type(attn_mask).__name__)
        if not 1 <= attn_mask.dim() <= 4:
            raise ValueError("attn_mask must have 1 to 4 dimensions (broadcastable to [batch, "
                             "heads, q_len, kv_len]), got shape %s" % (tuple(attn_mask.shape),))
        if attn_mask.dtype != torch.bool and not attn_mask.is_floating_point():
            raise ValueError("attn_mask must be bool (True = attend) or a floating-point "
                             "additive mask, got %s" % attn_mask.dtype)


def _empty_lse(q):
    return torch.empty((0,), dtype=torch.float32, device=q.device)


_DTYPE_NAMES = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
                torch.float64: "float64"}

# (shapes, layout, dtype, mask or not, scale) -> (Dims, Plan): the pure checks and the path
# choice of a shape seen before (ValueErrors are raised, never cached). Bounded like _kernel's.
_plans = {}
PLANS_MAX = 512


def dims_and_plan(q, k, v, layout, has_mask, scale):
    key = (q.shape, k.shape, v.shape, layout, q.dtype, has_mask, scale)
    found = _plans.get(key)
    if found is not None:
        return found
    dims = _dispatch.dims_from_shapes(tuple(q.shape), tuple(k.shape), tuple(v.shape), layout)
    plan = None
    if not _dispatch.is_empty(dims):
        if dims.kv_len == 0:
            raise ValueError("k and v must hold at least one token (kv_len is 0)")
        plan = _dispatch.plan_call(_DTYPE_NAMES.get(q.dtype) or _dtype_name(q.dtype), dims,
                                   has_mask, scale)
    if len(_plans) >= PLANS_MAX:
        _plans.clear()
    _plans[key] = (dims, plan)
    return dims, plan


def attention(q, k, v, attn_mask, tensor_layout, is_causal, sm_scale, return_lse, function,
              pv_accum_dtype):
    """(o, lse): o like q (layout, dtype; v's head_dim), contiguous; lse float32 [B, H, Lq]
    when return_lse, else None (the torch.library op returns an empty tensor instead)."""
    layout = _dispatch.parse_layout(tensor_layout)
    _check_tensors(q, k, v, attn_mask)
    scale = None if sm_scale is None else float(sm_scale)
    dims, plan = dims_and_plan(q, k, v, layout, attn_mask is not None, scale)
    if plan is None:  # nothing to compute
        o = torch.empty(tuple(q.shape[:3]) + (dims.v_head_dim,), dtype=q.dtype,
                        device=q.device)
        lse = torch.empty((dims.batch, dims.q_heads, dims.q_len), dtype=torch.float32,
                          device=q.device) if return_lse else None
        return o, lse
    if plan.path == "sdpa":
        o, lse = _sdpa.attention(q, k, v, attn_mask, layout, dims, bool(is_causal),
                                 dims.head_dim ** -0.5 if scale is None else scale,
                                 bool(return_lse))
    else:
        try:
            o, lse = _kernel.attention(q, k, v, layout, dims, plan.compute_dtype,
                                       bool(is_causal), scale, bool(return_lse), function,
                                       pv_accum_dtype)
        except _lib.LibraryValueError as e:
            # A library built without this head dim's kernels (sagebuild build --head-dims)
            # refuses before launching anything: the exact path can still compute the call.
            if e.status != _lib.ERR_UNSUPPORTED_HEAD_DIM:
                raise
            _warn_head_dim(e)
            o, lse = _sdpa.attention(q, k, v, None, layout, dims, bool(is_causal),
                                     dims.head_dim ** -0.5 if scale is None else scale,
                                     bool(return_lse))
    return o, lse


_warned_head_dims = set()


def _warn_head_dim(error):
    if str(error) not in _warned_head_dims:
        _warned_head_dims.add(str(error))
        logging.getLogger("sageattention").warning(
            "sageattention: %s; these calls run through torch SDPA instead", error)


def varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, is_causal, sm_scale, function):
    """sageattn_varlen: q [total_q, Hq, D], k/v [total_k, Hkv, D]; sequence i is rows
    cu_seqlens_q[i]:cu_seqlens_q[i+1] of q and cu_seqlens_k[i]:cu_seqlens_k[i+1] of k and v.
    Each sequence runs as its own call on views (no copies of q, k, v)."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3:
            raise ValueError("%s must be a [total_tokens, heads, head_dim] tensor, got %s"
                             % (name, tuple(t.shape) if isinstance(t, torch.Tensor) else
                                type(t).__name__))
    starts_q = _offsets("cu_seqlens_q", cu_seqlens_q, q.shape[0])
    starts_k = _offsets("cu_seqlens_k", cu_seqlens_k, k.shape[0])
    if len(starts_q) != len(starts_k):
        raise ValueError("cu_seqlens_q and cu_seqlens_k must have the same length, got %d and "
                         "%d" % (len(starts_q), len(starts_k)))
    o = torch.empty(tuple(q.shape[:2]) + (v.shape[2],), dtype=q.dtype, device=q.device)
    for i in range(len(starts_q) - 1):
        q0, q1 = starts_q[i], starts_q[i + 1]
        k0, k1 = starts_k[i], starts_k[i + 1]
        if q1 == q0:
            continue
        part, _ = attention(q[q0:q1].unsqueeze(0), k[k0:k1].unsqueeze(0),
                            v[k0:k1].unsqueeze(0), None, "NHD", is_causal, sm_scale, False,
                            function, "")
        o[q0:q1] = part[0]
    return o


def _offsets(name, cu, total):
    if not isinstance(cu, torch.Tensor) or cu.dim() != 1:
        raise ValueError("%s must be a 1-D tensor of batch_size + 1 offsets" % name)
    if cu.dtype not in (torch.int32, torch.int64):
        raise ValueError("%s must be int32 or int64, got %s" % (name, cu.dtype))
    return _dispatch.check_offsets(name, [int(x) for x in cu.tolist()], total)
