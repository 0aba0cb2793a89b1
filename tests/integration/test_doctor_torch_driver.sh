#!/bin/sh
# torch and driver scenarios: torch found through a python stand-in or --torch-dir, CPU builds,
# a driver too old for torch's CUDA, a torch with no code for the GPU, no driver, no GPU, and a
# malformed SAGEBUILD_FAKE_GPUS.
. "$(dirname "$0")/doctor/lib.sh"
mk_gcc "$T/bin" gcc 13.3.0
mk_toolkit "$T/cuda-13.0" 13.0.88
mk_torch "$T/site" 2.11.0+cu130 13.0

# torch found by asking python (a stand-in that answers the find_spec helper as python would).
script "$T/bin/python3" "case \"\$2\" in
*find_spec*) printf 'python\t3.11.7\ntorch\t$T/site/torch\n' ;;
*) exit 1 ;;
esac"
doctor --cuda-home "$T/cuda-13.0" torch driver
expect torch.found ok "python finds torch"
expect_in torch.found dir "$T/site/torch" "python finds torch"
expect_in torch.found python_version "3.11.7" "python finds torch"
expect torch.cuda ok "cu130"
expect driver.present ok "fake 580"
expect_in driver.present max_cuda "13.0" "fake 580"
expect driver.gpus ok "RTX 5090"
expect_in driver.gpus gpu0 "compute capability 12.0" "RTX 5090"
expect driver.torch ok "580 runs 13.0"
expect torch.gpu_arch ok "cu130 covers sm_120"

# The same python without torch: a warning with an install command.
script "$T/bin/python3" "printf 'python\t3.11.7\n'"
doctor --cuda-home "$T/cuda-13.0" torch.found
expect torch.found warn "no torch"
expect_in torch.found fix "python3 -m pip install torch --index-url https://download.pytorch.org/whl/cu130" "no torch"
# --python that does not exist, and one that hangs: reported, never fatal.
doctor --python "$T/nope/python" --cuda-home "$T/cuda-13.0" torch.found
expect torch.found warn "missing python"
expect_in torch.found summary "could not run" "missing python"
script "$T/bin/python3" "exec /bin/sleep 30"
start=$(date +%s)
doctor --cuda-home "$T/cuda-13.0" torch.found
[ $(( $(date +%s) - start )) -lt 15 ] || fail "a hanging python must be cut by the timeout"
expect torch.found warn "hanging python"
expect_in torch.found summary "timed out" "hanging python"
rm "$T/bin/python3"

# triton against torch's pin: METADATA of both wheels.
mkdir -p "$T/site/torch-2.11.0+cu130.dist-info"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\nRequires-Dist: filelock\nRequires-Dist: triton==3.5.0; platform_system == "Linux" and platform_machine == "x86_64"\n' \
    > "$T/site/torch-2.11.0+cu130.dist-info/METADATA"
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0" torch.triton
expect torch.triton warn "#17 no triton"
expect_in torch.triton fix "python3 -m pip install triton==3.5.0" "#17 no triton"
mkdir -p "$T/site/triton-3.4.0.dist-info" "$T/site/triton"
printf 'Name: triton\nVersion: 3.4.0\n' > "$T/site/triton-3.4.0.dist-info/METADATA"
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0" --python /venv/bin/python torch.triton
expect torch.triton warn "#17 wrong triton"
expect_in torch.triton summary "triton 3.4.0 is installed, torch 2.11.0+cu130 pins 3.5.0" "#17 wrong triton"
expect_in torch.triton fix "/venv/bin/python -m pip install triton==3.5.0" "#17 wrong triton"
mv "$T/site/triton-3.4.0.dist-info" "$T/site/triton-3.5.0.dist-info"
printf 'Name: triton\nVersion: 3.5.0\n' > "$T/site/triton-3.5.0.dist-info/METADATA"
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0" torch.triton
expect torch.triton ok "#17 matching triton"
doctor --torch-dir "$T/site130x/torch" torch.triton
expect torch.triton skip "no torch, no triton check"

# A CPU build of torch: no CUDA extension can be built against it.
mk_torch "$T/cpu" 2.11.0+cpu None
doctor --torch-dir "$T/cpu/torch" --cuda-home "$T/cuda-13.0"
expect torch.cuda error "cpu torch"
expect_in torch.cuda fix "torch==2.11.0 --index-url https://download.pytorch.org/whl/cu130" "cpu torch"
expect toolkit.version_match skip "cpu torch"
expect_rc 2 "cpu torch"

# #14: driver 570 (CUDA 12.8) under a cu130 torch; the fix is a wheel the driver runs.
FAKE_GPUS="570.124.06;NVIDIA GeForce RTX 5090:12.0" doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0" driver.torch toolkit.driver_ptx
expect driver.torch error "#14"
expect_in driver.torch summary "too old" "#14"
expect_in driver.torch fix "torch==2.11.0 --index-url https://download.pytorch.org/whl/cu128" "#14"
expect toolkit.driver_ptx warn "#14 PTX"
# A 12.x torch on a 525 driver is fine; on 520 it is not.
mk_torch "$T/site128" 2.7.1+cu128 12.8
FAKE_GPUS="525.60.13;NVIDIA A100:8.0" doctor --torch-dir "$T/site128/torch" --cuda-home "$T/cuda-13.0" driver.torch
expect driver.torch ok "525 runs 12.8 (minor-version compatibility)"
FAKE_GPUS="520.61.05;NVIDIA A100:8.0" doctor --torch-dir "$T/site128/torch" --cuda-home "$T/cuda-13.0" driver.torch
expect driver.torch error "520 under 12.x"

# #13: a cu126 torch on an RTX 5090 has no sm_120 code.
mk_torch "$T/site126" 2.6.0+cu126 12.6
doctor --torch-dir "$T/site126/torch" --cuda-home "$T/cuda-13.0" torch.gpu_arch
expect torch.gpu_arch error "#13"
expect_in torch.gpu_arch summary "no kernel image" "#13"
expect_in torch.gpu_arch fix "whl/cu130" "#13"
FAKE_GPUS="560.35.03;NVIDIA H100:9.0" doctor --torch-dir "$T/site126/torch" --cuda-home "$T/cuda-13.0" torch.gpu_arch
expect torch.gpu_arch ok "cu126 covers sm_90"

# No driver at all: a normal state, a warning, and the driver-dependent checks skip.
FAKE_GPUS=none doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0"
expect driver.present warn "no driver"
expect driver.gpus skip "no driver"
expect driver.torch skip "no driver"
expect toolkit.driver_ptx skip "no driver"
expect arch.list warn "no driver, no TORCH_CUDA_ARCH_LIST"
# ... the same without the fake: the real probe with a library that is not there.
FAKE_GPUS= DOCTOR_ENV="SAGEBUILD_LIBCUDA=$T/nope/libcuda.so.1" doctor --torch-dir "$T/site/torch" driver.present
expect driver.present warn "libcuda missing"
expect_in driver.present summary "libcuda.so.1" "libcuda missing"
# A driver with no GPU.
FAKE_GPUS="580.65.06" doctor --torch-dir "$T/site/torch" driver.gpus
expect driver.gpus warn "no GPU"
FAKE_GPUS="580.65.06" DOCTOR_ENV="CUDA_VISIBLE_DEVICES=" doctor --torch-dir "$T/site/torch" driver.gpus
expect_in driver.gpus fix "unset CUDA_VISIBLE_DEVICES" "CUDA_VISIBLE_DEVICES hides the GPUs"
# A malformed fake is reported, not trusted.
FAKE_GPUS="garbage;;" doctor --torch-dir "$T/site/torch" driver.present
expect driver.present warn "malformed SAGEBUILD_FAKE_GPUS"
expect_in driver.present summary "malformed" "malformed SAGEBUILD_FAKE_GPUS"
finish
