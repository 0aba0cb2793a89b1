"""bench/call_timeline.py's trace arithmetic on traces of known answer: which events are kernels,
how a run splits into calls, the time some kernel runs (overlapping kernels counted once) and the
kernels' short names. No torch and no GPU: the module imports them only for a GPU run."""
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import call_timeline  # noqa: E402


def trace_file(events, wrapped=True):
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump({"traceEvents": events} if wrapped else events, f)
    f.close()
    return f.name


def kernel(ts, dur, name):
    return {"ph": "X", "cat": "kernel", "ts": ts, "dur": dur, "name": name}


class KernelEvents(unittest.TestCase):
    def test_kernels_only_in_start_order(self):
        events = [kernel(30, 5, "c"), {"ph": "X", "cat": "cpu_op", "ts": 1, "dur": 2, "name": "op"},
                  kernel(0, 10, "a"), {"ph": "i", "cat": "kernel", "ts": 3, "name": "marker"},
                  kernel(8.5, 10, "b")]
        for wrapped in (True, False):  # torch writes {"traceEvents": [...]}; a bare list also loads
            path = trace_file(events, wrapped)
            try:
                got = call_timeline.kernel_events(path)
            finally:
                os.unlink(path)
            self.assertEqual(got, [(0.0, 10.0, "a"), (8.5, 18.5, "b"), (30.0, 35.0, "c")])


class Arithmetic(unittest.TestCase):
    def test_busy_time_counts_overlap_once(self):
        group = [(0.0, 10.0, "a"), (8.0, 18.0, "b"), (30.0, 35.0, "c")]
        self.assertEqual(call_timeline.busy_time(group), 23.0)
        # a kernel inside another adds nothing; a gap between them is not busy
        self.assertEqual(call_timeline.busy_time([(0.0, 50.0, "a"), (5.0, 6.0, "b")]), 50.0)
        self.assertEqual(call_timeline.busy_time([(0.0, 1.0, "a"), (2.0, 3.0, "b")]), 2.0)
        self.assertEqual(call_timeline.busy_time([]), 0.0)

    def test_split_calls(self):
        ks = [(float(i), i + 0.5, "k%d" % (i % 3)) for i in range(6)]
        calls = call_timeline.split_calls(ks, 2)
        self.assertEqual([[n for _, _, n in c] for c in calls], [["k0", "k1", "k2"]] * 2)
        with self.assertRaises(SystemExit):  # 6 kernels are not 4 calls of one launch sequence
            call_timeline.split_calls(ks, 4)
        with self.assertRaises(SystemExit):  # a trace without kernels
            call_timeline.split_calls([], 1)

    def test_short_name_and_median(self):
        self.assertEqual(
            call_timeline.short_name("void sa_krank_kernel<false, 128>(sa_rowquant_args, int*)"),
            "sa_krank_kernel")
        self.assertEqual(call_timeline.short_name("sa_finalize_kernel(int, int)"),
                         "sa_finalize_kernel")
        self.assertEqual(call_timeline.median([3.0, 1.0, 2.0]), 2.0)


if __name__ == "__main__":
    unittest.main()
