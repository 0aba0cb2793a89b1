"""The kernel path's glue (share/python/sageattention/_kernel.py) end to end on the CPU, with a
stand-in for libsageattn that computes attention in float64 from the very pointers and strides
it is given: what reaches the C ABI (views without copies, aligned copies, padded head dims,
fp32 through bf16, GQA parts under the workspace cap, the LSE of each part) and what comes back
(layout, dtype, the fp16 recompute queued behind a quantized call that raised the non-finite
flag). Needs torch, not a GPU; skips
without torch. The real library on a GPU: bench/dropin_smoke.py."""

import ctypes
import os
import sys
import unittest
from unittest import mock

PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "share", "python")
sys.path.insert(0, PY)

try:
    import torch
except ImportError:
    torch = None

if torch is not None:
    from sageattention import _device, _dispatch, _kernel, _lib, _settings

MODES = {"auto": 0, "int8-fp16": 1, "int8-fp8": 2, "fp16": 3}
NAMES = {v: k for k, v in MODES.items()}


def view_at(ptr, dtype, sizes, strides):
    """A tensor over the memory at ptr (CPU) with these sizes and element strides."""
    span = 1 + sum((n - 1) * s for n, s in zip(sizes, strides))
    esz = torch.empty((), dtype=dtype).element_size()
    raw = (ctypes.c_byte * (span * esz)).from_address(ptr)
    return torch.frombuffer(raw, dtype=dtype).as_strided(sizes, strides)


class FakeLibrary:
    """libsageattn's contract, computed on the CPU from raw pointers: ABI 1.1 (has_v12 False)
    or 1.2 (contexts, and the fp16 recompute queued by the library itself)."""

    modes = MODES
    has_nonfinite_flag = True
    has_v12 = False
    built_archs = "sm_90"
    CONTEXT = 0xC0FFEE0

    def __init__(self):
        self.calls = []
        self.poison_modes = set()
        self.workspace_queries = 0

    def mode_value(self, name):
        return MODES[name]

    def mode_name(self, value):
        return NAMES[value]

    def resolve_mode(self, value, device):
        return MODES["int8-fp16"] if value == 0 else value

    def cc_has_fp8(self, cc):
        return _lib.cc_has_fp8(None, cc)  # as a library before ABI 1.3

    def workspace_size(self, p, device):
        self.workspace_queries += 1
        if p.mode == MODES["fp16"]:
            return 0
        return p.batch * p.num_kv_heads * 1000 + (300 if p.lse else 0)

    def create_context(self, device):
        assert self.has_v12
        return self.CONTEXT

    def run_raw(self, params_ref, ws, ws_bytes, stream):
        """sageattn_run as ctypes calls it: a status."""
        try:
            self.run(params_ref._obj, ws, ws_bytes, stream)
        except _lib.LibraryError as e:
            return e.status
        return _lib.OK

    def run(self, p, ws, ws_bytes, stream):
        assert p.struct_size in (_lib.PARAMS_V1_SIZE, _lib.PARAMS_V11_SIZE, _lib.PARAMS_V12_SIZE)
        v12 = p.struct_size == _lib.PARAMS_V12_SIZE
        if v12:
            assert self.has_v12 and p.context == self.CONTEXT, "a 1.2 struct without context"
            assert not p.recompute_nonfinite or p.nonfinite_flag
        if v12 and p.recompute_nonfinite and p.mode != MODES["fp16"]:
            # What the library does: the quantized call, then its fp16 recompute in the same
            # call, conditional on the flag.
            first = _lib.Params.from_buffer_copy(p)
            first.recompute_nonfinite = 0
            self.run(first, ws, ws_bytes, stream)
            self.calls[-1]["recompute_folded"] = True
            again = _lib.Params.from_buffer_copy(p)
            again.mode = MODES["fp16"]
            again.only_if_nonzero = p.nonfinite_flag
            again.nonfinite_flag = None
            again.recompute_nonfinite = 0
            self.run(again, None, 0, stream)
            self.calls[-1]["folded"] = True
            return
        if p.struct_size >= _lib.PARAMS_V11_SIZE and p.only_if_nonzero:
            assert p.mode == MODES["fp16"]
            if ctypes.c_int.from_address(p.only_if_nonzero).value == 0:
                self.calls.append({"mode": "fp16", "skipped": True, "only_if": p.only_if_nonzero})
                return
        need = self.workspace_size(p, 0)
        self.workspace_queries -= 1  # the library's own check, not the package's question
        assert ws_bytes >= need, (ws_bytes, need)
        assert need == 0 or ws % 256 == 0
        dtype = torch.bfloat16 if p.dtype == _lib.DTYPE_BF16 else torch.float16
        b, hq, hkv, lq, lk, d = (p.batch, p.num_q_heads, p.num_kv_heads, p.q_len, p.kv_len,
                                 p.head_dim)
        for name, ptr, s in (("q", p.q, p.q_stride), ("k", p.k, p.k_stride),
                             ("v", p.v, p.v_stride), ("o", p.o, p.o_stride)):
            assert ptr % 16 == 0, name
            assert all(x % 8 == 0 for x in s), (name, list(s))
        q = view_at(p.q, dtype, (b, hq, lq, d), (*p.q_stride, 1)).double()
        k = view_at(p.k, dtype, (b, hkv, lk, d), (*p.k_stride, 1)).double()
        v = view_at(p.v, dtype, (b, hkv, lk, d), (*p.v_stride, 1)).double()
        o = view_at(p.o, dtype, (b, hq, lq, d), (*p.o_stride, 1))
        g = hq // hkv
        k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
        s = q @ k.transpose(-1, -2) * (p.sm_scale or d ** -0.5)
        if p.causal:
            allowed = torch.arange(lk)[None, :] <= torch.arange(lq)[:, None] + (lk - lq)
            s = s.masked_fill(~allowed, float("-inf"))
        lse = torch.logsumexp(s, -1)
        out = (torch.exp(s - lse[..., None]).nan_to_num(0.0) @ v).to(dtype)
        if p.mode in self.poison_modes:
            out[0, 0, 0, 0] = float("nan")
            if p.struct_size >= _lib.PARAMS_V11_SIZE and p.nonfinite_flag:
                ctypes.c_int.from_address(p.nonfinite_flag).value = 1
        o.copy_(out)
        if p.lse:
            view_at(p.lse, torch.float32, (b, hq, lq), (hq * lq, lq, 1)).copy_(lse.float())
        self.calls.append({"mode": NAMES[p.mode], "batch": b, "q_heads": hq, "kv_heads": hkv,
                           "struct_size": p.struct_size, "copied_q": p.q, "dtype": p.dtype,
                           "flag": p.nonfinite_flag if p.struct_size >= _lib.PARAMS_V11_SIZE
                           else None})


class CpuState(_device.DeviceState if torch is not None else object):
    """DeviceState with CPU buffers and made-up device facts."""

    def __init__(self):
        self.index, self.name, self.cc, self.uuid = 0, "Fake GPU", (9, 0), None
        self._modes, self._entry, self._entry_read = {}, None, True
        self.workspaces, self.flags = {}, {}
        self._context = None

    def workspace(self, stream, nbytes, capturing=False):
        if nbytes == 0:
            return None, 0, None
        buf = torch.empty(nbytes + 512, dtype=torch.uint8)
        pad = (-buf.data_ptr()) % 256
        self.workspaces[stream] = buf
        return buf.data_ptr() + pad, buf.numel() - pad, buf

    def finite_check(self, stream):
        return self.flags.setdefault(stream, CpuFiniteCheck())


class CpuFiniteCheck(_device.FiniteCheck if torch is not None else object):
    """FiniteCheck on the CPU: the host reads `seen` at once (no copy in flight)."""

    def __init__(self):
        super().__init__(torch.device("cpu"))

    def recomputed(self):
        return bool(self.seen[0])


def reference(q, k, v, layout, causal=False, scale=None):
    if layout == "NHD":
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    q, k, v = q.double(), k.double(), v.double()
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = q @ k.transpose(-1, -2) * (scale or q.shape[-1] ** -0.5)
    if causal:
        lq, lk = s.shape[-2:]
        allowed = torch.arange(lk)[None, :] <= torch.arange(lq)[:, None] + (lk - lq)
        s = s.masked_fill(~allowed, float("-inf"))
    lse = torch.logsumexp(s, -1)
    o = torch.exp(s - lse[..., None]).nan_to_num(0.0) @ v
    return (o.transpose(1, 2) if layout == "NHD" else o), lse


@unittest.skipIf(torch is None, "torch is not installed")
class KernelGlue(unittest.TestCase):
    def setUp(self):
        self.lib = FakeLibrary()
        self.state = CpuState()
        for target, value in (
                ("sageattention._lib.library", lambda: self.lib),
                ("sageattention._device.state", lambda index: self.state),
                ("sageattention._kernel.current_raw_stream", lambda index: 0),
                ("torch.cuda.current_device", lambda: 0),
                ("torch.cuda.is_current_stream_capturing", lambda: False)):
            patcher = mock.patch(target, value)
            patcher.start()
            self.addCleanup(patcher.stop)
        os.environ.pop("SAGEATTENTION_MODE", None)
        self.addCleanup(_settings.set_workspace_limit, "default")
        _kernel._prepared.clear()
        self.addCleanup(_kernel._prepared.clear)

    def attend(self, q, k, v, layout="HND", causal=False, lse=False, function="sageattn",
               pv="", scale=None):
        dims = _dispatch.dims_from_shapes(tuple(q.shape), tuple(k.shape), tuple(v.shape),
                                          layout)
        plan = _dispatch.plan_call(str(q.dtype).replace("torch.", ""), dims, False)
        self.assertEqual(plan.path, "kernel")
        return _kernel.attention(q, k, v, layout, dims, plan.compute_dtype, causal, scale, lse,
                                 function, pv)

    def last_run(self):
        """The last call the stand-in library computed (not a skipped conditional one)."""
        return [c for c in self.lib.calls if not c.get("skipped")][-1]

    def close(self, got, want, tol):
        self.assertEqual(tuple(got.shape), tuple(want.shape))
        self.assertLess(float((got.double() - want).abs().max()), tol)

    def test_comfyui_nhd_views_reach_the_abi_without_copies(self):
        torch.manual_seed(0)
        x = torch.randn(2, 40, 3 * 4 * 64).half()
        q, k, v = (t.view(2, -1, 4, 64) for t in x.chunk(3, dim=-1))
        o, lse = self.attend(q, k, v, "NHD")
        self.assertIsNone(lse)
        self.assertEqual(self.last_run()["copied_q"], q.data_ptr())
        self.assertTrue(o.is_contiguous() and o.dtype == torch.float16)
        self.close(o, reference(q, k, v, "NHD")[0], 2e-3)

    def test_gqa_causal_lse_hnd(self):
        torch.manual_seed(1)
        q, k, v = (torch.randn(2, 8, 24, 32).half(), torch.randn(2, 2, 40, 32).half(),
                   torch.randn(2, 2, 40, 32).half())
        o, lse = self.attend(q, k, v, causal=True, lse=True)
        want_o, want_lse = reference(q, k, v, "HND", causal=True)
        self.close(o, want_o, 2e-3)
        self.close(lse, want_lse, 1e-4)

    def test_fp32_runs_in_bf16_and_returns_fp32(self):
        q, k, v = (torch.randn(1, 2, 16, 64) for _ in range(3))
        o, _ = self.attend(q, k, v)
        self.assertEqual(o.dtype, torch.float32)
        self.close(o, reference(q, k, v, "HND")[0], 3e-2)

    def test_odd_head_dim_and_misaligned_views_are_copied_aligned(self):
        torch.manual_seed(2)
        q, k, v = (torch.randn(1, 3, 10, 20).half() for _ in range(3))
        o, _ = self.attend(q, k, v)  # D = 20: rows padded to 24 for the ABI, o back to 20
        self.assertTrue(o.is_contiguous())
        self.close(o, reference(q, k, v, "HND")[0], 2e-3)
        flat = torch.randn(1 + 2 * 4 * 8 * 64).half()
        q = flat[1:].view(2, 4, 8, 64)  # base 2 bytes off alignment
        o, _ = self.attend(q, q, q)
        self.assertNotEqual(self.last_run()["copied_q"], q.data_ptr())
        self.close(o, reference(q, q, q, "HND")[0], 2e-3)

    def test_capped_workspace_runs_whole_gqa_groups_and_fills_the_lse(self):
        torch.manual_seed(3)
        q, k, v = (torch.randn(3, 12, 16, 64).half(), torch.randn(3, 4, 16, 64).half(),
                   torch.randn(3, 4, 16, 64).half())
        _settings.set_workspace_limit(3 * 2 * 1000 + 300)  # 2 kv heads x 3 batches per part
        o, lse = self.attend(q, k, v, lse=True)
        parts = [(c["batch"], c["q_heads"], c["kv_heads"]) for c in self.lib.calls
                 if not c.get("skipped")]
        self.assertEqual(parts[:2], [(3, 6, 2), (3, 6, 2)])
        want_o, want_lse = reference(q, k, v, "HND")
        self.close(o, want_o, 2e-3)
        self.close(lse, want_lse, 1e-4)
        self.lib.calls.clear()
        _settings.set_workspace_limit(1000 + 300)  # one batch of one kv head per part
        o, lse = self.attend(q, k, v, "HND", lse=True)
        self.assertEqual(len([c for c in self.lib.calls if c["mode"] == "int8-fp16"]), 12)
        self.close(o, want_o, 2e-3)
        self.close(lse, want_lse, 1e-4)

    def test_nonfinite_output_is_recomputed_in_fp16_mode_on_the_device(self):
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        self.lib.poison_modes = {MODES["int8-fp16"]}
        with mock.patch.object(_kernel, "_warned_nonfinite", False):
            o, _ = self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
            calls = self.lib.calls
            self.assertEqual([(c["mode"], c.get("skipped", False)) for c in calls],
                             [("int8-fp16", False), ("fp16", False)])
            self.assertEqual([c["struct_size"] for c in calls], [_lib.PARAMS_V11_SIZE] * 2)
            self.assertTrue(bool(torch.isfinite(o).all()))
            self.close(o, reference(q, k, v, "HND")[0], 2e-3)
            # The host learns of it when the ring of flags wraps (no copy per call), and warns
            # once.
            self.lib.poison_modes = set()
            with self.assertLogs("sageattention", "WARNING") as logs:
                for _ in range(_device.FLAG_SLOTS):
                    self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
                self.assertTrue(_kernel._warned_nonfinite)
                for _ in range(_device.FLAG_SLOTS + 1):
                    self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
        self.assertEqual(len(logs.output), 1)
        self.assertIn("recomputed in fp16", logs.output[0])

    def test_each_call_takes_its_own_flag_and_the_ring_is_zeroed_when_it_wraps(self):
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        checker = self.state.finite_check(0)
        self.lib.poison_modes = {MODES["int8-fp16"]}
        with mock.patch.object(_kernel, "_warned_nonfinite", True):  # no log from this test
            self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")  # slot 0 raised
            self.lib.poison_modes = set()
            self.lib.calls.clear()
            self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
            first, recompute = self.lib.calls
            # The next call's flag is another one, still down: its recompute does nothing.
            self.assertEqual(first["flag"], checker.ring_ptr + 4)
            self.assertEqual((recompute["only_if"], recompute["skipped"]),
                             (first["flag"], True))
            self.assertEqual(int(checker.ring[0]), 1)
            for _ in range(_device.FLAG_SLOTS - 2):
                self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
            self.assertEqual(int(checker.ring[0]), 1)
            self.lib.calls.clear()
            self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")  # back to slot 0
        self.assertEqual(self.lib.calls[0]["flag"], checker.ring_ptr)
        self.assertTrue(self.lib.calls[1]["skipped"])
        self.assertEqual(int(checker.ring.sum()), 0)

    def test_the_ring_folds_into_seen_while_the_warning_is_due(self):
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        checker = self.state.finite_check(0)
        self.lib.poison_modes = {MODES["int8-fp16"]}
        with mock.patch.object(_kernel, "_warned_nonfinite", False), \
                self.assertLogs("sageattention", "WARNING"):
            self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
            self.lib.poison_modes = set()
            self.assertEqual(int(checker.seen[0]), 0)
            for _ in range(_device.FLAG_SLOTS):
                self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
            self.assertEqual(int(checker.seen[0]), 1)

    def test_finite_output_queues_a_recompute_that_does_nothing(self):
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
        self.assertEqual([(c["mode"], c.get("skipped", False)) for c in self.lib.calls],
                         [("int8-fp16", False), ("fp16", True)])
        self.assertFalse(bool(self.state.finite_check(0).seen[0]))

    def test_check_off_or_fp16_mode_runs_once(self):
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        self.lib.poison_modes = {MODES["int8-fp16"]}
        with mock.patch.dict(os.environ, {"SAGEATTENTION_CHECK_FINITE": "0"}):
            o, _ = self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
        self.assertEqual([(c["mode"], c["struct_size"]) for c in self.lib.calls],
                         [("int8-fp16", _lib.PARAMS_V1_SIZE)])
        self.assertFalse(bool(torch.isfinite(o).all()))  # what the kernel wrote, unchecked
        self.lib.calls.clear()
        with mock.patch.dict(os.environ, {"SAGEATTENTION_MODE": "fp16"}):
            self.attend(q, k, v)
        self.assertEqual([c["mode"] for c in self.lib.calls], ["fp16"])

    def test_a_signature_seen_before_asks_no_workspace_size(self):
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        self.attend(q, k, v)
        self.assertEqual(self.lib.workspace_queries, 2)  # the quantized call and its recompute
        for _ in range(3):
            o, _ = self.attend(q, k, v)
        self.assertEqual(self.lib.workspace_queries, 2)
        self.assertEqual([c["mode"] for c in self.lib.calls[-2:]], ["int8-fp16", "fp16"])
        self.close(o, reference(q, k, v, "HND")[0], 2e-3)
        q2 = torch.randn(1, 2, 16, 64).half()  # new memory, same signature: its own pointers
        o, _ = self.attend(q2, k, v)
        self.assertEqual(self.lib.workspace_queries, 2)
        self.assertEqual(self.last_run()["copied_q"], q2.data_ptr())
        self.close(o, reference(q2, k, v, "HND")[0], 2e-3)

    def test_a_changed_signature_never_reuses_a_stale_struct(self):
        torch.manual_seed(5)
        q, k, v = (torch.randn(2, 4, 32, 64).half() for _ in range(3))
        strided = tuple(t.transpose(1, 2).contiguous().transpose(1, 2) for t in (q, k, v))
        longer_kv = torch.randn(2, 4, 48, 64).half()
        flat = torch.randn(1 + q.numel()).half()
        misaligned = flat[1:].view(q.shape)  # q's strides, base 2 bytes off: copied
        cases = [
            ("first", (q, k, v), {}),
            ("misaligned base", (misaligned, k, v), {}),
            ("other strides, same shapes", strided, {}),
            ("longer k/v", (q, longer_kv, longer_kv.flip(2)), {}),
            ("GQA: 2 k/v heads", (q, k[:, :2], v[:, :2]), {}),
            ("one batch", (q[:1], k[:1], v[:1]), {}),
            ("bf16", tuple(t.bfloat16() for t in (q, k, v)), {}),
            ("causal", (q, k, v), {"causal": True}),
            ("sm_scale", (q, k, v), {"scale": 0.05}),
            ("lse", (q, k, v), {"lse": True}),
            ("head_dim 32", tuple(t[..., :32] for t in (q, k, v)), {}),
        ]
        for round_ in range(2):  # the second round runs every signature from the cache
            for label, (a, b, c), kw in cases:
                o, lse = self.attend(a, b, c, **kw)
                want_o, want_lse = reference(a, b, c, "HND", kw.get("causal", False),
                                             kw.get("scale"))
                with self.subTest(label, round=round_):
                    self.close(o, want_o, 1.6e-2 if a.dtype == torch.bfloat16 else 2e-3)
                    if kw.get("lse"):
                        self.close(lse, want_lse, 1e-4)
                    else:
                        self.assertIsNone(lse)
        queries = self.lib.workspace_queries
        # The first round only, but for the misaligned call: never taken from the cache.
        self.assertEqual(queries, 2 * len(cases) + 2)
        # Check off: a struct without the flag, no recompute queued.
        with mock.patch.dict(os.environ, {"SAGEATTENTION_CHECK_FINITE": "0"}):
            self.lib.calls.clear()
            self.attend(q, k, v)
            self.assertEqual([(c["mode"], c["struct_size"]) for c in self.lib.calls],
                             [("int8-fp16", _lib.PARAMS_V1_SIZE)])
        # A cap the cached call does not fit: it runs in parts again (2 batches x 1 kv head).
        _settings.set_workspace_limit(2 * 1000 + 300)
        self.lib.calls.clear()
        o, _ = self.attend(q, k, v)
        self.assertEqual([c["kv_heads"] for c in self.lib.calls if c["mode"] == "int8-fp16"],
                         [1, 1, 1, 1])
        self.close(o, reference(q, k, v, "HND")[0], 2e-3)

    def test_modes_per_function_and_forced(self):
        q = torch.randn(1, 2, 16, 64).half()
        for function, pv, mode in (("sageattn", "", "int8-fp16"),
                                   ("sageattn_qk_int8_pv_fp8_cuda", "fp32+fp16", "int8-fp8"),
                                   ("sageattn_qk_int8_pv_fp8_cuda_sm90", "fp32+fp32", "int8-fp8"),
                                   ("sageattn_qk_int8_pv_fp16_triton", "", "int8-fp16")):
            self.attend(q, q, q, function=function, pv=pv)
            self.assertEqual(self.last_run()["mode"], mode, function)
        with mock.patch.dict(os.environ, {"SAGEATTENTION_MODE": "fp16"}):
            self.attend(q, q, q, function="sageattn_qk_int8_pv_fp8_cuda")
        self.assertEqual(self.lib.calls[-1]["mode"], "fp16")



@unittest.skipIf(torch is None, "torch is not installed")
class KernelGlueAbi12(KernelGlue):
    """The same glue on an ABI 1.2 library (every test above runs again), plus what 1.2
    changes: one library call per attention call with the device's context, the recompute
    queued by the library, and the fast path of eager calls whose signature ran before."""

    def setUp(self):
        super().setUp()
        self.lib.has_v12 = True
        from sageattention import _attention, _fast
        self._fast = _fast
        _fast._entries.clear()
        self.addCleanup(_fast._entries.clear)
        for target, value in (
                ("sageattention._attention._check_tensors", lambda q, k, v, m: None),
                ("sageattention._fast._current_device", lambda: 0),
                ("sageattention._kernel._is_capturing", lambda: False),
                ("torch.Tensor.get_device", lambda self: 0)):
            patcher = mock.patch(target, value)
            patcher.start()
            self.addCleanup(patcher.stop)
        self.attention_module = _attention

    # The 1.1 expectations of these tests (two library calls, 1.1 structs) are 1.2 ones here.
    def test_nonfinite_output_is_recomputed_in_fp16_mode_on_the_device(self):
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        self.lib.poison_modes = {MODES["int8-fp16"]}
        with mock.patch.object(_kernel, "_warned_nonfinite", True):
            o, _ = self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
        self.assertEqual([(c["mode"], c.get("skipped", False), c.get("folded", False))
                          for c in self.lib.calls],
                         [("int8-fp16", False, False), ("fp16", False, True)])
        self.assertEqual(self.lib.calls[0]["struct_size"], _lib.PARAMS_V12_SIZE)
        self.assertTrue(bool(torch.isfinite(o).all()))
        self.close(o, reference(q, k, v, "HND")[0], 2e-3)

    def test_each_call_takes_its_own_flag_and_the_ring_is_zeroed_when_it_wraps(self):
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        checker = self.state.finite_check(0)
        with mock.patch.object(_kernel, "_warned_nonfinite", True):
            for i in range(_device.FLAG_SLOTS + 1):
                self.lib.calls.clear()
                self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
                first, recompute = self.lib.calls
                self.assertEqual(first["flag"], checker.ring_ptr + 4 * (i % _device.FLAG_SLOTS))
                self.assertEqual((recompute["only_if"], recompute["skipped"]),
                                 (first["flag"], True))

    def test_finite_output_queues_a_recompute_that_does_nothing(self):
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
        self.assertEqual([(c["mode"], c.get("skipped", False), c.get("folded", False))
                          for c in self.lib.calls],
                         [("int8-fp16", False, False), ("fp16", True, True)])

    def test_a_signature_seen_before_asks_no_workspace_size(self):
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        self.attend(q, k, v)
        self.assertEqual(self.lib.workspace_queries, 1)  # the recompute needs no question
        for _ in range(3):
            o, _ = self.attend(q, k, v)
        self.assertEqual(self.lib.workspace_queries, 1)
        self.close(o, reference(q, k, v, "HND")[0], 2e-3)

    def test_a_changed_signature_never_reuses_a_stale_struct(self):
        # Every case asks one workspace size (no separate recompute): run the base test with
        # the 1.1 count replaced.
        with mock.patch.object(self, "assertEqual", self._equal_but_queries):
            super().test_a_changed_signature_never_reuses_a_stale_struct()

    def _equal_but_queries(self, first, second, msg=None):
        if first == self.lib.workspace_queries and isinstance(second, int) and second > 2:
            second = (second - 2) // 2 + 1  # 2 per case + 2 -> 1 per case + 1
        elif isinstance(second, list) and second == [("int8-fp16", _lib.PARAMS_V1_SIZE)]:
            second = [("int8-fp16", _lib.PARAMS_V12_SIZE)]
        unittest.TestCase.assertEqual(self, first, second, msg)

    def test_check_off_or_fp16_mode_runs_once(self):
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        with mock.patch.dict(os.environ, {"SAGEATTENTION_CHECK_FINITE": "0"}):
            self.attend(q, k, v, function="sageattn_qk_int8_pv_fp16_cuda")
        self.assertEqual([(c["mode"], c["struct_size"], c["flag"]) for c in self.lib.calls],
                         [("int8-fp16", _lib.PARAMS_V12_SIZE, None)])

    # ---- the fast path (sageattention._fast) ----

    def eager(self, q, k, v, layout="HND", function="sageattn", causal=False, scale=None):
        return self._fast.call(function, q, k, v, layout, causal, scale, "")

    def test_second_call_of_a_signature_is_one_library_call_from_the_fast_path(self):
        torch.manual_seed(7)
        x = torch.randn(2, 40, 3 * 4 * 64).half()
        q, k, v = (t.view(2, -1, 4, 64) for t in x.chunk(3, dim=-1))
        full = mock.Mock(wraps=self.attention_module.attention)
        with mock.patch.object(self.attention_module, "attention", full):
            o1 = self.eager(q, k, v, "NHD")
            queries = self.lib.workspace_queries
            self.lib.calls.clear()
            x2 = torch.randn_like(x)  # the same signature, other memory
            q2, k2, v2 = (t.view(2, -1, 4, 64) for t in x2.chunk(3, dim=-1))
            o2 = self.eager(q2, k2, v2, "NHD")
        self.assertEqual(full.call_count, 1)  # the second call never took the full path
        self.assertEqual(self.lib.workspace_queries, queries)
        entry = next(iter(self._fast._entries.values()))
        self.assertIsInstance(entry, _kernel.FastCall)
        self.assertEqual([(c["mode"], c.get("folded", False)) for c in self.lib.calls],
                         [("int8-fp16", False), ("fp16", True)])
        self.assertEqual(self.lib.calls[0]["copied_q"], q2.data_ptr())
        self.assertEqual(self.lib.calls[0]["flag"], self.state.finite_check(0).ring_ptr + 4)
        self.close(o1, reference(q, k, v, "NHD")[0], 2e-3)
        self.close(o2, reference(q2, k2, v2, "NHD")[0], 2e-3)
        self.assertTrue(o2.is_contiguous() and o2.shape == q2.shape)

    def test_fast_path_recomputes_and_keeps_the_settings(self):
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        self.eager(q, k, v)
        self.lib.poison_modes = {MODES["int8-fp16"]}
        with mock.patch.object(_kernel, "_warned_nonfinite", True):
            o = self.eager(q, k, v)
        self.assertTrue(bool(torch.isfinite(o).all()))
        self.assertEqual(self.lib.calls[-1]["folded"], True)
        self.assertFalse(self.lib.calls[-1].get("skipped", False))
        # A setting read per call still takes effect at once: another signature.
        self.lib.calls.clear()
        with mock.patch.dict(os.environ, {"SAGEATTENTION_CHECK_FINITE": "0"}):
            for _ in range(2):
                o = self.eager(q, k, v)
        self.assertEqual([c["flag"] for c in self.lib.calls], [None, None])
        self.assertFalse(bool(torch.isfinite(o).all()))
        self.lib.calls.clear()
        with mock.patch.dict(os.environ, {"SAGEATTENTION_MODE": "fp16"}):
            for _ in range(2):
                self.eager(q, k, v)
        self.assertEqual([c["mode"] for c in self.lib.calls], ["fp16", "fp16"])

    def test_fast_path_leaves_what_it_cannot_do_to_the_full_path(self):
        torch.manual_seed(8)
        q, k, v = (torch.randn(1, 3, 10, 20).half() for _ in range(3))  # D=20: padded
        for _ in range(2):
            o = self.eager(q, k, v)
        self.close(o, reference(q, k, v, "HND")[0], 2e-3)
        self.assertEqual(list(self._fast._entries.values()), [False])
        q, k, v = (torch.randn(1, 2, 16, 64).half() for _ in range(3))
        self.eager(q, k, v)
        flat = torch.randn(1 + q.numel()).half()
        misaligned = flat[1:].view(q.shape)  # q's signature, base off alignment: copied
        self.lib.calls.clear()
        o = self.eager(misaligned, k, v)
        self.assertNotEqual(self.lib.calls[0]["copied_q"], misaligned.data_ptr())
        self.close(o, reference(misaligned, k, v, "HND")[0], 2e-3)
        with mock.patch("sageattention._kernel._is_capturing", lambda: True), \
                mock.patch("torch.cuda.is_current_stream_capturing", lambda: True):
            self.lib.calls.clear()
            self.eager(q, k, v)
        self.assertEqual(self.lib.calls[0]["flag"], self.state.finite_check(0).flag.data_ptr())


if __name__ == "__main__":
    unittest.main()
