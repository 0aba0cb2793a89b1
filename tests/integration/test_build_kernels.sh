#!/bin/sh
# sagebuild build --arch sm_120a against the real kernels/ with the real nvcc and cmake: the
# contract's files are installed, the record holds the CPU seconds (reported below; the goal is
# <= 120 per arch), a second build is a no-op, and the self-test skips cleanly with no GPU.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-kernels.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/build/lib.sh"
root=$(cd "$here/../.." && pwd)

command -v nvcc > /dev/null 2>&1 || { echo "skipped: no nvcc on PATH"; exit 77; }
command -v cmake > /dev/null 2>&1 || { echo "skipped: no cmake on PATH"; exit 77; }

sandbox_env
export SAGEBUILD_DATADIR=$root
export SAGEBUILD_FAKE_GPUS=none
out=$tmp/sageattn

$SB build --arch sm_120a --out "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 0 ] || fail "build --arch sm_120a: exit $rc: $(tail -n 60 "$tmp/o")"
for f in lib/libsageattn.so include/sageattn.h lib/pkgconfig/sageattn.pc bin/sageattn-selftest \
    build-record.json; do
    [ -e "$out/$f" ] || fail "missing $out/$f"
done
[ "$(json_get "$out/build-record.json" "d['archs']")" = sm_120a ] || fail "record archs"
json_get "$out/build-record.json" "d['nvcc']['command']" | grep -q 'arch=compute_120a,code=sm_120a' ||
    fail "the record's nvcc command lacks the sm_120a gencode: $(cat "$out/build-record.json")"
cpu=$(json_get "$out/build-record.json" "d['time']['cpu_seconds']")
wall=$(json_get "$out/build-record.json" "d['time']['wall_seconds']")
jobs=$(json_get "$out/build-record.json" "d['jobs']")
echo "build --arch sm_120a: $cpu CPU s, $wall s wall, -j$jobs (goal: <= 120 CPU s per arch)"

# Nothing changed: no work, and it says so.
start=$(date +%s)
$SB build --arch sm_120a --out "$out" --json > "$tmp/j" 2>&1
[ "$(json_get "$tmp/j" "d['exit_code'], d['up_to_date']")" = "0 True" ] || fail "second build: $(cat "$tmp/j")"
[ $(($(date +%s) - start)) -lt 20 ] || fail "the no-op build took too long"

# The built self-test on a machine with no GPU: a clean skip.
$SB selftest --build "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 77 ] || fail "selftest with no GPU: exit $rc: $(cat "$tmp/o")"
grep -q '^skipped: no GPU' "$tmp/o" || fail "selftest skip message: $(cat "$tmp/o")"
echo ok
