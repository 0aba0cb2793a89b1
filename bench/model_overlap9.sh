#!/bin/bash
# Issue 9, overlap by construction: the throughput model (bench/model_throughput.py) with the
# variant builds that bench/device_overlap9.sh measured on the H200 (bench/prepare_overlap9.sh
# describes them) and the software-pipelined kernels on sm_120a and sm_89 (the RTX 5090 and 4090
# predictions). No GPU; from the repository root:
#   bash bench/model_overlap9.sh [OUTDIR]     (default build/overlap9-model)
# Needs the library's listings from `make kernel-sass-test` (build/kernels/sass/<arch>/listing.sass)
# and nvdisasm (as that test finds it: $NVDISASM, PATH, beside nvcc, or the test's pip copy).
# Compiles 18 cubins (about 10 CPU-minutes at nice 10) and prints the model's report, also kept
# in OUTDIR/model.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build/overlap9-model}
sass=$root/build/kernels/sass
nvdisasm=${NVDISASM:-$(command -v nvdisasm || true)}
for p in "$nvdisasm" "$(dirname "$(command -v nvcc)")/nvdisasm" "$sass/tools/nvidia/cu13/bin/nvdisasm"; do
    [ -n "$p" ] && [ -x "$p" ] && { nvdisasm=$p; break; }
done
[ -x "$nvdisasm" ] || { echo "model_overlap9: no nvdisasm (run make kernel-sass-test first)" >&2; exit 1; }
for a in sm_90 sm_120a sm_89; do
    [ -s "$sass/$a/listing.sass" ] || { echo "model_overlap9: no $sass/$a/listing.sass (make kernel-sass-test)" >&2; exit 1; }
done
mkdir -p "$out"
w16="-DSA_WARP_Q=16 -DSA_MIN_BLOCKS=1 -DSA_MIN_BLOCKS_D64=1"
# name, flags, rows per warp, blocks per SM, archs, mode files (as prepare_overlap9.sh)
specs=(
    "w16|$w16|16|1|sm_90 sm_120a sm_89|int8_fp16 int8_fp8 int8_fp8_bs int8_fp8_f16acc int8_fp16_f16acc"
    "w16b2|-DSA_WARP_Q=16 -DSA_MIN_BLOCKS_D64=2|16|2|sm_90|int8_fp16 int8_fp8"
    "w16p4|$w16 -DSA_PIPE_QK=4|16|1|sm_90 sm_120a sm_89|int8_fp16 int8_fp8 int8_fp8_bs int8_fp8_f16acc int8_fp16_f16acc"
    "w16p2|$w16 -DSA_PIPE_QK=2|16|1|sm_90|int8_fp16 int8_fp8"
    "pipe4d64|-DSA_PIPE_QK=4 -DSA_PIPE_D64=1|32|2|sm_90|int8_fp16"
    "plain2blk|-DSA_MIN_BLOCKS_D64=2|32|2|sm_90|int8_fp16"
)
variant_args=()
for spec in "${specs[@]}"; do
    IFS='|' read -r name flags rows bps archs modes <<<"$spec"
    for arch in $archs; do
        # sm_90 measures only int8-fp16 and int8-fp8; GeForce gets every INT8 mode
        ms=$modes
        [ "$arch" = sm_90 ] && ms=$(echo "$modes" | tr ' ' '\n' | grep -xE 'int8_fp16|int8_fp8' | tr '\n' ' ')
        [ "$arch" != sm_90 ] && [ "$name" != w16 ] && [ "$name" != w16p4 ] && continue
        listing=$out/$name-$arch.sass
        : >"$listing"
        for m in $ms; do
            # shellcheck disable=SC2086
            nice -n 10 nvcc -O3 -DNDEBUG -std=c++17 -cubin -Xptxas=-v \
                -gencode="arch=compute_${arch#sm_},code=$arch" -I"$root/kernels/src" \
                -I"$root/kernels/include" -DSA_WITH_D64=1 -DSA_WITH_D128=1 $flags \
                -o "$out/$name-$arch-$m.cubin" "$root/kernels/src/attn/attn_$m.cu" \
                >"$out/$name-$arch-$m.log" 2>&1 || { echo "model_overlap9: $name $arch $m did not compile" >&2; exit 1; }
            "$nvdisasm" "$out/$name-$arch-$m.cubin" >>"$listing"
        done
        variant_args+=(--variant "$name=$arch:$rows:$bps:$listing")
    done
done
python3 "$root/bench/model_throughput.py" --sass "sm_120a=$sass/sm_120a/listing.sass" \
    --sass "sm_89=$sass/sm_89/listing.sass" --sass "sm_90=$sass/sm_90/listing.sass" \
    "${variant_args[@]}" | tee "$out/model.txt"
