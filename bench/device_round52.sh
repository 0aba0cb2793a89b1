#!/bin/bash
# Round 52's device call (issue 13): where the L=4K gap and D=64's key loop stand, measured.
# From the repository root, carrying REFCHECK (sageattn-refcheck and its library, CMake
# -DSAGEATTN_REFCHECK=ON) and PRODUCT (the same build installed: lib/, bin/sageattn-selftest):
#   bash bench/device_round52.sh REFCHECK PRODUCT
# 1. sageattn-refcheck at main's head (5986cb8's launch code had not run on a GPU);
# 2. bench/wave_probe.py: the attention kernel's time against its block waves, head counts that
#    leave the last wave part-filled or fill it, D=128 and 64, L=4K and 16K;
# 3. ncu of the attention kernel at D=64 L=16K B=1 and L=4K B=4: every pipe's utilization (raw
#    metrics of the ComputeWorkloadAnalysis section), issue slots and warp states, against the
#    model of round 51 (MUFU ~54 %, issue ~51 %, tensor ~29 % of a D=64 key step);
# 4. ncu of the same at D=128 L=4K B=4 and L=16K B=1, the same metrics.
# Writes $OUT/summary.txt and $OUT/round52.tgz (every raw file).
set -o pipefail
export PYTHONUNBUFFERED=1
REFCHECK=${1:?usage: bash bench/device_round52.sh REFCHECK PRODUCT}
PRODUCT=${2:?}
OUT=${OUT:-/tmp/round52-out}
mkdir -p "$OUT/w"
T0=$SECONDS
el() { echo "[$((SECONDS - T0))s] $*"; }
LIB=$PRODUCT/lib/libsageattn.so
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
    LD_LIBRARY_PATH=$REFCHECK:$PRODUCT/lib timeout 240 "$REFCHECK/sageattn-refcheck" \
        >"$OUT/w/refcheck.txt" 2>&1
    el "refcheck rc=$? ($(tail -n 1 "$OUT/w/refcheck.txt"))"
    grep -E "FAIL" "$OUT/w/refcheck.txt" | head
    timeout 240 python3 bench/wave_probe.py --lib "$LIB" --out "$OUT/w/waves.json" \
        >"$OUT/w/waves.txt" 2>&1
    el "wave probe rc=$?"
    cat "$OUT/w/waves.txt"
    n=0
    for shape in "--dim 64 --len 16384 --batch 1" "--dim 64 --len 4096 --batch 4" \
        "--dim 128 --len 4096 --batch 4" "--dim 128 --len 16384 --batch 1"; do
        n=$((n + 1))
        # shellcheck disable=SC2086 # the shape's options are words
        timeout 150 ncu --clock-control none -k regex:sa_hopper -c 1 -f \
            --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
            --section SchedulerStats --section InstructionStats -o "$OUT/w/ncu$n" \
            python3 bench/ncu_one.py --lib "$LIB" --modes int8-fp8-wgmma $shape \
            >"$OUT/w/ncu$n.log" 2>&1
        el "ncu$n ($shape) rc=$?"
        ncu -i "$OUT/w/ncu$n.ncu-rep" --page details >"$OUT/w/ncu$n.txt" 2>&1
        ncu -i "$OUT/w/ncu$n.ncu-rep" --page raw --csv >"$OUT/w/ncu${n}_raw.csv" 2>&1
        rm -f "$OUT/w/ncu$n.ncu-rep"
        grep -E "Duration|Compute \(SM\) Throughput|Issue Slots Busy|Issued Warp|No Eligible|\
Active Warps Per|Eligible Warps|Warp Cycles Per Issued" "$OUT/w/ncu$n.txt" | head -12
        python3 - "$OUT/w/ncu${n}_raw.csv" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next((r for r in rows if "Kernel Name" in r), None)
if head is None:
    sys.exit("no raw table in " + sys.argv[1])
i = rows.index(head)
units, vals = rows[i + 1], rows[i + 2]
for name, unit, val in zip(head, units, vals):
    if ("pipe" in name and "pct_of_peak_sustained_active" in name) or "issue_active" in name:
        print("   %-75s %s %s" % (name, val, unit))
EOF
    done
} 2>&1 | tee "$OUT/summary.txt"
tar -czf "$OUT/round52.tgz" -C "$OUT" w && rm -rf "$OUT/w"
