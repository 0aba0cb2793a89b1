#!/bin/sh
# sagebuild build's choices, with a fake toolkit, compilers and cmake: archs an nvcc cannot build
# are refused before anything runs; a host compiler too new for nvcc's host_config.h is replaced
# by a fitting g++-N; a second build with nothing changed does no work.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/build/lib.sh"
sandbox_env

bin=$tmp/bin
mk_cmake "$bin"
mk_compiler "$bin" g++ 14.1.0      # the default: too new for the fake nvcc below
mk_compiler "$bin" gcc-11 11.4.0   # a fitting pair
mk_compiler "$bin" g++-11 11.4.0
mk_compiler "$bin" gcc-9 9.5.0     # fits too, but older
mk_compiler "$bin" g++-9 9.5.0
export PATH="$bin:$PATH"
mk_toolkit "$tmp/cuda-12.6" 12.6 12.6.85 11 "50 60 70 75 80 86 87 89 90"
mk_toolkit "$tmp/cuda-12.8" 12.8 12.8.93 11 "75 80 86 87 89 90 100 101 120"
mk_kernels "$tmp/share"
export SAGEBUILD_DATADIR=$tmp/share
export FAKE_CMAKE_LOG=$tmp/cmake.log
out=$tmp/out

# 1. nvcc 12.6 cannot build sm_120a: refused before cmake runs, with the toolkit to fetch.
$SB build --arch sm_90,sm_120a --cuda-home "$tmp/cuda-12.6" --out "$out" > "$tmp/o" 2>&1
rc=$?
[ $rc = 2 ] || fail "refusal: exit $rc: $(cat "$tmp/o")"
grep -q 'sm_120a needs nvcc >= 12.8; this nvcc is 12.6' "$tmp/o" || fail "refusal reason: $(cat "$tmp/o")"
grep -q 'sagebuild fetch-cuda --cuda 12.8' "$tmp/o" || fail "refusal fix: $(cat "$tmp/o")"
grep -q -- '--arch sm_90' "$tmp/o" || fail "refusal must offer the buildable archs"
[ -e "$FAKE_CMAKE_LOG" ] && fail "cmake ran for a refused arch: $(cat "$FAKE_CMAKE_LOG")"
# the kernels' own gate: FP8 mma on sm_89 needs 12.4, --json carries the fix
$SB build --arch sm_121a --cuda-home "$tmp/cuda-12.8" --out "$out" --json > "$tmp/j" 2>&1
[ "$(json_get "$tmp/j" "d['status'], d['exit_code'], 'fetch-cuda --cuda 12.9' in d['error']['fix']")" = "error 2 True" ] ||
    fail "sm_121a on 12.8: $(cat "$tmp/j")"
$SB build --arch sm_75 --cuda-home "$tmp/cuda-12.8" --out "$out" > "$tmp/o" 2>&1
[ $? = 64 ] || fail "an arch the kernels do not know is a usage error"
grep -q "unknown or unsupported arch 'sm_75'" "$tmp/o" || fail "unknown arch message"

# 2. g++ 14 is newer than host_config.h allows (11): g++-11 is chosen and handed to CMake.
$SB build --arch sm_120a --cuda-home "$tmp/cuda-12.8" --out "$out" --head-dims 128 > "$tmp/o" 2>&1
rc=$?
[ $rc = 0 ] || fail "build: exit $rc: $(cat "$tmp/o")"
grep -q "newer than nvcc 12.8 accepts (gcc <= 11); using $bin/g++-11" "$tmp/o" || fail "host note: $(cat "$tmp/o")"
grep -q -- "-DCMAKE_CUDA_HOST_COMPILER=$bin/g++-11" "$FAKE_CMAKE_LOG" || fail "cmake host compiler: $(cat "$FAKE_CMAKE_LOG")"
grep -q -- "-DCMAKE_CUDA_COMPILER=$tmp/cuda-12.8/bin/nvcc" "$FAKE_CMAKE_LOG" || fail "cmake nvcc"
grep -q -- "-DSAGEATTN_ARCHS=sm_120a -DSAGEATTN_HEAD_DIMS=128" "$FAKE_CMAKE_LOG" || fail "archs/head dims: $(cat "$FAKE_CMAKE_LOG")"
grep -q -- "--build $out/cmake-build -j" "$FAKE_CMAKE_LOG" || fail "cmake --build"
grep -q -- "--install $out/cmake-build" "$FAKE_CMAKE_LOG" || fail "cmake --install"
[ "$(json_get "$out/build-record.json" "d['archs'], d['host_compiler']['path'], d['nvcc']['version'], d['cuda_home']['chosen_by']")" = \
    "sm_120a $bin/g++-11 12.8.93 --cuda-home" ] || fail "record: $(cat "$out/build-record.json")"
grep -q 'fake compile' "$out/build.log" || fail "build output kept in build.log"

# 3. Nothing changed: no cmake call at all, and it says so.
work_calls() { grep -cv -- '^--version' "$FAKE_CMAKE_LOG"; }
calls=$(work_calls)
$SB build --arch sm_120a --cuda-home "$tmp/cuda-12.8" --out "$out" --head-dims 128 > "$tmp/o" 2>&1
[ $? = 0 ] || fail "second build: $(cat "$tmp/o")"
grep -q 'up to date' "$tmp/o" || fail "second build must say up to date: $(cat "$tmp/o")"
[ "$(work_calls)" = "$calls" ] || fail "a no-op build ran cmake: $(cat "$FAKE_CMAKE_LOG")"
$SB build --arch sm_120a --cuda-home "$tmp/cuda-12.8" --out "$out" --head-dims 128 --json > "$tmp/j"
[ "$(json_get "$tmp/j" "d['up_to_date'], d['reason']")" = "True nothing changed" ] || fail "up-to-date JSON"

# 4. A changed source or a changed arch list builds again, saying why.
echo "// changed" >> "$tmp/share/kernels/src/a.cu"
$SB build --arch sm_120a --cuda-home "$tmp/cuda-12.8" --out "$out" --head-dims 128 --json > "$tmp/j"
[ "$(json_get "$tmp/j" "d['up_to_date'], d['reason']")" = "False the kernel sources changed" ] || fail "source change: $(cat "$tmp/j")"
$SB build --arch sm_90,sm_120a --cuda-home "$tmp/cuda-12.8" --out "$out" --head-dims 128 --json > "$tmp/j"
[ "$(json_get "$tmp/j" "d['reason']")" = "archs changed (sm_120a -> sm_90,sm_120a)" ] || fail "arch change: $(cat "$tmp/j")"

# 5. An explicit --host-cc that is too new is refused, naming the one that fits.
$SB build --arch sm_120a --cuda-home "$tmp/cuda-12.8" --out "$out" --host-cc g++ > "$tmp/o" 2>&1
[ $? = 2 ] || fail "--host-cc too new must fail"
grep -q 'too new' "$tmp/o" && grep -q -- '--host-cc g++-11' "$tmp/o" || fail "--host-cc fix: $(cat "$tmp/o")"

# 5b. Another host compiler: the CMake cache made with the first one is started afresh.
$SB build --arch sm_90,sm_120a --cuda-home "$tmp/cuda-12.8" --out "$out" --head-dims 128 --host-cc g++-9 > "$tmp/o" 2>&1 ||
    fail "build with another host compiler: $(cat "$tmp/o")"
grep -q "host compiler changed ($bin/g++-11 -> $bin/g++-9): starting from a fresh $out/cmake-build" "$tmp/o" ||
    fail "stale cache note: $(cat "$tmp/o")"

# 6. A failing compile: exit 2, the log's tail shown; the installed files and their record stay
#    those of the last build (nothing was installed), so they are not mistaken for this one.
cp "$out/build-record.json" "$tmp/record-before"
FAKE_CMAKE_BUILD_RC=1 $SB build --arch sm_120a --cuda-home "$tmp/cuda-12.8" --out "$out" --force > "$tmp/o" 2>&1
[ $? = 2 ] || fail "failed compile must exit 2"
grep -q 'compile exited with status 1' "$tmp/o" && grep -q 'fake compile' "$tmp/o" || fail "failure report: $(cat "$tmp/o")"
cmp -s "$out/build-record.json" "$tmp/record-before" || fail "a failed compile changed the record"
grep -q 'compile exited\|fake compile' "$out/build.log" || fail "the failure's log is kept in build.log"
$SB build --arch sm_120a --cuda-home "$tmp/cuda-12.8" --out "$out" > "$tmp/o" 2>&1 || fail "rebuild after a failure"
grep -q 'up to date' "$tmp/o" && fail "the failed build's inputs look up to date: $(cat "$tmp/o")"

# 7. A fetched toolkit is preferred over PATH/CUDA_HOME when no --cuda-home is given.
mkdir -p "$XDG_DATA_HOME/sagebuild"
mk_toolkit "$XDG_DATA_HOME/sagebuild/cuda-12.8.1" 12.8 12.8.61 11 "75 80 86 89 90 100 120"
mk_toolkit "$XDG_DATA_HOME/sagebuild/cuda-12.6.3" 12.6 12.6.85 11 "75 80 86 89 90"
CUDA_HOME=$tmp/cuda-12.6 $SB build --arch sm_120a --out "$out" --json > "$tmp/j" 2>&1
[ "$(json_get "$tmp/j" "d['record']['cuda_home']['chosen_by'], d['record']['nvcc']['version']")" = "fetched toolkit 12.8.61" ] ||
    fail "fetched toolkit: $(cat "$tmp/j")"
# 7b. With torch built for CUDA 12.6, the fetched toolkit matching it wins over the newer one,
#     for build and env alike (toolchain/toolkit.h says why).
mkdir -p "$tmp/site/torch"
: > "$tmp/site/torch/__init__.py"
printf "__version__ = '2.6.0+cu126'\ncuda = '12.6'\n" > "$tmp/site/torch/version.py"
PYTHONPATH=$tmp/site $SB build --arch sm_90 --out "$tmp/out126" > "$tmp/o" 2>&1 || fail "build for torch 12.6: $(cat "$tmp/o")"
[ "$(json_get "$tmp/out126/build-record.json" "d['cuda_home']['chosen_by'], d['nvcc']['version']")" = "fetched toolkit 12.6.85" ] ||
    fail "the toolkit matching torch: $(cat "$tmp/out126/build-record.json")"
grep -q "CUDA toolkit: $XDG_DATA_HOME/sagebuild/cuda-12.6.3, the fetched toolkit matching torch's CUDA" "$tmp/o" ||
    fail "build must say which fetched toolkit and why: $(cat "$tmp/o")"
PYTHONPATH=$tmp/site $SB env --json > "$tmp/j" 2> /dev/null
[ "$(json_get "$tmp/j" "d['prefix'], d['found_by']")" = "$XDG_DATA_HOME/sagebuild/cuda-12.6.3 fetched toolkit" ] ||
    fail "env must point at the same toolkit as build: $(cat "$tmp/j")"

# 8. A relative --out is made absolute for CMake.
(cd "$tmp" && $SB build --arch sm_120a --cuda-home "$tmp/cuda-12.8" --out rel > "$tmp/o" 2>&1) ||
    fail "relative --out: $(cat "$tmp/o")"
grep -q -- "-DCMAKE_INSTALL_PREFIX=$(cd "$tmp" && pwd -P)/rel" "$FAKE_CMAKE_LOG" || fail "relative --out prefix"
[ -f "$tmp/rel/build-record.json" ] || fail "relative --out record"

# 9. Two builds into one folder: the second is turned away while the first holds the lock.
if command -v flock > /dev/null 2>&1; then
    flock "$out/.build.lock" sleep 5 &
    holder=$!
    sleep 0.5
    $SB build --arch sm_120a --cuda-home "$tmp/cuda-12.8" --out "$out" --force > "$tmp/o" 2>&1
    rc=$?
    kill "$holder" 2> /dev/null
    wait "$holder" 2> /dev/null
    [ $rc = 2 ] || fail "a locked output folder: exit $rc"
    grep -q 'another sagebuild build is using' "$tmp/o" || fail "lock message: $(cat "$tmp/o")"
fi

# 10. The default --arch native: the GPUs present, or a clear stop without one.
SAGEBUILD_FAKE_GPUS="580.65.06;NVIDIA GeForce RTX 5090:12.0;NVIDIA H200:9.0" \
    $SB build --cuda-home "$tmp/cuda-12.8" --out "$tmp/native" --json > "$tmp/j" 2>&1
[ "$(json_get "$tmp/j" "d['status'], d['record']['archs']")" = "ok sm_90,sm_90a,sm_120a" ] || fail "native: $(cat "$tmp/j")"
SAGEBUILD_FAKE_GPUS=none $SB build --cuda-home "$tmp/cuda-12.8" --out "$tmp/native" > "$tmp/o" 2>&1
[ $? = 2 ] || fail "native with no GPU must exit 2"
grep -q 'no NVIDIA GPU was found' "$tmp/o" && grep -q 'fix: sagebuild build --arch sm_120a' "$tmp/o" ||
    fail "native with no GPU: $(cat "$tmp/o")"

# 11. Usage.
$SB build --jobs 0 > /dev/null 2>&1
[ $? = 64 ] || fail "--jobs 0"
$SB build --head-dims 96 --arch sm_90 > /dev/null 2>&1
[ $? = 64 ] || fail "--head-dims 96"
$SB build --help | grep -q -- '--arch LIST' || fail "--help"
echo ok
