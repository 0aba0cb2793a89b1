#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kernel_build/cmake.h"
#include "kernel_build/plan.h"
#include "kernel_build/run.h"
#include "kernel_build/srcinfo.h"

static void parses_head_dims(void **state)
{
    (void)state;
    int d[BUILD_MAX_HEAD_DIMS], n;
    char *err = NULL;
    assert_int_equal(build_parse_head_dims("128,64,128", d, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(d[0], 64);
    assert_int_equal(d[1], 128);
    char *s = build_join_head_dims(d, n, ";");
    assert_string_equal(s, "64;128");
    free(s);
    assert_int_equal(build_parse_head_dims("96", d, &n, &err), -1);
    assert_non_null(strstr(err, "padded"));
    free(err);
    assert_int_equal(build_parse_head_dims("64x", d, &n, &err), -1);
    free(err);
    assert_int_equal(build_parse_head_dims("", d, &n, &err), -1);
    assert_int_equal(n, 0);
    free(err);
}

static void builds_the_contract_command_lines(void **state)
{
    (void)state;
    struct build_plan p = {.cmake = "cmake",
                           .kernels_dir = "/src/kernels",
                           .build_dir = "/o/cmake-build",
                           .out_dir = "/o",
                           .generator = "Ninja",
                           .nvcc = "/cuda/bin/nvcc",
                           .host_cxx = "/usr/bin/g++-14",
                           .archs = "sm_90;sm_120a",
                           .head_dims = "64;128",
                           .jobs = 3};
    char **c = build_cmake_configure_argv(&p);
    char *line = build_argv_line(c);
    assert_string_equal(line, "cmake -S /src/kernels -B /o/cmake-build -G Ninja "
                              "-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER=/cuda/bin/nvcc "
                              "-DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++-14 "
                              "'-DSAGEATTN_ARCHS=sm_90;sm_120a' '-DSAGEATTN_HEAD_DIMS=64;128' "
                              "-DCMAKE_INSTALL_PREFIX=/o -DCMAKE_EXPORT_COMPILE_COMMANDS=ON");
    free(line);
    build_argv_free(c);
    c = build_cmake_build_argv(&p);
    line = build_argv_line(c);
    assert_string_equal(line, "cmake --build /o/cmake-build -j 3");
    free(line);
    build_argv_free(c);
    c = build_cmake_install_argv(&p);
    line = build_argv_line(c);
    assert_string_equal(line, "cmake --install /o/cmake-build");
    free(line);
    build_argv_free(c);
    p.generator = "Unix Makefiles";
    p.out_dir = "/it's here";
    c = build_cmake_configure_argv(&p);
    line = build_argv_line(c);
    assert_non_null(strstr(line, "-G 'Unix Makefiles'"));
    assert_non_null(strstr(line, "'-DCMAKE_INSTALL_PREFIX=/it'\\''s here'"));
    free(line);
    build_argv_free(c);
}

static void reads_cmake_and_picks_generator(void **state)
{
    (void)state;
    struct version v;
    assert_int_equal(cmake_parse_version("cmake version 3.25.1\n\nCMake suite maintained", &v), 0);
    assert_int_equal(v.part[0], 3);
    assert_int_equal(v.part[1], 25);
    assert_int_equal(cmake_parse_version("garbage", &v), -1);
    assert_int_equal(cmake_parse_version(NULL, &v), -1);
    assert_string_equal(cmake_pick_generator(1, 1), "Ninja");
    assert_string_equal(cmake_pick_generator(0, 1), "Unix Makefiles");
    assert_null(cmake_pick_generator(0, 0));
}

static void reads_the_cmake_cache(void **state)
{
    (void)state;
    const char *cache = "# comment\n"
                        "CMAKE_CUDA_COMPILER:UNINITIALIZED=/usr/local/cuda/bin/nvcc\n"
                        "CMAKE_CUDA_HOST_COMPILER:UNINITIALIZED=/usr/bin/g++\r\n"
                        "CMAKE_GENERATOR:INTERNAL=Ninja\n"
                        "CMAKE_GENERATOR_PLATFORM:INTERNAL=\n"
                        "CMAKE_HOME_DIRECTORY:INTERNAL=/src/kernels";
    char *v = cmake_cache_value(cache, "CMAKE_GENERATOR");
    assert_string_equal(v, "Ninja");
    free(v);
    v = cmake_cache_value(cache, "CMAKE_CUDA_HOST_COMPILER");
    assert_string_equal(v, "/usr/bin/g++");
    free(v);
    v = cmake_cache_value(cache, "CMAKE_HOME_DIRECTORY");
    assert_string_equal(v, "/src/kernels");
    free(v);
    assert_null(cmake_cache_value(cache, "CMAKE_CUDA"));
    assert_null(cmake_cache_value("", "CMAKE_GENERATOR"));
    assert_null(cmake_cache_mismatch(cache, "Ninja", "/usr/local/cuda/bin/nvcc", "/usr/bin/g++",
                                     "/src/kernels"));
    char *why = cmake_cache_mismatch(cache, "Unix Makefiles", "/usr/local/cuda/bin/nvcc",
                                     "/usr/bin/g++", "/src/kernels");
    assert_string_equal(why, "generator changed (Ninja -> Unix Makefiles)");
    free(why);
    why = cmake_cache_mismatch(cache, "Ninja", "/opt/cuda-13/bin/nvcc", "/usr/bin/g++",
                               "/src/kernels");
    assert_non_null(strstr(why, "nvcc changed"));
    free(why);
    why = cmake_cache_mismatch(cache, "Ninja", "/usr/local/cuda/bin/nvcc", "/usr/bin/g++-11",
                               "/src/kernels");
    assert_non_null(strstr(why, "host compiler changed"));
    free(why);
}

static void finds_the_nvcc_command(void **state)
{
    (void)state;
    const char *cc =
        "[{\"directory\":\"/b\",\"command\":\"/usr/bin/cc -c a.c\",\"file\":\"/s/a.c\"},"
        "{\"directory\":\"/b\",\"command\":\"nvcc -gencode=arch=compute_120a,code="
        "sm_120a -c /s/k.cu\",\"file\":\"/s/k.cu\"},"
        "{\"command\":\"nvcc -c /s/z.cu\",\"file\":\"/s/z.cu\"}]";
    char *c = cmake_first_cuda_command(cc);
    assert_string_equal(c, "nvcc -gencode=arch=compute_120a,code=sm_120a -c /s/k.cu");
    free(c);
    const char *args = "[{\"arguments\":[\"nvcc\",\"-O3\",\"k.cu\"],\"file\":\"k.cu\"}]";
    c = cmake_first_cuda_command(args);
    assert_string_equal(c, "nvcc -O3 k.cu");
    free(c);
    assert_null(cmake_first_cuda_command("[{\"command\":\"cc\",\"file\":\"a.c\"}]"));
    assert_null(cmake_first_cuda_command("{\"not\":\"an array\"}"));
    assert_null(cmake_first_cuda_command("garbage"));
    assert_null(cmake_first_cuda_command(NULL));
}

static void tails_logs(void **state)
{
    (void)state;
    const char *t = "a\nb\nc\nd\n";
    assert_string_equal(build_log_tail(t, strlen(t), 2), "c\nd\n");
    assert_string_equal(build_log_tail(t, strlen(t), 10), t);
    assert_string_equal(build_log_tail("x\ny", 3, 1), "y");
    assert_string_equal(build_log_tail("", 0, 3), "");
}

static void source_inputs(void **state)
{
    (void)state;
    assert_true(srcinfo_is_input("src"));
    assert_true(srcinfo_is_input("CMakeLists.txt"));
    assert_false(srcinfo_is_input("build"));
    assert_false(srcinfo_is_input("build-sm90"));
    assert_false(srcinfo_is_input("cmake-build-release"));
    assert_false(srcinfo_is_input(".git"));
    assert_false(srcinfo_is_input("bench"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_head_dims),
        cmocka_unit_test(builds_the_contract_command_lines),
        cmocka_unit_test(reads_cmake_and_picks_generator),
        cmocka_unit_test(reads_the_cmake_cache),
        cmocka_unit_test(finds_the_nvcc_command),
        cmocka_unit_test(tails_logs),
        cmocka_unit_test(source_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
