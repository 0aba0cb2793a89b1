"""Unit tests of the drop-in's pure dispatch rules (share/python/sageattention/_dispatch.py):
no torch, no GPU. Run: python3 -m unittest discover -s tests/python"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "share", "python"))

from sageattention import _dispatch as D  # noqa: E402
from sageattention import _lib  # noqa: E402

KNOWN = {"auto": 0, "int8-fp16": 1, "int8-fp8": 2, "fp16": 3}


def dims(batch=1, hq=8, hkv=8, lq=128, lk=128, d=64, dv=None):
    return D.Dims(batch, hq, hkv, lq, lk, d, d if dv is None else dv)


class LayoutAndShapes(unittest.TestCase):
    def test_layouts(self):
        self.assertEqual(D.parse_layout("HND"), "HND")
        self.assertEqual(D.parse_layout("NHD"), "NHD")
        for bad in ("hnd", "BHSD", "", None, 1):
            with self.assertRaises(ValueError):
                D.parse_layout(bad)

    def test_axes(self):
        self.assertEqual(D.axes("HND"), (1, 2))
        self.assertEqual(D.axes("NHD"), (2, 1))

    def test_dims_hnd_gqa_and_unequal_lengths(self):
        d = D.dims_from_shapes((2, 8, 100, 64), (2, 2, 300, 64), (2, 2, 300, 64), "HND")
        self.assertEqual((d.batch, d.q_heads, d.kv_heads, d.q_len, d.kv_len, d.head_dim,
                          d.v_head_dim), (2, 8, 2, 100, 300, 64, 64))

    def test_dims_nhd(self):
        d = D.dims_from_shapes((2, 100, 8, 64), (2, 300, 1, 64), (2, 300, 1, 32), "NHD")
        self.assertEqual((d.q_heads, d.kv_heads, d.q_len, d.kv_len, d.v_head_dim),
                         (8, 1, 100, 300, 32))

    def test_dims_errors_say_what_was_expected(self):
        cases = [
            (((2, 8, 64), (2, 8, 4, 64), (2, 8, 4, 64)), "4 dimensions"),
            (((2, 8, 4, 64), (3, 8, 4, 64), (3, 8, 4, 64)), "batch"),
            (((2, 8, 4, 64), (2, 8, 4, 64), (2, 8, 5, 64)), "same number of heads"),
            (((2, 8, 4, 64), (2, 8, 4, 32), (2, 8, 4, 64)), "same head_dim"),
            (((2, 8, 4, 64), (2, 3, 4, 64), (2, 3, 4, 64)), "must divide"),
            (((2, 8, 4, 0), (2, 8, 4, 0), (2, 8, 4, 0)), "at least 1"),
            (((2, 8, 4, 64), (2, 8, 4, 64), (2, 8, 4, 0)), "at least 1"),
        ]
        for shapes, words in cases:
            with self.assertRaises(ValueError) as cm:
                D.dims_from_shapes(*shapes, "HND")
            self.assertIn(words, str(cm.exception), shapes)

    def test_empty(self):
        self.assertTrue(D.is_empty(dims(batch=0)))
        self.assertTrue(D.is_empty(dims(lq=0)))
        self.assertTrue(D.is_empty(dims(hq=0, hkv=1)))
        self.assertFalse(D.is_empty(dims(lk=0)))
        self.assertFalse(D.is_empty(dims()))


class Paths(unittest.TestCase):
    def test_kernel_dtypes(self):
        for dt, compute in (("float16", "float16"), ("bfloat16", "bfloat16"),
                            ("float32", "bfloat16")):
            p = D.plan_call(dt, dims(), False)
            self.assertEqual((p.path, p.compute_dtype), ("kernel", compute), dt)

    def test_any_mask_is_exact(self):
        for dt in ("float16", "bfloat16", "float32"):
            p = D.plan_call(dt, dims(), True)
            self.assertEqual((p.path, p.compute_dtype), ("sdpa", dt))
            self.assertIn("attn_mask", p.reason)

    def test_head_dims(self):
        for d in (1, 7, 40, 64, 72, 80, 96, 100, 128):
            self.assertEqual(D.plan_call("float16", dims(d=d), False).path, "kernel", d)
        for d in (129, 160, 256, 512):
            p = D.plan_call("float16", dims(d=d), False)
            self.assertEqual(p.path, "sdpa", d)
            self.assertIn("head_dim", p.reason)

    def test_v_head_dim_unlike_q(self):
        self.assertEqual(D.plan_call("float16", dims(d=64, dv=32), False).path, "sdpa")

    def test_float64_exact_and_other_dtypes_refused(self):
        p = D.plan_call("float64", dims(), False)
        self.assertEqual((p.path, p.compute_dtype), ("sdpa", "float64"))
        for bad in ("int8", "float8_e4m3fn", "int64", "complex64"):
            with self.assertRaises(ValueError) as cm:
                D.plan_call(bad, dims(), False)
            self.assertIn("float16, bfloat16 or float32", str(cm.exception))

    def test_scale(self):
        self.assertEqual(D.plan_call("float16", dims(), False, 0.125).path, "kernel")
        self.assertEqual(D.plan_call("float16", dims(), False, None).path, "kernel")
        for s in (0.0, -1.0, float("inf"), float("nan")):
            self.assertEqual(D.plan_call("float16", dims(), False, s).path, "sdpa", s)


class Modes(unittest.TestCase):
    def test_discover(self):
        names = ["auto", "int8-fp16", "int8-fp8", "fp16"] + ["unknown"] * 28
        self.assertEqual(D.discover_modes(names), KNOWN)
        grown = ["auto", "int8-fp16", "int8-fp8", "fp16", "int8-fp8-f16acc", "unknown", "",
                 "fp16"]
        self.assertEqual(D.discover_modes(grown)["int8-fp8-f16acc"], 4)
        self.assertEqual(D.discover_modes(grown)["fp16"], 3)
        self.assertNotIn("", D.discover_modes(grown))
        self.assertNotIn("unknown", D.discover_modes(grown))

    def test_function_table(self):
        expect = {
            "sageattn": D.RECOMMENDED,
            "sageattn_qk_int8_pv_fp16_cuda": "int8-fp16",
            "sageattn_qk_int8_pv_fp16_triton": "int8-fp16",
            "sageattn_qk_int8_pv_fp8_cuda": "int8-fp8",
            "sageattn_qk_int8_pv_fp8_cuda_sm90": "int8-fp8",
            "sageattn_varlen": "int8-fp16",
        }
        for function, mode in expect.items():
            self.assertEqual(D.requested_mode(function, "fp32", None, KNOWN, ()), mode)
        with self.assertRaises(ValueError):
            D.requested_mode("sageattn_qk_int4", "", None, KNOWN, ())

    def test_forced_mode_wins_and_must_exist(self):
        for function in D.FUNCTION_MODES:
            self.assertEqual(D.requested_mode(function, "", "fp16", KNOWN, ()), "fp16")
        with self.assertRaises(ValueError) as cm:
            D.requested_mode("sageattn", "", "int4-fp8", KNOWN, ())
        self.assertIn("int8-fp16", str(cm.exception))

    def test_variant_needs_library_and_selftest(self):
        name = D.PV_ACCUM_VARIANTS[("int8-fp8", "fp32+fp16")][0]
        grown = dict(KNOWN, **{name: 4})
        f = "sageattn_qk_int8_pv_fp8_cuda"
        self.assertEqual(D.requested_mode(f, "fp32+fp16", None, grown, (name,)), name)
        # not passed by this GPU's self-test, not in the library, or not asked for
        self.assertEqual(D.requested_mode(f, "fp32+fp16", None, grown, ()), "int8-fp8")
        self.assertEqual(D.requested_mode(f, "fp32+fp16", None, KNOWN, (name,)), "int8-fp8")
        self.assertEqual(D.requested_mode(f, "fp32+fp32", None, grown, (name,)), "int8-fp8")
        # the next candidate when the first is not safe here
        both = dict(grown, **{"int8-fp8-bs": 5})
        self.assertEqual(D.requested_mode(f, "fp32+fp16", None, both, ("int8-fp8-bs",)),
                         "int8-fp8-bs")
        self.assertEqual(D.requested_mode(f, "fp32+fp32", None, both, ("int8-fp8-bs", name)),
                         "int8-fp8-bs")
        # the fp16 function's pv_accum_dtype never picks an fp8 variant
        self.assertEqual(D.requested_mode("sageattn_qk_int8_pv_fp16_cuda", "fp32+fp16", None,
                                          grown, (name,)), "int8-fp16")

    def test_variant_table_is_keyed_by_known_bases(self):
        for (base, accum), names in D.PV_ACCUM_VARIANTS.items():
            self.assertIn(base, KNOWN)
            self.assertTrue(names and all(n.startswith(base) for n in names), names)

    def test_recommended(self):
        self.assertEqual(D.recommended_or_auto("int8-fp8", KNOWN), "int8-fp8")
        self.assertEqual(D.recommended_or_auto("int8-fp8-new", KNOWN), "auto")
        self.assertEqual(D.recommended_or_auto(None, KNOWN), "auto")

    def test_fp8_modes_need_fp8_tensor_cores(self):
        self.assertEqual(D.mode_for_device("int8-fp8", False), "int8-fp16")
        self.assertEqual(D.mode_for_device("int8-fp8-f16acc", False), "int8-fp16")
        self.assertEqual(D.mode_for_device("int8-fp8-wgmma", False), "int8-fp16")
        self.assertEqual(D.mode_for_device("int8-fp8", True), "int8-fp8")
        self.assertEqual(D.mode_for_device("int8-fp8-wgmma", True), "int8-fp8-wgmma")
        self.assertEqual(D.mode_for_device("int8-fp16", False), "int8-fp16")
        self.assertEqual(D.mode_for_device("fp16", False), "fp16")
        self.assertEqual(D.mode_for_device("auto", False), "auto")


# Which GPUs ran int8-fp16 for an FP8 mode before the library was asked (the rule libraries
# before ABI 1.3 hard-coded): the fallback for such a library must keep exactly this.
FP8_BY_CC = {(3, 0): False, (7, 5): False, (8, 0): False, (8, 6): False, (8, 7): False,
             (8, 8): False, (8, 9): True, (9, 0): True, (9, 5): True, (10, 0): True,
             (12, 0): True, (12, 1): True, (13, 0): True}


class Fp8Capability(unittest.TestCase):
    def test_a_library_before_abi_1_3_keeps_the_old_rule(self):
        for cc, has in FP8_BY_CC.items():
            self.assertEqual(_lib.cc_has_fp8(None, cc), has, cc)

    def test_the_library_is_asked_when_it_can_answer(self):
        asked = []

        def table(major, minor):
            asked.append((major, minor))
            return 1 if (major, minor) == (7, 5) else 0

        self.assertTrue(_lib.cc_has_fp8(table, (7, 5)))
        self.assertFalse(_lib.cc_has_fp8(table, (12, 0)))
        self.assertEqual(asked, [(7, 5), (12, 0)])


class Alignment(unittest.TestCase):
    def test_contiguous_hnd_and_nhd_views(self):
        # [B, H, L, D] contiguous, D = 64: fine; ComfyUI's NHD view of [B, L, H*D] too
        self.assertTrue(D.rows_aligned(4096, 2, (8 * 100 * 64, 100 * 64, 64, 1), (2, 8, 100, 64)))
        self.assertTrue(D.rows_aligned(4096, 2, (100 * 8 * 64, 8 * 64, 64, 1), (2, 100, 8, 64)))

    def test_breaks(self):
        self.assertFalse(D.rows_aligned(4098, 2, (64, 64, 64, 1), (1, 1, 4, 64)))  # base
        self.assertFalse(D.rows_aligned(4096, 2, (4 * 20, 20, 20, 1), (1, 1, 4, 20)))  # D=20
        self.assertFalse(D.rows_aligned(4096, 2, (64, 64, 128, 2), (1, 1, 4, 64)))  # last dim

    def test_size_one_dims_do_not_count(self):
        self.assertTrue(D.rows_aligned(4096, 2, (3, 5, 64, 1), (1, 1, 4, 64)))
        self.assertTrue(D.rows_aligned(4096, 2, (64, 64, 64, 7), (1, 1, 4, 1)))

    def test_padded_head_dim(self):
        self.assertEqual([D.padded_head_dim(d) for d in (1, 7, 8, 9, 20, 64, 72, 100, 128)],
                         [8, 8, 8, 16, 24, 64, 72, 104, 128])


class Chunks(unittest.TestCase):
    @staticmethod
    def linear(per_batch_head):
        return lambda nb, nkv: nb * nkv * per_batch_head + 1000

    def covered(self, parts, batch, kv_heads):
        seen = set()
        for b0, b1, h0, h1 in parts:
            for b in range(b0, b1):
                for h in range(h0, h1):
                    self.assertNotIn((b, h), seen)
                    seen.add((b, h))
        self.assertEqual(seen, {(b, h) for b in range(batch) for h in range(kv_heads)})

    def test_fits(self):
        ws = self.linear(100)
        self.assertEqual(D.plan_chunks(2, 8, 10 ** 6, ws), [(0, 2, 0, 8)])
        self.assertEqual(D.plan_chunks(2, 8, None, ws), [(0, 2, 0, 8)])

    def test_heads_split_with_whole_batch(self):
        ws = self.linear(100)
        parts = D.plan_chunks(2, 40, 2 * 13 * 100 + 1000, ws)
        self.covered(parts, 2, 40)
        self.assertTrue(all(b0 == 0 and b1 == 2 for b0, b1, _, _ in parts))
        self.assertEqual([h1 - h0 for _, _, h0, h1 in parts], [13, 13, 13, 1])
        for b0, b1, h0, h1 in parts:
            self.assertLessEqual(ws(b1 - b0, h1 - h0), 2 * 13 * 100 + 1000)

    def test_batch_split_when_one_head_is_too_big(self):
        ws = self.linear(100)
        parts = D.plan_chunks(10, 3, 3 * 100 + 1000, ws)
        self.covered(parts, 10, 3)
        self.assertTrue(all(h1 - h0 == 1 for _, _, h0, h1 in parts))
        self.assertEqual(sorted({b1 - b0 for b0, b1, _, _ in parts}), [1, 3])

    def test_smallest_part_runs_even_over_the_cap(self):
        parts = D.plan_chunks(2, 2, 10, self.linear(100))
        self.covered(parts, 2, 2)
        self.assertEqual(len(parts), 4)

    def test_wan_shape_default_cap(self):
        # B=1, H=40, L=75600, D=128, int8-fp16: ~2 x 40 x 75648 x 128 bytes of int8 Q and K
        def ws(nb, nkv):
            return nb * nkv * (2 * 75648 * 128 + 75648 * 8)
        parts = D.plan_chunks(1, 40, D.DEFAULT_WORKSPACE_LIMIT, ws)
        self.covered(parts, 1, 40)
        self.assertGreater(len(parts), 1)
        self.assertTrue(all(ws(1, h1 - h0) <= D.DEFAULT_WORKSPACE_LIMIT for _, _, h0, h1 in parts))

    def test_largest_fitting(self):
        self.assertEqual(D.largest_fitting(10, lambda n: n <= 7), 7)
        self.assertEqual(D.largest_fitting(10, lambda n: True), 10)
        self.assertEqual(D.largest_fitting(10, lambda n: False), 1)
        self.assertEqual(D.largest_fitting(1, lambda n: True), 1)

    def test_lse_rows(self):
        self.assertEqual(D.lse_rows_per_chunk(1, 2, 1000, 100, None), 1000)
        self.assertEqual(D.lse_rows_per_chunk(1, 2, 1000, 100, 8000), 10)
        self.assertEqual(D.lse_rows_per_chunk(1, 2, 1000, 100, 1), 1)
        self.assertEqual(D.lse_rows_per_chunk(1, 2, 5, 100, 10 ** 9), 5)


class Varlen(unittest.TestCase):
    def test_offsets(self):
        self.assertEqual(D.check_offsets("cu", [0, 3, 3, 10], 10), [0, 3, 3, 10])
        self.assertEqual(D.check_offsets("cu", [0], 0), [0])
        for bad, total in (([1, 10], 10), ([0, 5, 4, 10], 10), ([0, 9], 10), ([], 0)):
            with self.assertRaises(ValueError) as cm:
                D.check_offsets("cu_seqlens_q", bad, total)
            self.assertIn("cu_seqlens_q", str(cm.exception))

    def test_causal_offset_bottom_right(self):
        self.assertEqual(D.causal_offset(100, 100), 0)
        self.assertEqual(D.causal_offset(10, 100), 90)
        self.assertEqual(D.causal_offset(100, 10), -90)


class Settings(unittest.TestCase):
    def test_workspace_limit(self):
        self.assertEqual(D.parse_workspace_limit(None), D.DEFAULT_WORKSPACE_LIMIT)
        self.assertEqual(D.parse_workspace_limit(""), D.DEFAULT_WORKSPACE_LIMIT)
        self.assertEqual(D.parse_workspace_limit("512"), 512 << 20)
        self.assertEqual(D.parse_workspace_limit("0.5"), 1 << 19)
        for off in ("0", "none", "OFF"):
            self.assertIsNone(D.parse_workspace_limit(off))
        for bad in ("lots", "-5", "nan"):
            with self.assertRaises(ValueError) as cm:
                D.parse_workspace_limit(bad)
            self.assertIn("SAGEATTENTION_WORKSPACE_LIMIT_MB", str(cm.exception))

    def test_flags(self):
        self.assertTrue(D.parse_flag(None, True))
        self.assertFalse(D.parse_flag(None, False))
        for off in ("0", "false", "No", "off"):
            self.assertFalse(D.parse_flag(off, True))
        for on in ("1", "true", "YES", "on"):
            self.assertTrue(D.parse_flag(on, False))
        with self.assertRaises(ValueError):
            D.parse_flag("maybe", True)


class Messages(unittest.TestCase):
    def test_arch_names(self):
        self.assertEqual(D.arch_name((9, 0)), "sm_90")
        self.assertEqual(D.arch_name((8, 9)), "sm_89")
        self.assertEqual(D.arch_name((12, 0)), "sm_120a")
        self.assertEqual(D.arch_name((10, 0)), "sm_100a")
        # the library's message names the table's arch: 8.7 runs sm_86 code
        said = ("this library holds no code for this GPU (compute capability 8.7); it was "
                "built for sm_90: rebuild with sagebuild build --arch sm_86")
        self.assertEqual(D.arch_name((8, 7), said), "sm_86")
        self.assertIn("sagebuild build --arch sm_86",
                      D.no_code_message("Jetson AGX Orin", (8, 7), "sm_90", "python3", said))

    def test_no_code_names_gpu_archs_and_commands(self):
        m = D.no_code_message("NVIDIA GeForce RTX 5090", (12, 0), "sm_89,sm_90",
                              "/home/u/ComfyUI/venv/bin/python", "no code (8)")
        for part in ("NVIDIA GeForce RTX 5090", "12.0", "sm_89,sm_90",
                     "sagebuild build --arch sm_120a",
                     "sagebuild install --python /home/u/ComfyUI/venv/bin/python"):
            self.assertIn(part, m)

    def test_version(self):
        self.assertEqual(D.version_string("2.2.0", None), "2.2.0+sagebuild")
        self.assertEqual(D.version_string("2.2.0", "0.9.1"), "2.2.0+sagebuild.0.9.1")
        self.assertEqual(D.version_string("2.2.0", "0.9.1-3-gabc+dirty"),
                         "2.2.0+sagebuild.0.9.1.3.gabc.dirty")


if __name__ == "__main__":
    unittest.main()
