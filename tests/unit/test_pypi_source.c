/* The PyPI source's rules: component → project names, the CUDA 12 refusal, where wheel entries
 * go, development links, and the layout fix-up on a tree shaped like the 13.0 wheels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetch/sources/pypi_source.h"
#include "fetch/sources/pypi_stub.h"
#include "util/fs.h"
#include "util/strbuf.h"

static void check_project(const char *component, const char *want)
{
    char *p = pypi_project_for(component);
    if (!want) {
        assert_null(p);
        return;
    }
    assert_non_null(p);
    assert_string_equal(p, want);
    free(p);
}

static void projects(void **state)
{
    (void)state;
    check_project("cuda_nvcc", "nvidia-cuda-nvcc");
    check_project("cuda_cudart", "nvidia-cuda-runtime");
    check_project("cuda_cccl", "nvidia-cuda-cccl");
    check_project("cuda_crt", "nvidia-cuda-crt");
    check_project("libnvvm", "nvidia-nvvm");
    check_project("cuda_nvdisasm", "nvidia-cuda-nvdisasm");
    check_project("cuda_profiler_api", "nvidia-cuda-profiler-api");
    check_project("libnvjitlink", "nvidia-nvjitlink");
    check_project("cuda_nvtx", "nvidia-nvtx");
    check_project("nvidia_driver", NULL);
    check_project("cuda_", NULL);
    check_project("lib", NULL);
}

static void refusal(void **state)
{
    (void)state;
    assert_null(pypi_release_refusal("13.0.2"));
    assert_null(pypi_release_refusal("14.1"));
    char *r = pypi_release_refusal("12.9.1");
    assert_non_null(r);
    assert_non_null(strstr(r, "CUDA 12.9.1"));
    assert_non_null(strstr(r, "--source redist"));
    free(r);
    r = pypi_release_refusal("garbage");
    assert_non_null(r);
    free(r);
}

static void check_map(const char *rel, const char *want)
{
    char *got = pypi_map_entry(NULL, rel);
    if (!want) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void entry_map(void **state)
{
    (void)state;
    check_map("nvidia/cu13/bin/nvcc", "bin/nvcc");
    check_map("nvidia/cu13/include/cccl/cub/cub.cuh", "include/cccl/cub/cub.cuh");
    check_map("nvidia/cu14/lib/libx.so.14", "lib/libx.so.14");
    check_map("nvidia/cu13/.metadata/provenance.txt", NULL);
    check_map("nvidia/cu13/.metadata", NULL);
    check_map("nvidia/cu13/.metadatax", ".metadatax");
    check_map("nvidia/cu13/__init__.py", NULL);
    check_map("nvidia/cu13/", NULL);
    check_map("nvidia/cu13", NULL);
    check_map("nvidia/cu12/bin/ptxas", NULL); /* CUDA 12 wheels are not a toolkit */
    check_map("nvidia/cuda_nvcc/bin/ptxas", NULL);
    check_map("nvidia/__init__.py", NULL);
    check_map("nvidia_cuda_nvcc-13.0.88.dist-info/RECORD",
              "dist-info/nvidia_cuda_nvcc-13.0.88.dist-info/RECORD");
    check_map(".dist-info/x", NULL);
    check_map("setup.py", NULL);
}

static void check_dev(const char *name, const char *want)
{
    char *got = pypi_dev_link_name(name);
    if (!want) {
        assert_null(got);
        return;
    }
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void dev_links(void **state)
{
    (void)state;
    check_dev("libcudart.so.13", "libcudart.so");
    check_dev("libnvvm.so.4.0.0", "libnvvm.so");
    check_dev("libcudart.so", NULL);
    check_dev("libcudart_static.a", NULL);
    check_dev("libx.so.13.py", NULL);
    check_dev("lib.so.1", NULL);
    check_dev("cudart.so.13", NULL);
    check_dev("libx.so..1", NULL);
}

static void touch(const char *root, const char *rel, const char *data, int mode)
{
    char *p = fs_join(root, rel);
    char *d = fs_dirname(p);
    assert_int_equal(fs_mkdir_p(d, 0755), 0);
    assert_int_equal(fs_write_file(p, data, strlen(data)), 0);
    chmod(p, (mode_t)mode);
    free(d);
    free(p);
}

static void link_is(const char *root, const char *rel, const char *target)
{
    char *p = fs_join(root, rel);
    char buf[256];
    ssize_t n = readlink(p, buf, sizeof buf - 1);
    assert_true(n > 0);
    buf[n] = '\0';
    assert_string_equal(buf, target);
    free(p);
}

static void layout_fixup(void **state)
{
    (void)state;
    char root[] = "/tmp/sb-pypi-layout-XXXXXX";
    assert_non_null(mkdtemp(root));
    touch(root, "bin/nvcc",
          "\x7f"
          "ELF....",
          0644);
    touch(root, "bin/nvcc.profile", "TOP = $(_HERE_)/..\n", 0644);
    touch(root, "bin/wrapper", "#!/bin/sh\n", 0600);
    touch(root, "nvvm/bin/cicc",
          "\x7f"
          "ELF....",
          0644);
    touch(root, "lib/libcudart.so.13", "x", 0644);
    touch(root, "lib/libnvvm.so.4", "x", 0644);
    touch(root, "lib/libnvvm.so.4.0.0", "x", 0644);
    touch(root, "lib/libkeep.so.2", "x", 0644);
    touch(root, "lib/libkeep.so", "already there", 0644);
    touch(root, "include/nvvm.h", "x", 0644);
    struct strbuf log = STRBUF_INIT;
    struct fetch_error err = {0};
    assert_int_equal(pypi_layout_fixup(root, &log, &err), 0);
    struct stat st;
    char *p = fs_join(root, "bin/nvcc");
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);
    free(p);
    p = fs_join(root, "bin/nvcc.profile");
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0111, 0); /* not a program */
    free(p);
    p = fs_join(root, "nvvm/bin/cicc");
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0111, 0111);
    free(p);
    link_is(root, "lib/libcudart.so", "libcudart.so.13");
    link_is(root, "lib/libnvvm.so", "libnvvm.so.4"); /* the shortest versioned name */
    link_is(root, "nvvm/lib64/libnvvm.so", "../../lib/libnvvm.so");
    link_is(root, "nvvm/include/nvvm.h", "../../include/nvvm.h");
    char *keep = fs_join(root, "lib/libkeep.so");
    assert_int_equal(lstat(keep, &st), 0);
    assert_true(S_ISREG(st.st_mode)); /* an existing file is left alone */
    free(keep);
    assert_non_null(strstr(sb_str(&log), "lib/libcudart.so -> libcudart.so.13"));
    assert_non_null(strstr(sb_str(&log), "bin: execute permission on 2 programs"));
    /* A second run changes nothing. */
    sb_free(&log);
    assert_int_equal(pypi_layout_fixup(root, &log, &err), 0);
    assert_null(strstr(sb_str(&log), "->"));
    assert_null(strstr(sb_str(&log), "execute permission"));
    /* No cuda.h here, so no driver stub; said, not failed. */
    assert_non_null(strstr(sb_str(&log), "libcuda.so not made: no include/cuda.h"));
    sb_free(&log);
    fs_remove_tree(root);
}

static void stub_names(void **state)
{
    (void)state;
    const char *text = "typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;\n"
                       "CUresult cuInit(unsigned int Flags);\n"
                       "extern CUresult  cuMemAlloc_v2 (CUdeviceptr *p, size_t n);\n"
                       "CUresult\ncuCtxCreate_v4(CUcontext *c);\n"
                       "CUresult cuInit(unsigned int Flags);\n"
                       "typedef CUresult (*PFN_cuInit)(unsigned int);\n"
                       "CUresult cuGetErrorString(CUresult error, const char **s);\n"
                       "MyCUresult cuNotThis(void);\n"
                       "CUresult notcu(void);\n"
                       "CUresult cuNoParen;\n";
    int n = 0;
    char **names = stub_symbols(text, &n);
    assert_int_equal(n, 4);
    assert_string_equal(names[0], "cuCtxCreate_v4");
    assert_string_equal(names[1], "cuGetErrorString");
    assert_string_equal(names[2], "cuInit");
    assert_string_equal(names[3], "cuMemAlloc_v2");
    assert_null(names[4]);
    char *src = stub_source(names, n);
    assert_non_null(strstr(src, "STUB cuMemAlloc_v2(void)"));
    free(src);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    names = stub_symbols(NULL, &n);
    assert_int_equal(n, 0);
    free(names);
}

static void stub_skips_without_cuda_h(void **state)
{
    (void)state;
    char root[] = "/tmp/sb-pypi-stub-XXXXXX";
    assert_non_null(mkdtemp(root));
    struct strbuf log = STRBUF_INIT;
    char *why = NULL;
    assert_int_equal(stub_make_libcuda(root, "cc", &log, &why), 1);
    assert_string_equal(why, "no include/cuda.h");
    free(why);
    why = NULL;
    assert_int_equal(stub_make_libcuda(root, NULL, &log, &why), 1);
    free(why);
    sb_free(&log);
    fs_remove_tree(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(projects),
        cmocka_unit_test(refusal),
        cmocka_unit_test(entry_map),
        cmocka_unit_test(dev_links),
        cmocka_unit_test(layout_fixup),
        cmocka_unit_test(stub_names),
        cmocka_unit_test(stub_skips_without_cuda_h),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
