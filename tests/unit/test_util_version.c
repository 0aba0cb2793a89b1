#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/version.h"

static void parses_nvcc_and_torch_forms(void **state)
{
    (void)state;
    struct version v;
    char buf[32];
    assert_int_equal(version_parse("V13.0.88", &v), 0);
    assert_string_equal(version_str(&v, buf, sizeof buf), "13.0.88");
    assert_int_equal(version_parse("release 12.8, V12.8.93", &v), 0);
    assert_string_equal(version_str(&v, buf, sizeof buf), "12.8");
    assert_int_equal(version_parse("2.11.0+cu130", &v), 0);
    assert_int_equal(v.nparts, 3);
    assert_int_equal(v.part[1], 11);
    assert_int_equal(version_parse("580.65.06", &v), 0);
    assert_int_equal(v.part[2], 6);
    assert_int_equal(version_parse("13.1.0.3.9", &v), 0);
    assert_int_equal(v.nparts, 4);
}

static void rejects_garbage(void **state)
{
    (void)state;
    struct version v;
    assert_int_equal(version_parse("", &v), -1);
    assert_int_equal(version_parse(NULL, &v), -1);
    assert_int_equal(version_parse("no digits here", &v), -1);
    assert_int_equal(v.nparts, 0);
    assert_int_equal(version_parse_strict("13.0x", &v), -1);
    assert_int_equal(version_parse_strict("13.", &v), -1);
    assert_int_equal(version_parse_strict("v13.0", &v), 0);
    assert_int_equal(version_parse_strict("99999999999999999999.1", &v), 0);
    assert_true(v.part[0] > 0);
}

static void compares(void **state)
{
    (void)state;
    struct version a, b;
    version_parse("12.9", &a);
    version_parse("12.10", &b);
    assert_true(version_cmp(&a, &b) < 0);
    version_parse("13.0.2", &a);
    version_parse("13.0", &b);
    assert_true(version_cmp(&a, &b) > 0);
    assert_int_equal(version_cmp_n(&a, &b, 2), 0);
}

static void decodes_driver_ints(void **state)
{
    (void)state;
    char buf[16];
    struct version v = version_from_cuda_int(13000);
    assert_string_equal(version_str(&v, buf, sizeof buf), "13.0");
    v = version_from_cuda_int(12080);
    assert_string_equal(version_str(&v, buf, sizeof buf), "12.8");
    v = version_from_cuda_int(9020);
    assert_string_equal(version_str(&v, buf, sizeof buf), "9.2");
    v = version_from_cuda_int(0);
    assert_int_equal(v.nparts, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_nvcc_and_torch_forms),
        cmocka_unit_test(rejects_garbage),
        cmocka_unit_test(compares),
        cmocka_unit_test(decodes_driver_ints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
