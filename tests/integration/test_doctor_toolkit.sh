#!/bin/sh
# Toolkit scenarios: nvcc against torch's CUDA, nvcc too old for an arch, missing components,
# pip runtime wheels as CUDA_HOME, mixed toolkits, PTX newer than the driver, and torch's
# CUDA_HOME resolution order.
. "$(dirname "$0")/doctor/lib.sh"
mk_gcc "$T/bin" gcc 13.3.0
mk_gcc "$T/bin" ninja 1.11.1
mk_torch "$T/site130" 2.11.0+cu130 13.0
mk_toolkit "$T/cuda-13.0" 13.0.88

# Healthy: every toolkit check passes.
doctor --torch-dir "$T/site130/torch" --cuda-home "$T/cuda-13.0"
for id in toolkit.cuda_home toolkit.nvcc toolkit.version_match toolkit.components \
    toolkit.consistency toolkit.archs toolkit.driver_ptx; do
    expect $id ok healthy
done
expect_in toolkit.cuda_home rule --cuda-home healthy
expect_in toolkit.archs archs sm_120a healthy

# #1: a 12.8 toolkit under a cu130 torch: a major mismatch is an error with a fetch fix.
mk_toolkit "$T/cuda-12.8" 12.8.93 14
doctor --torch-dir "$T/site130/torch" --cuda-home "$T/cuda-12.8"
expect toolkit.version_match error "#1 major"
expect_in toolkit.version_match fix "sagebuild fetch-cuda --cuda 13.0" "#1 major"
expect_in toolkit.version_match summary "mismatches" "#1 major"
expect_rc 2 "#1 major"
# ... a minor one only warns.
mk_torch "$T/site129" 2.8.0+cu129 12.9
doctor --torch-dir "$T/site129/torch" --cuda-home "$T/cuda-12.8" toolkit.version_match
expect toolkit.version_match warn "#1 minor"
expect_in toolkit.version_match fix "--cuda 12.9" "#1 minor"

# #2: sm_89 FP8 kernels need nvcc 12.4; #5: sm_120a needs 12.8.
mk_toolkit "$T/cuda-12.3" 12.3.107 12 "compute_80 compute_86 compute_89 compute_90"
FAKE_GPUS="550.54.14;NVIDIA GeForce RTX 4090:8.9" doctor --torch-dir "$T/site129/torch" --cuda-home "$T/cuda-12.3" toolkit.archs
expect toolkit.archs error "#2"
expect_in toolkit.archs summary "need nvcc >= 12.4" "#2"
mk_toolkit "$T/cuda-12.6" 12.6.85 13 "compute_80 compute_86 compute_89 compute_90"
doctor --torch-dir "$T/site129/torch" --cuda-home "$T/cuda-12.6" toolkit.archs
expect toolkit.archs error "#5"
expect_in toolkit.archs summary "sm_120a needs nvcc >= 12.8" "#5"
expect_in toolkit.archs fix "--cuda 12.9" "#5"
# --arch overrides the GPUs; nvcc 13 no longer builds sm_70.
doctor --torch-dir "$T/site130/torch" --cuda-home "$T/cuda-13.0" --arch sm_70 toolkit.archs
expect toolkit.archs error "--arch sm_70"
expect_in toolkit.archs summary "dropped in 13.0" "--arch sm_70"

# #4: a 13.x toolkit without libnvvm (cicc, libdevice) and without cuda_crt.
mk_toolkit "$T/cuda-split" 13.0.88
rm -rf "$T/cuda-split/nvvm" "$T/cuda-split/include/crt"
doctor --torch-dir "$T/site130/torch" --cuda-home "$T/cuda-split"
expect toolkit.components error "#4"
expect_in toolkit.components summary "cicc" "#4"
expect_in toolkit.components summary "libdevice" "#4"
expect_in toolkit.components summary "crt/host_config.h" "#4"
expect_in toolkit.components fix "sagebuild fetch-cuda --cuda 13.0" "#4"
expect host.compiler skip "#4 no host_config.h"
# A cicc that is not executable counts as missing.
mk_toolkit "$T/cuda-noexec" 13.0.88
chmod 644 "$T/cuda-noexec/nvvm/bin/cicc"
doctor --torch-dir "$T/site130/torch" --cuda-home "$T/cuda-noexec" toolkit.components
expect toolkit.components error "#4 cicc not executable"
# 13.x redist trees may keep crt under targets/<arch>/include.
mk_toolkit "$T/cuda-targets" 13.0.88
mkdir -p "$T/cuda-targets/targets/x86_64-linux/include"
mv "$T/cuda-targets/include/crt" "$T/cuda-targets/targets/x86_64-linux/include/crt"
doctor --torch-dir "$T/site130/torch" --cuda-home "$T/cuda-targets" toolkit.components host.compiler
expect toolkit.components ok "targets layout"
expect host.compiler ok "targets layout"
# CUDA 13's PyPI wheel layout (nvidia/cu13): cicc in bin/, only libdevice under nvvm/.
mk_toolkit "$T/venv/lib/python3.12/site-packages/nvidia/cu13" 13.0.88
W=$T/venv/lib/python3.12/site-packages/nvidia/cu13
mv "$W/nvvm/bin/cicc" "$W/bin/cicc" && rmdir "$W/nvvm/bin"
mkdir -p "$W/include/cccl" && mv "$W/include/nv" "$W/include/cccl/nv"
mv "$W/lib64" "$W/lib"
doctor --torch-dir "$T/site130/torch" --cuda-home "$W" toolkit
expect toolkit.cuda_home ok "wheel layout cu13"
expect toolkit.components ok "wheel layout cu13"
expect_in toolkit.components cicc "$W/bin/cicc" "wheel layout cu13"
# #18: no libcuda stub is a warning (linking -lcuda fails).
mk_toolkit "$T/cuda-nostub" 13.0.88
rm -rf "$T/cuda-nostub/lib64/stubs"
doctor --torch-dir "$T/site130/torch" --cuda-home "$T/cuda-nostub" toolkit.components
expect toolkit.components warn "#18"

# #15: CUDA_HOME pointed at pip's nvidia-* runtime wheels.
mkdir -p "$T/venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib"
: > "$T/venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"
DOCTOR_ENV="CUDA_HOME=$T/venv/lib/python3.11/site-packages/nvidia/cuda_runtime" doctor --torch-dir "$T/site130/torch"
expect toolkit.cuda_home error "#15"
expect_in toolkit.cuda_home summary "runtime wheels" "#15"
expect_in toolkit.cuda_home fix "unset CUDA_HOME CUDA_PATH" "#15"
expect toolkit.nvcc error "#15 nvcc"
# A CUDA_HOME that does not exist.
DOCTOR_ENV="CUDA_HOME=$T/nowhere" doctor --torch-dir "$T/site130/torch" toolkit.cuda_home
expect toolkit.cuda_home error "missing CUDA_HOME"

# #16: headers of one release beside another's nvcc; parts recorded with other versions.
mk_toolkit "$T/cuda-mixed" 13.0.88
printf '#define CUDA_VERSION 12080\n' > "$T/cuda-mixed/include/cuda.h"
doctor --torch-dir "$T/site130/torch" --cuda-home "$T/cuda-mixed" toolkit.consistency
expect toolkit.consistency error "#16 cuda.h"
expect_in toolkit.consistency summary "headers from another toolkit" "#16 cuda.h"
mk_toolkit "$T/cuda-wheels" 13.0.88
mkdir -p "$T/cuda-wheels/dist-info/nvidia_cuda_nvcc-13.0.88.dist-info" \
    "$T/cuda-wheels/dist-info/nvidia_cuda_crt-12.9.86.dist-info"
doctor --torch-dir "$T/site130/torch" --cuda-home "$T/cuda-wheels" toolkit.consistency toolkit.cuda_home
expect toolkit.consistency error "#16 crt from 12.9"
expect_in toolkit.consistency summary "cuda_crt 12.9.86" "#16 crt from 12.9"
expect_in toolkit.cuda_home layout "PyPI wheels" "wheel layout"
printf '{"cuda_nvcc":{"name":"CUDA NVCC","version":"13.0.88"},"libnvvm":{"version":"12.8.93"}}' > "$T/cuda-13.0/version.json"
doctor --torch-dir "$T/site130/torch" --cuda-home "$T/cuda-13.0" toolkit.consistency
expect toolkit.consistency error "#16 version.json"
rm "$T/cuda-13.0/version.json"
# The nvcc on PATH is another toolkit's: torch uses CUDA_HOME, other tools PATH.
ln -s "$T/cuda-12.8/bin/nvcc" "$T/bin/nvcc"
doctor --torch-dir "$T/site130/torch" --cuda-home "$T/cuda-13.0" toolkit.consistency
expect toolkit.consistency warn "#16 PATH nvcc"
expect_in toolkit.consistency fix "export PATH=$T/cuda-13.0/bin:" "#16 PATH nvcc"

# torch's resolution order: with no CUDA_HOME/CUDA_PATH, dirname(dirname(which nvcc)) with no
# realpath: the link $T/bin/nvcc makes $T the toolkit, which lacks everything but bin/nvcc.
doctor --torch-dir "$T/site130/torch" toolkit.cuda_home toolkit.version_match toolkit.components
expect_in toolkit.cuda_home rule "nvcc on PATH" "which nvcc"
[ "$(field toolkit.cuda_home cuda_home)" = "$T" ] || fail "which nvcc: CUDA_HOME is $(field toolkit.cuda_home cuda_home), expected $T"
expect toolkit.version_match error "which nvcc gives 12.8"
expect toolkit.components error "which nvcc: no realpath"
DOCTOR_ENV="CUDA_PATH=$T/cuda-13.0" doctor --torch-dir "$T/site130/torch" toolkit.cuda_home
expect_in toolkit.cuda_home rule '$CUDA_PATH' "CUDA_PATH"
# CUDA_HOME="" and CUDA_PATH="": torch finds no toolkit at all.
DOCTOR_ENV="CUDA_HOME= CUDA_PATH=" doctor --torch-dir "$T/site130/torch" toolkit.cuda_home
expect toolkit.cuda_home error "empty CUDA_HOME and CUDA_PATH"
expect_in toolkit.cuda_home fix "sagebuild fetch-cuda --cuda 13.0" "empty CUDA_HOME and CUDA_PATH"
rm "$T/bin/nvcc"

# An nvcc newer than the driver: the driver cannot JIT-compile its PTX.
mk_toolkit "$T/cuda-13.1" 13.1.80
doctor --torch-dir "$T/site130/torch" --cuda-home "$T/cuda-13.1" toolkit.driver_ptx
expect toolkit.driver_ptx warn "PTX"
expect_in toolkit.driver_ptx fix "--cuda 13.0" "PTX"
finish
