#!/bin/bash
# The one script a device call runs (from the repository root):
#   bash bench/run_device.sh [bench.py args...]
# Uses the library carried in .device-carry/ (built here by bench/build.sh) or builds it there,
# then runs bench/bench.py. With SA_VARIANTS=1, first benchmarks every carried variant
# .device-carry/<name>/libsageattn.so on the key shapes. With SA_SANITIZE=1, runs the small
# accuracy cases under compute-sanitizer memcheck; SA_NCU=1 reads hardware counters of the
# attention kernels with ncu; SA_NO_BENCH=1 skips the main benchmark. Logs and JSON go to $OUT; a short table last.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sa-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv | tee "$OUT/gpu.txt"
LIB=.device-carry/libsageattn.so
if ! python3 -c "import ctypes,sys; ctypes.CDLL(sys.argv[1])" "$LIB" 2>"$OUT/load.txt"; then
    echo "carried library does not load ($(cat "$OUT/load.txt")): building here"
    bash bench/build.sh /tmp/sa-build sm_90 >"$OUT/build.txt" 2>&1 || { tail -40 "$OUT/build.txt"; exit 1; }
    LIB=/tmp/sa-build/libsageattn.so
fi
if [ -n "$SA_SANITIZE" ]; then
    compute-sanitizer --tool memcheck --error-exitcode 9 python3 bench/bench.py --lib "$LIB" \
        --skip-speed --sanitize >"$OUT/sanitizer.txt" 2>&1
    echo "compute-sanitizer memcheck rc=$? : $(grep -E "ERROR SUMMARY|errors" "$OUT/sanitizer.txt" | tail -2 | tr '\n' ' ')"
fi
if [ -n "$SA_VARIANTS" ]; then
    mkdir -p "$OUT/variants"
    for lib in .device-carry/*/libsageattn.so; do
        name=$(basename "$(dirname "$lib")")
        case $name in sm*) continue ;; esac # other archs: SASS only
        python3 bench/bench.py --lib "$lib" --quick --speed-shapes key --no-sdpa \
            --out "$OUT/variants/$name.json" >"$OUT/variants/$name.log" 2>&1
        echo "== variant $name"
        grep -E "^accuracy|^D=" "$OUT/variants/$name.log" | tail -8
    done
    tar -C "$OUT" -czf "$OUT/variants.tgz" variants && rm -rf "$OUT/variants"
fi
if [ -z "$SA_NO_BENCH" ]; then
    python3 bench/bench.py --lib "$LIB" --out "$OUT/bench.json" "$@" 2>&1 | tee "$OUT/bench.log" | \
        grep -v "^api .* ok " | tail -80
fi
if [ -f .device-carry/sm120a/libsageattn.so ]; then
    # The sm_120a build cannot run here: read its SASS with this machine's cuobjdump.
    cuobjdump --dump-sass .device-carry/sm120a/libsageattn.so >"$OUT/sass_sm120a.txt" 2>&1
    echo "sm_120a SASS ($(cuobjdump --version | tail -1)): $(grep -oE "QMMA[.A-Z0-9]*|IMMA[.A-Z0-9]*|HMMA[.A-Z0-9]*" "$OUT/sass_sm120a.txt" | sort | uniq -c | tr '\n' ' ')"
    gzip -f "$OUT/sass_sm120a.txt"
fi
if [ -n "$SA_NCU" ]; then
    # Hardware counters of the attention kernels (clocks left alone).
    ncu --clock-control none --kernel-name regex:sa_attn_kernel --launch-count 2 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
        --section SchedulerStats --section InstructionStats --section Occupancy \
        --section MemoryWorkloadAnalysis \
        python3 bench/ncu_one.py --lib "$LIB" >"$OUT/ncu.txt" 2>&1
    echo "ncu rc=$?"
    grep -E "sa_attn_kernel|Duration|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc A|No Eligible|Eligible Warps|Active Warps Per|Stall|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Memory Throughput|L1/TEX Hit|Shared" "$OUT/ncu.txt" | head -60
fi
