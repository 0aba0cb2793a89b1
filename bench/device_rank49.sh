#!/bin/bash
# Round 49's correctness check on the GPU (issue 13: K scales per rank group), one device call
# from the repository root, carrying REFCHECK (a CMake build of kernels/ with
# -DSAGEATTN_REFCHECK=ON for sm_90;sm_90a) and VARIANTS (bench/build_hopper_variants.sh's folder):
#   bash bench/device_rank49.sh REFCHECK VARIANTS
# 1. sageattn-refcheck: every mode's kernels against the C reference, which forms the same rank
#    groups (kernels/ref, k_lane_groups 2) in calls without a causal mask;
# 2. compute-sanitizer racecheck (the rank kernel's shared-memory sort) and synccheck over
#    bench.py's small accuracy cases, on VARIANTS' first (landed) library;
# 3. bench.py's accuracy matrix of int8-fp8-wgmma for each variant, with and without the LSE.
# Writes $OUT/{gpu.txt,refcheck.txt,racecheck.log,synccheck.log,acc-*.json,acc-*.log}.
set -o pipefail
export PYTHONUNBUFFERED=1
REFCHECK=${1:?usage: bash bench/device_rank49.sh REFCHECK VARIANTS}
DIR=${2:?usage: bash bench/device_rank49.sh REFCHECK VARIANTS}
OUT=${OUT:-/tmp/rank49-out}
mkdir -p "$OUT"
T0=$SECONDS
el() { echo "[$((SECONDS - T0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv | tee "$OUT/gpu.txt"
LD_LIBRARY_PATH=$REFCHECK timeout 300 "$REFCHECK/sageattn-refcheck" >"$OUT/refcheck.txt" 2>&1
el "refcheck rc=$? ($(tail -n 1 "$OUT/refcheck.txt"))"
grep -E "wgmma|FAIL" "$OUT/refcheck.txt" | head -40
names=$(cut -d'|' -f1 "$DIR/variants.txt")
first=$(echo "$names" | head -1)
for tool in racecheck synccheck; do
    timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 python3 bench/bench.py \
        --lib "$DIR/$first/libsageattn.so" --modes int8-fp8-wgmma --skip-speed --sanitize \
        --no-sdpa >"$OUT/$tool.log" 2>&1
    el "$tool $first rc=$? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.log" | tail -n 1))"
done
for n in $names; do
    for lse in "" --no-lse; do
        tag=$n${lse:+-nolse}
        # shellcheck disable=SC2086
        timeout 240 python3 bench/bench.py --lib "$DIR/$n/libsageattn.so" --modes int8-fp8-wgmma \
            --skip-speed --no-sdpa $lse --out "$OUT/acc-$tag.json" >"$OUT/acc-$tag.log" 2>&1
        el "$tag accuracy rc=$? ($(grep -ciE 'fail|nonfinite [1-9]' "$OUT/acc-$tag.log") lines of failure)"
    done
done
