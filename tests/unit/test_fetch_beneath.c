/* Folders reached beneath a root by descriptor: never through a symlink, never above the root,
 * with openat2 and with the component-by-component walk alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetch/engine/beneath.h"
#include "util/fs.h"
#include "util/strbuf.h"

struct fixture {
    char *top;  /* holds root/ and outside/ */
    char *root; /* the tree */
};

static int set_up(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    f->top = xstrdup("/tmp/sb-beneath-test-XXXXXX");
    if (!mkdtemp(f->top))
        return -1;
    f->root = fs_join(f->top, "root");
    char *outside = fs_join(f->top, "outside");
    mkdir(f->root, 0755);
    mkdir(outside, 0755);
    char *p = fs_join(f->root, "abs");
    if (symlink(outside, p) < 0) /* an absolute link out */
        return -1;
    free(p);
    p = fs_join(f->root, "up");
    if (symlink("..", p) < 0) /* a relative one */
        return -1;
    free(p);
    p = fs_join(f->root, "file");
    fs_write_file(p, "x", 1);
    free(p);
    free(outside);
    *state = f;
    return 0;
}

static int tear_down(void **state)
{
    struct fixture *f = *state;
    fs_remove_tree(f->top);
    free(f->top);
    free(f->root);
    free(f);
    return 0;
}

static void check(int walk_only, struct fixture *f)
{
    struct beneath b;
    assert_int_equal(beneath_open(&b, f->root, walk_only), 0);
    /* Missing folders are created, and the cached descriptor serves the same folder again. */
    int fd = beneath_dir(&b, "a/b/c", 1, NULL);
    assert_true(fd >= 0);
    assert_int_equal(beneath_dir(&b, "a/b/c", 1, NULL), fd);
    assert_int_equal(mkdirat(fd, "made-here", 0755), 0);
    char *p = fs_join(f->root, "a/b/c/made-here");
    assert_true(fs_is_dir(p));
    free(p);
    assert_true(beneath_dir(&b, "", 0, NULL) >= 0);
    /* Symlinks anywhere on the way are refused, naming where. */
    size_t bad = 0;
    errno = 0;
    assert_int_equal(beneath_dir(&b, "abs", 1, &bad), -1);
    assert_int_equal(errno, ELOOP);
    assert_int_equal(bad, 3);
    assert_int_equal(beneath_dir(&b, "up/root/a", 1, &bad), -1);
    assert_int_equal(errno, ELOOP);
    assert_int_equal(bad, 2);
    /* ".." never climbs, even where it would stay inside. */
    assert_int_equal(beneath_dir(&b, "a/b/c/../../../up", 1, &bad), -1);
    assert_int_equal(beneath_dir(&b, "a/..", 1, &bad), -1);
    assert_int_equal(beneath_dir(&b, "..", 1, &bad), -1);
    p = fs_join(f->root, "a/link");
    assert_int_equal(symlink("b", p), 0); /* even one that stays inside */
    free(p);
    assert_int_equal(beneath_dir(&b, "a/link/c", 1, &bad), -1);
    assert_int_equal(errno, ELOOP);
    assert_int_equal(bad, 6);
    /* A file on the way, and a missing folder when creating is not wanted. */
    assert_int_equal(beneath_dir(&b, "file/x", 1, &bad), -1);
    assert_int_equal(errno, ENOTDIR);
    assert_int_equal(beneath_dir(&b, "a/none", 0, &bad), -1);
    assert_int_equal(errno, ENOENT);
    p = fs_join(f->top, "outside/root");
    assert_false(fs_exists(p));
    free(p);
    beneath_close(&b);
    p = fs_join(f->root, "a");
    fs_remove_tree(p);
    free(p);
}

static void with_openat2(void **state)
{
    check(0, *state);
}

static void with_the_walk(void **state)
{
    check(1, *state);
}

static void split(void **state)
{
    (void)state;
    char *dir;
    assert_string_equal(beneath_split("a/b/c", &dir), "c");
    assert_string_equal(dir, "a/b");
    free(dir);
    assert_string_equal(beneath_split("c", &dir), "c");
    assert_string_equal(dir, "");
    free(dir);
}

static void root_must_not_be_a_symlink(void **state)
{
    struct fixture *f = *state;
    struct beneath b;
    char *p = fs_join(f->root, "abs");
    assert_int_equal(beneath_open(&b, p, 0), -1);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(with_openat2, set_up, tear_down),
        cmocka_unit_test_setup_teardown(with_the_walk, set_up, tear_down),
        cmocka_unit_test(split),
        cmocka_unit_test_setup_teardown(root_must_not_be_a_symlink, set_up, tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
