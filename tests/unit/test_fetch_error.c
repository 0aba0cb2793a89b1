/* fetch-cuda's error kinds: what a failed system call counts as, which failure's fix is shown
 * when several archives failed at once, and the messages the helpers make. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "fetch/engine/fetch_error.h"

static void a_full_disk_is_the_disk(void **state)
{
    (void)state;
    assert_int_equal(fetch_error_kind_of_errno(ENOSPC), FETCH_ERR_DISK);
    assert_int_equal(fetch_error_kind_of_errno(EFBIG), FETCH_ERR_DISK); /* ulimit -f */
    assert_int_equal(fetch_error_kind_of_errno(EDQUOT), FETCH_ERR_DISK);
    /* no amount of free space helps these */
    assert_int_equal(fetch_error_kind_of_errno(EACCES), FETCH_ERR_OTHER);
    assert_int_equal(fetch_error_kind_of_errno(EROFS), FETCH_ERR_OTHER);
    assert_int_equal(fetch_error_kind_of_errno(EIO), FETCH_ERR_OTHER);
    assert_int_equal(fetch_error_kind_of_errno(0), FETCH_ERR_OTHER);
}

static void several_failures_show_the_fix_that_gets_furthest(void **state)
{
    (void)state;
    /* archives no mirror delivered, before archives --offline kept away, before the disk */
    assert_int_equal(fetch_error_kind_leading(FETCH_ERR_DISK, FETCH_ERR_UNDELIVERED),
                     FETCH_ERR_UNDELIVERED);
    assert_int_equal(fetch_error_kind_leading(FETCH_ERR_UNDELIVERED, FETCH_ERR_DISK),
                     FETCH_ERR_UNDELIVERED);
    assert_int_equal(fetch_error_kind_leading(FETCH_ERR_OFFLINE, FETCH_ERR_UNDELIVERED),
                     FETCH_ERR_UNDELIVERED);
    assert_int_equal(fetch_error_kind_leading(FETCH_ERR_DISK, FETCH_ERR_OFFLINE),
                     FETCH_ERR_OFFLINE);
    assert_int_equal(fetch_error_kind_leading(FETCH_ERR_MISMATCH, FETCH_ERR_DISK), FETCH_ERR_DISK);
    /* among kinds without a fix, the first failure stays */
    assert_int_equal(fetch_error_kind_leading(FETCH_ERR_MISMATCH, FETCH_ERR_INTERRUPTED),
                     FETCH_ERR_MISMATCH);
    assert_int_equal(fetch_error_kind_leading(FETCH_ERR_OTHER, FETCH_ERR_MISMATCH),
                     FETCH_ERR_OTHER);
    /* nothing failed yet: the first failure is the one */
    assert_int_equal(fetch_error_kind_leading(FETCH_ERR_NONE, FETCH_ERR_MISMATCH),
                     FETCH_ERR_MISMATCH);
    assert_int_equal(fetch_error_kind_leading(FETCH_ERR_UNDELIVERED, FETCH_ERR_NONE),
                     FETCH_ERR_UNDELIVERED);
}

static void helpers_record_kind_and_message(void **state)
{
    (void)state;
    struct fetch_error e = {0};
    assert_int_equal(fetch_fail_errno(&e, ENOSPC, "cannot write %s", "/x/y"), -1);
    assert_int_equal(e.kind, FETCH_ERR_DISK);
    assert_string_equal(e.message, "cannot write /x/y: No space left on device");
    /* a later failure replaces the earlier one */
    assert_int_equal(fetch_fail(&e, FETCH_ERR_OFFLINE, "%s is not here", "a.tar.xz"), -1);
    assert_int_equal(e.kind, FETCH_ERR_OFFLINE);
    assert_string_equal(e.message, "a.tar.xz is not here");
    assert_int_equal(fetch_fail_errno(&e, EACCES, "cannot create %s", "/p"), -1);
    assert_int_equal(e.kind, FETCH_ERR_OTHER);
    fetch_error_free(&e);
    assert_null(e.message);
    assert_int_equal(e.kind, FETCH_ERR_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_full_disk_is_the_disk),
        cmocka_unit_test(several_failures_show_the_fix_that_gets_furthest),
        cmocka_unit_test(helpers_record_kind_and_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
