/* fetch-cuda's fix lines: the one command to run next for each kind of failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "fetch/fetch_fix.h"

/* What download.c says when every mirror failed for an archive (DNS failure, 404, ...). */
static const char *const unreachable =
    "cuda_nvcc: no mirror delivered cuda_nvcc-linux-x86_64-13.0.88-archive.tar.xz:\n"
    "  https://developer.download.nvidia.com/compute/cuda/redist/cuda_nvcc/...: Could not "
    "resolve host: developer.download.nvidia.com\n";

static int starts_with(const char *s, const char *prefix)
{
    return s && !strncmp(s, prefix, strlen(prefix));
}

static void pypi_comes_first_for_cuda_13_archives(void **state)
{
    (void)state;
    const char *fix = fetch_fix_for(unreachable, "13.0.2", "redist");
    assert_true(starts_with(fix, "sagebuild fetch-cuda --source pypi"));
    /* the other ways out are still named */
    assert_non_null(strstr(fix, "--dry-run"));
    assert_non_null(strstr(fix, "--from DIR"));
    assert_non_null(strstr(fix, "--mirror URL"));
    assert_true(starts_with(fetch_fix_for(unreachable, "14.1", "redist"), "sagebuild fetch-cuda "
                                                                          "--source pypi"));
}

static void no_pypi_where_it_cannot_help(void **state)
{
    (void)state;
    /* CUDA 12's wheels carry no nvcc */
    assert_true(starts_with(fetch_fix_for(unreachable, "12.8.1", "redist"),
                            "sagebuild fetch-cuda --dry-run"));
    /* PyPI itself failed, or auto already tried it */
    assert_true(starts_with(fetch_fix_for(unreachable, "13.0.2", "pypi"),
                            "sagebuild fetch-cuda --dry-run"));
    assert_true(starts_with(fetch_fix_for(unreachable, "13.0.2", "auto"),
                            "sagebuild fetch-cuda --dry-run"));
    /* release unknown */
    assert_true(
        starts_with(fetch_fix_for(unreachable, NULL, "redist"), "sagebuild fetch-cuda --dry-run"));
    /* no manifest: the wheels' versions come from it, so PyPI cannot help either */
    assert_true(starts_with(
        fetch_fix_for("no mirror has the manifest for CUDA 13.1.0:\n", "13.1.0", "redist"),
        "sagebuild fetch-cuda --dry-run"));
}

static void other_failures_keep_their_fixes(void **state)
{
    (void)state;
    assert_true(
        starts_with(fetch_fix_for("cannot write /x: No space left on device", "13.0.2", "redist"),
                    "free disk space"));
    assert_true(starts_with(fetch_fix_for("the compile-and-link check failed", "13.0.2", "redist"),
                            "sagebuild doctor host.compiler"));
    assert_null(fetch_fix_for("sha256 mismatch", "13.0.2", "redist"));
    assert_null(fetch_fix_for(NULL, "13.0.2", "redist"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pypi_comes_first_for_cuda_13_archives),
        cmocka_unit_test(no_pypi_where_it_cannot_help),
        cmocka_unit_test(other_failures_keep_their_fixes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
