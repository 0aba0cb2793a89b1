/* fetch-cuda's fix lines: the one command to run next for each kind of failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "fetch/fetch_fix.h"

#define PYPI_FIRST "sagebuild fetch-cuda --source pypi"
#define DRY_RUN "sagebuild fetch-cuda --dry-run"
#define MANIFEST_FILE "sagebuild fetch-cuda --manifest FILE"
#define FREE_DISK "free disk space"
#define HOST_COMPILER "sagebuild doctor host.compiler"

static int starts_with(const char *s, const char *prefix)
{
    return s && !strncmp(s, prefix, strlen(prefix));
}

static void pypi_comes_first_for_cuda_13_archives(void **state)
{
    (void)state;
    const char *fix = fetch_fix_for(FETCH_ERR_UNDELIVERED, "13.0.2", "redist");
    assert_true(starts_with(fix, PYPI_FIRST));
    /* the other ways out are still named */
    assert_non_null(strstr(fix, "--dry-run"));
    assert_non_null(strstr(fix, "--from DIR"));
    assert_non_null(strstr(fix, "--mirror URL"));
    assert_true(starts_with(fetch_fix_for(FETCH_ERR_UNDELIVERED, "14.1", "redist"), PYPI_FIRST));
}

static void no_pypi_where_it_cannot_help(void **state)
{
    (void)state;
    /* CUDA 12's wheels carry no nvcc */
    assert_true(starts_with(fetch_fix_for(FETCH_ERR_UNDELIVERED, "12.8.1", "redist"), DRY_RUN));
    /* PyPI itself failed, or auto already tried it */
    assert_true(starts_with(fetch_fix_for(FETCH_ERR_UNDELIVERED, "13.0.2", "pypi"), DRY_RUN));
    assert_true(starts_with(fetch_fix_for(FETCH_ERR_UNDELIVERED, "13.0.2", "auto"), DRY_RUN));
    /* release or source unknown */
    assert_true(starts_with(fetch_fix_for(FETCH_ERR_UNDELIVERED, NULL, "redist"), DRY_RUN));
    assert_true(starts_with(fetch_fix_for(FETCH_ERR_UNDELIVERED, "13.0.2", NULL), DRY_RUN));
    /* no manifest: the wheels' versions come from it, so PyPI cannot help either */
    assert_true(
        starts_with(fetch_fix_for(FETCH_ERR_NO_MANIFEST, "13.1.0", "redist"), MANIFEST_FILE));
    /* --offline: the files are to be downloaded elsewhere, whichever source names them */
    assert_true(starts_with(fetch_fix_for(FETCH_ERR_OFFLINE, "13.0.2", "redist"), DRY_RUN));
    assert_true(starts_with(fetch_fix_for(FETCH_ERR_OFFLINE, "13.0.2", "pypi"), DRY_RUN));
}

/* Every kind, with the fix it gets for a CUDA 13 release from NVIDIA's archives (NULL: none).
 * Indexed by kind, so a kind added without a row here fails the size check. */
static const char *const expected_for_cuda_13[] = {
    [FETCH_ERR_NONE] = NULL,
    [FETCH_ERR_OTHER] = NULL,
    [FETCH_ERR_UNDELIVERED] = PYPI_FIRST,
    [FETCH_ERR_NO_MANIFEST] = MANIFEST_FILE,
    [FETCH_ERR_OFFLINE] = DRY_RUN,
    [FETCH_ERR_NOT_FOUND] = NULL,
    [FETCH_ERR_MISMATCH] = NULL,
    [FETCH_ERR_UNSAFE_ARCHIVE] = NULL,
    [FETCH_ERR_DISK] = FREE_DISK,
    [FETCH_ERR_POSTCHECK] = HOST_COMPILER,
    [FETCH_ERR_INTERRUPTED] = NULL,
};

static void every_kind_has_its_fix(void **state)
{
    (void)state;
    assert_int_equal(sizeof expected_for_cuda_13 / sizeof expected_for_cuda_13[0], FETCH_ERR_KINDS);
    for (int k = 0; k < FETCH_ERR_KINDS; k++) {
        const char *fix = fetch_fix_for((enum fetch_error_kind)k, "13.0.2", "redist");
        const char *want = expected_for_cuda_13[k];
        if (want ? !starts_with(fix, want) : fix != NULL)
            fail_msg("kind %d: fix '%s', expected %s%s%s", k, fix ? fix : "(none)", want ? "'" : "",
                     want ? want : "none", want ? "...'" : "");
    }
}

/* The fixes that do not depend on the release or the source stay the same without them. */
static void release_and_source_matter_only_for_undelivered_archives(void **state)
{
    (void)state;
    for (int k = 0; k < FETCH_ERR_KINDS; k++) {
        if (k == FETCH_ERR_UNDELIVERED)
            continue;
        const char *with = fetch_fix_for((enum fetch_error_kind)k, "13.0.2", "redist");
        const char *without = fetch_fix_for((enum fetch_error_kind)k, NULL, NULL);
        assert_true(with == without || (with && without && !strcmp(with, without)));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pypi_comes_first_for_cuda_13_archives),
        cmocka_unit_test(no_pypi_where_it_cannot_help),
        cmocka_unit_test(every_kind_has_its_fix),
        cmocka_unit_test(release_and_source_matter_only_for_undelivered_archives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
