#!/bin/bash
# Round 51's first device call (issue 13), from the repository root, carrying REFCHECK (a CMake
# build of kernels/ with -DSAGEATTN_REFCHECK=ON: sageattn-refcheck and its library) and PRODUCT
# (its installed prefix: lib/libsageattn.so, bin/sageattn-selftest):
#   bash bench/device_round51.sh REFCHECK PRODUCT
# 1. sageattn-refcheck (every mode's kernels against the C reference) and the self-test's full
#    matrix: the library as landed (the rank kernel's shared eight-byte quantizer, 080d952);
# 2. bench/call_timeline.py: each call's kernels on the GPU's clock at L=1K, 4K and 16K (where a
#    short call's time goes: kernels, the gaps between them, the host's share);
# 3. ncu of the pre-pass's rank kernel and V's conversion at D=128 L=4K B=4 (SM and DRAM
#    throughput, warp stalls).
# Writes $OUT/{refcheck.txt,selftest-full.txt,timeline.json,timeline.txt,ncu-L4096.txt}.
set -o pipefail
export PYTHONUNBUFFERED=1
REFCHECK=${1:?usage: bash bench/device_round51.sh REFCHECK PRODUCT}
PRODUCT=${2:?}
OUT=${OUT:-/tmp/round51-out}
mkdir -p "$OUT"
T0=$SECONDS
el() { echo "[$((SECONDS - T0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
LD_LIBRARY_PATH=$REFCHECK timeout 240 "$REFCHECK/sageattn-refcheck" >"$OUT/refcheck.txt" 2>&1
el "refcheck rc=$? ($(tail -n 1 "$OUT/refcheck.txt"))"
grep -E "FAIL" "$OUT/refcheck.txt" | head
timeout 200 "$PRODUCT/bin/sageattn-selftest" --full >"$OUT/selftest-full.txt" 2>&1
el "selftest --full rc=$?"
grep -E "int8-fp8-wgmma|verdict|recommended" "$OUT/selftest-full.txt" | head -8
timeout 150 python3 bench/call_timeline.py --lib "$PRODUCT/lib/libsageattn.so" \
    --shapes "${SHAPES:-128:1024:16,128:1024:16:causal,128:4096:4,128:4096:4:causal,64:4096:4,64:4096:4:causal,128:16384:1,64:16384:1}" \
    --out "$OUT/timeline.json" >"$OUT/timeline.txt" 2>&1
el "timeline rc=$?"
cat "$OUT/timeline.txt"
timeout 120 ncu -k 'regex:sa_krank|sa_vfp8' --section SpeedOfLight --section WarpStateStats \
    --section Occupancy --section SchedulerStats \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
    python3 bench/ncu_one.py --lib "$PRODUCT/lib/libsageattn.so" --modes int8-fp8-wgmma \
    --len 4096 --batch 4 >"$OUT/ncu-L4096.txt" 2>&1
el "ncu rc=$?"
grep -E "sa_krank|sa_vfp8|dram__bytes|Duration|Compute \(SM\)|DRAM Throughput|Achieved Occ|Issued Warp|No Eligible|Stall" \
    "$OUT/ncu-L4096.txt" | head -40
