#!/bin/bash
# Checks the drop-in `sageattention` package on the GPU machine in one device call (run from the
# repository root; bench/dropin_check.py says what is checked):
#   bash bench/device_dropin.sh [--lib PATH] [dropin_check.py options...]
# The library: --lib PATH, else $SAGEATTENTION_LIBRARY, else .device-carry/libsageattn.so (built
# here with `bash bench/build.sh .device-carry sm_90` and carried), else it is built on the
# machine with bench/build.sh (about a minute). SA_REV names the source revision in the results;
# without it, the build record beside a `sagebuild build` library names it, else the checkout.
# Then bench/dropin_smoke.py on the same library. Results go to
# $OUT: dropin.json, dropin.log, gpu.txt, dropin_smoke.txt and .console (one results.tgz
# instead when there are more than 8 files); the table and summary are printed last.
# Exit status: dropin_check.py's (1 when a correctness check or a smoke case failed), 2 when
# nothing could run.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
OUT=${OUT:-/tmp/sa-dropin}
mkdir -p "$OUT"
lib=${SAGEATTENTION_LIBRARY:-.device-carry/libsageattn.so}
if [ "${1:-}" = "--lib" ]; then
    lib=$2
    shift 2
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv >"$OUT/gpu.txt" 2>&1
if ! python3 -c "import ctypes, sys; ctypes.CDLL(sys.argv[1])" "$lib" 2>"$OUT/load.txt"; then
    echo "library $lib does not load ($(head -c 300 "$OUT/load.txt")): building it here for sm_90"
    if ! bash bench/build.sh /tmp/sa-dropin-build sm_90 >"$OUT/build.txt" 2>&1; then
        tail -n 40 "$OUT/build.txt"
        exit 2
    fi
    lib=/tmp/sa-dropin-build/libsageattn.so
fi
rm -f "$OUT/load.txt"
# The revision: SA_REV, else the source revision `sagebuild build` recorded beside the library
# (BUILD/build-record.json for BUILD/lib/libsageattn.so: the tree the library was built from),
# else this checkout's (which on the GPU machine may be older than the library carried to it).
record=$(dirname "$lib")/../build-record.json
rev=${SA_REV:-$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["source"]["revision"][:12])' \
    "$record" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)}
start=$(date +%s)
# Progress (sections, failures, the speed and memory lines) as it comes; the rest in the log.
python3 bench/dropin_check.py --lib "$lib" --out "$OUT/dropin.json" --rev "$rev" "$@" 2>&1 |
    tee "$OUT/dropin.log" |
    grep --line-buffered -E '^(== |FAIL|compile|stream|comfyui|speed|overhead|memory|import |non-finite)'
rc=${PIPESTATUS[0]}
echo
echo "dropin_check exit $rc after $(($(date +%s) - start)) s (library $lib, revision $rev)" \
    >>"$OUT/dropin.log"
# The smoke test's cases the check does not cover: the non-finite recompute through the
# stream's ring of flags (a flag raised by hand, the warning once the ring wraps), and the
# per-call time with the check on and off. Its lines go to $OUT/dropin_smoke.txt.
smoke_start=$(date +%s)
SAGEATTENTION_LIBRARY=$lib OUT=$OUT timeout 150 python3 bench/dropin_smoke.py \
    >"$OUT/dropin_smoke.console" 2>&1
smoke_rc=$?
grep -E '^(FAIL|dropin smoke)|nonfinite|recomput|warning logged|flag|per-call' \
    "$OUT/dropin_smoke.console" | head -n 30
echo "dropin_smoke exit $smoke_rc after $(($(date +%s) - smoke_start)) s" |
    tee -a "$OUT/dropin.log"
[ "$rc" -eq 0 ] && [ "$smoke_rc" -ne 0 ] && rc=1
# The device tool brings back at most 8 files.
if [ "$(find "$OUT" -type f | wc -l)" -gt 8 ]; then
    tar -C "$OUT" -czf /tmp/sa-dropin-results.tgz . && rm -rf "${OUT:?}"/* &&
        mv /tmp/sa-dropin-results.tgz "$OUT/results.tgz"
    log=$(mktemp) && tar -xzf "$OUT/results.tgz" -O ./dropin.log >"$log"
else
    log=$OUT/dropin.log
fi
# The table and the summary are the log's last part (from the table's header on).
if grep -q "^section " "$log"; then
    sed -n '/^section /,$p' "$log" | tail -n 150
else
    tail -n 80 "$log"
fi
exit "$rc"
