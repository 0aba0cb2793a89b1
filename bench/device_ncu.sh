#!/bin/bash
# ncu of int8-fp8-wgmma's attention kernel at chosen shapes, from the repository root on the GPU
# machine (carry the library's folder):
#   bash bench/device_ncu.sh LIB "SHAPE_OPTS" ["SHAPE_OPTS"...]
#   e.g. bash bench/device_ncu.sh .gpu/hopper17/landed/libsageattn.so "--len 1024 --batch 16" \
#            "--len 1024 --batch 16 --dim 64"
# SHAPE_OPTS are ncu_one.py's options ("" for its default, D=128 L=16K). Per shape: the summary
# sections at the GPU's own clock, the details page as text and the SASS source page (stall
# samples per instruction) as CSV; the kernel is the call's last launch whose name starts with
# sa_hopper. Writes $OUT/ncu.tgz and prints the key lines; `python3 bench/ncu_regions.py
# ncuN_sass.csv` (here) then says where the warps wait. bench/device_hopper.sh calls it with
# NCU_DIR (the files go there as <NCU_STEM><i>.*, not packed), NCU_STEM and NCU_TIMEOUT (seconds
# per shape, default 240).
set -o pipefail
LIB=${1:?usage: bash bench/device_ncu.sh LIB SHAPE_OPTS...}
shift
OUT=${OUT:-/tmp/ncu-out}
dir=${NCU_DIR:-$OUT/ncu}
stem=${NCU_STEM:-ncu}
mkdir -p "$dir"
i=0
for shape in "$@"; do
    i=$((i + 1))
    n=$stem$i
    echo "$n: $shape" >>"$dir/${stem}_shapes.txt"
    # shellcheck disable=SC2086 # the shape's options are words
    timeout "${NCU_TIMEOUT:-240}" ncu --clock-control none -k regex:sa_hopper -c 1 -f \
        --section SpeedOfLight --section Occupancy --section WarpStateStats \
        --section ComputeWorkloadAnalysis --section LaunchStats --section SchedulerStats \
        --section InstructionStats --section SourceCounters --section MemoryWorkloadAnalysis \
        -o "$dir/$n" python3 bench/ncu_one.py --lib "$LIB" --modes int8-fp8-wgmma $shape \
        >"$dir/$n.log" 2>&1
    echo "$n ($shape) rc=$?"
    ncu -i "$dir/$n.ncu-rep" --page details >"$dir/$n.txt" 2>&1
    ncu -i "$dir/$n.ncu-rep" --page source --csv --print-source sass >"$dir/${n}_sass.csv" 2>&1 ||
        echo "$n: no source page"
    rm -f "$dir/$n.ncu-rep"
    grep -E "sa_hopper|Duration|Compute \(SM\) Throughput|Issue Slots Busy|Registers Per|\
Achieved Occupancy|Waves Per SM|DRAM Throughput|Stall|Theoretical Occupancy" "$dir/$n.txt" | head -40
done
if [ -z "${NCU_DIR:-}" ]; then
    tar -czf "$OUT/ncu.tgz" -C "$OUT" ncu && rm -rf "$OUT/ncu"
fi
