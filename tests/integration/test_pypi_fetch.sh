#!/bin/sh
# fetch-cuda --source pypi end to end, from a local simple index serving NVIDIA's real CUDA 13
# wheels: the prefix compiles and links for sm_120a, works as CUDA_HOME (torch's -L lib64
# -lcudart, the doctor's toolkit checks), records its wheels in the lock file, and a second run
# is a no-op; HTML-only indexes, redirects, --offline from the cache and --source auto work.
. "$(dirname "$0")/fetch/lib.sh"
. "$REPO/tests/integration/pypi/lib.sh"
pypi_setup
P="$T/p/cuda"

# Through a redirecting index: relative links resolve against the page's final URL.
$SB fetch-cuda --source pypi --cuda 13.0 --index-url "$IDX/redirect/simple" --prefix "$P" \
    --jobs 2 --json >"$T/out.json" 2>"$T/err" || fail "fetch: $(cat "$T/err" "$T/out.json")"
[ "$(json_get "$T/out.json" 'd["status"]')" = installed ] || fail "status: $(cat "$T/out.json")"
[ "$(json_get "$T/out.json" 'd["source"]')" = pypi ] || fail "source is not pypi"
[ "$(json_get "$T/out.json" 'd["release"]')" = "$PYPI_RELEASE" ] || fail "release"
if command -v g++ >/dev/null; then
    [ "$(json_get "$T/out.json" 'd["postcheck"]')" = ok ] || fail "post-check: $(cat "$T/out.json")"
fi
grep -q "application/vnd.pypi.simple.v1+json" "$T/index.log" ||
    fail "the client did not ask for the JSON form"
grep -q "301" "$T/index.log" || fail "the redirect was not exercised"
no_debris "$T/p"
for f in bin/nvcc bin/ptxas bin/cudafe++ bin/fatbinary bin/nvlink nvvm/bin/cicc \
    nvvm/libdevice/libdevice.10.bc include/crt/host_config.h include/cuda_fp8.h \
    include/cccl/nv/target lib64/libcudart.so lib/libcudart_static.a sagebuild-lock.json env.sh \
    version.json; do
    [ -e "$P/$f" ] || fail "missing $f in the prefix"
done
[ -x "$P/bin/nvcc" ] && [ -x "$P/nvvm/bin/cicc" ] || fail "programs lost their execute bit"
[ ! -e "$P/.metadata" ] && [ ! -e "$P/nvidia" ] || fail "wheel packaging leaked into the prefix"
ls "$P/dist-info" | grep -q '^nvidia_cuda_nvcc-.*\.dist-info$' || fail "no dist-info kept"

# The lock file: source pypi, one entry per wheel with the file's real sha256.
python3 - "$P/sagebuild-lock.json" "$WHEELS" <<'PY' || fail "lock file does not record the wheels"
import hashlib, json, os, sys
lock = json.load(open(sys.argv[1]))
assert lock["source"] == "pypi", lock["source"]
assert len(lock["components"]) == 5
for c in lock["components"]:
    name = os.path.basename(c["file"])
    assert name.endswith(".whl"), name
    data = open(os.path.join(sys.argv[2], name), "rb").read()
    assert c["sha256"] == hashlib.sha256(data).hexdigest(), name
    assert c["url"].endswith("/files/" + name), c["url"]
PY

# nvcc compiles and links for sm_120a with nothing from another toolkit.
cat >"$T/k.cu" <<'CU'
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <thrust/version.h>
__global__ void k(__half *o, const __nv_fp8_e4m3 *f) { o[threadIdx.x] = __float2half(float(f[threadIdx.x])); }
int main(void) { k<<<1, 32>>>(nullptr, nullptr); return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1; }
CU
(cd "$T" && env -u LIBRARY_PATH -u CPATH PATH="$P/bin:/usr/bin:/bin" CUDA_HOME="$P" nvcc \
    -gencode arch=compute_120a,code=sm_120a -cudart shared -Xlinker -t -o k k.cu \
    >"$T/link.log" 2>&1) || fail "nvcc: $(cat "$T/link.log")"
grep libcudart "$T/link.log" | grep -q "$P" || fail "libcudart did not come from the prefix"
command -v cuobjdump >/dev/null && { cuobjdump --list-elf "$T/k" | grep -q sm_120a ||
    fail "no sm_120a code in the program"; }
# torch's extension builder links with -L$CUDA_HOME/lib64 -lcudart.
(cd "$T" && env -u LIBRARY_PATH "$P/bin/nvcc" -c -o k.o k.cu &&
    g++ -o k2 k.o -L"$P/lib64" -lcudart >"$T/link2.log" 2>&1) ||
    fail "-L\$CUDA_HOME/lib64 -lcudart: $(cat "$T/link2.log")"

# Driver API programs link -lcuda against the stub built from cuda.h (no wheel carries one).
printf '#include <cuda.h>\nint main(void) { return cuInit(0) == CUDA_SUCCESS ? 0 : 1; }\n' >"$T/d.c"
(cd "$T" && cc -I"$P/include" -o d d.c -L"$P/lib64/stubs" -lcuda >"$T/link3.log" 2>&1) ||
    fail "-lcuda against the stub: $(cat "$T/link3.log")"
if command -v readelf >/dev/null; then
    readelf -d "$T/d" | grep -q 'NEEDED.*libcuda.so.1' || fail "the program does not need libcuda.so.1"
fi

# The doctor finds nothing wrong with it as CUDA_HOME, and knows it came from wheels.
env -u CUDA_PATH PATH="$P/bin:/usr/bin:/bin" CUDA_HOME="$P" $SB doctor --cuda-home "$P" \
    --arch sm_120a --json toolkit.cuda_home toolkit.nvcc toolkit.components \
    toolkit.consistency toolkit.archs toolkit.wheels >"$T/doctor.json" 2>"$T/doctor.err"
python3 - "$T/doctor.json" <<'PY' || fail "doctor on the prefix: $(cat "$T/doctor.json" "$T/doctor.err")"
import json, sys
d = json.load(open(sys.argv[1]))
by = {c["id"]: c for c in d["checks"]}
for cid in ("toolkit.cuda_home", "toolkit.nvcc", "toolkit.components", "toolkit.consistency",
            "toolkit.archs", "toolkit.wheels"):
    assert by[cid]["status"] == "ok", (cid, by[cid])
assert "PyPI" in by["toolkit.wheels"]["summary"], by["toolkit.wheels"]
PY

# The same request again: a no-op that downloads nothing.
wheels_before=$(grep -c "/files/" "$T/index.log")
$SB fetch-cuda --source pypi --cuda 13.0 --index-url "$IDX/simple" --prefix "$P" >"$T/out2" 2>&1 ||
    fail "second run: $(cat "$T/out2")"
grep -q "already installed" "$T/out2" || fail "second run was not a no-op: $(cat "$T/out2")"
[ "$(grep -c "/files/" "$T/index.log")" = "$wheels_before" ] || fail "the no-op run downloaded"

# An HTML-only index (no PEP 691) gives the same wheels and hashes.
$SB fetch-cuda --source pypi --cuda 13.0 --index-url "$IDX/html/simple" --prefix "$P" \
    --dry-run --json >"$T/html.json" 2>&1 || fail "HTML index: $(cat "$T/html.json")"
python3 - "$T/out.json" "$T/html.json" <<'PY' || fail "the HTML index planned other wheels"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
key = lambda d: sorted((c["name"], c["version"], c["sha256"]) for c in d["components"])
assert key(a) == key(b), (key(a), key(b))
assert all(c["size"] == -1 for c in b["components"])
PY

# --offline: the plan comes from the verified cache, and matches the prefix.
$SB fetch-cuda --source pypi --cuda 13.0 --offline --prefix "$P" >"$T/out3" 2>&1 ||
    fail "--offline: $(cat "$T/out3")"
grep -q "already installed" "$T/out3" || fail "--offline did not match the prefix: $(cat "$T/out3")"

# --offline --from a folder of wheels fetched elsewhere (pip download): a fresh cache, nothing
# from the network, the same hashes.
SAGEBUILD_CACHE="$T/cache-from" $SB fetch-cuda --source pypi --cuda 13.0 --offline \
    --from "$WHEELS" --prefix "$T/p3/cuda" --no-check --json >"$T/from.json" 2>&1 ||
    fail "--offline --from: $(cat "$T/from.json")"
[ "$(json_get "$T/from.json" 'd["status"]')" = installed ] || fail "--from: $(cat "$T/from.json")"
[ "$(json_get "$T/from.json" 'd["bytes_downloaded"]')" = 0 ] || fail "--offline downloaded"
cmp -s "$T/p3/cuda/sagebuild-lock.json" "$P/sagebuild-lock.json" && fail "lock files cannot be equal (urls)"
python3 - "$P/sagebuild-lock.json" "$T/p3/cuda/sagebuild-lock.json" <<'PY' || fail "--from wheels differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
key = lambda d: sorted((c["name"], c["sha256"]) for c in d["components"])
assert key(a) == key(b)
PY

# --source auto: the redist mirror fails (404 for every archive), PyPI takes over.
$SB fetch-cuda --source auto --cuda 13.0 --mirror "$IDX/no-redist/" --no-default-mirror \
    --index-url "$IDX/simple" --prefix "$P" >"$T/out4" 2>"$T/err4" ||
    fail "auto: $(cat "$T/out4" "$T/err4")"
grep -q "trying NVIDIA's wheels from PyPI" "$T/err4" || fail "auto did not say it fell back"
grep -q "already installed" "$T/out4" || fail "auto did not end on the PyPI prefix"

# sagebuild build compiles the bundled kernels for sm_120a with the wheel-made toolkit.
if command -v cmake >/dev/null && [ -f "$REPO/kernels/CMakeLists.txt" ]; then
    SAGEBUILD_FAKE_GPUS=none $SB build --cuda-home "$P" --arch sm_120a --out "$T/kern" --json \
        >"$T/build.json" 2>"$T/build.err" ||
        fail "build with the wheel-made toolkit: $(tail -n 40 "$T/build.err" "$T/kern/build.log" 2>/dev/null)"
    [ "$(json_get "$T/build.json" 'd["record"]["nvcc"]["path"]')" = "$P/bin/nvcc" ] ||
        fail "the build did not use the prefix's nvcc: $(cat "$T/build.json")"
    [ -e "$T/kern/lib/libsageattn.so" ] || fail "no libsageattn.so"
    command -v cuobjdump >/dev/null && { cuobjdump --list-elf "$T/kern/lib/libsageattn.so" |
        grep -q sm_120a || fail "no sm_120a code in libsageattn.so"; }
    echo "build --arch sm_120a with the wheel-made toolkit: $(json_get "$T/build.json" \
        'd["record"]["time"]["cpu_seconds"]') CPU s"
fi
exit 0
