/* The rules that keep archive entries inside the folder they are unpacked into. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fetch/engine/install.h"
#include "fetch/engine/pathsafe.h"

static void relative_paths(void **state)
{
    (void)state;
    assert_null(path_rel_check("cuda_nvcc/linux-x86_64/a-archive.tar.xz"));
    assert_null(path_rel_check("a/./b"));
    assert_null(path_rel_check("a..b/c..")); /* dots inside a name are fine */
    assert_non_null(path_rel_check(""));
    assert_non_null(path_rel_check(NULL));
    assert_non_null(path_rel_check("/etc/passwd"));
    assert_non_null(path_rel_check("../x"));
    assert_non_null(path_rel_check("a/../../x"));
    assert_non_null(path_rel_check("a/.."));
    assert_non_null(path_rel_check("a\\..\\b"));
    assert_non_null(path_rel_check("a/\x01b"));
}

static void strip_components(void **state)
{
    (void)state;
    const char *why;
    struct {
        const char *in;
        int strip;
        const char *out;
    } ok[] = {
        {"top/bin/nvcc", 1, "bin/nvcc"},
        {"./top/bin/nvcc", 1, "bin/nvcc"},
        {"top//bin/./nvcc", 1, "bin/nvcc"},
        {"top/", 1, ""},
        {"top", 1, ""},
        {"top/include/", 1, "include"},
        {"a/b/c", 0, "a/b/c"},
        {"a/b/c", 2, "c"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        char *s = path_strip(ok[i].in, ok[i].strip, &why);
        assert_non_null(s);
        assert_string_equal(s, ok[i].out);
        free(s);
    }
    const char *bad[] = {"/abs/path", "top/../../x", "top/bin/..", "..", "", "top/a\x1f"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_null(path_strip(bad[i], 1, &why));
        assert_non_null(why);
    }
}

static void symlink_targets(void **state)
{
    (void)state;
    assert_null(path_link_check("lib/libcudart.so", "libcudart.so.13"));
    assert_null(path_link_check("lib64", "lib"));
    assert_null(path_link_check("nvvm/lib64/libnvvm.so", "../../lib/libnvvm.so.4"));
    assert_null(path_link_check("a/b/c", "./d"));
    assert_non_null(path_link_check("lib/x", "/etc/passwd"));
    assert_non_null(path_link_check("lib/x", "../../etc"));
    assert_non_null(path_link_check("x", ".."));
    assert_non_null(path_link_check("a/x", "sub/../../.."));
    /* ".." after a name could climb through another symlink: refused outright. */
    assert_non_null(path_link_check("a/b/x", "c/../d"));
    assert_non_null(path_link_check("x", ""));
}

static void debris_names(void **state)
{
    (void)state;
    assert_true(install_is_debris("cuda-13.0.2", ".cuda-13.0.2.staging-ab12Cd"));
    assert_true(install_is_debris("cuda-13.0.2", ".cuda-13.0.2.old-1234"));
    assert_false(install_is_debris("cuda-13.0.2", ".cuda-13.0.2.lock"));
    assert_false(install_is_debris("cuda-13.0.2", "cuda-13.0.2"));
    assert_false(install_is_debris("cuda", ".cuda-13.0.2.staging-x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(relative_paths),
        cmocka_unit_test(strip_components),
        cmocka_unit_test(symlink_targets),
        cmocka_unit_test(debris_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
