#!/bin/bash
# The one script a device call runs (from the repository root):
#   bash bench/run_device.sh [bench.py args...]
# Uses the library carried in .device-carry/ (built here by bench/build.sh) or builds it there,
# then runs bench/bench.py. Logs and JSON go to $OUT; a short table is printed last.
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
        --quick --skip-speed --sanitize 2>&1 | tail -60 >"$OUT/sanitizer.txt"
    echo "compute-sanitizer memcheck: $(tail -3 "$OUT/sanitizer.txt" | tr '\n' ' ')"
fi
python3 bench/bench.py --lib "$LIB" --out "$OUT/bench.json" "$@" 2>&1 | tee "$OUT/bench.log" | \
    grep -v "^api .* ok " | tail -80
