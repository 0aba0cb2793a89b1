#!/usr/bin/env bash
# kernel-sass-test (issue 9): compiles every mode's kernels (attn_<mode>.cu) for sm_120a, sm_89 and
# sm_90 (KERNEL_SASS_ARCHS overrides) with the nvcc on PATH, disassembles them with nvdisasm, and
#   - checks the instruction of each mode's P·V main loop (kernels/tests/check_pv_sass.py): the
#     block-scaled QMMA.SF for int8-fp8-bs on sm_120a, QMMA.16832.F16.E4M3.E4M3 for
#     int8-fp8-f16acc, HMMA.16816.F16 for int8-fp16-f16acc, INT8 Q·Kᵀ everywhere, and no
#     half-rate tensor instruction (FP32 accumulator) left in those loops;
#   - checks that the checker fails on a listing whose P·V is the half-rate form (it has teeth);
#   - compiles int8-fp8-wgmma's sm_90a kernels (attn_hopper.cu, both forms) and checks their key
#     loops: INT8 and E4M3 wgmma, no spills, setmaxnreg (kernels/tests/check_hopper_sass.py);
#   - checks ptxas's spills of these kernels against tests/spill-budget.txt (the ratchet);
#   - compiles the software-pipelined loop (SA_PIPE_QK=4, 16 rows per warp) for sm_90: no spills,
#     and tile j+1's IMMA interleaved with tile j's exponentials (bench/sass_overlap.py);
#   - runs the throughput model (bench/model_throughput.py) on these listings: its H200
#     validation error must stay within 15 %; its RTX 5090/4090 predictions are printed and kept
#     in build/kernels/sass/model.txt.
# nvdisasm: $NVDISASM, else on PATH or beside nvcc, else PyPI's nvidia-cuda-nvdisasm installed
# into the build folder with pip. SKIP (exit 0) without nvcc; without nvdisasm too, except in CI
# (CI=true), where that is a failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kernels=$(dirname "$here")
root=$(dirname "$kernels")
out=${KERNEL_SASS_DIR:-$root/build/kernels/sass}
archs=${KERNEL_SASS_ARCHS:-sm_120a sm_89 sm_90}
modes="fp16 int8_fp16 int8_fp8 int8_fp8_bs int8_fp8_f16acc int8_fp16_f16acc"
failures=0
fail() {
    echo "kernel-sass-test: FAIL: $*" >&2
    failures=$((failures + 1))
}

command -v nvcc >/dev/null 2>&1 || { echo "kernel-sass-test: SKIP: no nvcc on PATH"; exit 0; }
mkdir -p "$out"
find_nvdisasm() {
    if [ -n "${NVDISASM:-}" ] && [ -x "$NVDISASM" ]; then echo "$NVDISASM"; return 0; fi
    local p
    for p in "$(command -v nvdisasm 2>/dev/null)" "$(dirname "$(command -v nvcc)")/nvdisasm" \
        "$out/tools/nvidia/cu13/bin/nvdisasm"; do
        [ -n "$p" ] && [ -x "$p" ] && { echo "$p"; return 0; }
    done
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$out/tools" \
        nvidia-cuda-nvdisasm >"$out/pip.log" 2>&1 || return 1
    p=$(find "$out/tools" -name nvdisasm -type f | head -1)
    [ -n "$p" ] && chmod +x "$p" && echo "$p"
}
nvdisasm=$(find_nvdisasm)
if [ -z "$nvdisasm" ]; then
    if [ "${CI:-}" = true ]; then
        echo "kernel-sass-test: FAIL: no nvdisasm (pip install nvidia-cuda-nvdisasm failed: $(tail -2 "$out/pip.log"))" >&2
        exit 1
    fi
    echo "kernel-sass-test: SKIP: no nvdisasm on PATH or beside nvcc, and pip could not install nvidia-cuda-nvdisasm"
    exit 0
fi
echo "kernel-sass-test: nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $("$nvdisasm" --version | sed -n 's/.*release \([0-9.]*\).*/nvdisasm \1/p')"

args=()
model_args=()
for arch in $archs; do
    d="$out/$arch"
    rm -rf "$d" && mkdir -p "$d/ptxas"
    for m in $modes; do
        # The library's own flags (CMakeLists.txt, Release): the same SASS as the shipped build.
        if ! nice -n 10 nvcc -O3 -DNDEBUG -std=c++17 -cubin -Xptxas=-v \
            -gencode="arch=compute_${arch#sm_},code=$arch" -I"$kernels/src" -I"$kernels/include" \
            -DSA_WITH_D64=1 -DSA_WITH_D128=1 -Xcompiler=-Wall,-Wextra -Werror=all-warnings \
            -o "$d/$m.cubin" "$kernels/src/attn/attn_$m.cu" >"$d/ptxas/$m.log" 2>&1; then
            fail "$arch attn_$m.cu did not compile:"; tail -20 "$d/ptxas/$m.log" >&2
            continue
        fi
        "$nvdisasm" "$d/$m.cubin" >>"$d/listing.sass" 2>"$d/nvdisasm.err" ||
            fail "$arch: nvdisasm $m.cubin: $(tail -2 "$d/nvdisasm.err")"
    done
    case $arch in sm_120a | sm_121a | sm_89) args+=("$arch" "$d/listing.sass") ;; esac
    model_args+=(--sass "$arch=$d/listing.sass")
    report=$(sh "$kernels/cmake/check-spills.sh" "$d/ptxas" sa_attn_kernel "$here/spill-budget.txt" 2>&1) ||
        { fail "$arch: spills beyond tests/spill-budget.txt:"; printf '%s\n' "$report" | grep -E "check-spills|  " >&2; }
done
if [ ${#args[@]} -gt 0 ]; then
    python3 "$here/check_pv_sass.py" "${args[@]}" || fail "P·V instructions (above)"
fi
if [[ " $archs " == *" sm_90 "* ]]; then
    if python3 "$root/bench/model_throughput.py" --check-validation "${model_args[@]}" >"$out/model.txt" 2>&1; then
        grep -E "worst validation|fastest mode|^model:" "$out/model.txt" | sed 's/^ */kernel-sass-test: /'
    else
        fail "throughput model (bench/model_throughput.py):"; cat "$out/model.txt" >&2
    fi
fi

# The software-pipelined loop (SA_PIPE_QK, a build switch, off by default; bench/NOTES.md v10) in
# the form the H200 measured (16 query rows per warp, one block per SM): int8-fp16 compiles for
# sm_90 without spills, and ptxas interleaves tile j+1's IMMA with tile j's exponentials
# (bench/sass_overlap.py); the plain loop's listing must fail the same check (teeth).
if [[ " $archs " == *" sm_90 "* ]]; then
    d="$out/pipe"
    rm -rf "$d" && mkdir -p "$d/ptxas"
    if nice -n 10 nvcc -O3 -DNDEBUG -std=c++17 -cubin -Xptxas=-v -gencode=arch=compute_90,code=sm_90 \
        -I"$kernels/src" -I"$kernels/include" -DSA_WITH_D64=1 -DSA_WITH_D128=1 -DSA_WARP_Q=16 \
        -DSA_MIN_BLOCKS=1 -DSA_MIN_BLOCKS_D64=1 -DSA_PIPE_QK=4 -Xcompiler=-Wall,-Wextra \
        -Werror=all-warnings -o "$d/pipe.cubin" "$kernels/src/attn/attn_int8_fp16.cu" \
        >"$d/ptxas/pipe.log" 2>&1; then
        sh "$kernels/cmake/check-spills.sh" "$d/ptxas" sa_attn_kernel >"$d/spills.txt" 2>&1 ||
            { fail "sm_90 SA_PIPE_QK=4 int8-fp16 spills:"; cat "$d/spills.txt" >&2; }
        "$nvdisasm" "$d/pipe.cubin" >"$d/pipe.sass" 2>"$d/nvdisasm.err" ||
            fail "nvdisasm pipe.cubin: $(tail -2 "$d/nvdisasm.err")"
        if python3 "$root/bench/sass_overlap.py" "$d/pipe.sass" --kernel 'int8-fp16 D=128 fp16' \
            --require-interleaved 16 >"$d/overlap.txt" 2>&1; then
            echo "kernel-sass-test: SA_PIPE_QK=4 (sm_90, 16 rows per warp): $(head -n 1 "$d/overlap.txt" | tr -s ' ')"
        else
            fail "SA_PIPE_QK=4: the next tile's IMMA are not interleaved with the exponentials:"
            cat "$d/overlap.txt" >&2
        fi
        python3 "$root/bench/sass_overlap.py" "$out/sm_90/listing.sass" --kernel 'int8-fp16 D=128 fp16' \
            --require-interleaved 16 >"$d/teeth.txt" 2>&1 &&
            fail "sass_overlap.py accepted the plain loop as interleaved"
    else
        fail "sm_90 attn_int8_fp16.cu with SA_PIPE_QK=4 did not compile:"; tail -20 "$d/ptxas/pipe.log" >&2
    fi
fi

# Teeth: sm_120a's listing with int8-fp8's kernels relabelled as int8-fp8-bs (their P·V is the
# half-rate QMMA.F32; the real int8-fp8-bs kernels renamed out of the way) must fail the check.
if [ -s "$out/sm_120a/listing.sass" ]; then
    sed -e 's/_Z14sa_attn_kernelILi3E/_Z14sa_attn_kernelILi9E/' \
        -e 's/_Z14sa_attn_kernelILi2E/_Z14sa_attn_kernelILi3E/' \
        "$out/sm_120a/listing.sass" >"$out/relabelled.sass"
    if python3 "$here/check_pv_sass.py" sm_120a "$out/relabelled.sass" >"$out/teeth.log" 2>&1; then
        fail "the checker accepted int8-fp8's half-rate loop labelled as int8-fp8-bs"
    elif ! grep -q "int8-fp8-bs D=128.*QMMA.SF.*want 64" "$out/teeth.log"; then
        fail "the checker failed the relabelled listing for another reason: $(grep FAIL "$out/teeth.log" | head -3)"
    else
        echo "kernel-sass-test: the checker rejects a half-rate P·V labelled int8-fp8-bs (as it must)"
    fi
fi

# int8-fp8-wgmma (issue 13): attn_hopper.cu for sm_90a in both forms (SA_H_WS=0: one warpgroup
# per block; 1: warp-specialized): INT8 and E4M3 wgmma in the key loop, no spills, and the
# warp-specialized kernel's setmaxnreg; the checker must reject a listing whose P·V is not E4M3.
d="$out/sm_90a"
rm -rf "$d" && mkdir -p "$d"
for ws in 0 1; do
    if ! nice -n 10 nvcc -O3 -DNDEBUG -std=c++17 -cubin -Xptxas=-v \
        -gencode=arch=compute_90a,code=sm_90a -I"$kernels/src" -I"$kernels/include" \
        -DSA_WITH_D64=1 -DSA_WITH_D128=1 -DSA_WITH_HOPPER=1 -DSA_H_WS=$ws \
        -Xcompiler=-Wall,-Wextra -Werror=all-warnings \
        -o "$d/hopper$ws.cubin" "$kernels/src/attn/attn_hopper.cu" >"$d/hopper$ws.log" 2>&1; then
        fail "sm_90a attn_hopper.cu (SA_H_WS=$ws) did not compile:"; tail -20 "$d/hopper$ws.log" >&2
        continue
    fi
    grep -E "spill stores" "$d/hopper$ws.log" | grep -v " 0 bytes spill stores, 0 bytes spill loads" &&
        fail "sm_90a attn_hopper.cu (SA_H_WS=$ws) spills (ptxas, above)"
    "$nvdisasm" "$d/hopper$ws.cubin" >"$d/hopper$ws.sass" 2>"$d/nvdisasm.err" ||
        fail "sm_90a: nvdisasm hopper$ws.cubin: $(tail -2 "$d/nvdisasm.err")"
done
if python3 "$here/check_hopper_sass.py" "$d"/hopper*.sass >"$d/check.log" 2>&1; then
    echo "kernel-sass-test: sm_90a int8-fp8-wgmma: IGMMA (INT8) and QGMMA (E4M3, FP32) in every key loop, no spills"
else
    fail "sm_90a int8-fp8-wgmma SASS:"; grep FAIL "$d/check.log" >&2
fi
if [ -s "$d/hopper1.sass" ]; then
    sed 's/QGMMA\.64x\([0-9]*\)x32\.F32\.E4M3\.E4M3/HGMMA.64x\1x16.F32.F16/' "$d/hopper1.sass" >"$d/teeth.sass"
    python3 "$here/check_hopper_sass.py" "$d/teeth.sass" >"$d/teeth.log" 2>&1 &&
        fail "the Hopper checker accepted a listing whose P·V is FP16 (HGMMA)"
fi

if [ $failures -gt 0 ]; then
    echo "kernel-sass-test: $failures failed"
    exit 1
fi
echo "kernel-sass-test: P·V SASS checks passed ($archs)"
