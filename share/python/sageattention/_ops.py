"""The torch.library operations the public functions call, so that torch.compile traces through
them without graph breaks (fullgraph=True works). Their eager implementations do the whole call,
fallbacks included (_attention); the fake implementations give shapes and dtypes only.

Importing this module registers them: `import sageattention` does it when torch is already
imported, else the first call does (core imports it then; under torch.compile that import runs
eagerly, outside the trace)."""

from typing import Optional, Tuple

import torch

from . import _attention

NAMESPACE = "sageattention_sagebuild"


def _lse_shape(q, tensor_layout):
    if tensor_layout == "NHD":
        return (q.shape[0], q.shape[2], q.shape[1])
    return (q.shape[0], q.shape[1], q.shape[2])


@torch.library.custom_op(NAMESPACE + "::attention", mutates_args=())
def _attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                  attn_mask: Optional[torch.Tensor], tensor_layout: str, is_causal: bool,
                  sm_scale: Optional[float], return_lse: bool, function: str,
                  pv_accum_dtype: str) -> Tuple[torch.Tensor, torch.Tensor]:
    o, lse = _attention.attention(q, k, v, attn_mask, tensor_layout, is_causal, sm_scale,
                                  return_lse, function, pv_accum_dtype)
    return o, lse if lse is not None else _attention._empty_lse(q)


@_attention_op.register_fake
def _attention_fake(q, k, v, attn_mask, tensor_layout, is_causal, sm_scale, return_lse,
                    function, pv_accum_dtype):
    o = q.new_empty(tuple(q.shape[:-1]) + (v.shape[-1],))
    lse_shape = _lse_shape(q, tensor_layout) if return_lse else (0,)
    return o, q.new_empty(lse_shape, dtype=torch.float32)


@torch.library.custom_op(NAMESPACE + "::varlen", mutates_args=())
def _varlen_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens_q: torch.Tensor,
               cu_seqlens_k: torch.Tensor, is_causal: bool, sm_scale: Optional[float],
               function: str) -> torch.Tensor:
    return _attention.varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, is_causal, sm_scale, function)


@_varlen_op.register_fake
def _varlen_fake(q, k, v, cu_seqlens_q, cu_seqlens_k, is_causal, sm_scale, function):
    return q.new_empty(tuple(q.shape[:-1]) + (v.shape[-1],))


attention = getattr(torch.ops, NAMESPACE).attention
varlen = getattr(torch.ops, NAMESPACE).varlen
attention_eager = _attention.attention
varlen_eager = _attention.varlen


def traced(q, k, v):
    """Whether a call must go through the op: under torch.compile/export, when q is not a
    plain tensor (fake tensors, FX proxies, tensor subclasses), or when autograd records it
    (the op has no backward, and through the op backward says so instead of silently
    returning an output without a gradient)."""
    return (type(q) is not torch.Tensor or torch.compiler.is_compiling()
            or (torch.is_grad_enabled()
                and (q.requires_grad or k.requires_grad or v.requires_grad)))
