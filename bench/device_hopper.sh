#!/bin/bash
# int8-fp8-wgmma (issue 13) on a Hopper GPU, in one device call from the repository root:
#   bash bench/build.sh .device-carry/hopper sm_90a      # here (nvcc 13.0), then carry it
#   bash bench/device_hopper.sh [LIB]                 # there (carry .device-carry)
# bench.py's full accuracy matrix and key speed shapes for int8-fp8-wgmma next to int8-fp16 and
# SDPA (with the per-kernel profile), compute-sanitizer memcheck on the small cases, and an ncu
# summary of the attention kernel at D=128 L=16K. Writes $OUT/{bench.json,bench.log,
# memcheck.txt,ncu.txt}; the short table last. (The session's runs of issue 13 did these steps
# from .gpu/hopper/ scripts; bench/results/h200-hopper-* hold their output.)
set -o pipefail
export PYTHONUNBUFFERED=1
LIB=${1:-.device-carry/hopper/libsageattn.so}
OUT=${OUT:-/tmp/hopper-out}
mkdir -p "$OUT"
T0=$(date +%s)
el() { echo "[$(($(date +%s) - T0))s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv | tee "$OUT/gpu.txt"
if ! python3 -c "import ctypes,sys; ctypes.CDLL(sys.argv[1])" "$LIB" 2>"$OUT/load.txt"; then
    echo "library $LIB does not load ($(cat "$OUT/load.txt")): building it here"
    bash bench/build.sh /tmp/sa-hopper sm_90a >"$OUT/build.txt" 2>&1 || { tail -40 "$OUT/build.txt"; exit 1; }
    LIB=/tmp/sa-hopper/libsageattn.so
fi
timeout 150 python3 bench/bench.py --lib "$LIB" --modes int8-fp8-wgmma,int8-fp16 --speed-shapes key \
    --profile --out "$OUT/bench.json" >"$OUT/bench.log" 2>&1
el "bench rc=$?"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 python3 bench/bench.py --lib "$LIB" \
    --modes int8-fp8-wgmma --skip-speed --sanitize --no-sdpa >"$OUT/memcheck.txt" 2>&1
el "memcheck rc=$? $(grep -E "ERROR SUMMARY" "$OUT/memcheck.txt" | tail -1)"
timeout 90 ncu --clock-control none -k regex:sa_hopper_kernel -c 1 --section SpeedOfLight \
    --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
    --section LaunchStats python3 bench/ncu_one.py --lib "$LIB" --modes int8-fp8-wgmma \
    >"$OUT/ncu.txt" 2>&1
el "ncu rc=$?"
grep -E "Duration|Compute \(SM\) Throughput|Issue Slots Busy|Achieved Occupancy" "$OUT/ncu.txt"
grep -E "^TOPS|^D=|^accuracy|^profile" "$OUT/bench.log" | tail -14
