"""The drop-in's torch-side rules that need torch but no GPU: the torch.library operations
(fake shapes, torch.compile(fullgraph=True) tracing with one op in the graph), the exact SDPA
path (masks, bottom-right causal, GQA, LSE in row blocks), the copies that make views meet the
C ABI's alignment, and the per-part pointers of a capped call. Skips where torch is missing
(CI); the GPU checks are bench/dropin_smoke.py."""

import os
import subprocess
import sys
import unittest

PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "share", "python")
sys.path.insert(0, PY)

try:
    import torch
except ImportError:
    torch = None


def needs_torch(cls):
    return unittest.skipIf(torch is None, "torch is not installed")(cls)


if torch is not None:
    import sageattention
    from sageattention import _dispatch, _kernel, _lib, _ops, _sdpa, _settings


def ref_sdpa(q, k, v, mask=None, causal=False, scale=None):
    """fp64 attention on HND tensors (k/v heads repeated), bottom-right causal; rows that see
    no key give 0 and lse -inf."""
    q, k, v = q.double(), k.double(), v.double()
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = q @ k.transpose(-1, -2) * (scale if scale is not None else q.shape[-1] ** -0.5)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask.double()
    if causal:
        lq, lk = s.shape[-2:]
        allowed = torch.arange(lk)[None, :] <= torch.arange(lq)[:, None] + (lk - lq)
        s = s.masked_fill(~allowed, float("-inf"))
    lse = torch.logsumexp(s, -1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    return p @ v, lse


@needs_torch
class Ops(unittest.TestCase):
    def test_fake_shapes(self):
        from torch._subclasses.fake_tensor import FakeTensorMode

        with FakeTensorMode():
            q = torch.empty(2, 100, 8, 64, dtype=torch.float16)  # NHD
            k = torch.empty(2, 300, 2, 64, dtype=torch.float16)
            v = torch.empty(2, 300, 2, 32, dtype=torch.float16)
            o, lse = _ops.attention(q, k, v, None, "NHD", False, None, True, "sageattn", "")
            self.assertEqual((tuple(o.shape), o.dtype), ((2, 100, 8, 32), torch.float16))
            self.assertEqual((tuple(lse.shape), lse.dtype), ((2, 8, 100), torch.float32))
            o, lse = _ops.attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                    None, "HND", False, None, False, "sageattn", "")
            self.assertEqual((tuple(o.shape), tuple(lse.shape)), ((2, 8, 100, 32), (0,)))
            self.assertTrue(o.is_contiguous())
            o = _ops.varlen(q[0], k[0], v[0], torch.empty(2, dtype=torch.int32),
                            torch.empty(2, dtype=torch.int32), False, None, "sageattn_varlen")
            self.assertEqual(tuple(o.shape), (100, 8, 32))

    def test_compile_fullgraph_one_op_either_import_order(self):
        for order in ("import torch, sageattention", "import sageattention, torch"):
            code = (order + "\n"
                    "graphs = []\n"
                    "def backend(gm, example_inputs):\n"
                    "    graphs.append(gm)\n"
                    "    return gm.forward\n"
                    "def f(q, k, v, mask):\n"
                    "    o = sageattention.sageattn(q, k, v, tensor_layout='NHD', "
                    "attn_mask=mask, is_causal=False)\n"
                    "    o2, lse = sageattention.sageattn_qk_int8_pv_fp8_cuda(q, k, v, "
                    "tensor_layout='NHD', pv_accum_dtype='fp32+fp16', return_lse=True)\n"
                    "    return o * 2 + o2, lse\n"
                    "q = torch.randn(1, 16, 2, 64)\n"
                    "try:\n"
                    "    torch.compile(f, fullgraph=True, backend=backend)(q, q, q, None)\n"
                    "except ValueError as e:\n"
                    "    print('ran the op:', e)\n"
                    "code = graphs[0].code\n"
                    "print('graphs', len(graphs), 'ops', "
                    "code.count('torch.ops.sageattention_sagebuild.attention'))\n")
            r = subprocess.run([sys.executable, "-W", "ignore", "-c", code],
                               env=dict(os.environ, PYTHONPATH=PY), capture_output=True,
                               text=True)
            self.assertIn("graphs 1 ops 2", r.stdout, order + "\n" + r.stderr[-3000:])
            self.assertIn("ran the op: q must be a CUDA tensor", r.stdout, order)

    def test_eager_calls_skip_the_dispatcher_traced_ones_do_not(self):
        from torch._subclasses.fake_tensor import FakeTensorMode

        t = torch.empty(1)
        self.assertFalse(_ops.traced(t, t, t))
        with FakeTensorMode():
            f = torch.empty(1)
            self.assertTrue(_ops.traced(f, f, f))
        g = torch.empty(1, requires_grad=True)
        self.assertTrue(_ops.traced(t, t, g))
        with torch.no_grad():
            self.assertFalse(_ops.traced(t, t, g))

    def test_cpu_tensors_are_a_value_error(self):
        q = torch.randn(1, 2, 8, 64)
        with self.assertRaises(ValueError) as cm:
            sageattention.sageattn(q, q, q)
        self.assertIn("CUDA tensor", str(cm.exception))


@needs_torch
class ExactPath(unittest.TestCase):
    def run_sdpa(self, q, k, v, mask=None, causal=False, layout="HND", lse=True, scale=None):
        dims = _dispatch.dims_from_shapes(tuple(q.shape), tuple(k.shape), tuple(v.shape), layout)
        s = scale if scale is not None else dims.head_dim ** -0.5
        return _sdpa.attention(q, k, v, mask, layout, dims, causal, s, lse)

    def check(self, got, want, tol=1e-5):
        self.assertEqual(got.shape, want.shape)
        finite = torch.isfinite(want)
        self.assertTrue(torch.equal(torch.isfinite(got), finite))
        self.assertLess(float((got.double() - want)[finite].abs().max()), tol)

    def test_masks_gqa_and_lse(self):
        torch.manual_seed(0)
        q, k, v = torch.randn(2, 8, 33, 16), torch.randn(2, 2, 47, 16), torch.randn(2, 2, 47, 16)
        bool4 = torch.rand(2, 1, 33, 47) > 0.4
        bool4[..., 0] = True
        add2 = torch.randn(33, 47)
        for mask in (None, bool4, add2):
            for causal in (False, True):
                o, lse = self.run_sdpa(q, k, v, mask, causal)
                want_o, want_lse = ref_sdpa(q, k, v, mask, causal)
                self.check(o, want_o)
                self.check(lse, want_lse)
                self.assertEqual(lse.dtype, torch.float32)

    def test_causal_bottom_right_both_ways(self):
        torch.manual_seed(1)
        for lq, lk in ((10, 30), (30, 10)):
            q, k, v = torch.randn(1, 2, lq, 8), torch.randn(1, 2, lk, 8), torch.randn(1, 2, lk, 8)
            o, lse = self.run_sdpa(q, k, v, causal=True)
            want_o, want_lse = ref_sdpa(q, k, v, causal=True)
            self.check(o, want_o)
            self.check(lse, want_lse)
        # q_len > kv_len: the first 20 rows see no key: zeros and -inf, never NaN
        self.assertTrue(bool((o[:, :, :20] == 0).all()))
        self.assertTrue(bool(torch.isneginf(lse[:, :, :20]).all()))

    def test_nhd_output_is_contiguous_in_caller_layout(self):
        q, k, v = torch.randn(1, 12, 4, 8), torch.randn(1, 20, 4, 8), torch.randn(1, 20, 4, 24)
        o, _ = self.run_sdpa(q, k, v, layout="NHD", lse=False)
        want, _ = ref_sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        self.assertTrue(o.is_contiguous())
        self.check(o, want.transpose(1, 2))

    def test_lse_in_row_blocks_under_the_cap(self):
        torch.manual_seed(2)
        q, k, v = torch.randn(1, 2, 50, 8), torch.randn(1, 2, 40, 8), torch.randn(1, 2, 40, 8)
        _settings.set_workspace_limit(2 * 40 * 4 * 3)  # 3 rows per block
        try:
            _, lse = self.run_sdpa(q, k, v, causal=True)
        finally:
            _settings.set_workspace_limit("default")
        self.check(lse, ref_sdpa(q, k, v, causal=True)[1])

    def test_float64_and_scale(self):
        q, k, v = (torch.randn(1, 2, 9, 8, dtype=torch.float64) for _ in range(3))
        o, lse = self.run_sdpa(q, k, v, scale=0.3)
        want_o, want_lse = ref_sdpa(q, k, v, scale=0.3)
        self.check(o, want_o, 1e-12)
        self.check(lse, want_lse, 1e-5)  # the LSE is float32 by contract


@needs_torch
class AbiViews(unittest.TestCase):
    def test_aligned_views_pass_through(self):
        x = torch.randn(2, 100, 3 * 8 * 64, dtype=torch.float16)
        for t in x.chunk(3, dim=-1):
            view = t.view(2, -1, 8, 64)
            self.assertIs(_kernel._abi_view(view), view)

    def test_misaligned_base_is_copied(self):
        x = torch.randn(2 * 4 * 16 * 64 + 1, dtype=torch.float16)
        view = x[1:].view(2, 4, 16, 64)
        out = _kernel._abi_view(view)
        self.assertIsNot(out, view)
        self.assertTrue(torch.equal(out, view))
        self.assertTrue(_dispatch.rows_aligned(out.data_ptr(), 2, out.stride(), out.shape))

    def test_odd_head_dim_is_padded(self):
        view = torch.randn(1, 3, 5, 20, dtype=torch.bfloat16)
        out = _kernel._abi_view(view)
        self.assertEqual(out.shape, view.shape)
        self.assertEqual(out.stride(-2), 24)
        self.assertTrue(torch.equal(out, view))
        self.assertTrue(_dispatch.rows_aligned(out.data_ptr(), 2, out.stride(), out.shape))

    def test_noncontiguous_last_dim_is_copied(self):
        view = torch.randn(1, 2, 4, 128, dtype=torch.float16)[..., ::2]
        out = _kernel._abi_view(view)
        self.assertEqual(out.stride(-1), 1)
        self.assertTrue(torch.equal(out, view))


@needs_torch
class PartParams(unittest.TestCase):
    def test_pointers_and_sizes_of_a_part(self):
        b, hq, hkv, lq, lk, d = 3, 8, 2, 10, 12, 64
        for layout in ("HND", "NHD"):
            shape_q = (b, hq, lq, d) if layout == "HND" else (b, lq, hq, d)
            shape_k = (b, hkv, lk, d) if layout == "HND" else (b, lk, hkv, d)
            q, o = torch.empty(shape_q, dtype=torch.float16), torch.empty(shape_q,
                                                                          dtype=torch.float16)
            k, v = torch.empty(shape_k, dtype=torch.float16), torch.empty(shape_k,
                                                                          dtype=torch.float16)
            dims = _dispatch.dims_from_shapes(q.shape, k.shape, v.shape, layout)
            call = _kernel._Call(q, k, v, o, None, layout, dims, 0.0, True, 4096)
            p = call.params(2, 1, 3, 1, 2, None, True)
            self.assertEqual((p.batch, p.num_q_heads, p.num_kv_heads, p.q_len, p.kv_len),
                             (2, 4, 1, lq, lk))
            h = 1 if layout == "HND" else 2
            self.assertEqual(p.q, q.select(0, 1).select(h - 1, 4).data_ptr())
            self.assertEqual(p.o, o.select(0, 1).select(h - 1, 4).data_ptr())
            self.assertEqual(p.k, k.select(0, 1).select(h - 1, 1).data_ptr())
            self.assertEqual(p.v, v.select(0, 1).select(h - 1, 1).data_ptr())
            self.assertEqual(list(p.q_stride), [q.stride(0), q.stride(h), q.stride(3 - h)])
            self.assertEqual((p.struct_size, p.nonfinite_flag, p.causal, p.mode),
                             (_lib.PARAMS_V11_SIZE, 4096, 1, 2))
            p1 = call.params(1, 0, 3, 0, 2, None, False)
            self.assertEqual((p1.struct_size, p1.nonfinite_flag), (_lib.PARAMS_V1_SIZE, None))


if __name__ == "__main__":
    unittest.main()
