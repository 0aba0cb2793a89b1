#!/bin/sh
# `build --force` compiles everything again (with CMake and ninja, a kept build folder would
# leave ninja nothing to do), and a build that compiles nothing (the installed files went
# missing, or an input that does not change the compile did) keeps the record and the log of
# the build that made the files instead of replacing them with its own empty ones.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-force.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/build/lib.sh"
sandbox_env
if ! command -v cmake > /dev/null 2>&1 || ! command -v ninja > /dev/null 2>&1 ||
    ! command -v cc > /dev/null 2>&1; then
    echo "needs cmake, ninja and a C compiler (share/dev/ensure-deps.sh --test installs them)"
    exit 77
fi
mk_toolkit "$tmp/cuda" 12.8 12.8.93 99 "75 80 86 89 90 100 120"
# A real CMake project standing in for the kernels: one C file, installed like the real ones.
k=$tmp/share/kernels
mkdir -p "$k/include"
cat > "$k/CMakeLists.txt" << 'EOS'
cmake_minimum_required(VERSION 3.16)
project(fakekernels C)
add_library(sageattn SHARED k.c)
install(TARGETS sageattn LIBRARY DESTINATION lib)
install(FILES include/sageattn.h DESTINATION include)
install(FILES sageattn.pc DESTINATION lib/pkgconfig)
install(PROGRAMS selftest.sh DESTINATION bin RENAME sageattn-selftest)
EOS
echo 'int sa_fake(void) { return 1; }' > "$k/k.c"
: > "$k/include/sageattn.h"
: > "$k/sageattn.pc"
printf '#!/bin/sh\nexit 77\n' > "$k/selftest.sh"
export SAGEBUILD_DATADIR=$tmp/share
out=$tmp/out
build() { $SB build --arch sm_120a --cuda-home "$tmp/cuda" --out "$out" "$@"; }
field() { json_get "$out/build-record.json" "d$1"; }

build > "$tmp/o" 2>&1 || fail "first build: $(cat "$tmp/o")"
grep -q 'Building C object' "$out/build.log" || fail "first build compiled nothing: $(cat "$out/build.log")"
first_at=$(field "['finished_at']")
cp "$out/build-record.json" "$tmp/record1"
cp "$out/build.log" "$tmp/log1"

# 1. --force compiles again, from a clean build folder.
sleep 1 # finished_at has one-second resolution
build --force --json > "$tmp/j" 2>&1 || fail "--force: $(cat "$tmp/j")"
grep -q 'Building C object' "$out/build.log" || fail "--force compiled nothing: $(cat "$out/build.log")"
grep -q 'no work to do' "$out/build.log" && fail "--force: ninja had no work: $(cat "$out/build.log")"
[ "$(json_get "$tmp/j" "d['compiled'], d['up_to_date']")" = "True False" ] || fail "--force JSON: $(cat "$tmp/j")"
[ "$(field "['finished_at']")" != "$first_at" ] || fail "--force did not write a new record"
cp "$out/build-record.json" "$tmp/record2"
cp "$out/build.log" "$tmp/log2"

# 2. The installed library went missing: installed again, but nothing compiles, so the record
#    and log stay those of the real build.
rm "$out/lib/libsageattn.so"
build --json > "$tmp/j" 2>&1 || fail "reinstall: $(cat "$tmp/j")"
[ -e "$out/lib/libsageattn.so" ] || fail "the missing library was not installed again"
[ "$(json_get "$tmp/j" "d['compiled'], d['up_to_date']")" = "False True" ] || fail "no-op JSON: $(cat "$tmp/j")"
cmp -s "$out/build.log" "$tmp/log2" || fail "a build that compiled nothing replaced build.log: $(cat "$out/build.log")"
for f in "['finished_at']" "['time']['cpu_seconds']" "['time']['wall_seconds']" "['nvcc']['command']"; do
    [ "$(field "$f")" = "$(json_get "$tmp/record2" "d$f")" ] ||
        fail "a no-op build replaced the record's $f: $(cat "$out/build-record.json")"
done
json_get "$tmp/j" "d['notes']" | grep -q 'nothing needed compiling' || fail "no-op note: $(cat "$tmp/j")"
build > "$tmp/o" 2>&1 || fail "after the reinstall: $(cat "$tmp/o")"
grep -q 'up to date' "$tmp/o" || fail "after the reinstall the build is up to date: $(cat "$tmp/o")"
echo ok
