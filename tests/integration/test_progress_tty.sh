#!/bin/sh
# Long steps give feedback on a terminal and only there: `build` and `all` show one updating line
# with the [n/N] step, the file and the time, while CMake's and the compilers' output (ptxas'
# summaries included) is kept whole in <out>/build.log; logs and --json carry none of the line.
# The terminal is script(1)'s pseudo-terminal.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sb-tty.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/build/lib.sh"
sandbox_env
if ! command -v script > /dev/null 2>&1; then
    echo "needs script(1) (util-linux; share/dev/ensure-deps.sh --test installs it)"
    exit 77
fi
export SAGEBUILD_FAKE_GPUS=none
bin=$tmp/bin
mk_cmake "$bin"
mk_toolkit "$tmp/cuda" 12.8 12.8.93 99 "75 80 86 89 90 100 120"
mk_kernels "$tmp/share"
# what ninja prints while nvcc compiles, ptxas' summaries between the steps
{
    for i in 1 2 3; do
        echo "[$i/3] Building CUDA object CMakeFiles/sageattn.dir/src/attn/kernel_$i.cu.o"
        echo "ptxas info    : Compiling entry function '_Z6kernelv' for 'sm_120a'"
        echo "ptxas info    : Used 128 registers, 0 bytes spill stores"
    done
} > "$tmp/ninja-output"
export SAGEBUILD_DATADIR=$tmp/share FAKE_CMAKE_BUILD_OUTPUT=$tmp/ninja-output FAKE_CMAKE_BUILD_SLEEP=1
export FAKE_SELFTEST=skip
out=$tmp/out
esc=$(printf '\033')
on_tty() { script -qec "PATH='$bin:$PATH' $*" /dev/null < /dev/null; }

# 1. build on a terminal: the live line, no raw output, the whole output in build.log.
on_tty "$SB build --arch sm_120a --cuda-home '$tmp/cuda' --out '$out'" > "$tmp/o" 2>&1 ||
    fail "build on a terminal: $(cat "$tmp/o")"
grep -q 'compile \[3/3\] src/attn/kernel_3.cu  0:0' "$tmp/o" || fail "no progress line: $(cat -v "$tmp/o")"
grep -q "${esc}\[K" "$tmp/o" || fail "the progress line does not update in place"
grep -q 'ptxas info' "$tmp/o" && fail "raw compiler output on the terminal: $(cat -v "$tmp/o")"
[ "$(grep -c 'ptxas info' "$out/build.log")" = 6 ] || fail "build.log lacks the compiler output: $(cat "$out/build.log")"
grep -q "built $out for sm_120a" "$tmp/o" || fail "build result: $(cat -v "$tmp/o")"
# ptxas' reports: one line for a person, a summary in the record
grep -q "ptxas: 3 kernels, at most 128 registers; no spills" "$tmp/o" || fail "ptxas line: $(cat -v "$tmp/o")"
[ "$(json_get "$out/build-record.json" "d['ptxas']['kernels'], d['ptxas']['max_registers']")" = "3 128" ] ||
    fail "ptxas in the record: $(cat "$out/build-record.json")"

# 2. -v shows the output as it runs instead.
on_tty "$SB build --arch sm_120a --cuda-home '$tmp/cuda' --out '$out' --force -v" > "$tmp/o" 2>&1 ||
    fail "build -v: $(cat "$tmp/o")"
grep -q 'ptxas info' "$tmp/o" || fail "-v shows the output: $(cat -v "$tmp/o")"

# 3. Not a terminal, or --json: no progress line, nothing but lines.
PATH="$bin:$PATH" $SB build --arch sm_120a --cuda-home "$tmp/cuda" --out "$out" --force > "$tmp/o" 2>&1 ||
    fail "build to a file: $(cat "$tmp/o")"
grep -q "${esc}\|$(printf '\r')" "$tmp/o" && fail "control characters in a log: $(cat -v "$tmp/o")"
grep -q 'ptxas info' "$out/build.log" || fail "build.log (not a terminal)"
on_tty "$SB build --arch sm_120a --cuda-home '$tmp/cuda' --out '$out' --force --json" > "$tmp/j" 2>&1 ||
    fail "build --json on a terminal: $(cat "$tmp/j")"
grep -q "${esc}" "$tmp/j" && fail "--json on a terminal carries the progress line: $(cat -v "$tmp/j")"
tr -d '\r' < "$tmp/j" | python3 -c 'import json, sys; json.load(sys.stdin)' || fail "--json: $(cat -v "$tmp/j")"

# 4. all on a terminal: the build stage's live line; in a log a plain line with the real paths.
if command -v nvcc > /dev/null 2>&1; then
    on_tty "$SB all --arch sm_120a --out '$out'" > "$tmp/o" 2>&1
    grep -q '  \.\.\.  build sm_120a \[[123]/3\] src/attn/kernel_[123].cu  0:0' "$tmp/o" ||
        fail "all: no live build line: $(cat -v "$tmp/o")"
    grep -q 'ptxas info' "$tmp/o" && fail "all: raw compiler output: $(cat -v "$tmp/o")"
    PATH="$bin:$PATH" $SB all --arch sm_120a --out "$out" > "$tmp/o" 2>&1
    grep -q "${esc}\|$(printf '\r')" "$tmp/o" && fail "all in a log: control characters: $(cat -v "$tmp/o")"
    grep -q "  \.\.\.  build: sm_120a into $out (log: $out/build.log)" "$tmp/o" || fail "all in a log: $(cat "$tmp/o")"
    grep -q 'compiling' "$tmp/o" && fail "all says compiling for an up-to-date build: $(cat "$tmp/o")"
    grep -q 'up to date' "$tmp/o" || fail "all: the up-to-date build: $(cat "$tmp/o")"
    on_tty "$SB all --arch sm_120a --out '$out' --json" > "$tmp/j" 2>&1
    grep -q "${esc}" "$tmp/j" && fail "all --json on a terminal carries the progress line"
else
    echo "no nvcc on PATH: the all part is not run"
fi
echo ok
