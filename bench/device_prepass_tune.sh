#!/bin/bash
# The pre-pass's build-time tunables against the landed build, in one device call (issue 13):
#   here:  bash bench/build_hopper_variants.sh .gpu/NAME     (variants that set SA_STAT_*,
#          SA_RQ_* or SA_VT_* recompile quant.cu)
#   there: bash bench/device_prepass_tune.sh .gpu/NAME [SHAPES]
# Per variant after the first (landed): bench/prepass_same.py against landed (O, LSE, workspace
# and non-finite flag bit for bit over the quick case list, every int8 mode; then whole-call
# timings of int8-fp8-wgmma and int8-fp16, interleaved), and ncu's duration, DRAM and SM
# throughput of every sa_ pre-pass kernel of one int8-fp8-wgmma call at each of SHAPES
# ("DIM:LEN:BATCH", default 128:1024:16,64:1024:16); landed's ncu too. Writes
# $OUT/<name>.same.txt, $OUT/<name>.<shape>.ncu.csv and $OUT/summary.txt.
set -o pipefail
export PYTHONUNBUFFERED=1
DIR=${1:?usage: bash bench/device_prepass_tune.sh DIR [SHAPES]}
SHAPES=${2:-128:1024:16,64:1024:16}
OUT=${OUT:-/tmp/prepass-tune}
mkdir -p "$OUT"
names=$(cut -d'|' -f1 "$DIR/variants.txt")
first=$(echo "$names" | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu \
    --format=csv >"$OUT/gpu.txt"
for n in $names; do
    lib=$DIR/$n/libsageattn.so
    if [ "$n" != "$first" ]; then
        timeout 120 python3 bench/prepass_same.py --lib-a "$DIR/$first/libsageattn.so" \
            --lib-b "$lib" --compare-smoothed --quick --modes int8-fp8-wgmma,int8-fp16 \
            >"$OUT/$n.same.txt" 2>&1
        echo "$n: prepass_same rc=$? $(grep -E '^RESULT' "$OUT/$n.same.txt")"
    fi
    for s in ${SHAPES//,/ }; do
        IFS=: read -r d l b <<<"$s"
        timeout 60 ncu --csv --section SpeedOfLight -k regex:'sa_(stats|finalize|rowquant|vfp8)' \
            --log-file "$OUT/$n.$s.ncu.csv" python3 bench/ncu_one.py --lib "$lib" \
            --modes int8-fp8-wgmma --dim "$d" --len "$l" --batch "$b" >/dev/null 2>&1
    done
done
# shellcheck disable=SC2086 # one argument per variant name
python3 - "$OUT" "$SHAPES" $names <<'EOF' | tee "$OUT/summary.txt"
import csv, re, sys
out, shapes, names = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]


def ncu(path):
    """[(kernel, duration us, DRAM %, SM %)] in launch order"""
    try:
        text = open(path).read().splitlines()
    except OSError:
        return []
    start = next((i for i, l in enumerate(text) if l.startswith('"ID"')), None)
    rows = {}
    for r in csv.DictReader(text[start:]) if start is not None else []:
        k = (int(r["ID"]), r["Kernel Name"].split("(")[0].replace("void ", "").split("<")[0])
        try:
            v = float(r["Metric Value"].replace(",", ""))
        except ValueError:  # a metric without a value (ncu prints some as text or empty)
            continue
        rows.setdefault(k, {})[r["Metric Name"]] = v / 1000.0 if r["Metric Unit"] == "ns" else v
    return [(k[1], m.get("Duration", 0), m.get("DRAM Throughput", 0),
             m.get("Compute (SM) Throughput", 0)) for k, m in sorted(rows.items())]


for s in shapes:
    print("pre-pass kernels, int8-fp8-wgmma D=%s L=%s B=%s H=32 (ncu: us, DRAM %%, SM %%)" %
          tuple(s.split(":")))
    for n in names:
        ks = ncu("%s/%s.%s.ncu.csv" % (out, n, s))
        total = sum(k[1] for k in ks)
        print("  %-10s total %7.1f us | %s" % (n, total, " | ".join(
            "%s %.1f us %.0f/%.0f" % (k[0].replace("sa_", "").replace("_kernel", ""), k[1], k[2],
                                      k[3]) for k in ks)))
print("whole calls, B against landed (prepass_same.py, medians of 20):")
for n in names[1:]:
    try:
        for line in open("%s/%s.same.txt" % (out, n)):
            if line.startswith("int8") or line.startswith("RESULT"):
                print("  %-10s %s" % (n, line.rstrip()))
    except OSError:
        print("  %-10s no result" % n)
EOF
