#!/bin/bash
# compute-sanitizer's four tools over bench.py's sanitizer-sized accuracy cases (`--sanitize`:
# Lq·Lkv <= 2^20) for one library and mode, with and without the LSE where it matters (memcheck),
# from the repository root on the GPU machine:
#   bash bench/device_sanitize.sh LIB [MODE]      e.g. bash bench/device_sanitize.sh \
#       .gpu/st49e/lib/libsageattn.so int8-fp8-wgmma
# TOOLS (default all five: memcheck memcheck-nolse racecheck synccheck initcheck) picks runs.
# Writes $OUT/<run>.log; prints each summary.
set -o pipefail
export PYTHONUNBUFFERED=1
LIB=${1:?usage: bash bench/device_sanitize.sh LIB [MODE]}
MODE=${2:-int8-fp8-wgmma}
OUT=${OUT:-/tmp/sanitize-out}
mkdir -p "$OUT"
T0=$SECONDS
run() { # run NAME TOOL [bench.py flags...]
    local name=$1 tool=$2
    shift 2
    timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 python3 bench/bench.py \
        --lib "$LIB" --modes "$MODE" --skip-speed --sanitize --no-sdpa "$@" >"$OUT/$name.log" 2>&1
    echo "[$((SECONDS - T0))s] $name rc=$? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$name.log" | tail -n 1))"
}
for t in ${TOOLS:-memcheck memcheck-nolse racecheck synccheck initcheck}; do
    case $t in
    memcheck-nolse) run "$t" memcheck --no-lse ;;
    *) run "$t" "$t" ;;
    esac
done
