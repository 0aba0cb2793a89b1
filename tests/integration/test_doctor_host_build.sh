#!/bin/sh
# Host compiler against host_config.h, ninja, MAX_JOBS against memory, and TORCH_CUDA_ARCH_LIST
# as torch and SageAttention read it.
. "$(dirname "$0")/doctor/lib.sh"
mk_toolkit "$T/cuda-12.8" 12.8.93 14
mk_toolkit "$T/cuda-13.0" 13.0.88 15
mk_torch "$T/site" 2.11.0+cu130 13.0
mk_torch "$T/site128" 2.7.1+cu128 12.8

# #3: gcc 15 against 12.8's limit of 14; a gcc-14/g++-14 pair on PATH is the fix.
mk_gcc "$T/bin" gcc 15.1.0
doctor --torch-dir "$T/site128/torch" --cuda-home "$T/cuda-12.8" host.compiler
expect host.compiler error "#3 no older gcc"
expect_in host.compiler summary "newer than this nvcc accepts (gcc <= 14)" "#3 no older gcc"
expect_in host.compiler fix "sudo apt-get install gcc-14 g++-14 && export CC=gcc-14 CXX=g++-14" "#3 no older gcc"
mk_gcc "$T/bin" gcc-13 13.3.0
mk_gcc "$T/bin" g++-13 13.3.0
mk_gcc "$T/bin" gcc-14 14.2.0
doctor --torch-dir "$T/site128/torch" --cuda-home "$T/cuda-12.8" host.compiler
expect_in host.compiler fix "export CC=gcc-13 CXX=g++-13" "#3 gcc-13 pair (gcc-14 has no g++-14)"
mk_gcc "$T/bin" g++-14 14.2.0
doctor --torch-dir "$T/site128/torch" --cuda-home "$T/cuda-12.8" host.compiler
expect_in host.compiler fix "export CC=gcc-14 CXX=g++-14" "#3 newest fitting pair"
# The fix works when pasted: with CC=gcc-14 the same check passes (torch passes $CC as -ccbin).
DOCTOR_ENV="CC=gcc-14 CXX=g++-14" doctor --torch-dir "$T/site128/torch" --cuda-home "$T/cuda-12.8" host.compiler
expect host.compiler ok "#3 after the fix"
expect_in host.compiler compiler "gcc-14 (from \$CC)" "#3 after the fix"
# 13.0 accepts gcc 15; the real host_config.h layout sits in the real-toolkit test.
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0" host.compiler
expect host.compiler ok "gcc 15 under 13.0"
expect_in host.compiler gcc_max 15 "gcc 15 under 13.0"
# clang has its own limit (< 21 here).
mk_gcc "$T/bin" clang-21 21.1.0
DOCTOR_ENV="CC=clang-21" doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0" host.compiler
expect host.compiler error "clang 21"
expect_in host.compiler summary "clang <= 20" "clang 21"
# $CC names a compiler that is not there.
DOCTOR_ENV="CC=gcc-99" doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0" host.compiler
expect host.compiler error "missing \$CC"
expect_in host.compiler fix "unset CC CXX" "missing \$CC"
rm "$T/bin/gcc"
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0" host.compiler
expect host.compiler error "no gcc"
expect_in host.compiler fix "build-essential" "no gcc"
mk_gcc "$T/bin" gcc 13.3.0

# #9: ninja missing, broken, present.
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0" build.ninja
expect build.ninja warn "#9 no ninja"
expect_in build.ninja fix "python3 -m pip install ninja" "#9 no ninja"
script "$T/bin/ninja" "exit 3"
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0" --python /opt/py/bin/python build.ninja
expect build.ninja warn "#9 broken ninja"
expect_in build.ninja fix "/opt/py/bin/python -m pip install --force-reinstall ninja" "#9 broken ninja"
mk_gcc "$T/bin" ninja 1.11.1
doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0" build.ninja
expect build.ninja ok "#9 ninja"

# #8: MAX_JOBS far beyond memory; the suggestion fits memory and cores.
DOCTOR_ENV="MAX_JOBS=100000" doctor --torch-dir "$T/site/torch" build.jobs
expect build.jobs warn "#8"
jobs=$(field build.jobs suggested_max_jobs)
expect_in build.jobs fix "export MAX_JOBS=$jobs" "#8"
[ "$jobs" -ge 1 ] && [ "$jobs" -le "$(nproc)" ] || fail "#8: suggestion $jobs outside 1..$(nproc)"
DOCTOR_ENV="MAX_JOBS=1" doctor --torch-dir "$T/site/torch" build.jobs
expect build.jobs ok "#8 MAX_JOBS=1"
doctor --torch-dir "$T/site/torch" build.disk
case $(status build.disk) in ok | warn | error) ;; *) fail "build.disk: $(status build.disk)" ;; esac

# #6: 9.0 beside 12.0 on an RTX 5090: wgmma code for a GPU not present.
DOCTOR_ENV="TORCH_CUDA_ARCH_LIST=9.0;12.0" doctor --torch-dir "$T/site/torch" arch.list
expect arch.list warn "#6"
expect_in arch.list summary "wgmma" "#6"
expect_in arch.list fix "export TORCH_CUDA_ARCH_LIST='12.0'" "#6"
# #7: names torch rejects, SageAttention's spellings, garbage, and a GPU left out.
DOCTOR_ENV="TORCH_CUDA_ARCH_LIST=12.0f" doctor --torch-dir "$T/site/torch" arch.list
expect arch.list warn "#7 12.0f"
expect_in arch.list summary "Unknown CUDA arch (12.0f)" "#7 12.0f"
DOCTOR_ENV="TORCH_CUDA_ARCH_LIST=sm_120a" doctor --torch-dir "$T/site/torch" arch.list
expect arch.list warn "#7 sm_120a is SageAttention's spelling, not torch's"
DOCTOR_ENV="TORCH_CUDA_ARCH_LIST=banana" doctor --torch-dir "$T/site/torch" arch.list
expect arch.list error "#7 garbage"
DOCTOR_ENV="TORCH_CUDA_ARCH_LIST=8.9" doctor --torch-dir "$T/site/torch" arch.list toolkit.archs
expect arch.list error "#7 local GPU missing"
expect_in arch.list summary "RTX 5090 (12.0) is not in the list" "#7 local GPU missing"
DOCTOR_ENV="TORCH_CUDA_ARCH_LIST=12.0" doctor --torch-dir "$T/site/torch" --cuda-home "$T/cuda-13.0" arch.list toolkit.archs
expect arch.list ok "12.0 on a 5090"
expect_in toolkit.archs from TORCH_CUDA_ARCH_LIST "12.0 on a 5090"
# torch 2.7 does not know 12.1 yet; 2.11 does.
FAKE_GPUS="580.65.06;NVIDIA GB10:12.1" DOCTOR_ENV="TORCH_CUDA_ARCH_LIST=12.1" doctor --torch-dir "$T/site128/torch" arch.list
expect arch.list warn "12.1 under torch 2.7"
FAKE_GPUS="580.65.06;NVIDIA GB10:12.1" DOCTOR_ENV="TORCH_CUDA_ARCH_LIST=12.1" doctor --torch-dir "$T/site/torch" arch.list
expect arch.list ok "12.1 under torch 2.11"
# No GPU and no list: SageAttention would stop; with the list it is fine.
FAKE_GPUS=none doctor --torch-dir "$T/site/torch" arch.list
expect arch.list warn "no GPU, no list"
FAKE_GPUS=none DOCTOR_ENV="TORCH_CUDA_ARCH_LIST=8.9;12.0" doctor --torch-dir "$T/site/torch" arch.list
expect arch.list ok "no GPU, a list"
finish
