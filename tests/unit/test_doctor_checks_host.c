/* Every verdict of host.compiler, build.ninja, build.jobs, build.disk and arch.list on fixture
 * contexts (doctor_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "doctor_fixture.h"

static void host_compiler(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_host_compiler);
    fx_expect(&f, CHECK_OK, "gcc 13.3.0 is accepted by this nvcc (gcc <= 14, from host_config.h)",
              NULL);

    /* Too new, with an older gcc-N on PATH: point CC at it. */
    version_parse("15.2.0", &f.ctx.host.asked.version);
    f.ctx.host.asked_fits = 0;
    f.ctx.host.fit_cc = xstrdup("gcc-14");
    f.ctx.host.fit_cxx = xstrdup("g++-14");
    fx_run(&f, check_host_compiler);
    fx_expect(&f, CHECK_ERROR,
              "gcc 15.2.0 is newer than this nvcc accepts (gcc <= 14): 'unsupported GNU version!'",
              "export CC=gcc-14 CXX=g++-14");

    /* ... and without one: install it first. */
    fx_set(&f.ctx.host.fit_cc, NULL);
    fx_set(&f.ctx.host.fit_cxx, NULL);
    fx_run(&f, check_host_compiler);
    fx_expect(&f, CHECK_ERROR, "gcc 15.2.0 is newer",
              "sudo apt-get install gcc-14 g++-14 && export CC=gcc-14 CXX=g++-14");

    /* clang against clang's limit; the fix is still a gcc within gcc's. */
    f.ctx.host.asked.is_clang = 1;
    version_parse("21.1.0", &f.ctx.host.asked.version);
    fx_run(&f, check_host_compiler);
    fx_expect(&f, CHECK_ERROR,
              "clang 21.1.0 is newer than this nvcc accepts (clang <= 20): 'unsupported clang "
              "version!'",
              "sudo apt-get install gcc-14 g++-14 && export CC=gcc-14 CXX=g++-14");

    f.ctx.limits.gcc_max = f.ctx.limits.clang_max = -1;
    fx_run(&f, check_host_compiler);
    fx_expect(&f, CHECK_SKIP, "clang 21.1.0; no limit to compare with", NULL);

    f.ctx.host.asked.found = 0;
    fx_set(&f.ctx.host.asked.error, "gcc is not on PATH");
    fx_run(&f, check_host_compiler);
    fx_expect(&f, CHECK_ERROR, "no host compiler: gcc is not on PATH",
              "sudo apt-get install build-essential");
    f.ctx.env.cc = "clang-99"; /* a $CC that is not there: drop it */
    fx_run(&f, check_host_compiler);
    fx_expect(&f, CHECK_ERROR, "no host compiler", "unset CC CXX");
    assert_string_equal(fx_ev(&f, "compiler"), "gcc (from $CC)");
    fx_free(&f);
}

static void ninja(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_build_ninja);
    fx_expect(&f, CHECK_OK, "ninja 1.11.1", NULL);

    fx_set(&f.ctx.res.ninja_version, NULL);
    fx_set(&f.ctx.res.ninja_error, "ninja --version exited with status 1");
    fx_run(&f, check_build_ninja);
    fx_expect(&f, CHECK_WARN, "ninja is broken: ninja --version exited with status 1",
              "/venv/bin/python -m pip install --force-reinstall ninja");

    fx_set(&f.ctx.res.ninja_path, NULL);
    fx_run(&f, check_build_ninja);
    fx_expect(&f, CHECK_WARN, "ninja not found: torch falls back to the slow distutils backend",
              "/venv/bin/python -m pip install ninja");
    fx_free(&f);
}

static void jobs(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_build_jobs);
    fx_expect(&f, CHECK_OK, "MAX_JOBS=8 fits 64.0 GiB available on 8 cores", NULL);

    /* torch's default, cores + 2 jobs at about 4 GiB each, in 8 GiB. */
    f.ctx.res.mem_avail_kb = 8LL * 1024 * 1024;
    fx_run(&f, check_build_jobs);
    fx_expect(&f, CHECK_WARN,
              "10 parallel nvcc jobs (torch's default, cores + 2) need about 40 GiB, 8.0 GiB is "
              "available: the build may be killed for memory",
              "export MAX_JOBS=2");
    f.ctx.env.max_jobs = "32";
    fx_run(&f, check_build_jobs);
    fx_expect(&f, CHECK_WARN, "32 parallel nvcc jobs ($MAX_JOBS) need about 128 GiB",
              "export MAX_JOBS=2");
    f.ctx.env.max_jobs = "2";
    fx_run(&f, check_build_jobs);
    fx_expect(&f, CHECK_OK, "MAX_JOBS=2 fits 8.0 GiB available on 8 cores", NULL);

    f.ctx.env.max_jobs = NULL;
    f.ctx.res.cores = 1;
    f.ctx.res.mem_avail_kb = 64LL * 1024 * 1024;
    fx_run(&f, check_build_jobs);
    fx_expect(&f, CHECK_OK, "MAX_JOBS=1 fits 64.0 GiB available on 1 core", NULL);

    f.ctx.res.mem_avail_kb = -1;
    fx_run(&f, check_build_jobs);
    fx_expect(&f, CHECK_SKIP, "MemAvailable unknown", NULL);
    fx_free(&f);
}

#define DU_FIX(q) "du -xsh " q "/* 2>/dev/null | sort -h | tail  # the largest items to remove"

static void disk(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_build_disk);
    fx_expect(&f, CHECK_OK, "free for the toolkit, the build and temporary files", NULL);
    assert_non_null(fx_ev(&f, "cache_dir"));

    /* The tightest folder decides; its name is quoted in the fix. */
    fx_set(&f.ctx.disk[1].dir, "/home/u/my cache");
    f.ctx.disk[1].free_bytes = 2 * FX_GIB;
    fx_run(&f, check_build_disk);
    fx_expect(&f, CHECK_WARN, "2.0 GiB free in /home/u/my cache: a build needs about 3 GiB",
              DU_FIX("'/home/u/my cache'"));

    f.ctx.disk[2].free_bytes = FX_GIB / 2;
    fx_run(&f, check_build_disk);
    fx_expect(&f, CHECK_ERROR, "only 512.0 MiB free in /tmp: a build needs about 3 GiB",
              DU_FIX("/tmp"));

    /* A folder that could not be measured is left out. */
    f.ctx.disk[2].free_bytes = -1;
    fx_run(&f, check_build_disk);
    fx_expect(&f, CHECK_WARN, "in /home/u/my cache", DU_FIX("'/home/u/my cache'"));
    assert_null(fx_ev(&f, "tmp_dir"));

    f.ctx.disk[0].free_bytes = f.ctx.disk[1].free_bytes = -1;
    fx_run(&f, check_build_disk);
    fx_expect(&f, CHECK_SKIP, "free space unknown", NULL);
    fx_free(&f);
}

#define LIST_FIX(l) "export TORCH_CUDA_ARCH_LIST='" l "'"

static void arch_list(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_arch_list);
    fx_expect(&f, CHECK_OK, "TORCH_CUDA_ARCH_LIST unset: builds target the GPUs here (12.0)", NULL);

    f.ctx.env.torch_arch_list = "12.0";
    fx_run(&f, check_arch_list);
    fx_expect(&f, CHECK_OK, "TORCH_CUDA_ARCH_LIST='12.0' fits the GPUs and SageAttention", NULL);

    f.ctx.env.torch_arch_list = "8.9";
    fx_run(&f, check_arch_list);
    fx_expect(&f, CHECK_ERROR,
              "TORCH_CUDA_ARCH_LIST='8.9': NVIDIA GeForce RTX 5090 (12.0) is not in the list: 'no "
              "kernel image is available'",
              LIST_FIX("12.0"));
    f.ctx.env.torch_arch_list = "12.0;banana";
    fx_run(&f, check_arch_list);
    fx_expect(&f, CHECK_ERROR, "'banana' is not an arch", LIST_FIX("12.0"));
    f.ctx.env.torch_arch_list = " ";
    fx_run(&f, check_arch_list);
    fx_expect(&f, CHECK_ERROR, "the list is empty", LIST_FIX("12.0"));

    f.ctx.env.torch_arch_list = "12.0;8.9";
    fx_run(&f, check_arch_list);
    fx_expect(&f, CHECK_WARN, "TORCH_CUDA_ARCH_LIST='12.0;8.9': no GPU here is 8.9",
              LIST_FIX("12.0"));
    f.ctx.env.torch_arch_list = "12.0;7.0";
    fx_run(&f, check_arch_list);
    fx_expect(&f, CHECK_WARN, "SageAttention builds nothing for '7.0'", LIST_FIX("12.0"));

    /* SageAttention#291: 9.0 beside other archs sends wgmma code through ptxas for them. */
    fx_gpus(&f, 2, "NVIDIA H200", 9, 0, "NVIDIA GeForce RTX 5090", 12, 0);
    f.ctx.env.torch_arch_list = "9.0;12.0";
    fx_run(&f, check_arch_list);
    fx_expect(&f, CHECK_WARN,
              "9.0 with other archs can fail with 'Instruction wgmma.fence not supported on "
              ".target sm_120'",
              LIST_FIX("9.0;12.0"));

    /* A torch too old to know an arch rejects it in its arch flags. */
    fx_gpus(&f, 0);
    fx_set(&f.ctx.torch.version, "2.7.0+cu128");
    f.ctx.env.torch_arch_list = "12.1";
    fx_run(&f, check_arch_list);
    fx_expect(&f, CHECK_WARN, "torch 2.7.0+cu128 raises 'Unknown CUDA arch (12.1)'",
              LIST_FIX("12.0"));

    f.ctx.env.torch_arch_list = NULL;
    fx_run(&f, check_arch_list);
    fx_expect(&f, CHECK_WARN,
              "TORCH_CUDA_ARCH_LIST unset and no GPU: SageAttention stops with 'No target compute "
              "capabilities'",
              LIST_FIX("12.0") "  # the compute capability of the GPU you build for");
    fx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_compiler), cmocka_unit_test(ninja),     cmocka_unit_test(jobs),
        cmocka_unit_test(disk),          cmocka_unit_test(arch_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
