#!/bin/bash
# Builds libsageattn.so straight with nvcc (for iterating on the kernels; the shipped library is
# built by kernels/CMakeLists.txt from the same sources).
#   bench/build.sh OUTDIR [ARCH...]     e.g. bench/build.sh .device-carry sm_90
# Writes OUTDIR/libsageattn.so and OUTDIR/ptxas.txt (registers, spills per kernel).
# With sm_90a among the archs, attn_hopper.cu (int8-fp8-wgmma) is built for sm_90a alone and
# every file sees SA_WITH_HOPPER=1; without it that file is left out (as in CMake).
set -euo pipefail
out=$1
shift
archs=${*:-sm_90}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/obj"
gencode=()
names=()
for a in $archs; do
    n=${a#sm_}
    gencode+=(-gencode "arch=compute_$n,code=sm_$n")
    names+=("$a")
done
built=$(IFS=,; echo "${names[*]}")
hopper=0
case " $archs " in *" sm_90a "*) hopper=1 ;; esac
: >"$out/ptxas.txt"
pids=()
for f in "$root"/kernels/src/*.cu "$root"/kernels/src/attn/*.cu; do
    o="$out/obj/$(basename "$f").o"
    fgen=("${gencode[@]}")
    if [ "$(basename "$f")" = attn_hopper.cu ]; then
        [ $hopper = 1 ] || continue
        fgen=(-gencode arch=compute_90a,code=sm_90a)
    fi
    nvcc -std=c++17 -O3 ${SA_EXTRA_FLAGS:-} -Xcompiler -fPIC,-Wall,-Wextra,-Werror "${fgen[@]}" \
        -DSA_WITH_HOPPER=$hopper -DSA_BUILT_ARCHS="\"$built\"" -I"$root/kernels/include" -Xptxas -v \
        -c "$f" -o "$o" >"$o.log" 2>&1 &
    pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
cat "$out"/obj/*.log >>"$out/ptxas.txt"
if [ $rc -ne 0 ]; then
    grep -h -B2 -A5 "error" "$out"/obj/*.log | head -60
    exit 1
fi
# The arch table (the library's "no code for this GPU" message names the --arch to build).
cc -std=c11 -O2 -fPIC -Wall -Wextra -Werror -c "$root/kernels/archs/sa_archs.c" \
    -o "$out/obj/sa_archs.c.o"
# The modes' names (the library's, the C reference's and the CPU tests' one list).
cc -std=c11 -O2 -fPIC -Wall -Wextra -Werror -I"$root/kernels/include" \
    -c "$root/kernels/src/mode_names.c" -o "$out/obj/mode_names.c.o"
nvcc -shared -Xlinker --no-undefined -o "$out/libsageattn.so" "$out"/obj/*.o
echo "built $out/libsageattn.so for $built"
