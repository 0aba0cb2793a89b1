/* ptxas -v's reports in a build log, summed up for the build record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "kernel_build/ptxas.h"

static const char log_text[] =
    "[1/15] Building CUDA object CMakeFiles/sageattn.dir/src/attn/attn_fp16.cu.o\n"
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z9fp16_attnILi128EEvv' for 'sm_90'\n"
    "ptxas info    : Function properties for _Z9fp16_attnILi128EEvv\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 168 registers, used 1 barriers, 33024 bytes smem\n"
    "ptxas info    : Compile time = 191.548 ms\n"
    "ptxas info    : Compiling entry function '_Z9int8_attnILi128EEvv' for 'sm_120a'\n"
    "ptxas info    : Function properties for _Z9int8_attnILi128EEvv\n"
    "    24 bytes stack frame, 24 bytes spill stores, 20 bytes spill loads\n"
    "ptxas info    : Used 255 registers, used 1 barriers\n"
    "ptxas info    : Compiling entry function '_Z5smallv' for 'sm_120a'\n"
    "ptxas info    : Function properties for _Z5smallv\n"
    "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
    "ptxas info    : Used 40 registers, used 0 barriers\n"
    "[2/15] Linking CUDA shared library libsageattn.so";

static void sums_up_kernels_registers_and_spills(void **state)
{
    (void)state;
    struct ptxas_summary s;
    assert_int_equal(ptxas_summarize(log_text, strlen(log_text), &s), 1);
    assert_int_equal(s.kernels, 3);
    assert_int_equal(s.max_registers, 255);
    assert_int_equal(s.functions_spilling, 2);
    assert_int_equal(s.spill_stores, 28);
    assert_int_equal(s.spill_loads, 24);
    assert_string_equal(s.worst,
                        "_Z9int8_attnILi128EEvv (sm_120a): 24 bytes spill stores, 20 bytes spill "
                        "loads");
}

static void nothing_without_ptxas_reports(void **state)
{
    (void)state;
    struct ptxas_summary s;
    const char *t = "[1/1] fake compile\n-- Configuring done\nUsed 12 registers\n";
    assert_int_equal(ptxas_summarize(t, strlen(t), &s), 0);
    assert_int_equal(s.kernels, 0);
    assert_int_equal(s.max_registers, 0);
    assert_int_equal(ptxas_summarize(NULL, 0, &s), 0);
    assert_int_equal(ptxas_summarize("", 0, &s), 0);
}

static void survives_cut_and_odd_lines(void **state)
{
    (void)state;
    struct ptxas_summary s;
    /* a report cut short, a name without its closing quote, numbers without labels */
    const char *t = "ptxas info    : Compiling entry function '_Z1kv' for 'sm_9\n"
                    "ptxas info    : Compiling entry function '_Z1k\n"
                    "     bytes spill stores, x bytes spill loads\n"
                    "ptxas info    : Used registers\n"
                    "ptxas info    : Compiling entry function '_Z2kv' for 'sm_90'\n"
                    "    0 bytes stack frame, 8 bytes spill stores, 0 bytes spill loads";
    assert_int_equal(ptxas_summarize(t, strlen(t), &s), 1);
    assert_int_equal(s.kernels, 2);
    assert_int_equal(s.spill_stores, 8);
    assert_non_null(strstr(s.worst, "_Z2kv (sm_90)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sums_up_kernels_registers_and_spills),
        cmocka_unit_test(nothing_without_ptxas_reports),
        cmocka_unit_test(survives_cut_and_odd_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
