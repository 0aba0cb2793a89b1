#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probe/resources.h"

static void parses_meminfo(void **state)
{
    (void)state;
    long long avail, total;
    assert_int_equal(resources_parse_meminfo("MemTotal:       24576000 kB\n"
                                             "MemFree:         1000000 kB\n"
                                             "MemAvailable:   20000000 kB\n",
                                             &avail, &total),
                     0);
    assert_true(avail == 20000000LL);
    assert_true(total == 24576000LL);
    /* Kernels before 3.14 have no MemAvailable. */
    assert_int_equal(resources_parse_meminfo("MemTotal: 1000 kB\nMemFree: 10 kB\n", &avail, &total),
                     -1);
    assert_true(avail == -1);
    assert_int_equal(resources_parse_meminfo("", &avail, &total), -1);
    assert_int_equal(resources_parse_meminfo(NULL, &avail, &total), -1);
    assert_int_equal(resources_parse_meminfo("MemAvailable: -5 kB\n", &avail, &total), -1);
}

static void probes_this_machine(void **state)
{
    (void)state;
    struct resources r;
    probe_resources("/", &r);
    assert_true(r.cores >= 1);
    assert_true(r.disk_free_bytes >= 0);
    assert_string_equal(r.disk_path, "/");
    resources_free(&r);
    probe_resources("/nonexistent/dir", &r);
    assert_true(r.disk_free_bytes == -1);
    resources_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_meminfo),
        cmocka_unit_test(probes_this_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
