#!/bin/sh
# fetch-cuda end to end from a local mirror built from the installed toolkit: the prefix it makes
# compiles and links for sm_120a and sm_90a with nothing from the system toolkit, a second run is
# a no-op, env points at it, mirror re-exports the cache, and --offline works from the cache.
. "$(dirname "$0")/fetch/lib.sh"
fetch_setup
server_start
P="$T/p/cuda"

# --cuda 13.0 resolves to the mirror's 13.0.9, newer than the bundled 13.0.2 (index listing).
$SB fetch-cuda --cuda 13.0 --mirror "$M/ok/" --no-default-mirror --prefix "$P" --jobs 2 \
    --json >"$T/out.json" 2>"$T/err" || fail "fetch-cuda failed: $(cat "$T/err" "$T/out.json")"
[ "$(json_get "$T/out.json" 'd["status"]')" = installed ] || fail "status: $(cat "$T/out.json")"
[ "$(json_get "$T/out.json" 'd["release"]')" = 13.0.9 ] || fail "13.0 did not resolve to 13.0.9"
[ "$(json_get "$T/out.json" 'd["postcheck"]')" = ok ] || fail "post-check: $(cat "$T/out.json")"
[ "$(json_get "$T/out.json" 'd["bytes_downloaded"]')" = "$(sum_sizes)" ] ||
    fail "bytes downloaded differ from the archives' sizes"
[ "$(json_get "$T/out.json" 'len(d["components"])')" = 5 ] || fail "not five components"
no_debris "$T/p"
for f in bin/nvcc nvvm/bin/cicc include/crt/host_config.h include/cuda_fp8.h lib64/libcudart.so \
    sagebuild-lock.json env.sh version.json; do
    [ -e "$P/$f" ] || fail "missing $f in the prefix"
done
[ "$(readlink "$P/lib64")" = lib ] || fail "lib64 is not a link to lib"

# The fetched nvcc builds for both archs and links the prefix's own libcudart.
cat >"$T/k.cu" <<'CU'
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
__global__ void k(__half *o, const __nv_fp8_e4m3 *f) { o[threadIdx.x] = __float2half(float(f[threadIdx.x])); }
int main(void) { k<<<1, 32>>>(nullptr, nullptr); return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1; }
CU
(cd "$T" && env -u LIBRARY_PATH -u CPATH PATH="$P/bin:/usr/bin:/bin" CUDA_HOME="$P" nvcc \
    -gencode arch=compute_120a,code=sm_120a -gencode arch=compute_90a,code=sm_90a \
    -cudart shared -Xlinker -t -o k k.cu >"$T/link.log" 2>&1) || fail "nvcc: $(cat "$T/link.log")"
grep libcudart "$T/link.log" | grep -q "$P" || fail "libcudart did not come from the prefix"
command -v cuobjdump >/dev/null && { cuobjdump --list-elf "$T/k" | grep -q sm_120a ||
    fail "no sm_120a code in the program"; }
# torch's extension builder links with -L$CUDA_HOME/lib64 -lcudart.
(cd "$T" && env -u LIBRARY_PATH "$P/bin/nvcc" -c -o k.o k.cu && g++ -o k2 k.o -L"$P/lib64" -lcudart \
    -Wl,-t >"$T/link2.log" 2>&1) || fail "-L\$CUDA_HOME/lib64 -lcudart: $(cat "$T/link2.log")"

# The same request again: nothing downloaded, nothing changed.
lines=$(wc -l <"$T/server.log")
before=$(stat -c %i "$P")
$SB fetch-cuda --cuda 13.0.9 --mirror "$M/ok/" --no-default-mirror --prefix "$P" >"$T/out2" 2>&1 ||
    fail "second run: $(cat "$T/out2")"
grep -q "already installed" "$T/out2" || fail "second run was not a no-op: $(cat "$T/out2")"
[ "$(wc -l <"$T/server.log")" = "$lines" ] || fail "the no-op run used the network"
[ "$(stat -c %i "$P")" = "$before" ] || fail "the no-op run replaced the prefix"

# --force redoes it from the verified cache: no bytes over the network.
$SB fetch-cuda --cuda 13.0.9 --mirror "$M/ok/" --no-default-mirror --prefix "$P" --force \
    --no-check --json >"$T/out3.json" 2>&1 || fail "--force: $(cat "$T/out3.json")"
[ "$(json_get "$T/out3.json" 'd["bytes_downloaded"]')" = 0 ] || fail "verified cache re-downloaded"
no_debris "$T/p"

# env: sh and fish lines, and JSON.
$SB env --prefix "$P" >"$T/env.sh" || fail "env"
(. "$T/env.sh" && [ "$CUDA_HOME" = "$P" ] && [ "$(command -v nvcc)" = "$P/bin/nvcc" ] &&
    [ -n "${MAX_JOBS:-}" ]) || fail "env lines do not point at the prefix: $(cat "$T/env.sh")"
# A host-compiled .cpp that uses thrust (CUDA 13 keeps it under include/cccl) builds with the
# env lines and torch's usual -I$CUDA_HOME/include alone.
printf '#include <thrust/version.h>\n#include <cuda_fp16.h>\nint main(void) { return THRUST_MAJOR_VERSION > 0 ? 0 : 1; }\n' >"$T/h.cpp"
(. "$T/env.sh" && env -u CPATH g++ -I"$CUDA_HOME/include" -o "$T/h" "$T/h.cpp") ||
    fail "a host .cpp with thrust does not build with the env lines"
$SB env --prefix "$P" --shell fish | grep -q "^set -gx CUDA_HOME '$P'" || fail "fish lines"
$SB env --prefix "$P" --json >"$T/env.json" || fail "env --json"
[ "$(json_get "$T/env.json" 'd["release"]')" = 13.0.9 ] || fail "env --json release"
(. "$P/env.sh" && [ "$CUDA_HOME" = "$P" ]) || fail "the prefix's env.sh"
$SB env --prefix "$T/nowhere" >/dev/null 2>&1 && fail "env on a missing prefix must fail"

# mirror: the cache re-exported as a redist tree, used through file:// by a fresh cache.
$SB mirror --out "$T/mirror" --cuda 13.0 >"$T/mirror.out" 2>&1 || fail "mirror: $(cat "$T/mirror.out")"
cmp "$T/mirror/redistrib_13.0.9.json" "$MANIFEST" || fail "mirror changed the manifest"
SAGEBUILD_CACHE="$T/cache2" $SB fetch-cuda --cuda 13.0.9 --mirror "file://$T/mirror" \
    --no-default-mirror --prefix "$T/p2/cuda" --no-check >"$T/out4" 2>&1 ||
    fail "fetch from the exported mirror: $(cat "$T/out4")"

# A folder sagebuild did not make is never swapped away without --force.
mkdir -p "$T/foreign" && echo mine >"$T/foreign/file"
$SB fetch-cuda --cuda 13.0.9 --offline --prefix "$T/foreign" --no-check >"$T/out9" 2>&1 &&
    fail "a foreign prefix was replaced"
grep -q "not made by sagebuild" "$T/out9" || fail "foreign prefix message: $(cat "$T/out9")"
grep -q "fix:" "$T/out9" && fail "a foreign prefix has no general fix: $(cat "$T/out9")"
[ "$(cat "$T/foreign/file")" = mine ] || fail "the foreign prefix changed"

# --offline from the cache into a new prefix; --dry-run shows every hash.
$SB fetch-cuda --cuda 13.0 --offline --prefix "$T/p3/cuda" --no-check >"$T/out5" 2>&1 ||
    fail "--offline: $(cat "$T/out5")"
# A host compiler that compiles nothing: the post-check fails, nothing is installed, and the fix
# is the doctor's host compiler check.
mkdir -p "$T/badcc"
for c in gcc g++; do
    printf '#!/bin/sh\ncase "$*" in *dumpversion*) echo 12.3.0; exit 0 ;; esac\necho "%s: compiles nothing" >&2\nexit 1\n' \
        "$c" >"$T/badcc/$c"
    chmod +x "$T/badcc/$c"
done
CC="$T/badcc/gcc" CXX="$T/badcc/g++" $SB fetch-cuda --cuda 13.0.9 --offline --prefix "$T/p7/cuda" \
    >"$T/out10" 2>&1 && fail "a failing post-check passed: $(cat "$T/out10")"
grep -q "failed its compile-and-link check" "$T/out10" || fail "post-check message: $(cat "$T/out10")"
grep -q "^  fix: sagebuild doctor host.compiler" "$T/out10" ||
    fail "post-check fix: $(cat "$T/out10")"
[ ! -e "$T/p7/cuda" ] || fail "a toolkit that failed its post-check was installed"
$SB fetch-cuda --cuda 13.0.9 --offline --dry-run >"$T/plan" || fail "--dry-run"
for h in $(json_get "$MANIFEST" '" ".join(v["linux-x86_64"]["sha256"] for k,v in d.items() if isinstance(v,dict))'); do
    grep -q "$h" "$T/plan" || fail "--dry-run does not show $h"
done
# --from: archives downloaded elsewhere (flat or in the redist layout), verified, never altered.
mkdir -p "$T/dl"
for f in "$MIRROR_DIR"/*/linux-*/*.tar.xz; do cp "$f" "$T/dl/"; done
SAGEBUILD_CACHE="$T/empty-from" $SB fetch-cuda --manifest "$MANIFEST" --from "$T/dl" --offline \
    --prefix "$T/p5/cuda" --no-check >"$T/out7" 2>&1 || fail "--from: $(cat "$T/out7")"
bad=$(ls "$T/dl"/libnvvm-*.tar.xz)
printf 'X' | dd of="$bad" bs=1 seek=1000 conv=notrunc 2>/dev/null
SAGEBUILD_CACHE="$T/empty-from2" $SB fetch-cuda --manifest "$MANIFEST" --from "$T/dl" --offline \
    --prefix "$T/p6/cuda" --no-check >"$T/out8" 2>&1 && fail "--from with a corrupt file must fail"
grep -q "libnvvm.*does not match the manifest.*sha256 [0-9a-f]\{64\} (expected [0-9a-f]\{64\})" \
    "$T/out8" || fail "--from mismatch message: $(cat "$T/out8")"
grep -q "fix:" "$T/out8" && fail "the user's own file has no general fix: $(cat "$T/out8")"
[ -f "$bad" ] || fail "--from deleted the user's file"
[ ! -e "$T/p6/cuda" ] || fail "a failed --from fetch made a prefix"
SAGEBUILD_CACHE="$T/empty" $SB fetch-cuda --cuda 13.0.9 --offline --manifest "$MANIFEST" \
    --prefix "$T/p4/cuda" >"$T/out6" 2>&1 && fail "--offline with an empty cache must fail"
grep -q "offline" "$T/out6" || fail "--offline failure does not say why: $(cat "$T/out6")"
grep -q "^  fix: sagebuild fetch-cuda --dry-run" "$T/out6" || fail "--offline fix: $(cat "$T/out6")"
echo ok
