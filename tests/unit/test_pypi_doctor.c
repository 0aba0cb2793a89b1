/* toolkit.wheels' pure rules: which trees are made from wheels, where site-packages is, and how
 * dist-info folders are named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "doctor/checks_wheels.h"

static void site_dirs(void **state)
{
    (void)state;
    char *s = wheels_site_dir("/v/lib/python3.12/site-packages/nvidia/cu13");
    assert_string_equal(s, "/v/lib/python3.12/site-packages");
    free(s);
    s = wheels_site_dir("/usr/lib/python3/dist-packages/nvidia");
    assert_string_equal(s, "/usr/lib/python3/dist-packages");
    free(s);
    assert_null(wheels_site_dir("/v/site-packages/nvidiax/cu13"));
    assert_null(wheels_site_dir("/usr/local/cuda"));
    assert_null(wheels_site_dir(NULL));
}

static void classification(void **state)
{
    (void)state;
    const char *site = "/v/lib/python3.12/site-packages/nvidia/cu13";
    assert_int_equal(wheels_classify(site, 0, NULL, 0), WHEEL_TREE_SITE_RUNTIME);
    assert_int_equal(wheels_classify(site, 1, NULL, 0), WHEEL_TREE_SITE_COMPILER);
    assert_int_equal(wheels_classify("/p", 1, "pypi", 1), WHEEL_TREE_PREFIX);
    assert_int_equal(wheels_classify("/p", 0, "pypi", 0), WHEEL_TREE_PREFIX);
    assert_int_equal(wheels_classify("/p", 1, NULL, 1), WHEEL_TREE_PREFIX);
    assert_int_equal(wheels_classify("/p", 1, "redist", 1), WHEEL_TREE_NONE);
    assert_int_equal(wheels_classify("/usr/local/cuda", 1, NULL, 0), WHEEL_TREE_NONE);
    assert_int_equal(wheels_classify("/p", 0, NULL, 1), WHEEL_TREE_NONE);
}

static void labels(void **state)
{
    (void)state;
    char *l = wheels_distinfo_label("nvidia_cuda_nvcc-13.0.88.dist-info");
    assert_string_equal(l, "nvidia-cuda-nvcc 13.0.88");
    free(l);
    l = wheels_distinfo_label("nvidia_nvvm-13.0.88.post1.dist-info");
    assert_string_equal(l, "nvidia-nvvm 13.0.88.post1");
    free(l);
    assert_null(wheels_distinfo_label("torch-2.11.0.dist-info"));
    assert_null(wheels_distinfo_label("nvidia_x.dist-info"));
    assert_null(wheels_distinfo_label("nvidia_x-1.0"));
    assert_null(wheels_distinfo_label(".dist-info"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(site_dirs),
        cmocka_unit_test(classification),
        cmocka_unit_test(labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
