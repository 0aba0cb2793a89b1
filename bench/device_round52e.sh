#!/bin/bash
# Round 52's fifth device call (issue 13): the heads' partial blocks after all full ones
# (SA_HW_PARTIAL_LAST: measured, then removed from the source; build plast from git at 1b1e282).
# From the repository root, carrying a bench/build_hopper_variants.sh folder with landed and
# plast, and PRODUCT (the CMake build with -DSA_HW_PARTIAL_LAST=1 installed:
# lib/, bin/sageattn-selftest):
#   bash bench/device_round52e.sh VARIANTS PRODUCT
# 1. bench/prepass_same.py, landed against plast, int8-fp8-wgmma: the order changes no byte of
#    the workspace or of O;
# 2. bench/wave_probe.py on landed, plast, plast, landed at shapes with and without a partial
#    block per head;
# 3. the product's self-test over its full matrix and compute-sanitizer memcheck over bench.py's
#    sanitizer-sized int8-fp8-wgmma cases.
# Writes $OUT/summary.txt and $OUT/round52e.tgz (every raw file).
set -o pipefail
export PYTHONUNBUFFERED=1
DIR=${1:?usage: bash bench/device_round52e.sh VARIANTS PRODUCT}
PRODUCT=${2:?}
OUT=${OUT:-/tmp/round52e-out}
SHAPES=${SHAPES:-128:4096:4:32,128:1024:16:32,128:16384:1:32,128:4032:4:32,64:4096:4:32}
mkdir -p "$OUT/w"
T0=$SECONDS
el() { echo "[$((SECONDS - T0))s] $*"; }
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
    timeout 240 python3 bench/prepass_same.py --lib-a "$DIR/landed/libsageattn.so" \
        --lib-b "$DIR/plast/libsageattn.so" --modes int8-fp8-wgmma --compare-smoothed \
        --skip-timing --json "$OUT/w/prepass_same.json" >"$OUT/w/prepass_same.txt" 2>&1
    el "prepass_same rc=$? ($(tail -n 1 "$OUT/w/prepass_same.txt"))"
    bash bench/device_probe_ab.sh "$DIR" "landed plast" "$SHAPES" "$OUT/w"
    timeout 200 "$PRODUCT/bin/sageattn-selftest" --full >"$OUT/w/selftest-full.txt" 2>&1
    el "selftest --full rc=$?"
    grep -E "int8-fp8-wgmma|verdict|recommended" "$OUT/w/selftest-full.txt" | head -8
    OUT=$OUT/w/san TOOLS=memcheck bash bench/device_sanitize.sh "$PRODUCT/lib/libsageattn.so" \
        int8-fp8-wgmma
} 2>&1 | tee "$OUT/summary.txt"
tar -czf "$OUT/round52e.tgz" -C "$OUT" w && rm -rf "$OUT/w"
