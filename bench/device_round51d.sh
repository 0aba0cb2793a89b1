#!/bin/bash
# Round 51's last device call (issue 13): the product with round 51's thresholds, checked and
# timed. From the repository root, carrying REFCHECK (sageattn-refcheck and its library, CMake
# -DSAGEATTN_REFCHECK=ON), PRODUCT (the same build installed: lib/, bin/sageattn-selftest) and
# VARIANTS (a folder of <name>/libsageattn.so: r51b = round 51's rank kernel at the old
# thresholds, final = PRODUCT's library, both in variants.txt; prev = 080d952's library, not
# listed there):
#   SEQ="r51b final" bash bench/device_round51d.sh REFCHECK PRODUCT VARIANTS
# 1. bench/device_round49.sh at L=1K, 4K and 16K: refcheck, the self-test's full matrix, per-kernel
#    times, the listed variants in turn with SDPA, SEQ sequentially at L=16K;
# 2. bench/prepass_same.py, prev against r51b, int8-fp8-wgmma only: the rewritten rank kernel
#    leaves every byte of the workspace and of O as before (the thresholds are the same in both);
# 3. bench/call_timeline.py on PRODUCT;
# 4. compute-sanitizer memcheck and racecheck over bench.py's sanitizer-sized int8-fp8-wgmma cases.
# Writes everything under $OUT and packs all but summary.txt into $OUT/round51d.tgz.
set -o pipefail
export PYTHONUNBUFFERED=1
REFCHECK=${1:?usage: bash bench/device_round51d.sh REFCHECK PRODUCT VARIANTS}
PRODUCT=${2:?}
DIR=${3:?}
OUT=${OUT:-/tmp/round51d-out}
mkdir -p "$OUT/w"
T0=$SECONDS
{
    OUT=$OUT/w LENS=${LENS:-1024,4096,16384} bash bench/device_round49.sh "$REFCHECK" "$PRODUCT" \
        "$DIR"
    timeout 300 python3 bench/prepass_same.py --lib-a "$DIR/prev/libsageattn.so" \
        --lib-b "$DIR/r51b/libsageattn.so" --modes int8-fp8-wgmma --compare-smoothed \
        --skip-timing --json "$OUT/w/prepass_same.json" >"$OUT/w/prepass_same.txt" 2>&1
    echo "[$((SECONDS - T0))s] prepass_same rc=$? ($(tail -n 1 "$OUT/w/prepass_same.txt"))"
    timeout 150 python3 bench/call_timeline.py --lib "$PRODUCT/lib/libsageattn.so" \
        --out "$OUT/w/timeline.json" >"$OUT/w/timeline.txt" 2>&1
    echo "[$((SECONDS - T0))s] timeline rc=$?"
    grep -vE "Warning|warn" "$OUT/w/timeline.txt"
    OUT=$OUT/w/san TOOLS=${TOOLS:-"memcheck racecheck"} bash bench/device_sanitize.sh \
        "$PRODUCT/lib/libsageattn.so" int8-fp8-wgmma
    echo "[$((SECONDS - T0))s] sanitizers done"
} 2>&1 | tee "$OUT/summary.txt"
tar -czf "$OUT/round51d.tgz" -C "$OUT" w && rm -rf "$OUT/w"
