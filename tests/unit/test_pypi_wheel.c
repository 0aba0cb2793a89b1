/* Wheel choice: file names, manylinux tags against an arch and a glibc, PEP 440 versions, the
 * version a manifest names, and the pick among a listing (with the reasons when none fits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fetch/sources/pypi_wheel.h"
#include "util/strbuf.h"

static void wheel_names(void **state)
{
    (void)state;
    struct wheel_name w;
    assert_int_equal(wheel_name_parse("nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64."
                                      "manylinux_2_17_x86_64.whl",
                                      &w),
                     0);
    assert_string_equal(w.project, "nvidia_cuda_nvcc");
    assert_string_equal(w.version, "13.0.88");
    assert_null(w.build);
    assert_string_equal(w.python, "py3");
    assert_string_equal(w.abi, "none");
    assert_string_equal(w.platform, "manylinux2014_x86_64.manylinux_2_17_x86_64");
    wheel_name_free(&w);
    assert_int_equal(wheel_name_parse("pkg-1.0-2build-cp311-cp311-linux_x86_64.WHL", &w), 0);
    assert_string_equal(w.build, "2build");
    assert_string_equal(w.platform, "linux_x86_64");
    wheel_name_free(&w);
    static const char *const bad[] = {"pkg-1.0.tar.gz",    "pkg-1.0-py3-none.whl",  ".whl",
                                      "a-b-c-d-e-f-g.whl", "pkg--py3-none-any.whl", "whl"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(wheel_name_parse(bad[i], &w), -1);
}

static void platform_tags(void **state)
{
    (void)state;
    const char *t = "manylinux2014_x86_64.manylinux_2_17_x86_64";
    assert_int_equal(wheel_platform_score(t, "x86_64", 2, 36), 2);
    assert_int_equal(wheel_platform_score(t, "aarch64", 2, 36), 0);
    assert_int_equal(wheel_platform_score(t, "x86_64", 2, 12), 0); /* glibc too old */
    assert_int_equal(wheel_platform_score(t, "x86_64", 0, 0), 2);  /* not judged */
    assert_int_equal(wheel_platform_score("manylinux_2_27_aarch64", "aarch64", 2, 27), 2);
    assert_int_equal(wheel_platform_score("manylinux_2_27_aarch64", "aarch64", 2, 26), 0);
    assert_int_equal(wheel_platform_score("manylinux1_x86_64", "x86_64", 2, 5), 2);
    assert_int_equal(wheel_platform_score("manylinux2010_x86_64", "x86_64", 2, 11), 0);
    assert_int_equal(wheel_platform_score("any", "x86_64", 2, 36), 1);
    assert_int_equal(wheel_platform_score("win_amd64", "x86_64", 2, 36), 0);
    assert_int_equal(wheel_platform_score("musllinux_1_2_x86_64", "x86_64", 2, 36), 0);
    assert_int_equal(wheel_platform_score("manylinux_x_y_x86_64", "x86_64", 2, 36), 0);
    assert_int_equal(wheel_platform_score("manylinux_2_17_i686_x86_64", "x86_64", 2, 36), 0);
    assert_int_equal(wheel_platform_score("linux_x86_64", "x86_64", 2, 36), 0);
    assert_int_equal(wheel_platform_score("", "x86_64", 2, 36), 0);
}

static void versions(void **state)
{
    (void)state;
    struct pep440 a, b;
    assert_int_equal(pep440_parse("13.3.5.0.6", &a), 0);
    assert_int_equal(a.nrelease, 5);
    assert_int_equal(pep440_parse("13.0.85.post1", &b), 0);
    assert_int_equal(b.post, 1);
    assert_true(pep440_cmp(&a, &b) > 0);
    assert_int_equal(pep440_parse("13.0.85", &a), 0);
    assert_true(pep440_cmp(&a, &b) < 0);
    assert_int_equal(pep440_parse("13.0.85.0", &b), 0);
    assert_int_equal(pep440_cmp(&a, &b), 0);
    assert_int_equal(pep440_parse("13.1rc1", &b), 0);
    assert_true(b.pre);
    assert_int_equal(pep440_parse("13.1", &a), 0);
    assert_true(pep440_cmp(&b, &a) < 0);
    assert_int_equal(pep440_parse("1.0+cu130", &a), 0);
    assert_int_equal(pep440_parse("v2.0-3", &a), 0);
    assert_int_equal(a.post, 3);
    assert_int_equal(pep440_parse("1.0.dev4", &a), 0);
    assert_true(a.pre);
    assert_int_equal(pep440_parse("x1", &a), -1);
    assert_int_equal(pep440_parse("1.0!", &a), -1);
    assert_int_equal(pep440_parse("1.2.3.4.5.6.7.8.9", &a), -1);

    assert_true(pypi_version_serves("13.0.88", "13.0.88"));
    assert_true(pypi_version_serves("13.0.85.1", "13.0.85"));
    assert_true(pypi_version_serves("13.0.85.post2", "13.0.85"));
    assert_false(pypi_version_serves("13.0.850", "13.0.85"));
    assert_false(pypi_version_serves("13.0", "13.0.85"));
    assert_false(pypi_version_serves("13.0.85rc1", "13.0.85"));
    assert_false(pypi_version_serves("13.0.88", "13.0.85"));
    assert_false(pypi_version_serves("junk", "13.0.85"));
}

static void arches(void **state)
{
    (void)state;
    assert_string_equal(pypi_arch_for_platform("linux-x86_64"), "x86_64");
    assert_string_equal(pypi_arch_for_platform("linux-sbsa"), "aarch64");
    assert_string_equal(pypi_arch_for_platform("linux-aarch64"), "aarch64");
    assert_null(pypi_arch_for_platform("windows-x86_64"));
    assert_null(pypi_arch_for_platform(NULL));
}

static struct pypi_listing listing(const char *const *names, const int *yanked, int n)
{
    struct pypi_listing l = {xcalloc((size_t)n, sizeof(struct pypi_file)), n, n};
    for (int i = 0; i < n; i++) {
        l.files[i].filename = xstrdup(names[i]);
        l.files[i].url = xasprintf("http://h/%s", names[i]);
        l.files[i].yanked = yanked ? yanked[i] : 0;
        l.files[i].size = -1;
    }
    return l;
}

static void choice(void **state)
{
    (void)state;
    static const char *const names[] = {
        "nvidia_cuda_cccl-13.0.85-py3-none-manylinux2014_aarch64.manylinux_2_17_aarch64.whl",
        "nvidia_cuda_cccl-13.0.85-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "nvidia_cuda_cccl-13.0.85.1-py3-none-manylinux2014_x86_64.whl",
        "nvidia_cuda_cccl-13.0.85.2-py3-none-any.whl",
        "nvidia_cuda_cccl-13.0.86-py3-none-manylinux2014_x86_64.whl",
        "nvidia_cuda_cccl-13.0.85rc1-py3-none-manylinux2014_x86_64.whl",
        "nvidia-cuda-cccl-13.0.85.tar.gz",
        "other_pkg-13.0.85-py3-none-manylinux2014_x86_64.whl",
    };
    struct pypi_listing l = listing(names, NULL, 8);
    struct pypi_want w = {"nvidia-cuda-cccl", "13.0.85", "x86_64", 2, 36};
    char *why = NULL;
    int yanked = -1;
    /* The exact version before later builds of it, and the arch's own wheel. */
    assert_int_equal(pypi_choose(&l, &w, &yanked, &why), 1);
    assert_int_equal(yanked, 0);
    w.arch = "aarch64";
    assert_int_equal(pypi_choose(&l, &w, NULL, &why), 0);
    /* Without the exact one: the newest build of that version, manylinux before "any" only
     * when the versions tie. */
    free(l.files[1].filename);
    l.files[1].filename = xstrdup("gone.txt");
    w.arch = "x86_64";
    assert_int_equal(pypi_choose(&l, &w, NULL, &why), 3);
    pypi_listing_free(&l);
}

static void yanked_last(void **state)
{
    (void)state;
    static const char *const names[] = {
        "nvidia_nvvm-13.0.88-py3-none-manylinux2010_x86_64.whl",
        "nvidia_nvvm-13.0.88.1-py3-none-manylinux2010_x86_64.whl",
    };
    static const int yank_first[] = {1, 0}, yank_all[] = {1, 1};
    struct pypi_want w = {"nvidia_nvvm", "13.0.88", "x86_64", 0, 0};
    char *why = NULL;
    int yanked = -1;
    struct pypi_listing l = listing(names, yank_first, 2);
    assert_int_equal(pypi_choose(&l, &w, &yanked, &why), 1);
    assert_int_equal(yanked, 0);
    pypi_listing_free(&l);
    l = listing(names, yank_all, 2);
    assert_int_equal(pypi_choose(&l, &w, &yanked, &why), 0);
    assert_int_equal(yanked, 1);
    pypi_listing_free(&l);
}

static void reasons(void **state)
{
    (void)state;
    static const char *const names[] = {
        "nvidia_cuda_nvcc-13.0.48-py3-none-manylinux2014_x86_64.whl",
        "nvidia_cuda_nvcc-13.1.80-py3-none-manylinux2014_x86_64.whl",
        "nvidia_cuda_nvcc-13.1.80-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "nvidia_cuda_nvcc-13.2.0rc1-py3-none-manylinux2014_x86_64.whl",
        "nvidia_cuda_nvcc-13.0.88-py3-none-win_amd64.whl",
    };
    struct pypi_listing l = listing(names, NULL, 5);
    struct pypi_want w = {"nvidia-cuda-nvcc", "13.0.88", "x86_64", 2, 36};
    char *why = NULL;
    assert_int_equal(pypi_choose(&l, &w, NULL, &why), -1);
    assert_non_null(strstr(why, "no nvidia-cuda-nvcc 13.0.88 for Linux x86_64"));
    assert_non_null(strstr(why, "13.0.48 13.1.80)")); /* each version once, no pre-release */
    free(why);
    w.arch = "aarch64";
    assert_int_equal(pypi_choose(&l, &w, NULL, &why), -1);
    assert_non_null(strstr(why, "none for Linux aarch64"));
    free(why);
    w.project = "nvidia-cuda-crt";
    assert_int_equal(pypi_choose(&l, &w, NULL, &why), -1);
    assert_string_equal(why, "the index lists no wheel of nvidia-cuda-crt");
    free(why);
    pypi_listing_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wheel_names), cmocka_unit_test(platform_tags),
        cmocka_unit_test(versions),    cmocka_unit_test(arches),
        cmocka_unit_test(choice),      cmocka_unit_test(yanked_last),
        cmocka_unit_test(reasons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
