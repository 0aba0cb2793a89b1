"""Table of one GPU call over int8-fp8-wgmma variants (bench/device_hopper.sh): TOPS per key shape
per variant next to int8-fp16 and SDPA from the same call, and whether each variant computes what
the landed kernel (the first NAME, or "base") does (every case of bench.py's accuracy matrix),
then the best correct variant.

python3 bench/hopper_variants_summary.py OUTDIR NAME...   (reads OUTDIR/v_<NAME>.json, ref.json
and, where present, OUTDIR/v2_<NAME>.json: a second speed pass, of which each shape's faster one
counts; the table of both passes follows the main one)
Prints the table; the last line is "best <name>" (or "best none").
"""
import json
import os
import sys

# bench.py's adversarial cases where int8-fp8 itself misses its goal (bench/NOTES.md): judged
# against the landed kernel only, not against the absolute bar.
ADVERSARIAL = {"q_x10", "near_limits"}
COS_MIN, L1_MAX = 0.9992, 0.04


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def shape_key(e):
    return "D=%d L=%d B=%d %s" % (e["d"], e["l"], e["b"], "causal" if e["causal"] else "full")


def judge(name, res, base):
    """Reasons this variant is not correct (empty: correct)."""
    if res is None:
        return ["no result (crashed, hung or timed out: see v_%s.log)" % name]
    why = []
    for a in res.get("api", []):
        if not a["ok"]:
            why.append("api %s" % a["check"])
    base_acc = {r["case"]: r for r in (base or {}).get("accuracy", []) if "cos" in r}
    acc = [r for r in res.get("accuracy", []) if r.get("mode") == "int8-fp8-wgmma"]
    if not acc:
        why.append("no accuracy rows")
    for r in acc:
        if "cos" not in r:
            why.append("%s: %s" % (r["case"], r.get("error", "error")[:80]))
            continue
        if r["nan_or_inf"] or not r["lse_inf_ok"] or not r["pad_untouched"]:
            why.append("%s: non-finite, lse or padding wrong" % r["case"])
            continue
        b = base_acc.get(r["case"])
        if b is not None and b is not r:
            # slack: a variant may round differently (e.g. row sums of the E4M3 P instead of
            # the fp32 P: v_offset's rel-L1 0.0018 -> 0.0025); a wrong kernel is far outside
            if r["cos"] < b["cos"] - 2e-4 or r["rel_l1"] > b["rel_l1"] * 1.05 + 1e-3:
                why.append("%s: cos %.6f l1 %.5f vs landed %.6f %.5f" % (
                    r["case"], r["cos"], r["rel_l1"], b["cos"], b["rel_l1"]))
        elif r["case"] not in ADVERSARIAL and (r["cos"] < COS_MIN or r["rel_l1"] > L1_MAX):
            why.append("%s: cos %.6f l1 %.5f" % (r["case"], r["cos"], r["rel_l1"]))
    for e in res.get("speed", []):
        s = e.get("int8-fp8-wgmma", {})
        if "tops" not in s:
            why.append("%s: %s" % (shape_key(e), s.get("error", "no timing")[:80]))
        elif s["nan_or_inf"] or s["cos"] < 0.999:
            why.append("%s: cos %.5f" % (shape_key(e), s["cos"]))
    return why


def main():
    out, names = sys.argv[1], sys.argv[2:]
    results = {n: load(os.path.join(out, "v_%s.json" % n)) for n in names}
    second = {n: load(os.path.join(out, "v2_%s.json" % n)) for n in names}
    ref = load(os.path.join(out, "ref.json"))
    # the landed kernel: the first variant of the call ("base" in round 2's call)
    base = results.get("base") if "base" in results else results.get(names[0])
    shapes, cols = [], {}
    for n, res in list(results.items()) + [("ref", ref)]:
        for e in (res or {}).get("speed", []):
            k = shape_key(e)
            if k not in shapes:
                shapes.append(k)
            for impl, r in e.items():
                if isinstance(r, dict) and "tops" in r:
                    col = n if impl == "int8-fp8-wgmma" and n != "ref" else impl
                    if n == "ref" and impl == "int8-fp8-wgmma":
                        continue
                    cols.setdefault(col, {})[k] = r["tops"]
    passes = {n: {k: "%.1f" % v for k, v in cols.get(n, {}).items()} for n in names}
    for n, res in second.items():
        for e in (res or {}).get("speed", []):
            r = e.get("int8-fp8-wgmma", {})
            if "tops" in r and n in cols:
                k = shape_key(e)
                passes[n][k] = "%.1f/%.1f" % (cols[n].get(k, 0.0), r["tops"])
                cols[n][k] = max(cols[n].get(k, 0.0), r["tops"])
    order = [n for n in names if n in cols] + [c for c in ("int8-fp16", "sdpa_flash", "sdpa_cudnn")
                                               if c in cols]
    print("| shape | " + " | ".join(order) + " |")
    print("|---" * (len(order) + 1) + "|")
    for k in shapes:
        print("| %s | " % k + " | ".join(
            "%.1f" % cols[c][k] if k in cols[c] else "-" for c in order) + " |")
    if any(second.values()):
        print("\nBoth passes (first/second, TOPS):\n")
        print("| shape | " + " | ".join(n for n in names if n in cols) + " |")
        print("|---" * (1 + sum(1 for n in names if n in cols)) + "|")
        for k in shapes:
            print("| %s | " % k + " | ".join(str(passes[n].get(k, "-")) for n in names
                                            if n in cols) + " |")
        print()
    best, best_score = None, 0.0
    for n in names:
        tops = cols.get(n, {})
        score = 1.0
        for k in shapes:
            score *= tops.get(k, 1e-9) ** (1.0 / max(1, len(shapes)))
        if n.startswith("dx_"):  # SA_TEST_HOPPER_DIAG builds: wrong by design, never picked
            print("%-14s diagnostic (timed only)  geomean %.1f TOPS" % (n, score))
            continue
        why = judge(n, results[n], base)
        print("%-14s %s  geomean %.1f TOPS" % (n, "correct" if not why else "WRONG: " + "; ".join(
            why[:6]), score))
        if not why and score > best_score:
            best, best_score = n, score
    print("best %s" % (best or "none"))


if __name__ == "__main__":
    main()
