#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probe/gpu.h"

#include <stdlib.h>
#include <string.h>

static void parses_fake_specs(void **state)
{
    (void)state;
    struct gpu_info g;
    assert_int_equal(gpu_parse_fake("580.65.06;NVIDIA GeForce RTX 5090:12.0", &g), 0);
    assert_true(g.fake);
    assert_string_equal(g.driver_version, "580.65.06");
    assert_int_equal(g.cuda_driver_version, 13000);
    assert_int_equal(g.count, 1);
    assert_string_equal(g.devices[0].name, "NVIDIA GeForce RTX 5090");
    assert_int_equal(g.devices[0].cc_major, 12);
    assert_int_equal(g.devices[0].cc_minor, 0);
    gpu_info_free(&g);

    assert_int_equal(gpu_parse_fake("575.51.03/12.9;NVIDIA H200:9.0;Odd:Name:8.9", &g), 0);
    assert_int_equal(g.cuda_driver_version, 12090);
    assert_int_equal(g.count, 2);
    assert_string_equal(g.devices[1].name, "Odd:Name");
    gpu_info_free(&g);

    assert_int_equal(gpu_parse_fake("none", &g), 0);
    assert_false(g.libcuda_loaded);
    assert_non_null(g.error);
    gpu_info_free(&g);

    assert_int_equal(gpu_parse_fake("535.104.05", &g), 0);
    assert_int_equal(g.count, 0);
    assert_int_equal(g.init_result, 100);
    gpu_info_free(&g);

    const char *bad[] = {"", "garbage", "580;NoCC", "580;Name:12", "580/x;A:1.0", ";A:8.0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(gpu_parse_fake(bad[i], &g), -1);
    assert_int_equal(gpu_parse_fake(NULL, &g), -1);
}

static void parses_child_output_even_when_cut(void **state)
{
    (void)state;
    struct gpu_info g;
    memset(&g, 0, sizeof g);
    gpu_parse_child_output("driver_cuda 13000\ninit 0\ncount 2\ngpu 9 0 NVIDIA H200\n"
                           "gpu 8 9 NVIDIA L40S\nnvml_driver 580.95.05\n",
                           &g);
    assert_true(g.libcuda_loaded);
    assert_int_equal(g.cuda_driver_version, 13000);
    assert_int_equal(g.count, 2);
    assert_string_equal(g.devices[1].name, "NVIDIA L40S");
    assert_string_equal(g.driver_version, "580.95.05");
    gpu_info_free(&g);

    memset(&g, 0, sizeof g);
    gpu_parse_child_output("driver_cuda 12080\ninit 0\ngpu 12", &g); /* died mid-line */
    assert_int_equal(g.count, 0);
    assert_int_equal(g.cuda_driver_version, 12080);
    gpu_info_free(&g);

    memset(&g, 0, sizeof g);
    gpu_parse_child_output("libcuda_error libcuda.so.1: cannot open shared object file\n", &g);
    assert_false(g.libcuda_loaded);
    assert_non_null(strstr(g.error, "cannot open"));
    gpu_info_free(&g);
}

static void knows_driver_tables(void **state)
{
    (void)state;
    assert_int_equal(gpu_driver_max_cuda("580.65.06"), 13000);
    assert_int_equal(gpu_driver_max_cuda("570.124.06"), 12080);
    assert_int_equal(gpu_driver_max_cuda("525.60.13"), 12000);
    assert_int_equal(gpu_driver_max_cuda("390.1"), 0);
    assert_int_equal(gpu_driver_max_cuda("x"), 0);
    assert_int_equal(gpu_min_driver_for_cuda_major(13), 580);
    assert_int_equal(gpu_min_driver_for_cuda_major(12), 525);
    assert_int_equal(gpu_min_driver_for_cuda_major(10), 0);
}

static void parses_kernel_module_lines(void **state)
{
    (void)state;
    char *v = gpu_parse_kernel_module_version(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:47 UTC "
        "2025\nGCC version:  gcc version 12.2.0\n");
    assert_string_equal(v, "580.65.06");
    free(v);
    v = gpu_parse_kernel_module_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                        "575.57.08  Release Build\n");
    assert_string_equal(v, "575.57.08");
    free(v);
    assert_null(gpu_parse_kernel_module_version("nothing here"));
    assert_null(gpu_parse_kernel_module_version(NULL));
}

static void probes_without_a_driver(void **state)
{
    (void)state;
    struct gpu_info g;
    unsetenv("SAGEBUILD_FAKE_GPUS");
    setenv("SAGEBUILD_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    setenv("SAGEBUILD_LIBNVML", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(probe_gpu(3000, &g), 0);
    assert_false(g.libcuda_loaded);
    assert_int_equal(g.count, 0);
    assert_non_null(g.error);
    gpu_info_free(&g);

    setenv("SAGEBUILD_FAKE_GPUS", "575.51.03;NVIDIA GeForce RTX 4090:8.9", 1);
    assert_int_equal(probe_gpu(3000, &g), 0);
    assert_int_equal(g.count, 1);
    gpu_info_free(&g);
    setenv("SAGEBUILD_FAKE_GPUS", "bogus", 1);
    assert_int_equal(probe_gpu(3000, &g), -1);
    assert_non_null(strstr(g.error, "malformed"));
    gpu_info_free(&g);
    unsetenv("SAGEBUILD_FAKE_GPUS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_fake_specs),
        cmocka_unit_test(parses_child_output_even_when_cut),
        cmocka_unit_test(knows_driver_tables),
        cmocka_unit_test(parses_kernel_module_lines),
        cmocka_unit_test(probes_without_a_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
