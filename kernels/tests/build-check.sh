#!/usr/bin/env bash
# kernel-test, GPU-free half: configures and builds libsageattn with the CMake project for each
# arch in KERNEL_TEST_ARCHS (default "sm_90 sm_120a") with the nvcc on PATH, and checks
#   - the CPU seconds of each arch's build (printed; goal <= 120 s per arch),
#   - that a second build does no work,
#   - that ptxas reports no register spills in the hot kernels beyond the known ones listed in
#     tests/spill-budget.txt (cmake/check-spills.sh),
#   - the install tree (library with SONAME, header, sageattn.pc, CMake package, selftest),
#     used from outside by pkg-config and by find_package,
#   - that sageattn-selftest --json, with no GPU, exits 77 with a "skipped" JSON, and that
#     sageattn-refcheck (kernels against the C reference, on a GPU) builds and skips too.
# Exit 0 when all hold; it says SKIP and exits 0 when nvcc, cmake or ninja is missing.
# KERNEL_SPILL_CHECK=warn turns spills in the hot kernels into a warning.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kernels=$(dirname "$here")
out=${KERNEL_BUILD_DIR:-$kernels/build/ci}
archs=${KERNEL_TEST_ARCHS:-sm_90 sm_120a}
hot=${KERNEL_HOT_REGEX:-sa_attn_kernel}
failures=0

fail() {
    echo "kernel-test: FAIL: $*" >&2
    failures=$((failures + 1))
}

for tool in nvcc cmake ninja pkg-config python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "kernel-test: SKIP kernel build: no $tool on PATH"; exit 0; }
done
if ! find "$kernels/src" -name '*.cu' | grep -q .; then
    echo "kernel-test: SKIP kernel build: kernels/src has no CUDA sources yet"
    exit 0
fi
echo "kernel-test: nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(nproc) cores"

check_arch() {
    local arch=$1 b="$out/$1" t cpu
    local prefix="$b/install"
    mkdir -p "$b"
    TIMEFORMAT='%R %U %S'
    t=$( { time cmake -S "$kernels" -B "$b/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DSAGEATTN_ARCHS="$arch" -DSAGEATTN_WERROR=ON -DSAGEATTN_REFCHECK=ON \
        -DCMAKE_INSTALL_PREFIX="$prefix" \
        >"$b/configure.log" 2>&1; } 2>&1 ) || { fail "$arch: configure failed (see $b/configure.log)"; tail -20 "$b/configure.log"; return; }
    echo "kernel-test: $arch: configure wall/user/sys $t s"
    t=$( { time cmake --build "$b/cmake" -j "$(nproc)" >"$b/build.log" 2>&1; } 2>&1 ) ||
        { fail "$arch: build failed (see $b/build.log)"; grep -E "error|FAILED" "$b/build.log" | head -30; return; }
    cpu=$(echo "$t" | awk '{printf "%.1f", $2 + $3}')
    if grep -q "no work to do" "$b/build.log"; then
        echo "kernel-test: $arch: already built (CPU seconds are measured on a fresh build: rm -rf $b)"
    else
        echo "kernel-test: $arch: build CPU seconds $cpu (wall $(echo "$t" | cut -d' ' -f1) s; goal <= 120)"
        echo "$arch $cpu" >>"$out/cpu-seconds.txt"
    fi
    cmake --build "$b/cmake" >"$b/rebuild.log" 2>&1 || fail "$arch: second build failed"
    grep -q "no work to do" "$b/rebuild.log" || { fail "$arch: a second build with nothing changed did work:"; cat "$b/rebuild.log"; }
    echo "kernel-test: $arch: ptxas -v report (hot kernels: /$hot/):"
    local report src
    report=$(sh "$kernels/cmake/check-spills.sh" "$b/cmake/ptxas" "$hot" \
        "$kernels/tests/spill-budget.txt" 2>&1)
    src=$?
    printf '%s\n' "$report" | grep -E "$hot|spill_st=[1-9]|check-spills" | sed 's/^/    /'
    if [ $src != 0 ]; then
        if [ "${KERNEL_SPILL_CHECK:-fail}" = warn ]; then
            echo "kernel-test: $arch: WARNING: hot kernels spill (KERNEL_SPILL_CHECK=warn)"
        else
            fail "$arch: hot kernels spill registers (or no ptxas report)"
        fi
    fi
    cmake --install "$b/cmake" >"$b/install.log" 2>&1 || { fail "$arch: install failed"; return; }
    for f in lib/libsageattn.so include/sageattn.h lib/pkgconfig/sageattn.pc \
        lib/cmake/sageattn/sageattn-config.cmake lib/cmake/sageattn/sageattn-config-version.cmake \
        bin/sageattn-selftest; do
        [ -e "$prefix/$f" ] || fail "$arch: install lacks $f"
    done
    readelf -d "$prefix/lib/libsageattn.so" | grep -q 'SONAME.*libsageattn.so.1' || fail "$arch: no SONAME libsageattn.so.1"
    local exported
    exported=$(nm -D --defined-only "$prefix/lib/libsageattn.so" | awk '$2 == "T" {print $3}' | grep -v '^sageattn_' || true)
    [ -z "$exported" ] || fail "$arch: exports symbols beyond sageattn_*: $(echo $exported | head -c 300)"
    # pkg-config consumer.
    local cflags libs
    cflags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags sageattn) &&
        libs=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs sageattn) &&
        cc -std=c11 -Wall -Wextra -Werror $cflags -o "$b/consumer-pc" "$here/consumer/consumer.c" $libs ||
        fail "$arch: pkg-config consumer did not build"
    "$b/consumer-pc" | grep -qx "abi=1 archs=$arch mode=int8-fp8" || fail "$arch: pkg-config consumer: $("$b/consumer-pc" 2>&1)"
    # Both package files are relocatable: a copied prefix still finds its own library.
    local moved="$b/moved-prefix"
    rm -rf "$moved" && cp -R "$prefix" "$moved"
    [ "$(PKG_CONFIG_PATH="$moved/lib/pkgconfig" pkg-config --variable=libdir sageattn)" -ef "$moved/lib" ] ||
        fail "$arch: sageattn.pc is not relocatable"
    # find_package consumer.
    rm -rf "$b/consumer"
    if cmake -S "$here/consumer" -B "$b/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$moved" >"$b/consumer.log" 2>&1 &&
        cmake --build "$b/consumer" >>"$b/consumer.log" 2>&1; then
        "$b/consumer/consumer" | grep -qx "abi=1 archs=$arch mode=int8-fp8" || fail "$arch: find_package consumer: $("$b/consumer/consumer" 2>&1)"
    else
        fail "$arch: find_package consumer did not build (see $b/consumer.log)"
    fi
    # The self-test with no GPU: exit 77 and a JSON that says why.
    local rc
    timeout 600 "$prefix/bin/sageattn-selftest" --json >"$b/selftest.json" 2>"$b/selftest.err"
    rc=$?
    if [ $rc = 77 ]; then
        python3 "$here/check_selftest_json.py" --expect-skipped "$b/selftest.json" || fail "$arch: selftest JSON"
        echo "kernel-test: $arch: sageattn-selftest skipped cleanly: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["skipped"])' "$b/selftest.json")"
    elif [ $rc = 0 ] || [ $rc = 1 ] || [ $rc = 2 ]; then
        python3 "$here/check_selftest_json.py" "$b/selftest.json" || fail "$arch: selftest JSON"
        echo "kernel-test: $arch: a GPU is present; sageattn-selftest exited $rc"
    else
        fail "$arch: sageattn-selftest exited $rc: $(tail -3 "$b/selftest.err")"
    fi
    # The kernels-vs-reference check (built, not installed) skips cleanly too.
    timeout 600 "$b/cmake/sageattn-refcheck" >"$b/refcheck.log" 2>&1
    rc=$?
    case $rc in
    77 | 0) ;;
    *) fail "$arch: sageattn-refcheck exited $rc: $(tail -3 "$b/refcheck.log")" ;;
    esac
}

rm -f "$out/cpu-seconds.txt"
mkdir -p "$out"
# A request nvcc or the project cannot serve stops at configure time, with the reason.
rm -rf "$out/bad-arch"
if cmake -S "$kernels" -B "$out/bad-arch" -G Ninja -DSAGEATTN_ARCHS="sm_90;sm_75" \
    >"$out/bad-arch.log" 2>&1; then
    fail "configure accepted SAGEATTN_ARCHS=sm_75"
elif ! grep -q "'sm_75' is not supported" "$out/bad-arch.log"; then
    fail "configure refused sm_75 without saying why: $(tail -5 "$out/bad-arch.log")"
fi
# Hopper's pair (what `build --arch native` asks for on a 9.0 GPU): the portable kernels are
# compiled for sm_90 alone, attn_hopper.cu for sm_90a alone (configure only: the flags).
rm -rf "$out/hopper-pair"
if cmake -S "$kernels" -B "$out/hopper-pair" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSAGEATTN_ARCHS="sm_90;sm_90a" >"$out/hopper-pair.log" 2>&1; then
    ninja_file="$out/hopper-pair/build.ninja"
    flags_of() { awk -v src="$1" '$1 == "build" && index($2, src ".o:") { f = 1; next }
                                  f && /FLAGS =/ { print; exit }' "$ninja_file"; }
    portable=$(flags_of "/src/attn/attn_int8_fp16.cu")
    hopper=$(flags_of "/src/attn/attn_hopper.cu")
    case $portable in *"code=sm_90 "*) ;; *) fail "sm_90;sm_90a: a portable kernel lacks sm_90: $portable" ;; esac
    case $portable in *compute_90a*) fail "sm_90;sm_90a: a portable kernel is compiled for sm_90a too: $portable" ;; esac
    case $hopper in *"code=sm_90a"*) ;; *) fail "sm_90;sm_90a: attn_hopper.cu lacks sm_90a: $hopper" ;; esac
else
    fail "configure of sm_90;sm_90a failed: $(tail -5 "$out/hopper-pair.log")"
fi
for arch in $archs; do
    check_arch "$arch"
done
if [ $failures -gt 0 ]; then
    echo "kernel-test: kernel build checks: $failures failed"
    exit 1
fi
echo "kernel-test: kernel build checks passed ($archs)"
