#!/bin/bash
# Round 51's second device call (issue 13: the rank kernel in fewer instructions), from the
# repository root, carrying REFCHECK (sageattn-refcheck and its library, CMake -DSAGEATTN_REFCHECK=ON),
# PRODUCT (the same build installed: lib/, bin/sageattn-selftest) and VARIANTS (a
# bench/build_hopper_variants.sh folder with the previous library added as prev):
#   SEQ="prev landed" bash bench/device_round51b.sh REFCHECK PRODUCT VARIANTS
# 1. bench/device_round49.sh at L=4K and 16K: refcheck, the self-test's full matrix, per-kernel
#    times, VARIANTS in turn with SDPA (one pass), SEQ sequentially at L=16K (two passes);
# 2. bench/call_timeline.py on PRODUCT (each call's kernels on the GPU's clock);
# 3. compute-sanitizer memcheck and racecheck over bench.py's sanitizer-sized cases for
#    int8-fp8-wgmma (the rank kernel with and without a causal mask).
# Writes what device_round49.sh writes, $OUT/timeline.{json,txt} and $OUT/san/*.log.
set -o pipefail
export PYTHONUNBUFFERED=1
REFCHECK=${1:?usage: bash bench/device_round51b.sh REFCHECK PRODUCT VARIANTS}
PRODUCT=${2:?}
DIR=${3:?}
OUT=${OUT:-/tmp/round51b-out}
mkdir -p "$OUT"
T0=$SECONDS
OUT=$OUT LENS=${LENS:-4096,16384} bash bench/device_round49.sh "$REFCHECK" "$PRODUCT" "$DIR"
timeout 150 python3 bench/call_timeline.py --lib "$PRODUCT/lib/libsageattn.so" \
    --out "$OUT/timeline.json" >"$OUT/timeline.txt" 2>&1
echo "[$((SECONDS - T0))s] timeline rc=$?"
grep -vE "Warning|warn" "$OUT/timeline.txt"
OUT=$OUT/san TOOLS=${TOOLS:-"memcheck racecheck"} bash bench/device_sanitize.sh \
    "$PRODUCT/lib/libsageattn.so" int8-fp8-wgmma
echo "[$((SECONDS - T0))s] sanitizers done"
