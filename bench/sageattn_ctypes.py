"""ctypes binding of libsageattn (kernels/include/sageattn.h) for torch tensors."""
import ctypes

import torch

# The modes of every library; newer ones (issue 9's P·V variants, values >= 4) are found by name
# through sageattn_mode_name (SageAttn.modes), never by a hard-coded number.
MODES = {"auto": 0, "int8-fp16": 1, "int8-fp8": 2, "fp16": 3}
DTYPES = {torch.float16: 0, torch.bfloat16: 1}


class Params(ctypes.Structure):
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
    ]


class Params12(ctypes.Structure):
    """sageattn_params of ABI 1.2: the 1.0 fields (Params), then nonfinite_flag and
    only_if_nonzero (1.1), context and recompute_nonfinite (1.2)."""

    _fields_ = Params._fields_ + [
        ("nonfinite_flag", ctypes.c_void_p),
        ("only_if_nonzero", ctypes.c_void_p),
        ("context", ctypes.c_void_p),
        ("recompute_nonfinite", ctypes.c_int),
    ]


class SageAttn:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        # ABI 1.2: sageattn_context per device (absent from older libraries).
        self.has_context = hasattr(self.lib, "sageattn_context_create")
        self._contexts = {}
        if self.has_context:
            self.lib.sageattn_context_create.argtypes = [ctypes.c_int,
                                                         ctypes.POINTER(ctypes.c_void_p)]
            self.lib.sageattn_context_create.restype = ctypes.c_int
        # sageattn_run taking any struct by address (a Params or a Params12).
        self.run_any = self.lib["sageattn_run"]
        self.run_any.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                 ctypes.c_void_p]
        self.run_any.restype = ctypes.c_int
        self.workspace_any = self.lib["sageattn_workspace_size"]
        self.workspace_any.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_size_t)]
        self.workspace_any.restype = ctypes.c_int
        self.lib.sageattn_last_error.restype = ctypes.c_char_p
        self.lib.sageattn_built_archs.restype = ctypes.c_char_p
        self.lib.sageattn_mode_name.restype = ctypes.c_char_p
        self.lib.sageattn_status_string.restype = ctypes.c_char_p
        self.lib.sageattn_run.argtypes = [ctypes.POINTER(Params), ctypes.c_void_p,
                                          ctypes.c_size_t, ctypes.c_void_p]
        self.lib.sageattn_workspace_size.argtypes = [ctypes.POINTER(Params), ctypes.c_int,
                                                     ctypes.POINTER(ctypes.c_size_t)]
        self.lib.sageattn_resolve_mode.argtypes = [ctypes.c_int, ctypes.c_int,
                                                   ctypes.POINTER(ctypes.c_int)]
        self._ws = None
        self.modes = dict(MODES)
        for i in range(32):
            name = self.lib.sageattn_mode_name(i)
            if name and name.decode() not in ("unknown", "?"):
                self.modes[name.decode()] = i

    def error(self):
        return self.lib.sageattn_last_error().decode()

    def context(self, device):
        """The sageattn_context of `device` (made once, kept for the process)."""
        if device not in self._contexts:
            out = ctypes.c_void_p(None)
            st = self.lib.sageattn_context_create(device, ctypes.byref(out))
            if st != 0:
                raise RuntimeError("sageattn_context_create: %d %s" % (st, self.error()))
            self._contexts[device] = out.value
        return self._contexts[device]

    def params12(self, p, context=None, flag_ptr=None, recompute=False):
        """The ABI 1.2 struct of the 1.0 struct p, with a context and the non-finite flag
        (recompute: the fp16 recompute queued in the same call)."""
        q = Params12()
        ctypes.memmove(ctypes.addressof(q), ctypes.addressof(p), ctypes.sizeof(Params))
        q.struct_size = ctypes.sizeof(Params12)
        q.context = context
        q.nonfinite_flag = flag_ptr
        q.recompute_nonfinite = 1 if recompute else 0
        return q

    def resolve(self, mode, device=0):
        out = ctypes.c_int(-1)
        st = self.lib.sageattn_resolve_mode(self.modes[mode], device, ctypes.byref(out))
        return st, out.value

    def params(self, q, k, v, o, layout="HND", causal=False, mode="int8-fp16", lse=None,
               sm_scale=0.0, head_dim=None):
        """q/k/v/o are [B,H,L,D] (HND) or [B,L,H,D] (NHD) views; D may be a slice."""
        p = Params()
        p.struct_size = ctypes.sizeof(Params)
        hd = 1 if layout == "HND" else 2
        ld = 2 if layout == "HND" else 1
        p.batch = q.shape[0]
        p.num_q_heads = q.shape[hd]
        p.num_kv_heads = k.shape[hd]
        p.q_len = q.shape[ld]
        p.kv_len = k.shape[ld]
        p.head_dim = head_dim or q.shape[3]
        p.dtype = DTYPES[q.dtype]
        for name, t in (("q", q), ("k", k), ("v", v), ("o", o)):
            setattr(p, name, t.data_ptr())
            s = getattr(p, name + "_stride")
            s[0], s[1], s[2] = t.stride(0), t.stride(hd), t.stride(ld)
        p.lse = lse.data_ptr() if lse is not None else None
        p.sm_scale = sm_scale
        p.causal = int(causal)
        p.mode = self.modes[mode]
        return p

    def workspace(self, p):
        n = ctypes.c_size_t(0)
        st = self.lib.sageattn_workspace_size(ctypes.byref(p), torch.cuda.current_device(),
                                              ctypes.byref(n))
        if st != 0:
            raise RuntimeError("workspace_size: %d %s" % (st, self.error()))
        if self._ws is None or self._ws.numel() < n.value:
            self._ws = torch.empty(max(n.value, 1), dtype=torch.uint8, device="cuda")
        return self._ws, n.value

    def run(self, p):
        ws, n = self.workspace(p)
        st = self.lib.sageattn_run(ctypes.byref(p), ctypes.c_void_p(ws.data_ptr()), ws.numel(),
                                   ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if st != 0:
            raise RuntimeError("sageattn_run: %d %s" % (st, self.error()))

    def attn(self, q, k, v, layout="HND", causal=False, mode="int8-fp16", want_lse=False,
             sm_scale=0.0, out=None, head_dim=None):
        o = out if out is not None else torch.empty_like(q)
        lse = None
        if want_lse:
            hd = 1 if layout == "HND" else 2
            ld = 2 if layout == "HND" else 1
            lse = torch.empty(q.shape[0], q.shape[hd], q.shape[ld], device="cuda",
                              dtype=torch.float32)
        p = self.params(q, k, v, o, layout, causal, mode, lse, sm_scale, head_dim)
        self.run(p)
        return o, lse
