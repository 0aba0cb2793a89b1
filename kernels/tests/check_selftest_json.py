#!/usr/bin/env python3
"""Checks a sageattn-selftest --json document against the shape `sagebuild selftest` reads
(schema 1; kernels/selftest/README.md lists the fields).
  check_selftest_json.py [--expect-skipped] FILE"""
import json
import re
import sys

VERDICTS = {"pass", "warn", "fail", "unsupported"}
GOALS = {"met", "missed", "none"}
# fp16, int8-fp16, int8-fp8 and the variants issue 9 may add ("int8-fp8-..."): never a number.
MODE_NAME = re.compile(r"^(fp16|int8-fp16|int8-fp8)(-[a-z0-9][a-z0-9.-]*)?$")
UUID = re.compile(r"^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
CASE_KEYS = {"name": str, "b": int, "hq": int, "hkv": int, "lq": int, "lkv": int, "d": int,
             "causal": bool, "layout": str, "dtype": str, "coverage_ok": bool, "pass": bool,
             "safe": bool}
SPEED_KEYS = {"b": int, "h": int, "l": int, "d": int, "causal": bool}


def need(cond, what):
    if not cond:
        raise ValueError(what)


def is_mode(name):
    return isinstance(name, str) and MODE_NAME.match(name) is not None


def strings(v):
    return isinstance(v, list) and all(isinstance(x, str) and x for x in v)


def check_mode(m):
    need(is_mode(m.get("mode")), "mode name %r" % m.get("mode"))
    need(isinstance(m.get("supported"), bool), "mode.supported")
    need(m.get("verdict") in VERDICTS, "verdict %r" % m.get("verdict"))
    need(m.get("reason") is None or isinstance(m["reason"], str), "mode.reason")
    # The two judgements: safe (with its reasons when not) and the engineering goal (notes).
    need(isinstance(m.get("safe"), bool), "mode.safe")
    need(strings(m.get("unsafe_reasons")), "mode.unsafe_reasons")
    need(m["safe"] == (m["unsafe_reasons"] == []), "unsafe_reasons given exactly when not safe")
    need(m["safe"] == (m["verdict"] == "pass"), "verdict pass exactly when safe")
    need(m.get("goal") in GOALS, "mode.goal %r" % m.get("goal"))
    need(strings(m.get("goal_notes")), "mode.goal_notes")
    need((m["goal"] == "missed") == bool(m["goal_notes"]), "goal_notes given exactly when missed")
    if not m["supported"]:
        need(m["verdict"] == "unsupported", "an unsupported mode has verdict unsupported")
        return
    acc = m.get("accuracy")
    need(isinstance(acc, dict), "mode.accuracy")
    for k in ("worst_cos", "worst_rel_l1"):
        need(isinstance(acc.get(k), (int, float)), "accuracy." + k)
    need(isinstance(acc.get("nan_or_inf"), bool), "accuracy.nan_or_inf")
    need(isinstance(acc.get("cases"), list) and acc["cases"], "accuracy.cases")
    bar = acc.get("safe_bar")
    need(isinstance(bar, dict) and all(isinstance(bar.get(k), (int, float))
                                       for k in ("cos", "rel_l1", "lse_abs")), "accuracy.safe_bar")
    for c in acc["cases"]:
        for k, t in CASE_KEYS.items():
            need(isinstance(c.get(k), t), "case.%s in %r" % (k, c.get("name")))
        need(isinstance(c.get("family"), str) and c["name"].startswith(c["family"]), "case.family")
        need(c["safe"] == (c.get("unsafe_reason") is None) or c.get("skipped"),
             "case.unsafe_reason exactly when not safe")
        need(c["layout"] in ("HND", "NHD") and c["dtype"] in ("fp16", "bf16"), "case layout/dtype")
        for k in ("cos", "rel_l1", "max_abs"):
            need(c.get(k) is None or isinstance(c[k], (int, float)), "case." + k)
    need(isinstance(m.get("speed"), list), "mode.speed")
    for s in m["speed"]:
        for k, t in SPEED_KEYS.items():
            need(isinstance(s.get(k), t), "speed." + k)
        for k in ("ms", "tops", "speedup_vs_fp16"):
            need(s.get(k) is None or isinstance(s[k], (int, float)), "speed." + k)


def check_recommended(d):
    rec = d.get("recommended")
    if not d["has_code"]:
        need(rec is None, "no recommendation without code")
        return
    need(isinstance(rec, dict) and isinstance(rec.get("reason"), str) and rec["reason"],
         "device.recommended {mode, runner_up, reason}")
    need(rec.get("mode") == d.get("recommended_mode"), "recommended.mode == recommended_mode")
    modes = {m["mode"]: m for m in d["modes"]}
    tops = rec.get("tops")
    need(isinstance(tops, dict), "recommended.tops")
    for key in ("mode", "runner_up"):
        name = rec.get(key)
        if name is None:
            continue
        need(name in modes and modes[name]["safe"], "recommended.%s is a safe mode" % key)
        # Never a quantized mode slower than fp16 at the shape it compared.
        if name != "fp16" and isinstance(tops.get("fp16"), (int, float)):
            need(tops.get(name, 0) > tops["fp16"], "recommended.%s is faster than fp16" % key)


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
        need(d.get("uuid") is None or UUID.match(d["uuid"]), "device.uuid %r" % d.get("uuid"))
        need(d.get("recommended_mode") is None or is_mode(d["recommended_mode"]), "recommended_mode")
        need(isinstance(d.get("modes"), list), "device.modes")
        for m in d["modes"]:
            check_mode(m)
        check_recommended(d)


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
