#!/bin/bash
# Round 52's second device call (issue 13): what a block's start and end cost, and Q asked into
# L2 one wave ahead. From the repository root, carrying a bench/build_hopper_variants.sh folder
# with landed, qpf, dx_noepi and dx_noq (qpf and call 3's epf were removed from the source after
# this round: build them from git at 1b1e282):
#   bash bench/device_round52b.sh VARIANTS
# 1. bench/wave_probe.py on each library at D=128 and 64, L=1K, 4K and 16K (the attention
#    kernel's own time from the profiler's trace, and the call), in the order landed qpf
#    dx_noepi dx_noq and back, so that order does not pick;
# 2. landed and qpf in turn with SDPA at L=4K (bench/device_sweep.sh, two passes).
# VARS (the libraries of step 1, run in that order and back), SWEEP (those of step 2, with their
# variants.txt lines) and LENS (step 2's lengths) change the lists; the third call of round 52:
#   VARS="landed epf" SWEEP="landed epf" LENS=1024,4096 bash bench/device_round52b.sh VARIANTS
# Writes $OUT/summary.txt and $OUT/round52b.tgz (every raw file).
set -o pipefail
export PYTHONUNBUFFERED=1
DIR=${1:?usage: bash bench/device_round52b.sh VARIANTS}
OUT=${OUT:-/tmp/round52b-out}
SHAPES=${SHAPES:-128:4096:4:32,64:4096:4:32,128:1024:16:32,64:1024:16:32,128:16384:1:32}
mkdir -p "$OUT/w"
T0=$SECONDS
el() { echo "[$((SECONDS - T0))s] $*"; }
{
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
    bash bench/device_probe_ab.sh "$DIR" "${VARS:-landed qpf dx_noepi dx_noq}" "$SHAPES" "$OUT/w"
    NAMES="${SWEEP:-landed qpf}" OUT=$OUT/w/sweep BENCH_ARGS=--interleave bash bench/device_sweep.sh \
        "$DIR" 2 "${LENS:-4096}" 128,64
    el "sweep done"
} 2>&1 | tee "$OUT/summary.txt"
tar -czf "$OUT/round52b.tgz" -C "$OUT" w && rm -rf "$OUT/w"
