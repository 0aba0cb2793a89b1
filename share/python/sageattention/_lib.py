"""libsageattn through ctypes: finding and loading the library, its params struct, and C
statuses turned into Python exceptions. No torch here; loading the library does not touch the
GPU (CUDA starts on the first attention call)."""

import ctypes
import os
import sys
import threading

from . import _dispatch

LIBRARY_ENV = "SAGEATTENTION_LIBRARY"
LIBRARY_NAME = "libsageattn.so"

# sageattn_status (kernels/include/sageattn.h).
OK = 0
ERR_MISALIGNED = 2
ERR_BAD_SHAPE = 3
ERR_BAD_STRIDE = 4
ERR_UNSUPPORTED_HEAD_DIM = 5
ERR_UNSUPPORTED_DTYPE = 6
ERR_UNSUPPORTED_MODE = 7
ERR_NO_CODE_FOR_GPU = 8
ERR_ABI = 11
ERR_CONTEXT = 12
# Statuses that mean the arguments were wrong (ValueError) rather than the machine.
_VALUE_ERRORS = (ERR_MISALIGNED, ERR_BAD_SHAPE, ERR_BAD_STRIDE, ERR_UNSUPPORTED_HEAD_DIM,
                 ERR_UNSUPPORTED_DTYPE)

DTYPE_FP16 = 0
DTYPE_BF16 = 1
MAX_MODE_VALUE = 31  # contract 3: modes are discovered by name for values 0..31


class Params(ctypes.Structure):
    """sageattn_params, ABI 1.2 (the 1.0 struct ends before nonfinite_flag, the 1.1 one before
    context)."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("batch", ctypes.c_int),
        ("num_q_heads", ctypes.c_int),
        ("num_kv_heads", ctypes.c_int),
        ("q_len", ctypes.c_int),
        ("kv_len", ctypes.c_int),
        ("head_dim", ctypes.c_int),
        ("dtype", ctypes.c_int),
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("o", ctypes.c_void_p),
        ("q_stride", ctypes.c_int64 * 3),
        ("k_stride", ctypes.c_int64 * 3),
        ("v_stride", ctypes.c_int64 * 3),
        ("o_stride", ctypes.c_int64 * 3),
        ("lse", ctypes.c_void_p),
        ("sm_scale", ctypes.c_float),
        ("causal", ctypes.c_int),
        ("mode", ctypes.c_int),
        ("nonfinite_flag", ctypes.c_void_p),
        ("only_if_nonzero", ctypes.c_void_p),
        ("context", ctypes.c_void_p),
        ("recompute_nonfinite", ctypes.c_int),
    ]


PARAMS_V1_SIZE = Params.nonfinite_flag.offset
PARAMS_V11_SIZE = Params.context.offset
PARAMS_V12_SIZE = ctypes.sizeof(Params)


class LibraryError(RuntimeError):
    """A libsageattn call failed; .status is the sageattn_status."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class LibraryValueError(ValueError):
    """libsageattn refused the arguments; .status is the sageattn_status."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def package_library_path():
    """Where an installed wheel keeps the library: sageattention/_lib/libsageattn.so."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib", LIBRARY_NAME)


def library_path():
    """$SAGEATTENTION_LIBRARY when set, else the packaged library (absolute paths)."""
    override = os.environ.get(LIBRARY_ENV)
    return os.path.abspath(override) if override else package_library_path()


class Library:
    """One loaded libsageattn, with its modes by name and its archs."""

    def __init__(self, path):
        if not os.path.isfile(path):
            raise RuntimeError(
                "libsageattn not found at %s: %s" % (
                    path, "check %s" % LIBRARY_ENV if os.environ.get(LIBRARY_ENV) else
                    "reinstall the drop-in with `sagebuild install --python %s`"
                    % sys.executable))
        self.path = path
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise RuntimeError("cannot load libsageattn from %s: %s" % (path, e)) from None
        self._lib = lib
        c_int_p = ctypes.POINTER(ctypes.c_int)
        params_p = ctypes.POINTER(Params)
        lib.sageattn_workspace_size.argtypes = [params_p, ctypes.c_int,
                                                ctypes.POINTER(ctypes.c_size_t)]
        lib.sageattn_workspace_size.restype = ctypes.c_int
        lib.sageattn_run.argtypes = [params_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        lib.sageattn_run.restype = ctypes.c_int
        lib.sageattn_resolve_mode.argtypes = [ctypes.c_int, ctypes.c_int, c_int_p]
        lib.sageattn_resolve_mode.restype = ctypes.c_int
        for name in ("sageattn_status_string", "sageattn_mode_name"):
            getattr(lib, name).argtypes = [ctypes.c_int]
            getattr(lib, name).restype = ctypes.c_char_p
        for name in ("sageattn_last_error", "sageattn_built_archs"):
            getattr(lib, name).argtypes = []
            getattr(lib, name).restype = ctypes.c_char_p
        lib.sageattn_abi_version.argtypes = []
        lib.sageattn_abi_version.restype = ctypes.c_int
        # ABI 1.2: per-device contexts (absent from older libraries).
        self._context_create = getattr(lib, "sageattn_context_create", None)
        if self._context_create is not None:
            self._context_create.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
            self._context_create.restype = ctypes.c_int
            lib.sageattn_context_destroy.argtypes = [ctypes.c_void_p]
            lib.sageattn_context_destroy.restype = None
        # ABI 1.3: the arch table's FP8 fact (absent from older libraries).
        self._cc_has_fp8 = getattr(lib, "sageattn_cc_has_fp8", None)
        if self._cc_has_fp8 is not None:
            self._cc_has_fp8.argtypes = [ctypes.c_int, ctypes.c_int]
            self._cc_has_fp8.restype = ctypes.c_int
        self.abi_version = lib.sageattn_abi_version()
        if self.abi_version != 1:
            raise RuntimeError("libsageattn at %s has ABI %d; this package speaks ABI 1"
                               % (path, self.abi_version))
        self.built_archs = _text(lib.sageattn_built_archs())
        self.modes = _dispatch.discover_modes(
            [_text(lib.sageattn_mode_name(i)) for i in range(MAX_MODE_VALUE + 1)])
        # ABI 1.1 (nonfinite_flag and only_if_nonzero): what the non-finite check needs.
        self.has_nonfinite_flag = self._probe_struct_size(PARAMS_V11_SIZE)
        # ABI 1.2 (context and recompute_nonfinite): one call per attention call, with the
        # device's facts read once.
        self.has_v12 = (self._context_create is not None
                        and self._probe_struct_size(PARAMS_V12_SIZE))
        # The raw entry point, for callers that check the status themselves (the fast path).
        self.run_raw = lib.sageattn_run
        self._sha256 = None

    def _probe_struct_size(self, size):
        """Whether the library accepts a params struct of `size` bytes: validation checks
        struct_size before anything else and before any CUDA call, so a struct with no
        tensors answers ABI mismatch or a NULL pointer."""
        p = Params()
        p.struct_size = size
        n = ctypes.c_size_t(0)
        return self._lib.sageattn_workspace_size(ctypes.byref(p), 0, ctypes.byref(n)) != ERR_ABI

    @property
    def sha256(self):
        if self._sha256 is None:
            from . import _record
            self._sha256 = _record.file_sha256(self.path)
        return self._sha256

    def last_error(self):
        return _text(self._lib.sageattn_last_error())

    def status_string(self, status):
        return _text(self._lib.sageattn_status_string(status))

    def mode_value(self, name):
        if name not in self.modes:
            raise ValueError("libsageattn at %s has no mode %r (it has: %s)"
                             % (self.path, name, ", ".join(sorted(self.modes))))
        return self.modes[name]

    def mode_name(self, value):
        return _text(self._lib.sageattn_mode_name(value))

    def check(self, status, what):
        """Raises the exception for a non-OK status, with the library's message."""
        if status == OK:
            return
        message = "%s: %s (%s)" % (what, self.last_error() or self.status_string(status),
                                   self.status_string(status))
        if status in _VALUE_ERRORS:
            raise LibraryValueError(message, status)
        raise LibraryError(message, status)

    def resolve_mode(self, mode_value, device):
        """The mode value the library runs for `mode_value` on `device` (AUTO resolved)."""
        out = ctypes.c_int(-1)
        status = self._lib.sageattn_resolve_mode(mode_value, device, ctypes.byref(out))
        self.check(status, "sageattn_resolve_mode")
        return out.value

    def cc_has_fp8(self, cc):
        """Whether GPUs of compute capability cc = (major, minor) have FP8 tensor cores."""
        return cc_has_fp8(self._cc_has_fp8, cc)

    def create_context(self, device):
        """A new sageattn_context for `device` (ABI 1.2) as an int handle; the caller keeps it
        for the process's lifetime or frees it with destroy_context."""
        out = ctypes.c_void_p(None)
        self.check(self._context_create(device, ctypes.byref(out)), "sageattn_context_create")
        return out.value

    def destroy_context(self, handle):
        self._lib.sageattn_context_destroy(handle)

    def workspace_size(self, params, device):
        n = ctypes.c_size_t(0)
        status = self._lib.sageattn_workspace_size(ctypes.byref(params), device, ctypes.byref(n))
        self.check(status, "sageattn_workspace_size")
        return n.value

    def run(self, params, workspace_ptr, workspace_bytes, stream):
        status = self._lib.sageattn_run(ctypes.byref(params), workspace_ptr, workspace_bytes,
                                        stream)
        self.check(status, "sageattn_run")


def cc_has_fp8(c_function, cc):
    """Whether GPUs of compute capability cc have FP8 tensor cores, as the library's
    sageattn_cc_has_fp8 (c_function; ABI 1.3) says, else by the rule of the libraries before it.

    The library is asked, rather than a constant generated from kernels/archs/archs.def into the
    wheel, because the library is what refuses an FP8 mode: its answer cannot disagree with what
    then runs, also when SAGEATTENTION_LIBRARY points at another build; and the package stays
    plain source, with no generated file that the source tree (the tests) would lack."""
    if c_function is None:
        return tuple(cc) >= _dispatch.FP8_MIN_CC_BEFORE_ABI_1_3
    return bool(c_function(cc[0], cc[1]))


def _text(raw):
    return raw.decode("utf-8", "replace") if raw else ""


_loaded = None
_load_lock = threading.Lock()


def library():
    """The process's libsageattn, loaded on first use by absolute path."""
    global _loaded
    if _loaded is None:
        with _load_lock:
            if _loaded is None:
                _loaded = Library(library_path())
    return _loaded
