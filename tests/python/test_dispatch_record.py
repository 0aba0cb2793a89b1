"""Unit tests of how the drop-in finds and trusts its records (recommendation.json, TEAM contract
2, and build-record.json): share/python/sageattention/_record.py. No torch, no GPU."""

import copy
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "share", "python"))

from sageattention import _record as R  # noqa: E402

SHA = "ab" * 32
RECORD = {
    "schema": 1, "kind": "sageattn-recommendation", "library_sha256": SHA,
    "written_by": "sagebuild selftest 0.9.1", "date": "2026-12-01T12:00:00Z",
    "gpus": [
        {"index": 0, "name": "NVIDIA H200", "cc": "9.0", "uuid": "GPU-1111-2222",
         "mode": "int8-fp16", "runner_up": "fp16", "reason": "fastest safe",
         "safe_modes": ["int8-fp16", "int8-fp8", "fp16"], "tops": {"int8-fp16": 413.7},
         "speedup_vs_fp16": 1.22},
        {"index": 1, "name": "NVIDIA GeForce RTX 5090", "cc": "12.0", "uuid": None,
         "mode": "int8-fp8", "runner_up": "int8-fp16", "reason": "fastest safe",
         "safe_modes": ["int8-fp8", "int8-fp16", "fp16"], "tops": {}, "speedup_vs_fp16": 1.9},
    ],
}


class GpuEntry(unittest.TestCase):
    def test_match_by_name_cc_and_uuid_forms(self):
        e = R.gpu_entry(RECORD, SHA, "NVIDIA H200", "9.0", "1111-2222")
        self.assertEqual(R.entry_mode(e), ("int8-fp16", ("int8-fp16", "int8-fp8", "fp16")))
        self.assertIsNotNone(R.gpu_entry(RECORD, SHA.upper(), "NVIDIA H200", "9.0",
                                         "GPU-1111-2222"))
        self.assertIsNotNone(R.gpu_entry(RECORD, SHA, "NVIDIA H200", "9.0", None))
        e = R.gpu_entry(RECORD, SHA, "NVIDIA GeForce RTX 5090", "12.0", "GPU-9999")
        self.assertEqual(R.entry_mode(e)[0], "int8-fp8")

    def test_no_match(self):
        self.assertIsNone(R.gpu_entry(RECORD, "cd" * 32, "NVIDIA H200", "9.0", None))
        self.assertIsNone(R.gpu_entry(RECORD, None, "NVIDIA H200", "9.0", None))
        self.assertIsNone(R.gpu_entry(RECORD, SHA, "NVIDIA H100", "9.0", None))
        self.assertIsNone(R.gpu_entry(RECORD, SHA, "NVIDIA H200", "8.9", None))
        self.assertIsNone(R.gpu_entry(RECORD, SHA, "NVIDIA H200", "9.0", "GPU-3333"))

    def test_wrong_schema_or_kind_or_shape(self):
        for change in ({"schema": 2}, {"kind": "sageattn-other"}, {"gpus": "none"},
                       {"library_sha256": 5}):
            r = dict(copy.deepcopy(RECORD), **change)
            self.assertIsNone(R.gpu_entry(r, SHA, "NVIDIA H200", "9.0", None), change)
        self.assertIsNone(R.gpu_entry(None, SHA, "NVIDIA H200", "9.0", None))
        self.assertIsNone(R.gpu_entry([1], SHA, "NVIDIA H200", "9.0", None))

    def test_entry_mode_tolerates_junk(self):
        self.assertEqual(R.entry_mode(None), (None, ()))
        self.assertEqual(R.entry_mode({"mode": 3, "safe_modes": "fp16"}), (None, ()))
        self.assertEqual(R.entry_mode({"mode": "fp16", "safe_modes": ["fp16", 7]}),
                         ("fp16", ("fp16",)))

    def test_uuid_forms(self):
        self.assertEqual(R.normal_uuid("GPU-AbC"), "abc")
        self.assertEqual(R.normal_uuid("abc"), "abc")
        self.assertIsNone(R.normal_uuid(""))
        self.assertIsNone(R.normal_uuid(None))


class Files(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.out = self.tmp.name
        os.makedirs(os.path.join(self.out, "lib"))
        self.lib = os.path.join(self.out, "lib", "libsageattn.so")
        with open(self.lib, "wb") as f:
            f.write(b"not really a library")

    def write(self, rel, data):
        path = os.path.join(self.out, rel)
        with open(path, "w") as f:
            f.write(data if isinstance(data, str) else json.dumps(data))
        return path

    def test_beside_then_one_up(self):
        self.assertIsNone(R.find_record("recommendation.json", self.lib))
        up = self.write("recommendation.json", RECORD)
        self.assertEqual(R.find_record("recommendation.json", self.lib), up)
        beside = self.write("lib/recommendation.json", RECORD)
        self.assertEqual(R.find_record("recommendation.json", self.lib), beside)
        self.assertEqual(R.find_record("recommendation.json", self.lib, "/x/r.json"), "/x/r.json")

    def test_load_json(self):
        self.assertEqual(R.load_json(self.write("a.json", RECORD)), RECORD)
        self.assertIsNone(R.load_json(self.write("b.json", "{not json")))
        self.assertIsNone(R.load_json(self.write("c.json", "[1, 2]")))
        self.assertIsNone(R.load_json(os.path.join(self.out, "missing.json")))
        self.assertIsNone(R.load_json(None))

    def test_sha256(self):
        # sha256(b"not really a library")
        import hashlib
        self.assertEqual(R.file_sha256(self.lib),
                         hashlib.sha256(b"not really a library").hexdigest())

    def test_sagebuild_version(self):
        self.assertEqual(R.sagebuild_version({"sagebuild_version": "0.9.1"}), "0.9.1")
        self.assertIsNone(R.sagebuild_version({"sagebuild_version": ""}))
        self.assertIsNone(R.sagebuild_version(None))


if __name__ == "__main__":
    unittest.main()
