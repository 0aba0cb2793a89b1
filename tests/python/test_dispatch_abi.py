"""The drop-in's ctypes view of the C ABI matches kernels/include/sageattn.h: the params struct's
field offsets and sizes (both versions) and the status values, checked against a C program
compiled from the header. Plus: `import sageattention` loads neither torch nor the library.
Needs a C compiler (skips without one); no torch, no GPU."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PY = os.path.join(ROOT, "share", "python")
sys.path.insert(0, PY)

from sageattention import _lib  # noqa: E402

HEADER_DIR = os.path.join(ROOT, "kernels", "include")


def c_facts():
    """{name: value} printed by a C program built against sageattn.h."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise unittest.SkipTest("no C compiler on PATH")
    fields = [f[0] for f in _lib.Params._fields_]
    lines = ['printf("sizeof %zu\\n", sizeof(sageattn_params));',
             'printf("v1 %u\\n", (unsigned)SAGEATTN_PARAMS_V1_SIZE);',
             'printf("v11 %u\\n", (unsigned)SAGEATTN_PARAMS_V11_SIZE);']
    for f in fields:
        lines.append('printf("offset_%s %%zu\\n", offsetof(sageattn_params, %s));' % (f, f))
        lines.append('printf("size_%s %%zu\\n", sizeof(((sageattn_params *)0)->%s));' % (f, f))
    with open(os.path.join(HEADER_DIR, "sageattn.h")) as f:
        header = f.read()
    statuses = re.findall(r"\b(SAGEATTN_ERR_[A-Z_]+|SAGEATTN_OK)\s*=", header)
    for s in statuses:
        lines.append('printf("%s %%d\\n", (int)%s);' % (s, s))
    src = ("#include <stddef.h>\n#include <stdio.h>\n#include <sageattn.h>\n"
           "int main(void) {\n%s\nreturn 0;\n}\n" % "\n".join(lines))
    with tempfile.TemporaryDirectory() as tmp:
        c = os.path.join(tmp, "facts.c")
        exe = os.path.join(tmp, "facts")
        with open(c, "w") as f:
            f.write(src)
        subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-I", HEADER_DIR, "-o", exe, c],
                       check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return dict(line.split() for line in out.splitlines())


class StructLayout(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.facts = c_facts()

    def test_sizes(self):
        self.assertEqual(int(self.facts["sizeof"]), _lib.PARAMS_V12_SIZE)
        self.assertEqual(int(self.facts["v11"]), _lib.PARAMS_V11_SIZE)
        self.assertEqual(int(self.facts["v1"]), _lib.PARAMS_V1_SIZE)

    def test_every_field(self):
        for name, ctype in _lib.Params._fields_:
            self.assertEqual(int(self.facts["offset_" + name]), getattr(_lib.Params, name).offset,
                             name)
            self.assertEqual(int(self.facts["size_" + name]), getattr(_lib.Params, name).size,
                             name)

    def test_statuses(self):
        for const, value in (("SAGEATTN_OK", _lib.OK), ("SAGEATTN_ERR_ABI", _lib.ERR_ABI),
                             ("SAGEATTN_ERR_NO_CODE_FOR_GPU", _lib.ERR_NO_CODE_FOR_GPU),
                             ("SAGEATTN_ERR_MISALIGNED", _lib.ERR_MISALIGNED),
                             ("SAGEATTN_ERR_BAD_SHAPE", _lib.ERR_BAD_SHAPE),
                             ("SAGEATTN_ERR_UNSUPPORTED_MODE", _lib.ERR_UNSUPPORTED_MODE),
                             ("SAGEATTN_ERR_CONTEXT", _lib.ERR_CONTEXT)):
            self.assertEqual(int(self.facts[const]), value, const)


class ImportIsLight(unittest.TestCase):
    def test_import_loads_neither_torch_nor_the_library(self):
        # A torch that fails on import proves the package never imports it eagerly.
        code = (
            "import sys, importlib.abc\n"
            "class NoTorch(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name == 'torch' or name.startswith('torch.'):\n"
            "            raise ImportError('torch imported eagerly')\n"
            "sys.meta_path.insert(0, NoTorch())\n"
            "import sageattention, inspect\n"
            "from sageattention import _lib\n"
            "assert _lib._loaded is None, 'library loaded at import'\n"
            "assert sageattention.implementation == 'sagebuild'\n"
            "assert sageattention.__version__.startswith('2.2.0+sagebuild')\n"
            "print(sorted(sageattention.__all__))\n"
        )
        env = dict(os.environ, PYTHONPATH=PY, SAGEATTENTION_LIBRARY="/nonexistent/lib.so")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sageattn_varlen", r.stdout)

    def test_missing_library_is_a_clear_error(self):
        code = ("import sageattention\n"
                "try:\n"
                "    sageattention.library_info()\n"
                "except RuntimeError as e:\n"
                "    print('ERR', e)\n")
        env = dict(os.environ, PYTHONPATH=PY, SAGEATTENTION_LIBRARY="/nonexistent/lib.so")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertIn("ERR libsageattn not found at /nonexistent/lib.so", r.stdout, r.stderr)
        self.assertIn("SAGEATTENTION_LIBRARY", r.stdout)


if __name__ == "__main__":
    unittest.main()
