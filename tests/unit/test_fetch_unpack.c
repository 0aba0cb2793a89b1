/* Safe extraction: archives built here with libarchive, unpacked into a temporary folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetch/engine/unpack.h"
#include "util/fs.h"
#include "util/strbuf.h"

struct ent {
    const char *name;
    int type; /* AE_IFREG, AE_IFDIR, AE_IFLNK, AE_IFCHR; 0 = hard link */
    const char *data_or_target;
    int mode;
};

static char *tmp_root(void)
{
    char *d = xstrdup("/tmp/sb-unpack-test-XXXXXX");
    assert_non_null(mkdtemp(d));
    return d;
}

static char *make_archive(const char *dir, const struct ent *ents, int n)
{
    char *path = fs_join(dir, "a.tar.gz");
    struct archive *a = archive_write_new();
    archive_write_set_format_gnutar(a);
    archive_write_add_filter_gzip(a);
    assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
    for (int i = 0; i < n; i++) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, ents[i].name);
        archive_entry_set_perm(e, ents[i].mode ? ents[i].mode : 0644);
        if (ents[i].type == 0) {
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_set_hardlink(e, ents[i].data_or_target);
            archive_write_header(a, e);
        } else if (ents[i].type == AE_IFLNK) {
            archive_entry_set_filetype(e, AE_IFLNK);
            archive_entry_set_symlink(e, ents[i].data_or_target);
            archive_write_header(a, e);
        } else if (ents[i].type == AE_IFREG) {
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_set_size(e, (la_int64_t)strlen(ents[i].data_or_target));
            archive_write_header(a, e);
            archive_write_data(a, ents[i].data_or_target, strlen(ents[i].data_or_target));
        } else {
            archive_entry_set_filetype(e, (unsigned)ents[i].type);
            archive_write_header(a, e);
        }
        archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    return path;
}

/* Set by the tests that run twice: once with openat2, once with the component-by-component walk
 * (kernels before 5.6). */
static int walk_only;

/* The kind of the last failure unpack() saw (FETCH_ERR_NONE when it succeeded). */
static enum fetch_error_kind last_kind;

static int unpack(const struct ent *ents, int n, char **root_out, char **error)
{
    char *root = tmp_root();
    char *arc = make_archive(root, ents, n);
    char *dest = fs_join(root, "out");
    struct unpack_opts o = {.strip = 1, .walk_only = walk_only, .archive_name = "a.tar.gz"};
    struct unpack_result r;
    int rc = unpack_file(arc, dest, &o, &r);
    *error = r.error.message ? xstrdup(r.error.message) : NULL;
    last_kind = r.error.kind;
    unpack_result_free(&r);
    free(arc);
    free(dest);
    *root_out = root;
    return rc;
}

static void good_archive_is_stripped(void **state)
{
    walk_only = state && *state;
    const struct ent ents[] = {
        {"top/", AE_IFDIR, NULL, 0755},
        {"top/bin/nvcc", AE_IFREG, "#!/bin/sh\n", 04755},
        {"top/lib/libcudart.so.13", AE_IFREG, "elf", 0644},
        {"top/lib/libcudart.so", AE_IFLNK, "libcudart.so.13", 0777},
        {"top/lib/hard", 0, "top/lib/libcudart.so.13", 0644},
    };
    char *root, *err;
    assert_int_equal(unpack(ents, 5, &root, &err), 0);
    char *p = fs_join(root, "out/bin/nvcc");
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0755); /* set-uid dropped */
    free(p);
    p = fs_join(root, "out/lib/libcudart.so");
    char buf[64] = "";
    assert_true(readlink(p, buf, sizeof buf - 1) > 0);
    assert_string_equal(buf, "libcudart.so.13");
    free(p);
    p = fs_join(root, "out/lib/hard");
    char *text = fs_read_file(p, 100, NULL);
    assert_string_equal(text, "elf");
    free(text);
    free(p);
    fs_remove_tree(root);
    free(root);
}

static void refuse(const struct ent *ents, int n, const char *want, const char *must_not_exist)
{
    char *root, *err = NULL;
    assert_int_equal(unpack(ents, n, &root, &err), -1);
    assert_non_null(err);
    if (!strstr(err, want))
        fail_msg("error '%s' lacks '%s'", err, want);
    /* What picks fetch-cuda's fix: a hostile archive is no disk or network problem. */
    assert_int_equal(last_kind, FETCH_ERR_UNSAFE_ARCHIVE);
    if (must_not_exist) {
        char *p = fs_join(root, must_not_exist);
        assert_false(fs_exists(p));
        free(p);
    }
    free(err);
    fs_remove_tree(root);
    free(root);
}

static void escapes_are_refused(void **state)
{
    walk_only = state && *state;
    const struct ent dotdot[] = {{"top/../../escaped", AE_IFREG, "x", 0}};
    refuse(dotdot, 1, "'..'", "escaped");
    const struct ent absolute[] = {{"/tmp/sb-unpack-escaped-abs", AE_IFREG, "x", 0}};
    refuse(absolute, 1, "absolute", NULL);
    assert_false(fs_exists("/tmp/sb-unpack-escaped-abs"));
    const struct ent sym[] = {{"top/evil", AE_IFLNK, "../../..", 0}};
    refuse(sym, 1, "outside the tree", "out/evil");
    const struct ent symabs[] = {{"top/evil", AE_IFLNK, "/etc", 0}};
    refuse(symabs, 1, "absolute", "out/evil");
    const struct ent through[] = {{"top/d", AE_IFLNK, ".", 0}, {"top/d/x", AE_IFREG, "x", 0}};
    refuse(through, 2, "beneath the symlink", "out/x");
    const struct ent hard[] = {{"top/h", 0, "/etc/passwd", 0}};
    refuse(hard, 1, "hard link", "out/h");
    const struct ent hard2[] = {{"top/h", 0, "top/../../outside", 0}};
    refuse(hard2, 1, "hard link", "out/h");
    const struct ent dev[] = {{"top/null", AE_IFCHR, NULL, 0}};
    refuse(dev, 1, "not a file", "out/null");
    /* A symlink that stays inside where it is, copied by a hard link to where it does not. */
    const struct ent hardsym[] = {{"top/a/b/c/up", AE_IFLNK, "../../..", 0},
                                  {"top/x", 0, "top/a/b/c/up", 0},
                                  {"top/x/outside", AE_IFREG, "x", 0}};
    refuse(hardsym, 3, "the target is a symlink", "outside");
    const struct ent hardchain[] = {{"top/a/b/c/up", AE_IFLNK, "../../..", 0},
                                    {"top/a/y", 0, "top/a/b/c/up", 0},
                                    {"top/x", 0, "top/a/y", 0}};
    refuse(hardchain, 3, "the target is a symlink", "out/x");
    const struct ent hardbeneath[] = {
        {"top/d", AE_IFLNK, ".", 0}, {"top/f", AE_IFREG, "x", 0}, {"top/h", 0, "top/d/f", 0}};
    refuse(hardbeneath, 3, "lies beneath a symlink", "out/h");
    const struct ent dirthrough[] = {{"top/d", AE_IFLNK, ".", 0},
                                     {"top/d/sub/", AE_IFDIR, NULL, 0}};
    refuse(dirthrough, 2, "beneath the symlink 'd'", "out/sub");
}

static void entry_budget_is_enforced(void **state)
{
    (void)state;
    walk_only = 0;
    /* A small archive gets the floor: 16384 entries. */
    int n = 16390;
    struct ent *ents = calloc((size_t)n, sizeof *ents);
    char **names = calloc((size_t)n, sizeof *names);
    for (int i = 0; i < n; i++) {
        names[i] = xasprintf("top/e/%d", i);
        ents[i] = (struct ent){names[i], AE_IFREG, "", 0};
    }
    refuse(ents, n, "has more than 16384 entries, its budget", NULL);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(ents);
}

static void long_names_are_shortened(void **state)
{
    (void)state;
    walk_only = 0;
    char *name = calloc(1, 6001);
    memcpy(name, "top/", 4);
    memset(name + 4, 'a', 5996);
    const struct ent ents[] = {{name, AE_IFLNK, "/etc", 0}};
    char *root, *err = NULL;
    assert_int_equal(unpack(ents, 1, &root, &err), -1);
    assert_non_null(err);
    assert_true(strlen(err) < 600);
    assert_non_null(strstr(err, "(6000 bytes)"));
    free(err);
    free(name);
    fs_remove_tree(root);
    free(root);
}

static void not_an_archive(void **state)
{
    (void)state;
    char *root = tmp_root();
    char *p = fs_join(root, "junk.tar.xz");
    fs_write_file(p, "this is not an archive at all, not even close", 46);
    char *dest = fs_join(root, "out");
    struct unpack_opts o = {.strip = 1};
    struct unpack_result r;
    assert_int_equal(unpack_file(p, dest, &o, &r), -1);
    assert_non_null(r.error.message);
    assert_int_equal(r.error.kind, FETCH_ERR_OTHER);
    unpack_result_free(&r);
    free(dest);
    free(p);
    fs_remove_tree(root);
    free(root);
}

static char *keep_include_only(void *ud, const char *rel)
{
    (void)ud;
    if (strncmp(rel, "include/", 8))
        return NULL;
    return xasprintf("inc/%s", rel + 8);
}

static void map_hook_renames_and_skips(void **state)
{
    (void)state;
    const struct ent ents[] = {
        {"top/include/a.h", AE_IFREG, "a", 0},
        {"top/bin/tool", AE_IFREG, "t", 0},
    };
    char *root = tmp_root();
    char *arc = make_archive(root, ents, 2);
    char *dest = fs_join(root, "out");
    struct unpack_opts o = {.strip = 1, .map = keep_include_only};
    struct unpack_result r;
    assert_int_equal(unpack_file(arc, dest, &o, &r), 0);
    char *a = fs_join(dest, "inc/a.h"), *t = fs_join(dest, "bin/tool");
    assert_true(fs_exists(a));
    assert_false(fs_exists(t));
    assert_int_equal(r.entries, 1);
    free(a);
    free(t);
    unpack_result_free(&r);
    free(arc);
    free(dest);
    fs_remove_tree(root);
    free(root);
}

int main(void)
{
    static int walk = 1;
    void *walk_state = &walk;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_archive_is_stripped),
        cmocka_unit_test_prestate(good_archive_is_stripped, &walk_state),
        cmocka_unit_test(escapes_are_refused),
        cmocka_unit_test_prestate(escapes_are_refused, &walk_state),
        cmocka_unit_test(entry_budget_is_enforced),
        cmocka_unit_test(long_names_are_shortened),
        cmocka_unit_test(not_an_archive),
        cmocka_unit_test(map_hook_renames_and_skips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
