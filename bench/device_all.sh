#!/bin/bash
# The whole-product check on the GPU machine, in one device call (run from the repository root):
#   1. a new user's `bin/sagebuild doctor` and `bin/sagebuild all --yes` (doctor → fetch when
#      needed → build for the GPU present → selftest), timed;
#   2. the self-test in full, and compute-sanitizer memcheck over the quick self-test;
#   3. bench/bench.py (TOPS and accuracy of each mode next to torch SDPA) on the library that
#      `all` built with CMake.
# bin/sagebuild comes from bench/pack_cli.sh (the GPU image has no libcurl/libarchive/cJSON
# development files). Logs and JSON go to $OUT; a summary is printed last.
#   bash bench/device_all.sh [--no-bench]
set -o pipefail
export PYTHONUNBUFFERED=1 NO_COLOR=1
OUT=${OUT:-/tmp/sa-all}
mkdir -p "$OUT"
if [ -f .device-carry-cli/libs.tar.xz ]; then
    tar -C .device-carry-cli -xJf .device-carry-cli/libs.tar.xz
fi
# A new user's state: nothing fetched or built yet.
export XDG_DATA_HOME=/tmp/sb-data XDG_CACHE_HOME=/tmp/sb-cache
rm -rf "$XDG_DATA_HOME" "$XDG_CACHE_HOME"
summary=()
note() { summary+=("$*"); echo "== $*"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
start=$(date +%s%N)
bin/sagebuild doctor -v >"$OUT/doctor.txt" 2>&1
rc=$?
note "doctor rc=$rc in $((($(date +%s%N) - start) / 1000000)) ms: $(tail -n 1 "$OUT/doctor.txt")"
bin/sagebuild doctor --json >"$OUT/doctor.json" 2>/dev/null
cat "$OUT/doctor.txt"

start=$(date +%s)
bin/sagebuild all --yes 2>&1 | tee "$OUT/all.txt"
rc=$?
note "sagebuild all --yes rc=$rc in $(($(date +%s) - start)) s"

lib=$XDG_DATA_HOME/sagebuild/sageattn
cp "$lib/build-record.json" "$OUT/" 2>/dev/null
if [ -x "$lib/bin/sageattn-selftest" ]; then
    cp "$lib/recommendation.json" "$OUT/recommendation-quick.json" 2>/dev/null
    note "all's quick self-test recommends: $(python3 -c 'import json,sys; print([(g["name"], g["mode"], g["speedup_vs_fp16"]) for g in json.load(open(sys.argv[1]))["gpus"]])' "$lib/recommendation.json" 2>&1)"
    "$lib/bin/sageattn-selftest" --full --json >"$OUT/selftest-full.json" 2>"$OUT/selftest-full.err"
    note "selftest --full rc=$?"
    python3 kernels/tests/check_selftest_json.py "$OUT/selftest-full.json"
    note "selftest --full JSON against the schema check rc=$?"
    bin/sagebuild selftest --build "$lib" --full 2>&1 | tee "$OUT/selftest-full.txt" | tail -n 25
    note "sagebuild selftest --full rc=${PIPESTATUS[0]}: $(grep -E 'recommended mode|why:' "$OUT/selftest-full.txt" | tr '\n' ' ')"
    cp "$lib/recommendation.json" "$OUT/recommendation.json" 2>/dev/null
    note "recommendation.json: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["library_sha256"][:12], [(g["name"], g["uuid"], g["mode"], g["runner_up"], g["speedup_vs_fp16"]) for g in d["gpus"]])' "$lib/recommendation.json" 2>&1); sha256 of the library: $(sha256sum "$lib/lib/libsageattn.so" | cut -c1-12)"
    compute-sanitizer --tool memcheck --error-exitcode 99 "$lib/bin/sageattn-selftest" --quick \
        --json >"$OUT/memcheck.txt" 2>&1
    note "compute-sanitizer memcheck (selftest --quick) rc=$?: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.txt" | tail -n 1)"
    if [ "${1:-}" != "--no-bench" ]; then
        python3 bench/bench.py --lib "$lib/lib/libsageattn.so" --out "$OUT/bench.json" \
            >"$OUT/bench.log" 2>&1
        note "bench rc=$?"
        grep -v "^api .* ok " "$OUT/bench.log" | tail -n 45
    fi
else
    note "no self-test program at $lib/bin: all did not build"
fi
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
# The device tool brings back at most 8 files: everything travels as one archive.
tar -C "$OUT" -czf /tmp/device-all-results.tgz . && rm -rf "${OUT:?}"/* &&
    mv /tmp/device-all-results.tgz "$OUT/results.tgz"
