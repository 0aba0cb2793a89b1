#!/bin/bash
# The pre-pass (kernels/src/attn/quant.cu) of two builds on one GPU, in one device call:
#   bash bench/prepare_prepass.sh  # here: .gpu/prepass-a (reference quant.cu) and .gpu/prepass-b
#   bash bench/device_prepass.sh .gpu/prepass-a/libsageattn.so .gpu/prepass-b/libsageattn.so
# (there, from the repository root; carry both libraries). Runs bench/prepass_same.py (every
# int8 mode: O, LSE and the whole workspace bit for bit; then whole-call timings, A and B
# interleaved; PREPASS_ARGS adds its options, e.g. "--compare-smoothed --modes int8-fp8-wgmma"
# for two builds that both smooth V), then ncu's SpeedOfLight of the sa_ kernels of one call at D=128 L=1024 B=16
# H=32 for each library, in int8-fp8-wgmma (where B smooths V and A does not) and in int8-fp8
# (the same work in both). Writes $OUT/summary.txt (with the GPU's clocks), $OUT/same.txt,
# $OUT/same.json, $OUT/ncu_{a,b}.csv (wgmma), $OUT/ncu_{a,b}_fp8.csv and $OUT/ncu.log. Exit 1
# when the outputs differ.
set -o pipefail
export PYTHONUNBUFFERED=1
A=${1:?usage: bench/device_prepass.sh LIB_A LIB_B}
B=${2:?usage: bench/device_prepass.sh LIB_A LIB_B}
OUT=${OUT:-/tmp/prepass-out}
mkdir -p "$OUT"
T0=$(date +%s)
el() { echo "[$(($(date +%s) - T0))s] $*"; }
gpu=$(nvidia-smi --format=csv \
    --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw)
for f in "$A" "$B"; do [ -f "$f" ] || { echo "no $f (build it with bench/build.sh)"; exit 2; }; done
# shellcheck disable=SC2086
timeout 300 python3 bench/prepass_same.py --lib-a "$A" --lib-b "$B" --json "$OUT/same.json" \
    ${PREPASS_ARGS:-} >"$OUT/same.txt" 2>&1
same_rc=$?
el "prepass_same.py rc=$same_rc"
for m in int8-fp8-wgmma int8-fp8; do
    sfx=
    [ $m = int8-fp8 ] && sfx=_fp8
    for x in a b; do
        lib=$A
        [ $x = b ] && lib=$B
        timeout 60 ncu --csv --section SpeedOfLight -k regex:sa_ --log-file "$OUT/ncu_$x$sfx.csv" \
            python3 bench/ncu_one.py --lib "$lib" --modes $m --len 1024 --batch 16 \
            >>"$OUT/ncu.log" 2>&1
        el "ncu $m $x rc=$?"
    done
done
{
    echo "$gpu"
    grep -E "^(GPU|bit-identical|RESULT|DIFF|skip)" "$OUT/same.txt" | head -40
    grep -E "^int8" "$OUT/same.txt"
    for m in int8-fp8-wgmma int8-fp8; do
        sfx=
        [ $m = int8-fp8 ] && sfx=_fp8
        python3 - "$OUT/ncu_a$sfx.csv" "$OUT/ncu_b$sfx.csv" "$m" <<'EOF'
import csv, sys

WANT = ("Duration", "DRAM Throughput", "Memory Throughput", "Compute (SM) Throughput")


def read(path):
    """kernel (short name, in launch order) -> {metric: (value, unit)}"""
    rows = {}
    try:
        text = open(path).read().splitlines()
    except OSError:
        return rows
    start = next((i for i, l in enumerate(text) if l.startswith('"ID"')), None)
    if start is None:
        return rows
    for r in csv.DictReader(text[start:]):
        name = r["Kernel Name"].split("(")[0].split("<")[0].replace("void ", "")
        key = "%s#%s" % (name, r["ID"])
        if r["Metric Name"] in WANT:
            rows.setdefault(key, {})[r["Metric Name"]] = (r["Metric Value"], r["Metric Unit"])
    return rows


a, b = read(sys.argv[1]), read(sys.argv[2])
print("ncu SpeedOfLight, %s D=128 L=1024 B=16 H=32 (A = reference, B = change)" % sys.argv[3])
print("%-28s %-28s %14s %14s %12s %12s %12s %12s" % (
    "A kernel", "B kernel", "A duration", "B duration", "A DRAM %", "B DRAM %", "A SM %", "B SM %"))
for i, (ka, kb) in enumerate(zip(list(a) + [None] * 8, list(b) + [None] * 8)):
    if ka is None and kb is None:
        break
    ma, mb = a.get(ka, {}), b.get(kb, {})
    f = lambda m, k: ("%s %s" % m[k]) if k in m else "-"
    print("%-28s %-28s %14s %14s %12s %12s %12s %12s" % (
        (ka or "-").split("#")[0][:28], (kb or "-").split("#")[0][:28], f(ma, "Duration"),
        f(mb, "Duration"),
        f(ma, "DRAM Throughput").split()[0], f(mb, "DRAM Throughput").split()[0],
        f(ma, "Compute (SM) Throughput").split()[0], f(mb, "Compute (SM) Throughput").split()[0]))
EOF
    done
} | tee "$OUT/summary.txt"
el "done"
exit $((same_rc != 0))
