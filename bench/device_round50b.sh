#!/bin/bash
# Round 50's second device call (issue 13), from the repository root, carrying PRODUCT (an
# installed build: lib/libsageattn.so):
#   bash bench/device_round50b.sh PRODUCT
# 1. compute-sanitizer memcheck and racecheck over bench.py's sanitizer-sized cases for
#    int8-fp8-wgmma (bench/device_sanitize.sh; rank groups with and without a causal mask);
# 2. ncu of the pre-pass's rank kernel and V's conversion at D=128 L=16K B=1 and L=4K B=4 (H=32):
#    DRAM bytes against the K and V they read (does the rank kernel's second read of K come
#    from L2?), throughput and occupancy.
# Writes $OUT/sanitize/*.log and $OUT/ncu-*.txt.
set -o pipefail
export PYTHONUNBUFFERED=1
PRODUCT=${1:?usage: bash bench/device_round50b.sh PRODUCT}
OUT=${OUT:-/tmp/round50b-out}
mkdir -p "$OUT"
T0=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
OUT=$OUT/sanitize TOOLS=${TOOLS:-"memcheck racecheck"} bash bench/device_sanitize.sh \
    "$PRODUCT/lib/libsageattn.so" int8-fp8-wgmma
for shape in 16384:1 4096:4; do
    set -- "${shape%:*}" "${shape#*:}"
    timeout 150 ncu -k 'regex:sa_krank|sa_vfp8' --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
        python3 bench/ncu_one.py --lib "$PRODUCT/lib/libsageattn.so" --modes int8-fp8-wgmma \
        --len "$1" --batch "$2" >"$OUT/ncu-L$1.txt" 2>&1
    echo "[$((SECONDS - T0))s] ncu L=$1 rc=$? ($(grep -cE 'sa_krank|sa_vfp8' "$OUT/ncu-L$1.txt") kernel lines)"
    grep -E "sa_krank|sa_vfp8|dram__bytes|hit_rate|Duration|Memory Throughput|Achieved Occupancy" \
        "$OUT/ncu-L$1.txt" | head -30
done
