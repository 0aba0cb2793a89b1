/* Every verdict of sageattention.install, sageattention.kernels and sageattention.imports on
 * fixture contexts (doctor_fixture.h) and fixture packages: upstream SageAttention (compiled
 * modules, a dist-info version with its build's CUDA and torch) and sagebuild's drop-in
 * (_lib/libsageattn.so and its build record). The GPU code is a real nvcc 13 ELF from the fuzz
 * corpus (SASS sm_86, sm_100a, sm_120a; PTX compute_90a, compute_120f); --python is a script
 * printing what an interpreter would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "doctor_fixture.h"

#define REAL_ELF "tests/fuzz/corpus/fuzz_fatbin/nvcc13-sass-ptx-variants.elf"
#define SAGE "site/sageattention"
#define EXT ".cpython-312-x86_64-linux-gnu.so"
#define REBUILD(archs)                                                                             \
    "TORCH_CUDA_ARCH_LIST='" archs "' MAX_JOBS=8 EXT_PARALLEL=1 /venv/bin/python -m pip install "  \
    "--no-build-isolation --force-reinstall --no-deps "                                            \
    "'git+https://github.com/thu-ml/SageAttention.git'"

static void copy_elf(const struct fx *f, const char *rel)
{
    size_t len = 0;
    char *elf = fs_read_file(REAL_ELF, 1 << 20, &len);
    assert_non_null(elf);
    char *p = fx_path(f, rel);
    char *dir = fs_dirname(p);
    assert_int_equal(fs_mkdir_p(dir, 0755), 0);
    assert_int_equal(fs_write_file(p, elf, len), 0);
    free(dir);
    free(p);
    free(elf);
}

/* An installed sageattention at site/sageattention with this dist-info version. */
static void install_sage(struct fx *f, const char *version)
{
    fx_dir(f, SAGE);
    f->ctx.sage_dir = fx_path(f, SAGE);
    char *meta = xasprintf("Metadata-Version: 2.1\nName: sageattention\nVersion: %s\n", version);
    char *rel = xasprintf("site/sageattention-%s.dist-info/METADATA", version);
    fx_file(f, rel, meta, 0644);
    free(rel);
    free(meta);
}

static void upstream_install(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_sage_install);
    fx_expect(&f, CHECK_SKIP, "sageattention is not installed for /venv/bin/python", NULL);

    install_sage(&f, "2.2.0+cu130torch2.11.0");
    fx_run(&f, check_sage_install);
    fx_expect(&f, CHECK_WARN,
              "sageattention 2.2.0+cu130torch2.11.0 has no compiled CUDA modules (Triton only)",
              REBUILD("12.0"));

    fx_file(&f, SAGE "/_qattn_sm89" EXT, "", 0644);
    fx_file(&f, SAGE "/_fused" EXT, "", 0644);
    fx_run(&f, check_sage_install);
    fx_expect(&f, CHECK_OK, "sageattention 2.2.0+cu130torch2.11.0 with _fused _qattn_sm89", NULL);

    /* Each GPU needs its own module; sm_75 has none in SageAttention. */
    fx_gpus(&f, 2, "NVIDIA H200", 9, 0, "Tesla T4", 7, 5);
    fx_run(&f, check_sage_install);
    fx_expect(&f, CHECK_WARN,
              "sageattention: _qattn_sm90 missing for NVIDIA H200 (sm_90); SageAttention has no "
              "kernel for Tesla T4 (sm_75)",
              REBUILD("9.0;7.5"));
    fx_free(&f);

    /* Built for another torch or another CUDA: imports fail. */
    fx_init(&f);
    install_sage(&f, "2.2.0+cu130torch2.9.0");
    fx_file(&f, SAGE "/_qattn_sm89" EXT, "", 0644);
    fx_run(&f, check_sage_install);
    fx_expect(&f, CHECK_ERROR,
              "sageattention 2.2.0+cu130torch2.9.0 was built for torch 2.9.0, torch here is "
              "2.11.0+cu130: imports fail with 'undefined symbol'",
              REBUILD("12.0"));
    fx_free(&f);
    fx_init(&f);
    install_sage(&f, "2.2.0+cu128torch2.11.0");
    fx_run(&f, check_sage_install);
    fx_expect(&f, CHECK_ERROR,
              "sageattention 2.2.0+cu128torch2.11.0 was built for CUDA 12.8, torch uses CUDA 13.0",
              REBUILD("12.0"));
    fx_free(&f);
}

#define INSTALL_FIX "sagebuild install --python /venv/bin/python"

static void dropin_install(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    install_sage(&f, "1.0.0+sagebuild.cu130");
    fx_run(&f, check_sage_install);
    fx_expect(&f, CHECK_ERROR,
              "sageattention 1.0.0+sagebuild.cu130 is sagebuild's drop-in without its library",
              INSTALL_FIX);

    fx_file(&f, SAGE "/_lib/libsageattn.so", "", 0644);
    fx_run(&f, check_sage_install);
    fx_expect(&f, CHECK_WARN, "its _lib/build-record.json does not say which archs", INSTALL_FIX);

    fx_file(&f, SAGE "/_lib/build-record.json", "{\"schema\": 1, \"archs\": \"sm_120a\"}", 0644);
    fx_run(&f, check_sage_install);
    fx_expect(&f, CHECK_OK,
              "sageattention 1.0.0+sagebuild.cu130 (sagebuild's drop-in) with kernels for sm_120a: "
              "every GPU here is covered",
              NULL);
    assert_string_equal(fx_ev(&f, "recommendation"), "none: each arch's default mode");

    fx_gpus(&f, 1, "NVIDIA H200", 9, 0);
    fx_run(&f, check_sage_install);
    fx_expect(&f, CHECK_ERROR, "has kernels for sm_120a only; none for NVIDIA H200 (sm_90)",
              INSTALL_FIX);

    fx_gpus(&f, 0);
    fx_run(&f, check_sage_install);
    fx_expect(&f, CHECK_OK, "with kernels for sm_120a; no GPU here to compare with", NULL);
    fx_free(&f);
}

static void dropin_kernels(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_SKIP, "sageattention is not installed", NULL);

    install_sage(&f, "1.0.0+sagebuild.cu130");
    fx_file(&f, SAGE "/_lib/libsageattn.so", "not an ELF", 0644);
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_ERROR,
              "sagebuild's drop-in has no readable GPU code in _lib/libsageattn.so", INSTALL_FIX);

    copy_elf(&f, SAGE "/_lib/libsageattn.so");
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_OK, "SASS for every GPU here (NVIDIA GeForce RTX 5090: sm_120a)", NULL);

    fx_gpus(&f, 1, "NVIDIA H200", 9, 0);
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_WARN,
              "NVIDIA H200 (sm_90) runs _lib/libsageattn.so only by JIT-compiling compute_90a PTX",
              INSTALL_FIX);

    fx_gpus(&f, 2, "NVIDIA GeForce RTX 5090", 12, 0, "Tesla T4", 7, 5);
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_ERROR, "no kernel image for Tesla T4 (sm_75) in _lib/libsageattn.so (SASS ",
              INSTALL_FIX);

    fx_gpus(&f, 0);
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_SKIP,
              "sagebuild's drop-in carries GPU code (see evidence); no GPU here to compare with",
              NULL);
    fx_free(&f);
}

static void upstream_kernels(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    install_sage(&f, "2.2.0+cu130torch2.11.0");
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_SKIP, "sageattention has no compiled modules to read", NULL);

    fx_file(&f, SAGE "/_fused" EXT, "not an ELF", 0644);
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_SKIP, "sageattention's shared libraries hold no GPU code", NULL);

    /* The GPU's own module decides: an RTX 4090 runs _qattn_sm89's sm_86 SASS. */
    copy_elf(&f, SAGE "/_qattn_sm89" EXT);
    fx_gpus(&f, 1, "NVIDIA GeForce RTX 4090", 8, 9);
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_OK, "SASS for every GPU here (NVIDIA GeForce RTX 4090: sm_86)", NULL);

    /* A DGX Spark (12.1) loads _qattn_sm89 too: only its compute_120f PTX fits. */
    fx_gpus(&f, 1, "NVIDIA GB10", 12, 1);
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_WARN,
              "NVIDIA GB10 (sm_121) runs _qattn_sm89" EXT " only by JIT-compiling compute_120f PTX",
              INSTALL_FIX);

    /* A T4 loads only _fused, which holds no GPU code. */
    fx_gpus(&f, 1, "Tesla T4", 7, 5);
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_ERROR,
              "no kernel image for Tesla T4 (sm_75) in its libraries (no GPU code)", INSTALL_FIX);
    /* Without its module or _fused, every library counts. */
    fx_remove(&f, SAGE "/_fused" EXT);
    fx_gpus(&f, 1, "NVIDIA A100", 8, 0);
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_ERROR,
              "no kernel image for NVIDIA A100 (sm_80) in _qattn_sm89" EXT " (SASS sm_86",
              INSTALL_FIX);

    fx_gpus(&f, 0);
    fx_run(&f, check_sage_kernels);
    fx_expect(&f, CHECK_SKIP, "sageattention carries GPU code (see evidence)", NULL);
    fx_free(&f);
}

/* --python as a script printing out (and exiting with status). */
static void fake_python(struct fx *f, const char *out, int status)
{
    char *script = xasprintf("#!/bin/sh\nprintf '%s'\nexit %d\n", out, status);
    fx_file(f, "python", script, 0755);
    free(script);
    free((char *)f->opts.python);
    f->opts.python = fx_path(f, "python");
}

#define REBUILD_ROOT                                                                               \
    "TORCH_CUDA_ARCH_LIST='12.0' MAX_JOBS=8 EXT_PARALLEL=1 ROOT/python -m pip install "            \
    "--no-build-isolation --force-reinstall --no-deps "                                            \
    "'git+https://github.com/thu-ml/SageAttention.git'"

static void upstream_imports(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    fx_run(&f, check_sage_imports);
    fx_expect(&f, CHECK_SKIP, "sageattention is not installed", NULL);

    install_sage(&f, "2.2.0+cu130torch2.11.0");
    fx_run(&f, check_sage_imports);
    fx_expect(&f, CHECK_SKIP, "not imported: pass --python PY to import each module", NULL);

    fake_python(&f, "", 0);
    fx_run(&f, check_sage_imports);
    fx_expect(&f, CHECK_SKIP, "no compiled modules to import", NULL);

    fx_file(&f, SAGE "/_qattn_sm89" EXT, "", 0644);
    fx_file(&f, SAGE "/_fused" EXT, "", 0644);
    fake_python(&f, "_fused\\tok\\n_qattn_sm89\\tok\\n", 0);
    fx_run(&f, check_sage_imports);
    fx_expect(&f, CHECK_OK, "all 2 compiled modules import", NULL);

    fake_python(&f, "_fused\\tok\\n_qattn_sm89\\tImportError: undefined symbol: _ZN3c10\\n", 0);
    fx_run(&f, check_sage_imports);
    fx_expect_rooted(&f, CHECK_ERROR,
                     "1 of 2 modules fails to import; _qattn_sm89: ImportError: undefined symbol",
                     REBUILD_ROOT);

    /* The interpreter died before answering for every module. */
    fake_python(&f, "_fused\\tok\\n", 139);
    fx_run(&f, check_sage_imports);
    fx_expect_rooted(&f, CHECK_ERROR,
                     "importing sageattention's modules with ROOT/python exited with status 139",
                     REBUILD_ROOT);
    fx_free(&f);
}

static void dropin_imports(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    install_sage(&f, "1.0.0+sagebuild.cu130");
    fx_file(&f, SAGE "/_lib/libsageattn.so", "", 0644);
    fake_python(&f,
                "version\\t1.0.0+sagebuild.cu130\\nfile\\t/site/sageattention/__init__.py\\n"
                "torch_imported\\t0\\ncuda_initialized\\t0\\n",
                0);
    fx_run(&f, check_sage_imports);
    fx_expect(&f, CHECK_OK, "sageattention 1.0.0+sagebuild.cu130 (sagebuild's drop-in) imports",
              NULL);

    fake_python(&f,
                "version\\t1.0.0+sagebuild.cu130\\nfile\\t/site/sageattention/__init__.py\\n"
                "torch_imported\\t1\\ncuda_initialized\\t1\\n",
                0);
    fx_run(&f, check_sage_imports);
    fx_expect(&f, CHECK_WARN, "imports, but importing it initialised CUDA", NULL);

    fake_python(&f, "", 1);
    fx_run(&f, check_sage_imports);
    fx_expect_rooted(&f, CHECK_ERROR,
                     "importing sagebuild's drop-in with ROOT/python exited with status 1",
                     "sagebuild install --python ROOT/python");
    fx_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(upstream_install), cmocka_unit_test(dropin_install),
        cmocka_unit_test(dropin_kernels),   cmocka_unit_test(upstream_kernels),
        cmocka_unit_test(upstream_imports), cmocka_unit_test(dropin_imports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
