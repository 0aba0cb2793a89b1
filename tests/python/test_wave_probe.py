"""bench/wave_probe.py's arithmetic on cases of known answer: shapes parsed and refused, the
kernel's row blocks and waves, the attention kernel's span in a call, and which wave model a set
of times follows. No torch and no GPU: the module imports them only for a GPU run."""
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import wave_probe  # noqa: E402


class Shapes(unittest.TestCase):
    def test_parsed(self):
        self.assertEqual(wave_probe.parse_shape("128:4096:4:33"), (128, 4096, 4, 33))

    def test_refused(self):
        for bad in ("128:4096:4", "96:4096:4:32", "64:0:4:32", "64:4096:4:x", "64:4096:-1:32"):
            with self.assertRaises(ValueError, msg=bad):
                wave_probe.parse_shape(bad)

    def test_default_shapes_parse(self):
        for s in wave_probe.DEFAULT_SHAPES.split(","):
            wave_probe.parse_shape(s)


class Blocks(unittest.TestCase):
    def test_partial_block_counts_whole(self):
        # 4096 rows = 64 chunks: 21 blocks of three and one of one per head
        self.assertEqual(wave_probe.row_blocks(4096, 4, 32, 192), 22 * 128)
        self.assertEqual(wave_probe.row_blocks(4032, 4, 32, 192), 21 * 128)
        self.assertEqual(wave_probe.row_blocks(4096, 4, 32, 256), 16 * 128)
        # a length off the chunk grid: 65 rows are two chunks, one block of four
        self.assertEqual(wave_probe.row_blocks(65, 1, 1, 256), 1)
        self.assertEqual(wave_probe.row_blocks(257, 1, 1, 256), 2)

    def test_waves(self):
        w, whole = wave_probe.waves(2816, 132)
        self.assertAlmostEqual(w, 2816 / 132)
        self.assertEqual(whole, 22)
        self.assertEqual(wave_probe.waves(2904, 132), (22.0, 22))  # exactly full: no extra wave
        self.assertEqual(wave_probe.waves(2905, 132)[1], 23)


class Spans(unittest.TestCase):
    def test_last_kernel_after_its_predecessor(self):
        # launched early (PDL), it waits for the kernel before it: its time runs from that end
        group = [(0.0, 50.0, "stats"), (40.0, 120.0, "vfp8"), (100.0, 1500.0, "attn")]
        self.assertEqual(wave_probe.attn_span(group), 1380.0)
        self.assertEqual(wave_probe.attn_span([(10.0, 30.0, "attn")]), 20.0)


class Fit(unittest.TestCase):
    def row(self, d, L, waves, whole, us):
        return {"d": d, "l": L, "waves": waves, "whole_waves": whole, "attn_us": us}

    def test_whole_wave_times_fit_whole_waves(self):
        # 20 us per whole wave: 21.33 and 22.0 waves both take 22 waves' time
        rows = [self.row(128, 4096, 21.33, 22, 440.0), self.row(128, 4096, 22.0, 22, 440.0),
                self.row(128, 4096, 20.0, 20, 400.0)]
        f = wave_probe.fit(rows)
        self.assertEqual(len(f), 1)
        self.assertAlmostEqual(f[0]["spread_per_whole_wave"], 0.0)
        self.assertGreater(f[0]["spread_per_wave"], 0.03)

    def test_block_times_fit_waves(self):
        rows = [self.row(64, 4096, 15.5, 16, 310.0), self.row(64, 4096, 16.0, 16, 320.0)]
        f = wave_probe.fit(rows)
        self.assertAlmostEqual(f[0]["spread_per_wave"], 0.0)
        self.assertAlmostEqual(f[0]["spread_per_whole_wave"], 320.0 / 310.0 - 1.0)

    def test_groups_by_dim_and_length(self):
        rows = [self.row(64, 4096, 16.0, 16, 320.0), self.row(128, 4096, 22.0, 22, 440.0),
                self.row(64, 16384, 16.0, 16, 1200.0)]
        self.assertEqual([(f["d"], f["l"], f["shapes"]) for f in wave_probe.fit(rows)],
                         [(64, 4096, 1), (64, 16384, 1), (128, 4096, 1)])
        self.assertEqual(wave_probe.spread([5.0]), 0.0)


if __name__ == "__main__":
    unittest.main()
