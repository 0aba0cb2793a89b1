/* Every verdict of torch.found, torch.cuda, torch.triton, driver.present, driver.gpus,
 * driver.torch and torch.gpu_arch on fixture contexts (doctor_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "doctor_fixture.h"

#define PIP_TORCH "/venv/bin/python -m pip install "
#define TORCH_INDEX " --index-url https://download.pytorch.org/whl/"

static void torch_found(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_torch_found);
    fx_expect(&f, CHECK_OK, "torch 2.11.0+cu130", NULL);
    assert_string_equal(fx_ev(&f, "python_version"), "3.12.3");

    /* The package is there but its version.py is not torch's. */
    f.ctx.torch.found = 0;
    fx_set(&f.ctx.torch.error, "version.py has no __version__");
    fx_run(&f, check_torch_found);
    fx_expect(&f, CHECK_ERROR, "site/torch is damaged: version.py has no __version__",
              PIP_TORCH "--force-reinstall torch" TORCH_INDEX "cu130");

    /* Python ran and has no torch: the fix names that python, quoted. */
    fx_set(&f.ctx.torch.dir, NULL);
    fx_set(&f.ctx.torch.python, "/home/me/my venv/bin/python");
    fx_run(&f, check_torch_found);
    fx_expect(&f, CHECK_WARN, "torch is not installed for /home/me/my venv/bin/python",
              "'/home/me/my venv/bin/python' -m pip install torch" TORCH_INDEX "cu130");

    /* Python did not answer at all. */
    fx_set(&f.ctx.torch.python_version, NULL);
    fx_set(&f.ctx.torch.error, "python3: command not found");
    fx_run(&f, check_torch_found);
    fx_expect(&f, CHECK_WARN, "could not ask python where torch is: python3: command not found",
              "sagebuild doctor --python /path/to/venv/bin/python");
    fx_free(&f);
}

static void torch_cuda(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_torch_cuda);
    fx_expect(&f, CHECK_OK, "torch 2.11.0+cu130 is built for CUDA 13.0", NULL);

    fx_set(&f.ctx.torch.cuda, NULL);
    fx_set(&f.ctx.torch.hip, "6.2.41133");
    fx_run(&f, check_torch_cuda);
    fx_expect(&f, CHECK_ERROR, "is a ROCm build (hip 6.2.41133)",
              PIP_TORCH "--force-reinstall torch==2.11.0" TORCH_INDEX "cu130");

    fx_set(&f.ctx.torch.hip, NULL);
    fx_run(&f, check_torch_cuda);
    fx_expect(&f, CHECK_ERROR, "is a CPU-only build (torch.version.cuda is None)",
              PIP_TORCH "--force-reinstall torch==2.11.0" TORCH_INDEX "cu130");

    /* No driver: the wheel index follows the toolkit's CUDA. */
    f.ctx.gpu.cuda_driver_version = 0;
    fx_nvcc_release(&f, "12.8");
    fx_run(&f, check_torch_cuda);
    fx_expect(&f, CHECK_ERROR, "CPU-only",
              PIP_TORCH "--force-reinstall torch==2.11.0" TORCH_INDEX "cu128");

    f.ctx.torch.found = 0;
    fx_run(&f, check_torch_cuda);
    fx_expect(&f, CHECK_SKIP, "no torch to check", NULL);
    fx_free(&f);
}

static void write_torch_metadata(const struct fx *f, const char *triton_pin)
{
    char *meta = xasprintf("Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n"
                           "Requires-Dist: triton==%s; platform_system == \"Linux\"\n",
                           triton_pin);
    fx_file(f, "site/torch-2.11.0+cu130.dist-info/METADATA", meta, 0644);
    free(meta);
}

static void write_triton(const struct fx *f, const char *version)
{
    char *meta = xasprintf("Metadata-Version: 2.1\nName: triton\nVersion: %s\n", version);
    char *rel = xasprintf("site/triton-%s.dist-info/METADATA", version);
    fx_file(f, rel, meta, 0644);
    free(rel);
    free(meta);
}

static void torch_triton(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_torch_triton);
    fx_expect(&f, CHECK_SKIP, "torch pins no triton version", NULL);

    write_torch_metadata(&f, "3.5.0");
    fx_run(&f, check_torch_triton);
    fx_expect(&f, CHECK_WARN, "triton is not installed; torch 2.11.0+cu130 wants triton 3.5.0",
              "/venv/bin/python -m pip install triton==3.5.0");

    write_triton(&f, "3.4.0");
    fx_run(&f, check_torch_triton);
    fx_expect(&f, CHECK_WARN, "triton 3.4.0 is installed, torch 2.11.0+cu130 pins 3.5.0",
              "/venv/bin/python -m pip install triton==3.5.0");

    fx_remove(&f, "site/triton-3.4.0.dist-info");
    write_triton(&f, "3.5.0");
    fx_run(&f, check_torch_triton);
    fx_expect(&f, CHECK_OK, "triton 3.5.0, as torch pins", NULL);

    /* A triton folder without dist-info: present, version unknown, taken as the pin. */
    fx_remove(&f, "site/triton-3.5.0.dist-info");
    f.ctx.triton_dir = fx_path(&f, "site/triton");
    fx_run(&f, check_torch_triton);
    fx_expect(&f, CHECK_OK, "triton 3.5.0, as torch pins", NULL);

    f.ctx.torch.found = 0;
    fx_run(&f, check_torch_triton);
    fx_expect(&f, CHECK_SKIP, "no torch to check", NULL);
    fx_free(&f);
}

static void driver_present(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_driver_present);
    fx_expect(&f, CHECK_OK, "NVIDIA driver 580.65.06, supports CUDA <= 13.0", NULL);

    f.ctx.gpu.init_result = 100; /* CUDA_ERROR_NO_DEVICE: the driver itself is fine */
    fx_run(&f, check_driver_present);
    fx_expect(&f, CHECK_OK, "NVIDIA driver 580.65.06", NULL);

    f.ctx.gpu.init_result = 999;
    fx_run(&f, check_driver_present);
    fx_expect(&f, CHECK_ERROR, "driver 580.65.06 is loaded but cuInit failed with 999",
              "nvidia-smi  # shows the driver's own error");

    f.ctx.gpu.init_result = 803;
    fx_run(&f, check_driver_present);
    fx_expect(&f, CHECK_ERROR, "does not match the loaded kernel module (cuInit 803)",
              "sudo reboot  # loads the kernel module that matches the installed driver");

    /* A driver update without a reboot: NVML and /proc disagree. */
    f.ctx.gpu.init_result = 0;
    fx_set(&f.ctx.gpu.kernel_module_version, "570.124.06");
    fx_run(&f, check_driver_present);
    fx_expect(&f, CHECK_ERROR,
              "driver 580.65.06 does not match the loaded kernel module 570.124.06",
              "sudo reboot  # loads the kernel module that matches the installed driver");

    f.ctx.gpu.crashed = 1;
    fx_set(&f.ctx.gpu.error, "the driver probe was killed by signal 11");
    fx_run(&f, check_driver_present);
    fx_expect(&f, CHECK_ERROR, "killed by signal 11: the driver is installed but broken",
              "nvidia-smi  # shows the driver's own error; reinstall the driver if it fails too");
    f.ctx.gpu.crashed = 0;
    f.ctx.gpu.timed_out = 1;
    fx_run(&f, check_driver_present);
    fx_expect(&f, CHECK_ERROR, "the driver is installed but broken",
              "nvidia-smi  # shows the driver's own error; reinstall the driver if it fails too");

    f.ctx.gpu.timed_out = 0;
    f.ctx.gpu.libcuda_loaded = 0;
    fx_set(&f.ctx.gpu.error, NULL);
    fx_run(&f, check_driver_present);
    fx_expect(&f, CHECK_WARN, "no NVIDIA driver (libcuda.so.1 not found)",
              "nvidia-smi  # after installing the NVIDIA driver: >= 580 for CUDA 13.x, >= 525 for "
              "12.x");
    fx_free(&f);
}

static void driver_gpus(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_driver_gpus);
    fx_expect(&f, CHECK_OK, "1 GPU: NVIDIA GeForce RTX 5090 (sm_120)", NULL);
    assert_string_equal(fx_ev(&f, "gpu0"), "NVIDIA GeForce RTX 5090, compute capability 12.0");

    fx_gpus(&f, 2, "NVIDIA H200", 9, 0, "NVIDIA GeForce RTX 4090", 8, 9);
    fx_run(&f, check_driver_gpus);
    fx_expect(&f, CHECK_OK, "2 GPUs: NVIDIA H200 (sm_90), NVIDIA GeForce RTX 4090 (sm_89)", NULL);

    fx_gpus(&f, 0);
    fx_run(&f, check_driver_gpus);
    fx_expect(&f, CHECK_WARN, "the driver sees no GPU",
              "nvidia-smi -L  # lists the GPUs the driver sees");

    f.ctx.env.cuda_visible_devices = "";
    fx_run(&f, check_driver_gpus);
    fx_expect(&f, CHECK_WARN, "the driver sees no GPU (CUDA_VISIBLE_DEVICES='')",
              "unset CUDA_VISIBLE_DEVICES");

    f.ctx.gpu.init_result = 2;
    fx_run(&f, check_driver_gpus);
    fx_expect(&f, CHECK_SKIP, "no working driver to list GPUs", NULL);
    f.ctx.gpu.init_result = 0;
    f.ctx.gpu.libcuda_loaded = 0;
    fx_run(&f, check_driver_gpus);
    fx_expect(&f, CHECK_SKIP, "no working driver to list GPUs", NULL);
    fx_free(&f);
}

static void driver_torch(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_driver_torch);
    fx_expect(&f, CHECK_OK, "driver runs torch's CUDA 13.0", NULL);

    f.ctx.gpu.cuda_driver_version = 12080;
    fx_set(&f.ctx.gpu.driver_version, "570.124.06");
    fx_run(&f, check_driver_torch);
    fx_expect(&f, CHECK_ERROR,
              "driver 570.124.06 (CUDA <= 12.8) is too old for torch's CUDA 13.0 (needs driver "
              ">= 580)",
              PIP_TORCH "--force-reinstall torch==2.11.0" TORCH_INDEX "cu128");

    f.ctx.gpu.cuda_driver_version = 0;
    fx_set(&f.ctx.gpu.driver_version, NULL);
    fx_run(&f, check_driver_torch);
    fx_expect(&f, CHECK_SKIP, "the driver's version is unknown", NULL);

    f.ctx.gpu.libcuda_loaded = 0;
    fx_run(&f, check_driver_torch);
    fx_expect(&f, CHECK_SKIP, "no driver to check", NULL);

    fx_set(&f.ctx.torch.cuda, NULL);
    fx_run(&f, check_driver_torch);
    fx_expect(&f, CHECK_SKIP, "no CUDA build of torch to check", NULL);
    fx_free(&f);
}

static void torch_gpu_arch(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_torch_gpu_arch);
    fx_expect(&f, CHECK_OK, "torch's CUDA 13.0 wheels carry code for every GPU here", NULL);

    /* cu126 wheels stop at sm_90: an RTX 5090 has no kernel image. */
    fx_set(&f.ctx.torch.version, "2.7.0+cu126");
    fx_set(&f.ctx.torch.cuda, "12.6");
    fx_run(&f, check_torch_gpu_arch);
    fx_expect(&f, CHECK_ERROR,
              "torch 2.7.0+cu126 (CUDA 12.6) has no code for NVIDIA GeForce RTX 5090 (sm_120)",
              PIP_TORCH "--force-reinstall torch" TORCH_INDEX "cu130");
    assert_string_equal(fx_ev(&f, "gpu"), "NVIDIA GeForce RTX 5090 (sm_120)");

    fx_gpus(&f, 0);
    fx_run(&f, check_torch_gpu_arch);
    fx_expect(&f, CHECK_SKIP, "no GPU to check", NULL);

    fx_set(&f.ctx.torch.cuda, NULL);
    fx_run(&f, check_torch_gpu_arch);
    fx_expect(&f, CHECK_SKIP, "no CUDA build of torch", NULL);
    fx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(torch_found),    cmocka_unit_test(torch_cuda),
        cmocka_unit_test(torch_triton),   cmocka_unit_test(driver_present),
        cmocka_unit_test(driver_gpus),    cmocka_unit_test(driver_torch),
        cmocka_unit_test(torch_gpu_arch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
