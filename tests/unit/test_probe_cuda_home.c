#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probe/cuda_home.h"

#include <string.h>

static int yes(const char *path, void *ctx)
{
    (void)ctx;
    return !strcmp(path, "/usr/local/cuda");
}

static int no(const char *path, void *ctx)
{
    (void)path;
    (void)ctx;
    return 0;
}

static void check(const char *flag, const char *home, const char *path, const char *nvcc,
                  cuda_home_exists_fn exists, const char *want, enum cuda_home_rule rule)
{
    struct cuda_home h;
    cuda_home_resolve(flag, home, path, nvcc, exists, NULL, &h);
    if (want)
        assert_string_equal(h.path, want);
    else
        assert_null(h.path);
    assert_int_equal(h.rule, rule);
    cuda_home_free(&h);
}

static void follows_torchs_order(void **state)
{
    (void)state;
    check("/opt/flag", "/a", "/b", "/c/bin/nvcc", yes, "/opt/flag", CUDA_HOME_FROM_FLAG);
    check(NULL, "/a", "/b", "/c/bin/nvcc", yes, "/a", CUDA_HOME_FROM_CUDA_HOME);
    check(NULL, NULL, "/b", "/c/bin/nvcc", yes, "/b", CUDA_HOME_FROM_CUDA_PATH);
    check(NULL, NULL, NULL, "/c/bin/nvcc", yes, "/c", CUDA_HOME_FROM_NVCC);
    check(NULL, NULL, NULL, NULL, yes, "/usr/local/cuda", CUDA_HOME_FROM_DEFAULT);
    check(NULL, NULL, NULL, NULL, no, NULL, CUDA_HOME_NOT_FOUND);
}

static void keeps_pythons_quirks(void **state)
{
    (void)state;
    /* No realpath: /usr/bin/nvcc gives /usr. */
    check(NULL, NULL, NULL, "/usr/bin/nvcc", yes, "/usr", CUDA_HOME_FROM_NVCC);
    /* `CUDA_HOME or CUDA_PATH`: an empty CUDA_HOME falls through. */
    check(NULL, "", "/b", "/c/bin/nvcc", yes, "/b", CUDA_HOME_FROM_CUDA_PATH);
    check(NULL, "", NULL, "/c/bin/nvcc", yes, "/c", CUDA_HOME_FROM_NVCC);
    /* ... but an empty CUDA_PATH is "not None": no guess 2 or 3, and no toolkit. */
    check(NULL, "", "", "/c/bin/nvcc", yes, NULL, CUDA_HOME_NOT_FOUND);
    check("", "/a", NULL, NULL, yes, "/a", CUDA_HOME_FROM_CUDA_HOME);
    /* Trailing slashes in PATH entries. */
    check(NULL, NULL, NULL, "/opt/cuda-12.8/bin//nvcc", yes, "/opt/cuda-12.8", CUDA_HOME_FROM_NVCC);
}

static void names_rules(void **state)
{
    (void)state;
    assert_string_equal(cuda_home_rule_name(CUDA_HOME_FROM_CUDA_PATH), "$CUDA_PATH");
    assert_string_equal(cuda_home_rule_name(CUDA_HOME_NOT_FOUND), "not found");
    struct cuda_home h;
    cuda_home_resolve(NULL, NULL, NULL, "/x/bin/nvcc", no, NULL, &h);
    assert_string_equal(h.nvcc_on_path, "/x/bin/nvcc");
    cuda_home_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(follows_torchs_order),
        cmocka_unit_test(keeps_pythons_quirks),
        cmocka_unit_test(names_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
