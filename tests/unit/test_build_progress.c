/* The live progress line of a build on a terminal, read from the build's log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kernel_build/progress.h"

static const char ninja_log[] =
    "$ cmake -S kernels -B out/cmake-build -G Ninja\n"
    "-- Configuring done\n"
    "$ cmake --build out/cmake-build -j 2\n"
    "[1/15] Building CUDA object CMakeFiles/sageattn.dir/src/attn/attn_fp16.cu.o\n"
    "ptxas info    : Used 128 registers, 0 bytes cmem[0]\n"
    "[2/15] Building CUDA object CMakeFiles/sageattn.dir/src/attn/attn_int8_fp16.cu.o\n"
    "ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'\n"
    "ptxas info    : Function properties for _Z3fooPf\n";

static void finds_the_newest_ninja_step(void **state)
{
    (void)state;
    struct build_progress p;
    assert_int_equal(build_progress_parse(ninja_log, strlen(ninja_log), &p), 1);
    assert_int_equal(p.step, 2);
    assert_int_equal(p.total, 15);
    assert_string_equal(p.what, "src/attn/attn_int8_fp16.cu");
}

static void keeps_other_descriptions(void **state)
{
    (void)state;
    const char *t = "[14/15] Building CXX object CMakeFiles/st.dir/selftest/main.cpp.o\n"
                    "[15/15] Linking CUDA shared library libsageattn.so\r\n";
    struct build_progress p;
    assert_int_equal(build_progress_parse(t, strlen(t), &p), 1);
    assert_int_equal(p.step, 15);
    assert_string_equal(p.what, "Linking CUDA shared library libsageattn.so");
}

static void reads_make_percentages(void **state)
{
    (void)state;
    const char *t = "[  7%] Building CUDA object CMakeFiles/sageattn.dir/src/a.cu.o\n"
                    "[ 42%] Building CUDA object CMakeFiles/sageattn.dir/src/b.cu.o\n"
                    "nvcc warning : something\n";
    struct build_progress p;
    assert_int_equal(build_progress_parse(t, strlen(t), &p), 1);
    assert_int_equal(p.total, 0);
    assert_int_equal(p.percent, 42);
    assert_string_equal(p.what, "src/b.cu");
}

static void nothing_without_steps(void **state)
{
    (void)state;
    struct build_progress p;
    const char *t = "-- Configuring done\n[x/y] not a step\n[3/2] neither\n[ 120%] nor this\n";
    assert_int_equal(build_progress_parse(t, strlen(t), &p), 0);
    assert_int_equal(p.percent, -1);
    assert_int_equal(build_progress_parse("", 0, &p), 0);
    assert_int_equal(build_progress_parse(NULL, 0, &p), 0);
    /* a line cut at the start of the tail that was read */
    t = "5] Building CUDA object x.cu.o\n";
    assert_int_equal(build_progress_parse(t, strlen(t), &p), 0);
}

static void formats_one_line_within_the_width(void **state)
{
    (void)state;
    struct build_progress p;
    build_progress_parse(ninja_log, strlen(ninja_log), &p);
    char *line = build_progress_line("compile", &p, 62.4, 80);
    assert_string_equal(line, "compile [2/15] src/attn/attn_int8_fp16.cu  1:02");
    free(line);
    /* too narrow: the description loses its start, the step and the clock stay */
    line = build_progress_line("compile", &p, 5, 40);
    assert_true(strlen(line) <= 40);
    assert_non_null(strstr(line, "[2/15]"));
    assert_non_null(strstr(line, "int8_fp16.cu  0:05"));
    assert_int_equal(strlen(line), 40);
    assert_non_null(strstr(line, "..."));
    free(line);
    line = build_progress_line("configure", NULL, 3725, 80);
    assert_string_equal(line, "configure  62:05");
    free(line);
    p.total = 0;
    p.percent = 42;
    line = build_progress_line("compile", &p, 0, 0);
    assert_string_equal(line, "compile [ 42%]  0:00");
    free(line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finds_the_newest_ninja_step),
        cmocka_unit_test(keeps_other_descriptions),
        cmocka_unit_test(reads_make_percentages),
        cmocka_unit_test(nothing_without_steps),
        cmocka_unit_test(formats_one_line_within_the_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
