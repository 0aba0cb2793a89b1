"""bench/ncu_regions.py on a small source page of known answer: which samples it calls once per
warp and which loop, the regions and the top list, and its errors on a file that is not ncu's
source page."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "ncu_regions.py")

HEADER = ["Address", "Source", "Warp Stall Sampling (All Samples)",
          "Warp Stall Sampling (Not-issued Samples)", "# Samples", "Instructions Executed",
          "stall_long_sb", "stall_wait", "stall_long_sb (Not Issued)"]


def page(rows):
    """A source page: the kernel's line, the header, then (text, samples, executed, long_sb,
    wait) per instruction."""
    f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, newline="")
    w = csv.writer(f, quoting=csv.QUOTE_ALL)
    w.writerow(["Kernel Name", "void k(int)"])
    w.writerow(HEADER)
    for n, (text, samples, executed, long_sb, wait) in enumerate(rows):
        w.writerow(["0x%x" % (16 * n), "      " + text, samples, samples, samples, executed,
                    long_sb, wait, long_sb])
    f.close()
    return f.name


def run(path, *args):
    return subprocess.run([sys.executable, SCRIPT, path, *args], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))


class NcuRegions(unittest.TestCase):
    def setUp(self):
        # 16 warps: the prologue runs once per warp, the loop 10 times, the epilogue once and
        # holds a long_sb chain; 100 samples in all.
        self.path = page([
            ("S2R R0, SR_TID.X", 5, 16, 0, 5),
            ("HFMA2 R1, R2, R3", 30, 160, 0, 30),
            ("BRA 0x10", 5, 160, 0, 5),
            ("LDG.E.64 R4, desc[UR4][R6.64]", 0, 16, 0, 0),
            ("FMUL R8, R4, R9", 60, 16, 55, 5),
            ("EXIT", 0, 0, 0, 0),
        ])

    def tearDown(self):
        os.unlink(self.path)

    def test_classes_regions_and_top(self):
        r = run(self.path, "--bucket", "3", "--top", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout
        self.assertIn("6 instructions, 100 samples", out)
        self.assertRegex(out, r"once per warp \(<1\.6\)\s+3 instructions\s+65\.0% of samples\s+"
                         r"long_sb 55\.0%, wait 10\.0%")
        self.assertRegex(out, r"loops \(>=4\)\s+2 instructions\s+35\.0% of samples")
        self.assertRegex(out, r"not run\s+1 instructions\s+0\.0% of samples")
        # two regions of three instructions: the prologue and loop, then the epilogue
        self.assertRegex(out, r"#\s+0-\s+2\s+40\.0%\s+executions x1\.00-10\.00")
        self.assertRegex(out, r"#\s+3-\s+5\s+60\.0%\s+executions x1\.00-1\.00\s+long_sb 55\.0%")
        # the top instruction run once per warp is the FMUL waiting on its load
        top = out.split("top 1 instructions")[1]
        self.assertIn("FMUL R8, R4, R9", top)
        self.assertIn("long_sb", top)
        self.assertNotIn("HFMA2", top)

    def test_ratio_range_selects_the_loop(self):
        r = run(self.path, "--top", "1", "--ratio", "4:100")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("HFMA2 R1, R2, R3", r.stdout.split("top 1 instructions")[1])

    def test_bad_ratio_is_a_usage_error(self):
        r = run(self.path, "--ratio", "x")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--ratio wants LO:HI", r.stderr)

    def test_not_a_source_page(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("Duration  us  580.67\n")
        try:
            r = run(f.name)
        finally:
            os.unlink(f.name)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("source page", r.stderr)


if __name__ == "__main__":
    unittest.main()
