#!/bin/bash
# The pre-pass (kernels/src/attn/quant.cu) of two builds on one GPU, in one device call:
#   bash bench/prepare_prepass.sh    # here: .gpu/prepass-a (the reference quant.cu), .gpu/prepass-b
#   bash bench/device_prepass.sh .gpu/prepass-a/libsageattn.so .gpu/prepass-b/libsageattn.so
# (there, from the repository root; carry both libraries). Runs bench/prepass_same.py (every
# int8 mode: O, LSE and the whole workspace bit for bit; then whole-call timings, A and B
# interleaved), then ncu's SpeedOfLight of the sa_ kernels of one int8-fp8-wgmma call at D=128
# L=1024 B=16 H=32 for each library. Writes $OUT/summary.txt, $OUT/same.txt, $OUT/same.json,
# $OUT/ncu_a.csv, $OUT/ncu_b.csv, $OUT/ncu.log and $OUT/gpu.txt. Exit 1 when the outputs differ.
set -o pipefail
export PYTHONUNBUFFERED=1
A=${1:?usage: bench/device_prepass.sh LIB_A LIB_B}
B=${2:?usage: bench/device_prepass.sh LIB_A LIB_B}
OUT=${OUT:-/tmp/prepass-out}
mkdir -p "$OUT"
T0=$(date +%s)
el() { echo "[$(($(date +%s) - T0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv | tee "$OUT/gpu.txt"
for f in "$A" "$B"; do [ -f "$f" ] || { echo "no $f (build it with bench/build.sh)"; exit 2; }; done
timeout 360 python3 bench/prepass_same.py --lib-a "$A" --lib-b "$B" --json "$OUT/same.json" \
    >"$OUT/same.txt" 2>&1
same_rc=$?
el "prepass_same.py rc=$same_rc"
for x in a b; do
    lib=$A
    [ $x = b ] && lib=$B
    timeout 90 ncu --csv --section SpeedOfLight -k regex:sa_ --log-file "$OUT/ncu_$x.csv" \
        python3 bench/ncu_one.py --lib "$lib" --modes int8-fp8-wgmma --len 1024 --batch 16 \
        >>"$OUT/ncu.log" 2>&1
    el "ncu $x rc=$?"
done
{
    grep -E "^(GPU|bit-identical|RESULT|DIFF|skip)" "$OUT/same.txt" | head -40
    grep -E "^int8" "$OUT/same.txt"
    python3 - "$OUT/ncu_a.csv" "$OUT/ncu_b.csv" <<'EOF'
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
print("ncu SpeedOfLight, int8-fp8-wgmma D=128 L=1024 B=16 H=32 (A = reference, B = change)")
print("%-28s %14s %14s %12s %12s %12s %12s" % ("kernel", "A duration", "B duration", "A DRAM %",
                                              "B DRAM %", "A SM %", "B SM %"))
for i, (ka, kb) in enumerate(zip(list(a) + [None] * 8, list(b) + [None] * 8)):
    if ka is None and kb is None:
        break
    ma, mb = a.get(ka, {}), b.get(kb, {})
    f = lambda m, k: ("%s %s" % m[k]) if k in m else "-"
    print("%-28s %14s %14s %12s %12s %12s %12s" % (
        (ka or kb).split("#")[0][:28], f(ma, "Duration"), f(mb, "Duration"),
        f(ma, "DRAM Throughput").split()[0], f(mb, "DRAM Throughput").split()[0],
        f(ma, "Compute (SM) Throughput").split()[0], f(mb, "Compute (SM) Throughput").split()[0]))
EOF
} | tee "$OUT/summary.txt"
el "done"
exit $((same_rc != 0))
