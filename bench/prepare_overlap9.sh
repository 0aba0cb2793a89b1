#!/bin/bash
# Builds the sm_90 libraries that bench/device_overlap9.sh times (issue 9, the software-pipelined
# Q·Kᵀ of SA_PIPE_QK), here, so that the GPU call only measures. Run from the repository root:
#   bash bench/prepare_overlap9.sh [OUTDIR]        (default .gpu/overlap9, git-excluded)
# then carry OUTDIR to the device. The files that every variant shares (API, launch, pre-pass,
# the modes that no variant changes) are compiled once; each variant recompiles only the mode
# files its flags change, and links its own OUTDIR/<variant>/libsageattn.so:
#   plain      the default build (32 query rows per warp, 4 warps, 2 blocks per SM at D=128)
#   w16        16 rows per warp (8 warps per block), one block per SM: the same 8 warps per SM
#              with the register budget (255) that the pipelined loop needs
#   w16b2      16 rows per warp, two blocks per SM (128 registers): the plain loop's best form
#              at 16 rows (bench/NOTES.md v2 measured it 5-15 % slower than 32 rows)
#   w16p4      w16 + SA_PIPE_QK=4: tile j+1's whole Q·Kᵀ issued under tile j's softmax
#              (spill-free at D=128 for int8-fp16, 8 bytes for int8-fp8 on sm_90)
#   w16p2      w16 + SA_PIPE_QK=2: half of it
#   pipe4d64   SA_PIPE_QK=4 SA_PIPE_D64=1 at 32 rows per warp: spill-free at D=64 (int8-fp16)
#              at two blocks per SM; at D=128 it spills heavily (not timed there)
#   plain2blk  SA_MIN_BLOCKS_D64=2: the plain D=64 kernel at pipe4d64's occupancy
#   alu256, alu512, pv256   bench/device_fullrate.sh --overlap's probes (SA_TEST_EXTRA_ALU=256,
#              512; SA_TEST_EXTRA_ALU_PV=256), int8-fp16 only
# Every variant computes every output bit as the plain build does (same arithmetic per value;
# only the schedule or the rows per warp differ), so their output checksums must be equal.
# Writes OUTDIR/ptxas-<variant>.txt (registers and spills per kernel) and OUTDIR/manifest.txt.
# About 4 minutes on two idle cores (nice -n 10; two jobs at a time, NJOBS overrides).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/.gpu/overlap9}" && cd "${1:-$root/.gpu/overlap9}" && pwd)
njobs=${NJOBS:-2}
gencode=(-gencode arch=compute_90,code=sm_90)
common_flags=(-std=c++17 -O3 -DNDEBUG -Xcompiler -fPIC,-Wall,-Wextra,-Werror "${gencode[@]}"
    -DSA_WITH_HOPPER=0 -DSA_BUILT_ARCHS='"sm_90"' -I"$root/kernels/include" -Xptxas -v)
# variant -> extra flags, and the mode files they change
w16="-DSA_WARP_Q=16 -DSA_MIN_BLOCKS=1 -DSA_MIN_BLOCKS_D64=1"
declare -A flags=(
    [w16]="$w16" [w16b2]="-DSA_WARP_Q=16 -DSA_MIN_BLOCKS_D64=2" [w16p4]="$w16 -DSA_PIPE_QK=4"
    [w16p2]="$w16 -DSA_PIPE_QK=2" [pipe4d64]="-DSA_PIPE_QK=4 -DSA_PIPE_D64=1"
    [plain2blk]="-DSA_MIN_BLOCKS_D64=2" [alu256]="-DSA_TEST_EXTRA_ALU=256"
    [alu512]="-DSA_TEST_EXTRA_ALU=512" [pv256]="-DSA_TEST_EXTRA_ALU_PV=256")
both="attn_int8_fp16 attn_int8_fp8"
declare -A files=(
    [w16]=$both [w16b2]=$both [w16p4]=$both [w16p2]=$both [pipe4d64]=$both
    [plain2blk]="attn_int8_fp16" [alu256]="attn_int8_fp16" [alu512]="attn_int8_fp16"
    [pv256]="attn_int8_fp16")
variants="plain w16 w16b2 w16p4 w16p2 pipe4d64 plain2blk alu256 alu512 pv256"

# One compile job: SRC OBJ [flags...]; its ptxas report goes to OBJ.log.
compile() {
    local src=$1 obj=$2
    shift 2
    nice -n 10 nvcc "${common_flags[@]}" "$@" -c "$src" -o "$obj" >"$obj.log" 2>&1 ||
        { echo "prepare_overlap9: FAILED $src $*" >&2; tail -20 "$obj.log" >&2; return 1; }
}
jobs_wait() { while [ "$(jobs -rp | wc -l)" -ge "$njobs" ]; do wait -n || exit 1; done; }

mkdir -p "$out/obj/plain"
start=$(date +%s)
for f in "$root"/kernels/src/*.cu "$root"/kernels/src/attn/*.cu; do
    [ "$(basename "$f")" = attn_hopper.cu ] && continue
    jobs_wait
    compile "$f" "$out/obj/plain/$(basename "$f" .cu).o" &
done
for v in $variants; do
    [ "$v" = plain ] && continue
    mkdir -p "$out/obj/$v"
    for m in ${files[$v]}; do
        jobs_wait
        # shellcheck disable=SC2086
        compile "$root/kernels/src/attn/$m.cu" "$out/obj/$v/$m.o" ${flags[$v]} &
    done
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || exit 1; done
cc -std=c11 -O2 -fPIC -Wall -Wextra -Werror -c "$root/kernels/archs/sa_archs.c" \
    -o "$out/obj/plain/sa_archs.o"

: >"$out/manifest.txt"
for v in $variants; do
    mkdir -p "$out/$v"
    objs=()
    for o in "$out"/obj/plain/*.o; do
        if [ -f "$out/obj/$v/$(basename "$o")" ]; then objs+=("$out/obj/$v/$(basename "$o")"); else objs+=("$o"); fi
    done
    nvcc -shared -Xlinker --no-undefined -o "$out/$v/libsageattn.so" "${objs[@]}"
    # this variant's ptxas reports: its own mode files, the shared ones for the rest
    mkdir -p "$out/ptxas/$v"
    for o in "${objs[@]}"; do [ -f "$o.log" ] && cp "$o.log" "$out/ptxas/$v/$(basename "$o").log"; done
    sh "$root/kernels/cmake/check-spills.sh" "$out/ptxas/$v" sa_attn_kernel >"$out/ptxas-$v.txt" 2>&1 || true
    echo "$v ${flags[$v]:-(default)} $(sha256sum "$out/$v/libsageattn.so" | cut -c1-16)" >>"$out/manifest.txt"
done
echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" >>"$out/manifest.txt"
rm -rf "$out/obj" "$out/ptxas"
echo "prepare_overlap9: built $(echo $variants | wc -w) libraries in $out in $(($(date +%s) - start)) s:"
cat "$out/manifest.txt"
echo "attention kernels of int8-fp16 (1) and int8-fp8 (2), fp16 inputs (registers, spill bytes):"
for v in $variants; do
    grep -E '^sm_.*sa_attn_kernel<[12], (64|128), false' "$out/ptxas-$v.txt" | sed "s/^/  $v: /"
done
