"""Where a kernel's warps wait, from ncu's SASS source page (stall samples per instruction).

    python3 bench/ncu_regions.py CSV [--bucket N] [--top N] [--ratio LO:HI]

CSV is `ncu -i REPORT --page source --csv --print-source sass` (bench/device_ncu.sh and
bench/device_hopper.sh write it as ncu*_sass.csv). Three readings:

  classes  the samples of instructions run about once per warp (the block's start and end: the
           ratio of an instruction's executions to the kernel's first instruction's is below
           1.6), of those run in loops (4 and more) and in between, each with its top stall
           reasons;
  regions  the samples per run of --bucket consecutive SASS instructions (those with at least
           0.4 % of all), with the range of their execution ratios and top stall reasons: a
           loop shows as a run of high ratios, the epilogue as ratio ~1 after it;
  top      the --top instructions with the most samples among those whose execution ratio lies
           in --ratio (e.g. 0.6:1.6 for code run once per block), with their main stall reason.

Round 17 (bench/results/h200-623de0e-hopper17-variants.md) found the epilogue's serial load
chain this way: 25 % of the L=1K kernel's samples in a region of ratio ~0.7, long_sb on FMULs.
"""
import argparse
import collections
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    # The page starts with the kernel's name line, then the header.
    start = next((i for i, r in enumerate(rows) if SAMPLES in r and EXECUTED in r), None)
    if start is None:
        sys.exit("ncu_regions: %s has no '%s' column: is it ncu's source page as CSV?"
                 % (path, SAMPLES))
    header = rows[start]
    col = {h: i for i, h in enumerate(header)}
    stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]

    def num(r, name):
        try:
            return float(r[col[name]])
        except (ValueError, IndexError):
            return 0.0

    insns = []
    for r in rows[start + 1:]:
        if len(r) < len(header):
            continue
        insns.append({"text": r[col["Source"]].strip(), "samples": num(r, SAMPLES),
                      "executed": num(r, EXECUTED),
                      "stalls": {s[6:]: num(r, s) for s in stalls}})
    if not insns or insns[0]["executed"] <= 0:
        sys.exit("ncu_regions: %s: no instruction executions to scale by" % path)
    once = insns[0]["executed"]
    for i in insns:
        i["ratio"] = i["executed"] / once
    return insns


def top_stalls(counter, total, n=3):
    return ", ".join("%s %.1f%%" % (k, 100.0 * v / total) for k, v in counter.most_common(n) if v)


def classes(insns, total):
    groups = collections.OrderedDict((k, [0.0, collections.Counter(), 0]) for k in (
        "not run", "once per warp (<1.6)", "between (1.6-4)", "loops (>=4)"))
    for i in insns:
        if i["executed"] == 0:
            key = "not run"
        elif i["ratio"] < 1.6:
            key = "once per warp (<1.6)"
        elif i["ratio"] < 4:
            key = "between (1.6-4)"
        else:
            key = "loops (>=4)"
        g = groups[key]
        g[0] += i["samples"]
        g[1].update(i["stalls"])
        g[2] += 1
    for key, (samples, stalls, n) in groups.items():
        print("%-22s %5d instructions %5.1f%% of samples   %s" % (
            key, n, 100.0 * samples / total, top_stalls(stalls, total)))


def regions(insns, total, bucket):
    for b0 in range(0, len(insns), bucket):
        run = insns[b0:b0 + bucket]
        samples = sum(i["samples"] for i in run)
        if samples < 0.004 * total:
            continue
        ratios = [i["ratio"] for i in run if i["executed"] > 0]
        stalls = collections.Counter()
        for i in run:
            stalls.update(i["stalls"])
        print("#%5d-%5d %5.1f%%  executions x%.2f-%.2f  %s" % (
            b0, b0 + len(run) - 1, 100.0 * samples / total, min(ratios, default=0),
            max(ratios, default=0), top_stalls(stalls, total)))


def top(insns, total, n, lo, hi):
    chosen = [(i["samples"], k, i) for k, i in enumerate(insns) if lo <= i["ratio"] < hi]
    for samples, k, i in sorted(chosen, key=lambda x: -x[0])[:n]:
        reason = max(i["stalls"], key=i["stalls"].get) if i["stalls"] else "-"
        print("%7d %5.1f%%  #%-5d x%-6.2f %-12s %s" % (
            samples, 100.0 * samples / total, k, i["ratio"], reason, i["text"][:90]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--bucket", type=int, default=100, help="instructions per region")
    ap.add_argument("--top", type=int, default=20, help="instructions listed by samples")
    ap.add_argument("--ratio", default="0.6:1.6",
                    help="execution-ratio range LO:HI of the instructions --top lists")
    args = ap.parse_args()
    try:
        lo, hi = (float(x) for x in args.ratio.split(":"))
    except ValueError:
        sys.exit("ncu_regions: --ratio wants LO:HI, e.g. 0.6:1.6, got %r" % args.ratio)
    if args.bucket < 1:
        sys.exit("ncu_regions: --bucket must be at least 1")
    insns = load(args.csv)
    total = sum(i["samples"] for i in insns)
    if total <= 0:
        sys.exit("ncu_regions: %s holds no stall samples (was SourceCounters collected?)"
                 % args.csv)
    print("%s: %d instructions, %d samples" % (args.csv, len(insns), total))
    print("\nclasses by executions per warp (relative to the kernel's first instruction):")
    classes(insns, total)
    print("\nregions of %d instructions (at least 0.4 %% of the samples):" % args.bucket)
    regions(insns, total, args.bucket)
    print("\ntop %d instructions with execution ratio in [%g, %g):" % (args.top, lo, hi))
    top(insns, total, args.top, lo, hi)


if __name__ == "__main__":
    main()
