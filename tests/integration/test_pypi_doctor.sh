#!/bin/sh
# doctor's toolkit.wheels on fake trees: pip's runtime-only nvidia-* packages used as CUDA_HOME,
# compiler wheels pip-installed into site-packages, a wheel-made prefix with and without its
# fix-ups, and an ordinary toolkit (skipped).
. "$(dirname "$0")/doctor/lib.sh"
SITE="$T/venv/lib/python3.12/site-packages"
mk_torch "$SITE" 2.11.0+cu130 13.0

# 1. The runtime libraries torch pulls in, as CUDA_HOME.
mkdir -p "$SITE/nvidia/cu13/lib" "$SITE/nvidia_cuda_runtime-13.0.96.dist-info" \
    "$SITE/nvidia_cublas-13.1.0.3.dist-info"
: >"$SITE/nvidia/cu13/lib/libcudart.so.13"
DOCTOR_ENV="CUDA_HOME=$SITE/nvidia/cu13" doctor --torch-dir "$SITE/torch" toolkit.wheels
expect toolkit.wheels error "runtime-only"
expect_in toolkit.wheels summary "not a compiler toolkit" "runtime-only"
expect_in toolkit.wheels wheels "nvidia-cuda-runtime 13.0.96" "runtime-only"
expect_in toolkit.wheels fix "sagebuild fetch-cuda --source auto --cuda 13.0" "runtime-only"
expect_in toolkit.wheels fix "unset CUDA_HOME" "runtime-only"
expect_rc 2 "runtime-only"
# site-packages/nvidia itself, and a CUDA 12 torch: the fix names plain fetch-cuda.
mk_torch "$T/t12" 2.7.0+cu128 12.8
DOCTOR_ENV="CUDA_HOME=$SITE/nvidia" doctor --torch-dir "$T/t12/torch" toolkit.wheels
expect toolkit.wheels error "runtime-only, torch cu128"
expect_in toolkit.wheels fix "sagebuild fetch-cuda --cuda 12.8 &&" "runtime-only, torch cu128"

# 2. The compiler wheels pip-installed there: nvcc runs, but torch's lib64 and -lcudart do not.
mk_toolkit "$T/tk" 13.0.88
mkdir -p "$SITE/nvidia/cu13/bin" "$SITE/nvidia_cuda_nvcc-13.0.88.dist-info"
cp "$T/tk/bin/nvcc" "$SITE/nvidia/cu13/bin/nvcc"
DOCTOR_ENV="CUDA_HOME=$SITE/nvidia/cu13" doctor --torch-dir "$SITE/torch" toolkit.wheels
expect toolkit.wheels error "pip compiler wheels"
expect_in toolkit.wheels summary "lib64" "pip compiler wheels"
expect_in toolkit.wheels summary "compiler wheels as pip installed them" "pip compiler wheels"

# 3. A prefix fetch-cuda made from wheels: ok with its fix-ups, an error naming what is gone.
P="$T/cuda-13.0.2"
mk_toolkit "$P" 13.0.88
mkdir -p "$P/dist-info/nvidia_cuda_nvcc-13.0.88.dist-info" "$P/dist-info/nvidia_nvvm-13.0.88.dist-info"
printf '{"schema":1,"source":"pypi","release_label":"13.0.2","components":[]}\n' >"$P/sagebuild-lock.json"
DOCTOR_ENV="CUDA_HOME=$P" doctor --torch-dir "$SITE/torch" toolkit.wheels
expect toolkit.wheels ok "wheel prefix"
expect_in toolkit.wheels summary "nvidia-cuda-nvcc 13.0.88" "wheel prefix"
expect_in toolkit.wheels lock_source pypi "wheel prefix"
expect_rc 0 "wheel prefix"
rm "$P/lib64/libcudart.so"
chmod 644 "$P/nvvm/bin/cicc"
DOCTOR_ENV="CUDA_HOME=$P" doctor --torch-dir "$SITE/torch" toolkit.wheels
expect toolkit.wheels error "wheel prefix with gaps"
expect_in toolkit.wheels summary "libcudart.so" "wheel prefix with gaps"
expect_in toolkit.wheels summary "nvvm/bin/cicc is not executable" "wheel prefix with gaps"
expect_in toolkit.wheels fix "--prefix $P --force" "wheel prefix with gaps"

# 4. A redist or system toolkit: not this check's business.
mk_toolkit "$T/usr-cuda" 13.0.88
DOCTOR_ENV="CUDA_HOME=$T/usr-cuda" doctor --torch-dir "$SITE/torch" toolkit.wheels
expect toolkit.wheels skip "ordinary toolkit"
expect_rc 0 "ordinary toolkit"
finish
