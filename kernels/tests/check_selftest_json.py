#!/usr/bin/env python3
"""Checks a sageattn-selftest --json document against the contract in
notes/kernel-contracts.md (the shape `sagebuild selftest` reads).
  check_selftest_json.py [--expect-skipped] FILE"""
import json
import sys

VERDICTS = {"pass", "warn", "fail", "unsupported"}
MODES = {"int8-fp16", "int8-fp8", "fp16"}
CASE_KEYS = {"name": str, "b": int, "hq": int, "hkv": int, "lq": int, "lkv": int, "d": int,
             "causal": bool, "layout": str, "dtype": str, "coverage_ok": bool, "pass": bool}
SPEED_KEYS = {"b": int, "h": int, "l": int, "d": int, "causal": bool}


def need(cond, what):
    if not cond:
        raise ValueError(what)


def check_mode(m):
    need(m.get("mode") in MODES, "mode name %r" % m.get("mode"))
    need(isinstance(m.get("supported"), bool), "mode.supported")
    need(m.get("verdict") in VERDICTS, "verdict %r" % m.get("verdict"))
    need(m.get("reason") is None or isinstance(m["reason"], str), "mode.reason")
    if not m["supported"]:
        need(m["verdict"] == "unsupported", "an unsupported mode has verdict unsupported")
        return
    acc = m.get("accuracy")
    need(isinstance(acc, dict), "mode.accuracy")
    for k in ("worst_cos", "worst_rel_l1"):
        need(isinstance(acc.get(k), (int, float)), "accuracy." + k)
    need(isinstance(acc.get("nan_or_inf"), bool), "accuracy.nan_or_inf")
    need(isinstance(acc.get("cases"), list) and acc["cases"], "accuracy.cases")
    for c in acc["cases"]:
        for k, t in CASE_KEYS.items():
            need(isinstance(c.get(k), t), "case.%s in %r" % (k, c.get("name")))
        need(c["layout"] in ("HND", "NHD") and c["dtype"] in ("fp16", "bf16"), "case layout/dtype")
        for k in ("cos", "rel_l1", "max_abs"):
            need(c.get(k) is None or isinstance(c[k], (int, float)), "case." + k)
    need(isinstance(m.get("speed"), list), "mode.speed")
    for s in m["speed"]:
        for k, t in SPEED_KEYS.items():
            need(isinstance(s.get(k), t), "speed." + k)
        for k in ("ms", "tops", "speedup_vs_fp16"):
            need(s.get(k) is None or isinstance(s[k], (int, float)), "speed." + k)


def check(doc, expect_skipped):
    need(doc.get("schema") == 1, "schema 1")
    lib = doc.get("library")
    need(isinstance(lib, dict) and lib.get("abi") == 1 and isinstance(lib.get("archs"), str),
         "library {abi, archs}")
    need(doc.get("skipped") is None or isinstance(doc["skipped"], str), "skipped")
    need(isinstance(doc.get("devices"), list), "devices")
    if expect_skipped:
        need(isinstance(doc["skipped"], str) and doc["skipped"].startswith("no GPU"),
             "skipped says 'no GPU: ...'")
        need(doc["devices"] == [], "no devices when skipped")
    for d in doc["devices"]:
        need(isinstance(d.get("index"), int) and isinstance(d.get("name"), str), "device index/name")
        need(isinstance(d.get("cc"), str) and isinstance(d.get("has_code"), bool), "device cc/has_code")
        need(d.get("build_hint") is None or d["build_hint"].startswith("sagebuild build --arch sm_"),
             "build_hint")
        need(d.get("recommended_mode") is None or d["recommended_mode"] in MODES, "recommended_mode")
        need(isinstance(d.get("modes"), list), "device.modes")
        for m in d["modes"]:
            check_mode(m)


def main(argv):
    expect_skipped = "--expect-skipped" in argv
    files = [a for a in argv[1:] if not a.startswith("--")]
    if len(files) != 1:
        print(__doc__, file=sys.stderr)
        return 64
    try:
        with open(files[0]) as f:
            check(json.load(f), expect_skipped)
    except (OSError, ValueError) as e:
        print("selftest JSON %s: %s" % (files[0], e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
