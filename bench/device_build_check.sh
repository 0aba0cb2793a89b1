#!/bin/bash
# One device call's check of a `sagebuild build` output, from the repository root:
#   here:  bin/sagebuild build --arch sm_90,sm_90a --out .gpu/NAME && bash bench/pack_cli.sh
#   there: tar -C .device-carry-cli -xJf .device-carry-cli/libs.tar.xz &&
#          bash bench/device_build_check.sh .gpu/NAME [PROFILE_SHAPES]
#          (carrying .gpu/NAME, bin and .device-carry-cli)
# 1. `sagebuild selftest --build BUILD --full` through the CLI: every mode's accuracy matrix and
#    speed, and the recommendation record;
# 2. bench.py's accuracy matrix of int8-fp8-wgmma on the build's library (with and without LSE:
#    the kernel quantizes Q itself only without it);
# 3. the per-kernel GPU time of int8-fp8-wgmma and int8-fp16 (torch.profiler) at PROFILE_SHAPES
#    (bench.py --profile-shapes; default the L=1K and L=4K bench shapes and D=128 L=16K).
# Writes $OUT/{selftest-full.txt,recommendation.json,acc.json,acc_nolse.json,profile.json,*.log}.
set -o pipefail
export PYTHONUNBUFFERED=1 NO_COLOR=1
BUILD=${1:?usage: bash bench/device_build_check.sh BUILD [PROFILE_SHAPES]}
SHAPES=${2:-128:1024:16,64:1024:16,64:1024:16:causal,64:4096:4,128:16384:1,64:16384:1}
OUT=${OUT:-/tmp/build-check}
mkdir -p "$OUT"
T0=$SECONDS
el() { echo "[$((SECONDS - T0))s] $*"; }
lib=$BUILD/lib/libsageattn.so
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv | tee "$OUT/gpu.txt"
timeout 300 bin/sagebuild selftest --build "$BUILD" --full >"$OUT/selftest-full.txt" 2>&1
el "selftest --full rc=$?"
cp "$BUILD/recommendation.json" "$OUT/" 2>/dev/null
tail -n 25 "$OUT/selftest-full.txt"
timeout 120 python3 bench/bench.py --lib "$lib" --modes int8-fp8-wgmma --skip-speed --no-sdpa \
    --out "$OUT/acc.json" >"$OUT/acc.log" 2>&1
el "accuracy (LSE) rc=$?"
timeout 120 python3 bench/bench.py --lib "$lib" --modes int8-fp8-wgmma --skip-speed --no-sdpa \
    --no-lse --out "$OUT/acc_nolse.json" >"$OUT/acc_nolse.log" 2>&1
el "accuracy (no LSE) rc=$?"
tail -n 4 "$OUT/acc.log" "$OUT/acc_nolse.log"
timeout 150 python3 bench/bench.py --lib "$lib" --modes int8-fp8-wgmma,int8-fp16 --skip-speed \
    --skip-accuracy --no-sdpa --profile-shapes "$SHAPES" --out "$OUT/profile.json" \
    >"$OUT/profile.log" 2>&1
el "profile rc=$?"
grep '^profile' "$OUT/profile.log"
