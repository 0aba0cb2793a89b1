"""The drop-in's loader against a real libsageattn, without a GPU: it loads by absolute path,
finds the modes by name, knows the 1.1 and 1.2 params structs are accepted, reads the archs, asks
the arch table which GPUs have FP8 tensor cores (ABI 1.3), and turns a C status into an
exception with the library's message. Uses $SAGEATTENTION_LIBRARY, else the library
`make kernel-test` built (kernels/build/ci/<arch>/install/lib); skips without one."""

import glob
import os
import sys
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "share", "python"))

from sageattention import _lib  # noqa: E402


def built_library():
    path = os.environ.get("SAGEATTENTION_LIBRARY")
    if path:
        return path
    found = sorted(glob.glob(os.path.join(ROOT, "kernels", "build", "ci", "*", "install", "lib",
                                          "libsageattn.so")))
    return found[0] if found else None


class RealLibrary(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        path = built_library()
        if not path or not os.path.isfile(path):
            raise unittest.SkipTest("no built libsageattn (make kernel-test builds one)")
        cls.lib = _lib.Library(os.path.abspath(path))

    def test_modes_by_name(self):
        for name in ("auto", "int8-fp16", "int8-fp8", "fp16"):
            self.assertIn(name, self.lib.modes)
        self.assertEqual(self.lib.modes["auto"], 0)
        self.assertEqual(self.lib.mode_name(self.lib.modes["fp16"]), "fp16")

    def test_struct_versions(self):
        self.assertTrue(self.lib.has_nonfinite_flag)
        self.assertTrue(self.lib.has_v12)
        for size in (_lib.PARAMS_V1_SIZE, _lib.PARAMS_V11_SIZE, _lib.PARAMS_V12_SIZE):
            self.assertTrue(self.lib._probe_struct_size(size), size)
        for size in (_lib.PARAMS_V1_SIZE - 4, _lib.PARAMS_V11_SIZE + 4, _lib.PARAMS_V12_SIZE + 8):
            self.assertFalse(self.lib._probe_struct_size(size), size)

    def test_context_of_a_device_that_is_not_there_is_an_error(self):
        with self.assertRaises(_lib.LibraryError) as cm:
            self.lib.create_context(1 << 20)
        self.assertEqual(cm.exception.status, 10)  # SAGEATTN_ERR_CUDA, with CUDA's message
        self.assertIn("sageattn_context_create", str(cm.exception))

    def test_fp8_capability_comes_from_the_arch_table(self):
        # ABI 1.3, and the same answer as the rule of the libraries before it, for every cc
        self.assertIsNotNone(self.lib._cc_has_fp8)
        for major in range(3, 14):
            for minor in range(10):
                self.assertEqual(self.lib.cc_has_fp8((major, minor)), (major, minor) >= (8, 9),
                                 (major, minor))

    def test_archs_and_abi(self):
        self.assertEqual(self.lib.abi_version, 1)
        self.assertRegex(self.lib.built_archs, r"^sm_\d+a?(,sm_\d+a?)*$")

    def test_status_becomes_exception_with_message(self):
        p = _lib.Params()
        p.struct_size = _lib.PARAMS_V11_SIZE
        with self.assertRaises(ValueError) as cm:  # sizes of 0: refused before any CUDA call
            self.lib.workspace_size(p, 0)
        self.assertIn("sizes must be positive", str(cm.exception))
        self.assertEqual(cm.exception.status, _lib.ERR_BAD_SHAPE)
        p.struct_size = 8
        with self.assertRaises(RuntimeError) as cm:
            self.lib.workspace_size(p, 0)
        self.assertIn("struct_size", str(cm.exception))
        self.assertEqual(cm.exception.status, _lib.ERR_ABI)


if __name__ == "__main__":
    unittest.main()
