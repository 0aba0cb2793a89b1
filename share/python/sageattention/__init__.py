"""sageattention, as built by sagebuild: SageAttention 2.2.0's Python API over libsageattn's C
ABI (ctypes; no torch C++ extension, so it keeps working across torch upgrades).

Upstream functions, their parameters (names and defaults as in SageAttention 2.2.0), and the
libsageattn mode each runs:

  function                          parameters after (q, k, v)                        mode
  sageattn                          tensor_layout="HND", is_causal=False,             recommended
                                    sm_scale=None, return_lse=False, **kwargs
  sageattn_qk_int8_pv_fp16_triton   tensor_layout="HND", quantization_backend=        int8-fp16
                                    "triton", is_causal=False, attn_mask=None,
                                    sm_scale=None, smooth_k=True, return_lse=False,
                                    **kwargs
  sageattn_qk_int8_pv_fp16_cuda     tensor_layout="HND", is_causal=False,             int8-fp16
                                    qk_quant_gran="per_thread", sm_scale=None,
                                    pv_accum_dtype="fp32", smooth_k=True,
                                    smooth_v=False, return_lse=False, **kwargs
  sageattn_qk_int8_pv_fp8_cuda      same, pv_accum_dtype="fp32+fp16"                  int8-fp8
  sageattn_qk_int8_pv_fp8_cuda_sm90 tensor_layout="HND", is_causal=False,             int8-fp8
                                    qk_quant_gran="per_thread", sm_scale=None,
                                    pv_accum_dtype="fp32+fp32", smooth_k=True,
                                    return_lse=False, **kwargs
  sageattn_varlen                   cu_seqlens_q, cu_seqlens_k, max_seqlen_q,         int8-fp16
                                    max_seqlen_k, is_causal=False, sm_scale=None,     per sequence
                                    smooth_k=True, **kwargs

- recommended: the mode `sagebuild selftest` recorded for this GPU and this very library
  (recommendation.json beside the library), else libsageattn's AUTO (sageattn_resolve_mode:
  int8-fp16 on sm_80/86/87, int8-fp8-f16acc on sm_89/120/121, int8-fp8-wgmma on sm_90,
  int8-fp8 on sm_100), int8-fp16 on sm_90 where the library lacks sm_90a code.
- int8-fp8 needs FP8 tensor cores: on GPUs before compute capability 8.9 those functions run
  int8-fp16 (upstream fails there).
- pv_accum_dtype picks a faster variant of the mode when the library has one and this GPU's
  self-test passed it (_dispatch.PV_ACCUM_VARIANTS), else the base mode runs: "fp32+fp16" (fp8)
  int8-fp8-f16acc, "fp32+fp32"/"fp32" (fp8) int8-fp8-bs (same arithmetic, full rate on sm_120a),
  "fp16"/"fp16+fp32" (fp16) int8-fp16-f16acc.
- Accepted and ignored: qk_quant_gran (libsageattn quantizes per token), smooth_k (K's mean is
  always subtracted: exact for softmax, and the LSE is that of the unsmoothed scores), smooth_v,
  quantization_backend, max_seqlen_*, and any other keyword.
- SAGEATTENTION_MODE=<mode> forces one libsageattn mode for every call (e.g. int8-fp16, int8-fp8,
  fp16, auto).

Inputs: [B, H, L, D] ("HND") or [B, L, H, D] ("NHD") views with a contiguous last dim, no copies
(a view whose rows break 16-byte alignment is copied); float16 or bfloat16; float32 computes in
bfloat16 and returns float32; GQA/MQA (Hkv divides Hq); q_len != kv_len (causal aligned
bottom-right); any CUDA device (the call runs there, on torch's current stream).
Exact path: any attn_mask (bool or additive, broadcast like SDPA's), head_dim > 128, v's head_dim
unlike q's, float64 or sm_scale <= 0 run through torch's scaled_dot_product_attention, with the
LSE (if asked) computed from the scores in row blocks. A mask is never ignored.
No black frames: when a quantized call writes NaN/inf, the kernels raise a device flag (one of
a ring of 1024 per stream, zeroed together when the ring wraps) and an fp16-mode run queued behind
the call recomputes it on the GPU (that run exits at once when the flag is down, so the host
never waits); one warning per process (logger "sageattention") once the host sees a recompute
happened (it looks when the ring wraps: within about 2048 calls on that stream).
SAGEATTENTION_CHECK_FINITE=0 turns the check off.
Memory: a call's workspace (the quantized Q/K/V) is capped at 256 MiB by default
(SAGEATTENTION_WORKSPACE_LIMIT_MB, 0 = no cap, or set_workspace_limit()); above it, the heads run
in parts of whole GQA groups.
Errors: a GPU the library has no code for raises RuntimeError naming the GPU, the library's archs
and the rebuild command; CPU tensors, wrong ranks or mismatched dtypes/devices raise ValueError.

`import sageattention` imports neither CUDA nor (unless it is already imported) torch.
"""

import sys

from . import _settings
from .core import (sageattn, sageattn_qk_int8_pv_fp8_cuda, sageattn_qk_int8_pv_fp8_cuda_sm90,
                   sageattn_qk_int8_pv_fp16_cuda, sageattn_qk_int8_pv_fp16_triton,
                   sageattn_varlen)

__all__ = [
    "sageattn",
    "sageattn_qk_int8_pv_fp8_cuda",
    "sageattn_qk_int8_pv_fp8_cuda_sm90",
    "sageattn_qk_int8_pv_fp16_cuda",
    "sageattn_qk_int8_pv_fp16_triton",
    "sageattn_varlen",
]

UPSTREAM_VERSION = "2.2.0"
implementation = "sagebuild"

set_workspace_limit = _settings.set_workspace_limit
get_workspace_limit = _settings.workspace_limit


def library_info():
    """What the package would run: the library's path, archs and modes, and the build facts
    found beside it. Loads the library (no GPU needed); raises RuntimeError without one."""
    from . import _lib, _record

    lib = _lib.library()
    build = _record.load_json(_record.find_record("build-record.json", lib.path))
    return {
        "implementation": implementation,
        "version": _version(),
        "library": lib.path,
        "abi_version": lib.abi_version,
        "built_archs": lib.built_archs,
        "modes": sorted(lib.modes, key=lib.modes.get),
        "nonfinite_flag": lib.has_nonfinite_flag,
        "sagebuild_version": _record.sagebuild_version(build),
        "head_dims": build.get("head_dims") if build else None,
    }


def _version():
    """The installed wheel's version when this package came from it (it names the sagebuild
    that made the wheel), else one made from the build record beside the library."""
    from . import _dispatch, _lib, _record

    installed = _installed_version()
    if installed:
        return installed
    path = _record.find_record("build-record.json", _lib.library_path())
    return _dispatch.version_string(UPSTREAM_VERSION,
                                    _record.sagebuild_version(_record.load_json(path)))


def _installed_version():
    import importlib.metadata
    import os

    try:
        dist = importlib.metadata.distribution("sageattention")
        ours = os.path.samefile(str(dist.locate_file("sageattention/__init__.py")), __file__)
    except (importlib.metadata.PackageNotFoundError, OSError, ValueError):
        return None
    return dist.version if ours and "+sagebuild" in dist.version else None


def __getattr__(name):
    # __version__ reads the build record beside the library on first use (a file, no GPU).
    if name == "__version__":
        value = _version()
        globals()["__version__"] = value
        return value
    raise AttributeError("module 'sageattention' has no attribute %r" % name)


if "torch" in sys.modules:
    # torch is already here (ComfyUI, a script): define the torch.library operations now, so
    # that a first call inside torch.compile finds them registered.
    from . import _ops  # noqa: F401
