/* The check table: stable dotted ids (documented in man/sagebuild.1; scripts rely on them),
 * in an order where early findings explain later ones: torch, the driver, the toolkit, the host
 * compiler, build resources, target archs, then an installed SageAttention. */
#include "doctor/checks_wheels.h"
#include "doctor/doctor.h"

static const struct check_def table[] = {
    {"torch.found", "torch", check_torch_found},
    {"torch.cuda", "torch's CUDA build", check_torch_cuda},
    {"torch.triton", "triton vs torch's pin", check_torch_triton},
    {"driver.present", "NVIDIA driver", check_driver_present},
    {"driver.gpus", "GPUs", check_driver_gpus},
    {"driver.torch", "driver vs torch's CUDA", check_driver_torch},
    {"torch.gpu_arch", "torch's code for these GPUs", check_torch_gpu_arch},
    {"toolkit.cuda_home", "CUDA_HOME as torch resolves it", check_toolkit_cuda_home},
    {"toolkit.nvcc", "nvcc in CUDA_HOME", check_toolkit_nvcc},
    {"toolkit.version_match", "nvcc vs torch's CUDA", check_toolkit_version_match},
    {"toolkit.components", "toolkit components", check_toolkit_components},
    {"toolkit.consistency", "one toolkit, not a mix", check_toolkit_consistency},
    {"toolkit.wheels", "CUDA_HOME and PyPI wheels", check_toolkit_wheels},
    {"toolkit.archs", "nvcc vs the target archs", check_toolkit_archs},
    {"toolkit.driver_ptx", "nvcc vs the driver's PTX JIT", check_toolkit_driver_ptx},
    {"host.compiler", "host compiler vs nvcc's limit", check_host_compiler},
    {"build.ninja", "ninja", check_build_ninja},
    {"build.jobs", "parallel jobs vs memory", check_build_jobs},
    {"build.disk", "free disk space", check_build_disk},
    {"arch.list", "TORCH_CUDA_ARCH_LIST", check_arch_list},
    {"sageattention.install", "installed SageAttention", check_sage_install},
    {"sageattention.kernels", "GPU code in sageattention vs the GPUs", check_sage_kernels},
    {"sageattention.imports", "SageAttention modules import", check_sage_imports},
};

const struct check_def *doctor_checks(int *n)
{
    *n = (int)(sizeof table / sizeof table[0]);
    return table;
}
