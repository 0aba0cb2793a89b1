/* Every verdict of toolkit.cuda_home, toolkit.nvcc, toolkit.version_match, toolkit.components,
 * toolkit.consistency, toolkit.wheels, toolkit.archs and toolkit.driver_ptx on fixture contexts
 * (doctor_fixture.h) and fixture toolkit trees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "doctor/checks_wheels.h"
#include "doctor_fixture.h"

#include <unistd.h>

#define FETCH(v) "sagebuild fetch-cuda --cuda " v " && eval \"$(sagebuild env)\""
#define FETCH_MATCH "sagebuild fetch-cuda --match-torch && eval \"$(sagebuild env)\""

/* Points CUDA_HOME at root/rel. */
static void home_at(struct fx *f, const char *rel, enum cuda_home_rule rule)
{
    free(f->ctx.home.path);
    f->ctx.home.path = fx_path(f, rel);
    f->ctx.home.rule = rule;
}

static void cuda_home(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_toolkit_cuda_home);
    fx_expect_rooted(&f, CHECK_OK, "CUDA_HOME=ROOT/cuda (from $CUDA_HOME)", NULL);
    assert_null(fx_ev(&f, "layout"));
    fx_dir(&f, "cuda/dist-info");
    fx_run(&f, check_toolkit_cuda_home);
    fx_expect(&f, CHECK_OK, "CUDA_HOME=", NULL);
    assert_non_null(fx_ev(&f, "layout"));

    /* pip's runtime wheels: libraries only. */
    fx_dir(&f, "venv/lib/python3.12/site-packages/nvidia/cuda_nvcc/bin");
    home_at(&f, "venv/lib/python3.12/site-packages/nvidia/cuda_nvcc", CUDA_HOME_FROM_CUDA_HOME);
    fx_run(&f, check_toolkit_cuda_home);
    fx_expect(&f, CHECK_ERROR,
              "is pip's nvidia-* runtime wheels: libraries only, no nvcc, cicc or headers (CUDA "
              "12's nvcc wheel ships only ptxas)",
              "unset CUDA_HOME CUDA_PATH && " FETCH("13.0"));

    /* Something that is there but not a folder. */
    fx_file(&f, "cuda-file", "", 0644);
    home_at(&f, "cuda-file", CUDA_HOME_FROM_CUDA_PATH);
    fx_run(&f, check_toolkit_cuda_home);
    fx_expect_rooted(&f, CHECK_ERROR,
                     "CUDA_HOME=ROOT/cuda-file ($CUDA_PATH) is a file, not a folder",
                     "unset CUDA_HOME CUDA_PATH && " FETCH("13.0"));
    f.ctx.home.rule = CUDA_HOME_FROM_NVCC; /* nothing to unset: the fix is the fetch alone */
    fx_run(&f, check_toolkit_cuda_home);
    fx_expect(&f, CHECK_ERROR, "(nvcc on PATH)", FETCH("13.0"));

    /* No toolkit at all: torch's CUDA, else whatever torch turns out to want. */
    fx_set(&f.ctx.home.path, NULL);
    fx_run(&f, check_toolkit_cuda_home);
    fx_expect(&f, CHECK_ERROR, "no CUDA toolkit: CUDA_HOME and CUDA_PATH unset", FETCH("13.0"));
    fx_set(&f.ctx.torch.cuda, NULL);
    fx_run(&f, check_toolkit_cuda_home);
    fx_expect(&f, CHECK_ERROR, "no CUDA toolkit", FETCH_MATCH);
    fx_free(&f);
}

static void nvcc_runs(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_toolkit_nvcc);
    fx_expect(&f, CHECK_OK, "nvcc 13.0, V13.0.88", NULL);

    f.ctx.nvcc.ran = 0;
    fx_set(&f.ctx.nvcc.error, "nvcc --version printed nothing");
    fx_run(&f, check_toolkit_nvcc);
    fx_expect(&f, CHECK_ERROR, "nvcc --version printed nothing", FETCH("13.0"));

    /* No torch CUDA and no working nvcc: nothing tells which release to fetch. */
    fx_set(&f.ctx.torch.cuda, NULL);
    fx_run(&f, check_toolkit_nvcc);
    fx_expect(&f, CHECK_ERROR, "printed nothing", FETCH_MATCH);

    home_at(&f, "missing", CUDA_HOME_FROM_CUDA_HOME);
    fx_run(&f, check_toolkit_nvcc);
    fx_expect(&f, CHECK_SKIP, "no CUDA_HOME to look in", NULL);
    fx_set(&f.ctx.home.path, NULL);
    fx_run(&f, check_toolkit_nvcc);
    fx_expect(&f, CHECK_SKIP, "no CUDA_HOME to look in", NULL);
    fx_free(&f);
}

static void version_match(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_toolkit_version_match);
    fx_expect(&f, CHECK_OK, "nvcc 13.0 matches torch's CUDA 13.0", NULL);

    fx_nvcc_release(&f, "13.1");
    fx_run(&f, check_toolkit_version_match);
    fx_expect(&f, CHECK_WARN, "nvcc 13.1 and torch's CUDA 13.0 differ in minor version",
              FETCH("13.0"));

    fx_nvcc_release(&f, "12.8");
    fx_run(&f, check_toolkit_version_match);
    fx_expect(&f, CHECK_ERROR,
              "nvcc 12.8 and torch's CUDA 13.0 differ in major version: torch raises 'The "
              "detected CUDA version (12.8) mismatches",
              FETCH("13.0"));

    f.ctx.nvcc.ran = 0;
    fx_run(&f, check_toolkit_version_match);
    fx_expect(&f, CHECK_SKIP, "no working nvcc", NULL);
    fx_set(&f.ctx.torch.cuda, NULL);
    fx_run(&f, check_toolkit_version_match);
    fx_expect(&f, CHECK_SKIP, "no CUDA build of torch", NULL);
    fx_free(&f);
}

static void components(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_toolkit_components);
    fx_expect(&f, CHECK_OK, "nvcc, cicc, libdevice, crt, cudart, cccl all present", NULL);

    /* CUDA 13's wheel layout: cicc in bin/, cccl headers under include/cccl. */
    fx_remove(&f, "cuda/nvvm/bin");
    fx_file(&f, "cuda/bin/cicc", "", 0755);
    fx_remove(&f, "cuda/include/nv");
    fx_file(&f, "cuda/include/cccl/nv/target", "", 0644);
    fx_run(&f, check_toolkit_components);
    fx_expect(&f, CHECK_OK, "all present", NULL);

    fx_remove(&f, "cuda/lib64/stubs");
    fx_run(&f, check_toolkit_components);
    fx_expect_rooted(
        &f, CHECK_WARN,
        "ROOT/cuda lacks libcuda stub (cuda_cudart (lib/stubs/libcuda.so, for -lcuda)): "
        "linking -lcuda ('cannot find -lcuda') fails",
        FETCH("13.0"));

    /* A missing part is an error; a non-executable nvcc counts as missing. */
    fx_remove(&f, "cuda/bin/cicc");
    fx_file(&f, "cuda/bin/nvcc", "", 0644);
    fx_run(&f, check_toolkit_components);
    fx_expect_rooted(&f, CHECK_ERROR,
                     "ROOT/cuda lacks nvcc (cuda_nvcc), cicc (libnvvm (cuda_nvcc before 13.0))",
                     FETCH("13.0"));
    assert_string_equal(fx_ev(&f, "nvcc"), "not executable");
    assert_string_equal(fx_ev(&f, "cicc"), "missing");

    home_at(&f, "missing", CUDA_HOME_FROM_CUDA_HOME);
    fx_run(&f, check_toolkit_components);
    fx_expect(&f, CHECK_SKIP, "no CUDA_HOME to look in", NULL);
    fx_free(&f);
}

static void consistency(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_toolkit_consistency);
    fx_expect_rooted(&f, CHECK_OK, "nvcc, headers and parts of ROOT/cuda are one CUDA 13.0 toolkit",
                     NULL);

    /* Headers and records of the same release are fine. */
    fx_file(&f, "cuda/include/cuda.h", "#define CUDA_VERSION 13000\n", 0644);
    fx_file(&f, "cuda/version.json", "{\"cuda_nvcc\": {\"version\": \"13.0.88\"}}", 0644);
    fx_run(&f, check_toolkit_consistency);
    fx_expect(&f, CHECK_OK, "one CUDA 13.0 toolkit", NULL);
    assert_string_equal(fx_ev(&f, "CUDA_VERSION"), "13000 (include/cuda.h)");
    assert_string_equal(fx_ev(&f, "cuda_nvcc"), "13.0.88");

    /* Another nvcc first on PATH: same release is fine, another release a warning. */
    struct nvcc_info *other = &f.ctx.nvcc_on_path;
    other->path = xstrdup("/usr/bin/nvcc");
    other->ran = 1;
    version_parse("13.0", &other->version.release);
    fx_run(&f, check_toolkit_consistency);
    fx_expect(&f, CHECK_OK, "one CUDA 13.0 toolkit", NULL);
    assert_string_equal(fx_ev(&f, "nvcc_on_path"), "/usr/bin/nvcc (13.0)");
    version_parse("12.0", &other->version.release);
    fx_run(&f, check_toolkit_consistency);
    fx_expect_rooted(&f, CHECK_WARN,
                     "the nvcc on PATH (/usr/bin/nvcc, 12.0) is not CUDA_HOME's "
                     "(ROOT/cuda/bin/nvcc, 13.0)",
                     "export PATH=ROOT/cuda/bin:\"$PATH\"");

    /* cicc reached through a link into another tree. */
    fx_file(&f, "other/cicc", "", 0755);
    fx_remove(&f, "cuda/nvvm/bin/cicc");
    char *target = fx_path(&f, "other/cicc"), *link = fx_path(&f, "cuda/nvvm/bin/cicc");
    assert_int_equal(symlink(target, link), 0);
    free(target);
    free(link);
    nvcc_info_free(other);
    fx_run(&f, check_toolkit_consistency);
    fx_expect_rooted(&f, CHECK_WARN,
                     "cicc resolves to ROOT/other/cicc, outside CUDA_HOME (ROOT/cuda)",
                     FETCH("13.0"));

    /* Distribution headers in the system include folder. */
    fx_remove(&f, "cuda/nvvm/bin/cicc");
    fx_file(&f, "usr/include/crt/host_config.h", "", 0644);
    char *sys = fx_path(&f, "usr/include");
    f.ctx.env.system_include = sys;
    fx_run(&f, check_toolkit_consistency);
    fx_expect_rooted(&f, CHECK_WARN,
                     "ROOT/usr/include/crt holds another toolkit's headers (distribution package) "
                     "beside CUDA_HOME=ROOT/cuda",
                     "sudo apt-get remove nvidia-cuda-dev nvidia-cuda-toolkit");
    /* Of two warnings the first one found is the summary. */
    other->path = xstrdup("/usr/bin/nvcc");
    other->ran = 1;
    version_parse("12.0", &other->version.release);
    fx_run(&f, check_toolkit_consistency);
    fx_expect_rooted(&f, CHECK_WARN, "the nvcc on PATH (/usr/bin/nvcc, 12.0)",
                     "export PATH=ROOT/cuda/bin:\"$PATH\"");
    nvcc_info_free(other);

    /* A part of another release is an error, and outranks the warning above. */
    fx_dir(&f, "cuda/dist-info/nvidia_cuda_crt-12.9.86.dist-info");
    fx_run(&f, check_toolkit_consistency);
    fx_expect(&f, CHECK_ERROR,
              "cuda_crt 12.9.86 is installed with nvcc 13.0: parts of two toolkits", FETCH("13.0"));
    fx_remove(&f, "cuda/dist-info");
    fx_file(&f, "cuda/include/cuda_runtime_api.h", "#define CUDART_VERSION 12080\n", 0644);
    fx_set(&f.ctx.torch.cuda, NULL); /* then the fix fetches nvcc's own release */
    fx_run(&f, check_toolkit_consistency);
    fx_expect(&f, CHECK_ERROR,
              "include/cuda_runtime_api.h says CUDA 12.8 but nvcc is 13.0: headers from another "
              "toolkit",
              FETCH("13.0"));
    f.ctx.env.system_include = "/nonexistent";
    free(sys);

    f.ctx.nvcc.ran = 0;
    fx_run(&f, check_toolkit_consistency);
    fx_expect(&f, CHECK_SKIP, "no working nvcc in CUDA_HOME", NULL);
    fx_free(&f);
}

#define SITE "venv/lib/python3.12/site-packages"

static void wheels(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_toolkit_wheels);
    fx_expect_rooted(&f, CHECK_SKIP, "CUDA_HOME=ROOT/cuda is not made from PyPI wheels", NULL);

    /* A prefix fetch-cuda made from wheels. */
    fx_file(&f, "cuda/sagebuild-lock.json", "{\"source\": \"pypi\"}", 0644);
    fx_dir(&f, "cuda/dist-info/nvidia_cuda_nvcc-13.0.88.dist-info");
    fx_run(&f, check_toolkit_wheels);
    fx_expect_rooted(&f, CHECK_OK,
                     "CUDA_HOME=ROOT/cuda was made from NVIDIA's PyPI wheels (nvidia-cuda-nvcc "
                     "13.0.88) and has what torch and nvcc need",
                     NULL);
    fx_remove(&f, "cuda/lib64/libcudart.so");
    fx_file(&f, "cuda/bin/ptxas", "", 0644);
    fx_run(&f, check_toolkit_wheels);
    fx_expect_rooted(&f, CHECK_ERROR,
                     "lacks: libcudart.so (torch links -lcudart; wheels ship libcudart.so.13); "
                     "bin/ptxas is not executable (a zip unpacked without its modes)",
                     "unset CUDA_HOME CUDA_PATH && sagebuild fetch-cuda --source auto --cuda 13.0 "
                     "--prefix ROOT/cuda --force && eval \"$(sagebuild env --prefix ROOT/cuda)\"");
    /* CUDA 12 has no wheel source: the redist fetch, which replaces the prefix itself. */
    fx_set(&f.ctx.torch.cuda, "12.8");
    fx_run(&f, check_toolkit_wheels);
    fx_expect_rooted(&f, CHECK_ERROR, "lacks: ",
                     "unset CUDA_HOME CUDA_PATH && sagebuild fetch-cuda --cuda 12.8 --prefix "
                     "ROOT/cuda && eval \"$(sagebuild env --prefix ROOT/cuda)\"");

    /* pip's runtime wheels beside torch. */
    fx_set(&f.ctx.torch.cuda, "13.0");
    fx_dir(&f, SITE "/nvidia/cuda_runtime/lib");
    fx_dir(&f, SITE "/nvidia_cuda_runtime-13.0.96.dist-info");
    home_at(&f, SITE "/nvidia/cuda_runtime", CUDA_HOME_FROM_CUDA_HOME);
    fx_run(&f, check_toolkit_wheels);
    fx_expect(&f, CHECK_ERROR,
              "/nvidia/cuda_runtime is pip's nvidia-* packages (nvidia-cuda-runtime 13.0.96): "
              "the runtime libraries torch loads",
              "unset CUDA_HOME CUDA_PATH && sagebuild fetch-cuda --source auto --cuda 13.0 && "
              "eval \"$(sagebuild env)\"");
    /* Neither torch's CUDA nor an nvcc: the wheels' own. */
    fx_set(&f.ctx.torch.cuda, NULL);
    f.ctx.nvcc.ran = 0;
    fx_run(&f, check_toolkit_wheels);
    fx_expect(&f, CHECK_ERROR, "pip's nvidia-* packages",
              "unset CUDA_HOME CUDA_PATH && sagebuild fetch-cuda --source auto --match-torch && "
              "eval \"$(sagebuild env)\"");

    /* pip-installed compiler wheels: a warning when complete, an error with gaps. */
    fx_set(&f.ctx.torch.cuda, "13.0");
    const char *cu13[] = {SITE "/nvidia/cu13/bin/nvcc", SITE "/nvidia/cu13/nvvm/bin/cicc"};
    for (int i = 0; i < 2; i++)
        fx_file(&f, cu13[i], "", 0755);
    fx_file(&f, SITE "/nvidia/cu13/lib64/libcudart.so", "", 0644);
    fx_file(&f, SITE "/nvidia/cu13/include/crt/host_config.h", "", 0644);
    home_at(&f, SITE "/nvidia/cu13", CUDA_HOME_FROM_CUDA_HOME);
    fx_run(&f, check_toolkit_wheels);
    const char *fetch = "unset CUDA_HOME CUDA_PATH && sagebuild fetch-cuda --source auto --cuda "
                        "13.0 && eval \"$(sagebuild env)\"";
    fx_expect(&f, CHECK_WARN,
              "/nvidia/cu13 is NVIDIA's compiler wheels as pip installed them in site-packages; "
              "pip may change or remove it",
              fetch);
    fx_remove(&f, SITE "/nvidia/cu13/lib64");
    fx_run(&f, check_toolkit_wheels);
    fx_expect(&f, CHECK_ERROR,
              "as pip installed them in site-packages, which lacks: lib64 (torch links "
              "-L$CUDA_HOME/lib64); libcudart.so",
              fetch);

    home_at(&f, "missing", CUDA_HOME_FROM_CUDA_HOME);
    fx_run(&f, check_toolkit_wheels);
    fx_expect(&f, CHECK_SKIP, "no CUDA_HOME to look at", NULL);
    fx_free(&f);
}

static void archs(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_toolkit_archs);
    fx_expect(&f, CHECK_OK, "nvcc 13.0 builds sm_120a (from the GPUs here)", NULL);

    f.opts.arch = "sm_90a,sm_120a";
    fx_run(&f, check_toolkit_archs);
    fx_expect(&f, CHECK_OK, "nvcc 13.0 builds sm_90a sm_120a (from --arch)", NULL);

    /* The arch needs a newer nvcc: fetch torch's CUDA when that is new enough... */
    fx_nvcc_release(&f, "12.6");
    fx_run(&f, check_toolkit_archs);
    fx_expect(&f, CHECK_ERROR,
              "nvcc 12.6 cannot build sm_120a needs nvcc >= 12.8; this nvcc is 12.6",
              FETCH("13.0"));
    /* ... else the oldest release that builds every arch asked. */
    fx_set(&f.ctx.torch.cuda, "12.6");
    fx_run(&f, check_toolkit_archs);
    fx_expect(&f, CHECK_ERROR, "sm_120a needs nvcc >= 12.8", FETCH("12.8"));

    /* nvcc knows the arch, the attention kernels need more (sm_89's FP8 mma.sync). */
    f.opts.arch = NULL;
    f.ctx.env.torch_arch_list = "8.9";
    fx_nvcc_release(&f, "12.2");
    fx_run(&f, check_toolkit_archs);
    fx_expect(&f, CHECK_ERROR, "attention kernels for sm_89 need nvcc >= 12.4 (nvcc is 12.2)",
              FETCH("12.6"));
    assert_string_equal(fx_ev(&f, "from"), "TORCH_CUDA_ARCH_LIST");

    /* Below SageAttention's CUDA 12 floor: said per arch for archs with kernels, once for an
     * arch neither names (sm_75). */
    f.ctx.env.torch_arch_list = "8.0";
    fx_nvcc_release(&f, "11.8");
    fx_run(&f, check_toolkit_archs);
    fx_expect(&f, CHECK_ERROR, "attention kernels for sm_80 need nvcc >= 12.0 (nvcc is 11.8)",
              FETCH("12.6"));
    f.opts.arch = "sm_75";
    fx_run(&f, check_toolkit_archs);
    fx_expect(&f, CHECK_ERROR,
              "nvcc 11.8 cannot build SageAttention-class kernels need CUDA >= 12.0 (nvcc is 11.8)",
              FETCH("12.6"));
    f.opts.arch = NULL;

    /* An arch missing from this nvcc's --list-gpu-arch. */
    f.ctx.env.torch_arch_list = NULL;
    fx_nvcc_release(&f, "13.0");
    static char *listed[] = {"sm_80", "sm_90"};
    f.ctx.nvcc.archs = listed;
    f.ctx.nvcc.narchs = 2;
    fx_run(&f, check_toolkit_archs);
    fx_expect(&f, CHECK_ERROR, "sm_120a is not in this nvcc's --list-gpu-arch", FETCH("12.8"));
    f.ctx.nvcc.archs = NULL;
    f.ctx.nvcc.narchs = 0;

    fx_gpus(&f, 0);
    fx_run(&f, check_toolkit_archs);
    fx_expect(&f, CHECK_SKIP, "no target arch (no GPU, no --arch, no TORCH_CUDA_ARCH_LIST)", NULL);
    f.ctx.nvcc.ran = 0;
    fx_run(&f, check_toolkit_archs);
    fx_expect(&f, CHECK_SKIP, "no working nvcc", NULL);
    fx_free(&f);
}

static void driver_ptx(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_toolkit_driver_ptx);
    fx_expect(&f, CHECK_OK, "the driver (CUDA 13.0) runs PTX from nvcc 13.0", NULL);

    f.ctx.gpu.cuda_driver_version = 12080;
    fx_run(&f, check_toolkit_driver_ptx);
    fx_expect(&f, CHECK_WARN,
              "nvcc 13.0 is newer than the driver's CUDA 12.8: SASS for the exact GPU runs, but "
              "PTX from this nvcc fails to JIT",
              FETCH("12.8"));

    f.ctx.gpu.cuda_driver_version = 0;
    fx_run(&f, check_toolkit_driver_ptx);
    fx_expect(&f, CHECK_SKIP, "no driver version known", NULL);
    f.ctx.nvcc.ran = 0;
    fx_run(&f, check_toolkit_driver_ptx);
    fx_expect(&f, CHECK_SKIP, "no working nvcc", NULL);
    fx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda_home),     cmocka_unit_test(nvcc_runs),
        cmocka_unit_test(version_match), cmocka_unit_test(components),
        cmocka_unit_test(consistency),   cmocka_unit_test(wheels),
        cmocka_unit_test(archs),         cmocka_unit_test(driver_ptx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
