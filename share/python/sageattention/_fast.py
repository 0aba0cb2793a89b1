"""Eager calls without a mask or an LSE, the calls a model makes by the thousand: a call whose
signature ran before goes straight to its _kernel.FastCall, without the checks, path choice and
setting lookups of its first call (every one of them depends only on the signature, and the
library validates every struct it runs anyway).

The signature is what the first call's checks and choices read: the function and its
pv_accum_dtype, layout, is_causal, sm_scale, dtypes, device, shapes and strides of q, k, v, and
the settings (_settings.snapshot). Anything else (other devices current, CUDA graph capture,
misaligned pointers, a first call) takes the full path (_attention.attention)."""

import torch

from . import _attention, _kernel, _settings

# Signature -> FastCall, or False for a signature that never takes the fast path. Bounded like
# _kernel._prepared.
_entries = {}
ENTRIES_MAX = 512

_Tensor = torch.Tensor
_current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device


def call(function, q, k, v, layout, is_causal, sm_scale, pv_accum_dtype):
    """o of an eager call (plain tensors, no autograd, no mask, no LSE). is_causal is a bool,
    sm_scale None or a float."""
    key = None
    dev = q.get_device() if type(k) is _Tensor and type(v) is _Tensor else -1
    if dev >= 0 and k.get_device() == dev and v.get_device() == dev and dev == _current_device():
        key = (function, pv_accum_dtype, layout, is_causal, sm_scale, q.dtype, k.dtype, v.dtype,
               dev, q.shape, q.stride(), k.shape, k.stride(), v.shape, v.stride(),
               _settings.snapshot())
        entry = _entries.get(key)
        if entry:
            o = entry(q, k, v)
            if o is not None:
                return o
    o, _ = _attention.attention(q, k, v, None, layout, is_causal, sm_scale, False, function,
                                pv_accum_dtype)
    if key is not None and key not in _entries:
        dims, plan = _attention.dims_and_plan(q, k, v, layout, False, sm_scale)
        entry, never = (_kernel.fast_call(q, k, v, layout, dims, plan.compute_dtype, is_causal,
                                          sm_scale, function, pv_accum_dtype)
                        if plan is not None and plan.path == "kernel" else (None, True))
        if entry is not None or never:
            if len(_entries) >= ENTRIES_MAX:
                _entries.clear()
            _entries[key] = entry or False
    return o
