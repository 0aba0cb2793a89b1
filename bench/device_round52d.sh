#!/bin/bash
# Round 52's fourth device call (issue 13): what one head's K and V per SM at a time would ask
# of L2 and DRAM. From the repository root, carrying a bench/build_hopper_variants.sh folder with
# landed and dx_hfast (SA_TEST_HOPPER_HEAD_FASTEST: the tiles with the heads varying fastest):
#   bash bench/device_round52d.sh VARIANTS
# 1. bench/wave_probe.py on landed, dx_hfast, dx_hfast, landed at D=128 and 64, L=1K, 4K, 16K
#    without a mask (the attention kernel's own time);
# 2. ncu of both at D=128 L=4K B=4 and D=64 L=16K B=1: DRAM bytes read, L2 hit rate, duration.
# Writes $OUT/summary.txt and $OUT/round52d.tgz (every raw file).
set -o pipefail
export PYTHONUNBUFFERED=1
DIR=${1:?usage: bash bench/device_round52d.sh VARIANTS}
OUT=${OUT:-/tmp/round52d-out}
SHAPES=${SHAPES:-128:4096:4:32,64:4096:4:32,128:1024:16:32,128:16384:1:32,64:16384:1:32}
mkdir -p "$OUT/w"
T0=$SECONDS
el() { echo "[$((SECONDS - T0))s] $*"; }
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
    bash bench/device_probe_ab.sh "$DIR" "landed dx_hfast" "$SHAPES" "$OUT/w"
    for v in landed dx_hfast; do
        for shape in "--dim 128 --len 4096 --batch 4" "--dim 64 --len 16384 --batch 1"; do
            tag=$v-$(echo "$shape" | tr -d ' -')
            # shellcheck disable=SC2086 # the shape's options are words
            timeout 120 ncu --clock-control none -k regex:sa_hopper -c 1 \
                --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
                python3 bench/ncu_one.py --lib "$DIR/$v/libsageattn.so" --modes int8-fp8-wgmma \
                $shape >"$OUT/w/ncu-$tag.txt" 2>&1
            el "ncu $tag rc=$?"
            grep -E "gpu__time_duration|dram__bytes_read|lts__t_sector_hit_rate" "$OUT/w/ncu-$tag.txt"
        done
    done
} 2>&1 | tee "$OUT/summary.txt"
tar -czf "$OUT/round52d.tgz" -C "$OUT" w && rm -rf "$OUT/w"
