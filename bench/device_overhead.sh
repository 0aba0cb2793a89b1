#!/bin/bash
# The drop-in's per-call overhead work (issue 8) checked on the GPU machine in one device call,
# from the repository root after `bash bench/pack_cli.sh` here (carry `bin` and
# `.device-carry-cli`):
#   bash bench/device_overhead.sh
#   1. this tree's library and wheel: `bin/sagebuild wheel --arch sm_90` into /tmp (the CLI's
#      own build; bench/build.sh when bin/sagebuild cannot run), the wheel installed offline
#      into a fresh venv that sees the system torch, and the installed package checked there:
#      ABI 1.2 found, the second call of a signature on the fast path, its result against SDPA,
#      host wall time per call at L=128;
#   2. sageattn-refcheck (CMake, sm_90): every mode's kernels against the C reference;
#   3. bench/device_dropin.sh on that library: the whole accuracy matrix (every public function,
#      dtypes, layouts, GQA, odd lengths, head dims, masks, LSE, varlen, stream, compile,
#      ComfyUI loop), the two speed shapes (B1 H24 L4096 and B1 H32 L16384, D128: isolated and
#      back to back, ratios to the raw ABI with a context, with the ABI 1.0 struct and with the
#      recompute queued), per-call overhead at L=128 (wall back to back, host only with the GPU
#      busy, kernels per call: the package with and without the non-finite check, the raw ABI
#      three ways, SDPA), the memory cap and the smoke test (the recompute in one call).
# Results in $OUT (at most 8 files: device_dropin.sh packs them into results.tgz when more);
# overhead.txt holds this script's summary, printed last.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 NO_COLOR=1
OUT=${OUT:-/tmp/sa-overhead}
mkdir -p "$OUT"
work=/tmp/sa-overhead-work
rm -rf "$work"
mkdir -p "$work"
export XDG_DATA_HOME=$work/data XDG_CACHE_HOME=$work/cache
summary=()
note() { summary+=("$*"); echo "== $*"; }

if [ -f .device-carry-cli/libs.tar.xz ]; then
    tar -C .device-carry-cli -xJf .device-carry-cli/libs.tar.xz
fi
build=$work/build
lib=$build/lib/libsageattn.so
start=$SECONDS
if bin/sagebuild --version >/dev/null 2>&1; then
    bin/sagebuild wheel --arch sm_90 --build "$build" --out "$work/dist" >"$work/wheel.txt" 2>&1
    note "sagebuild wheel --arch sm_90: rc=$? in $((SECONDS - start)) s: $(ls "$work"/dist/*.whl 2>/dev/null)"
else
    note "bin/sagebuild does not run here (run bash bench/pack_cli.sh and carry bin, .device-carry-cli): bench/build.sh instead, no wheel"
fi
if [ ! -f "$lib" ]; then
    mkdir -p "$build/lib"
    if bash bench/build.sh "$work/nvcc" sm_90 >"$work/build.txt" 2>&1; then
        cp "$work/nvcc/libsageattn.so" "$lib"
        note "bench/build.sh sm_90: ok in $((SECONDS - start)) s"
    else
        tail -n 40 "$work/build.txt"
        note "no library: the build failed"
        printf '%s\n' "${summary[@]}" >"$OUT/overhead.txt"
        exit 2
    fi
fi

# The wheel in a fresh venv, as a user gets it.
wheel=$(ls "$work"/dist/*.whl 2>/dev/null | head -n 1)
if [ -n "$wheel" ]; then
    python3 -m venv --system-site-packages "$work/venv" 2>"$work/venv.txt" ||
        python3 -m venv --without-pip --system-site-packages "$work/venv"
    py=$work/venv/bin/python
    if ! "$py" -c 'import torch' 2>/dev/null; then
        torch_site=$(python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null)
        [ -n "$torch_site" ] && echo "$torch_site" \
            >"$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/image-torch.pth"
    fi
    # A venv made without pip (an image without ensurepip) is served by the system pip.
    "$py" -m pip install --no-index --no-deps "$wheel" >"$work/pip.txt" 2>&1 ||
        python3 -m pip --python "$py" install --no-index --no-deps "$wheel" >>"$work/pip.txt" 2>&1
    note "pip install the wheel: rc=$?"
    (cd /tmp && "$py" - <<'EOS') 2>&1 | tee "$work/installed.txt"
import time, torch, sageattention
from sageattention import _fast, _lib
F = torch.nn.functional
x = torch.randn(3, 1, 128, 24 * 128, device="cuda", dtype=torch.float16)
q, k, v = (t.view(1, 128, 24, 128) for t in x)
o1 = sageattention.sageattn(q, k, v, tensor_layout="NHD")
o2 = sageattention.sageattn(q, k, v, tensor_layout="NHD")
fast = [e for e in _fast._entries.values() if e]
ref = F.scaled_dot_product_attention(*(t.transpose(1, 2) for t in (q, k, v))).transpose(1, 2)
a, b = o2.double().flatten(), ref.double().flatten()
cos = float(a @ b / (a.norm() * b.norm()))
for _ in range(200):
    sageattention.sageattn(q, k, v, tensor_layout="NHD")
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(2000):
    sageattention.sageattn(q, k, v, tensor_layout="NHD")
torch.cuda.synchronize()
us = (time.perf_counter() - t0) / 2000 * 1e6
ok = _lib.library().has_v12 and bool(fast) and cos > 0.9999 and torch.equal(o1, o2)
print("installed package %s (%s): ABI 1.2 %s, fast path taken %s, cos vs SDPA %.6f, same "
      "result twice %s, wall per call at L=128 %.1f us: %s" % (
          sageattention.__version__, sageattention.__file__, _lib.library().has_v12,
          bool(fast), cos, torch.equal(o1, o2), us, "ok" if ok else "FAIL"))
raise SystemExit(0 if ok else 1)
EOS
    note "$(tail -n 1 "$work/installed.txt")"
fi

# The kernels against the C reference, every mode (kernels/tests/refcheck.cu: odd lengths, GQA,
# causal, LSE, both head dims): the pre-pass's launches changed this round (quant.cu).
start=$SECONDS
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
if cmake -S kernels -B "$work/cmake" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DSAGEATTN_ARCHS=sm_90 \
    -DSAGEATTN_REFCHECK=ON >"$work/cmake.txt" 2>&1 &&
    cmake --build "$work/cmake" -j "$(nproc)" --target sageattn-refcheck >>"$work/cmake.txt" 2>&1; then
    timeout 300 "$work/cmake/sageattn-refcheck" >"$OUT/refcheck.txt" 2>&1
    note "refcheck (kernels vs the C reference, every mode; built in $((SECONDS - start)) s) rc=$?: $(tail -n 1 "$OUT/refcheck.txt")"
else
    tail -n 30 "$work/cmake.txt"
    note "refcheck: the CMake build FAILED"
fi

# Everything else: device_dropin.sh on the same library (it writes $OUT and packs it).
cp "$work"/wheel.txt "$work"/installed.txt "$OUT"/ 2>/dev/null
printf '%s\n' "${summary[@]}" >"$OUT/overhead.txt"
SA_REV=${SA_REV:-$(git rev-parse --short HEAD 2>/dev/null)} OUT=$OUT \
    bash bench/device_dropin.sh --lib "$lib" 2>&1 | tee "$work/dropin.console"
rc=${PIPESTATUS[0]}
note "device_dropin.sh rc=$rc"
echo "===== summary"
printf '%s\n' "${summary[@]}"
grep -E '^(per-call overhead|overhead L=128|speed B|  back to back|  ratio|accuracy:|correctness|dropin smoke|FAIL)' \
    "$work/dropin.console" | tail -n 40
exit "$rc"
