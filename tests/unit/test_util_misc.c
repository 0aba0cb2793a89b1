#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/datadir.h"
#include "util/fs.h"
#include "util/out.h"
#include "util/strbuf.h"
#include "util/xdg.h"

static void joins_paths(void **state)
{
    (void)state;
    char *p = fs_join("/usr/local/cuda/", "/bin/nvcc");
    assert_string_equal(p, "/usr/local/cuda/bin/nvcc");
    free(p);
    p = fs_join("/", "usr");
    assert_string_equal(p, "/usr");
    free(p);
    p = fs_dirname("/usr/local/cuda/bin/nvcc");
    assert_string_equal(p, "/usr/local/cuda/bin");
    free(p);
    p = fs_dirname("nvcc");
    assert_string_equal(p, ".");
    free(p);
    p = fs_dirname("/nvcc");
    assert_string_equal(p, "/");
    free(p);
}

static void which_searches_in_order(void **state)
{
    (void)state;
    char *p = fs_which_in("sh", "/nonexistent:/bin:/usr/bin");
    assert_non_null(p);
    assert_string_equal(p, "/bin/sh");
    free(p);
    assert_null(fs_which_in("definitely-no-such-tool", "/bin:/usr/bin"));
    assert_null(fs_which_in("sh", NULL));
}

static void colour_rules(void **state)
{
    (void)state;
    struct out_style s = out_style_decide(1, NULL, "xterm", "en_US.UTF-8", 0);
    assert_true(s.color);
    assert_true(s.unicode);
    s = out_style_decide(1, "1", "xterm", "C", 0);
    assert_false(s.color);
    assert_false(s.unicode);
    assert_string_equal(out_status_mark(&s, OUT_ERROR), "[x]");
    s = out_style_decide(0, NULL, "xterm", NULL, 0);
    assert_false(s.color);
    s = out_style_decide(1, "", "dumb", NULL, 0);
    assert_false(s.color);
    s = out_style_decide(1, "", "xterm", NULL, 1);
    assert_false(s.color);
    assert_string_equal(out_color(&s, OUT_ERROR), "");
}

static void xdg_rules(void **state)
{
    (void)state;
    char *d = xdg_dir_from("/x/cache", "/home/u", ".cache");
    assert_string_equal(d, "/x/cache/sagebuild");
    free(d);
    d = xdg_dir_from("relative", "/home/u", ".cache");
    assert_string_equal(d, "/home/u/.cache/sagebuild");
    free(d);
    assert_null(xdg_dir_from(NULL, NULL, ".cache"));
}

static void datadir_order(void **state)
{
    (void)state;
    char **c = datadir_candidates("/opt/sb", "/usr/local/bin/sagebuild");
    assert_string_equal(c[0], "/opt/sb");
    assert_string_equal(c[1], "/usr/local/share/sagebuild");
    assert_string_equal(c[2], "/usr/local");
    assert_null(c[3]);
    datadir_free_list(c);
}

static void strbuf_grows(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    assert_string_equal(sb_str(&sb), "");
    for (int i = 0; i < 1000; i++)
        sb_addf(&sb, "%d,", i);
    assert_int_equal(sb.len, strlen(sb.buf));
    assert_non_null(strstr(sb.buf, ",999,"));
    char *s = sb_detach(&sb);
    assert_null(sb.buf);
    free(s);
}

static void arrays_grow_geometrically(void **state)
{
    (void)state;
    int *a = NULL, cap = 0, reallocs = 0;
    for (int n = 0; n < 100000; n++) {
        int before = cap;
        a = xgrow(a, &cap, n + 1, sizeof *a);
        reallocs += cap != before;
        a[n] = n;
    }
    assert_true(cap >= 100000);
    assert_true(reallocs <= 20); /* doubling: log2(100000 / 8) + 1 */
    assert_int_equal(a[99999], 99999);
    assert_ptr_equal(xgrow(a, &cap, 10, sizeof *a), a); /* already big enough */
    free(a);
}

static void why_not_a_folder(void **state)
{
    (void)state;
    char *w = fs_why_not_dir("/dev/null");
    assert_string_equal(w, "is a character device, not a folder");
    free(w);
    assert_null(fs_why_not_dir("/"));
    char dir[] = "/tmp/sb-util-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *link = fs_join(dir, "l"), *gone = fs_join(dir, "gone");
    assert_int_equal(symlink(gone, link), 0);
    w = fs_why_not_dir(link);
    assert_non_null(strstr(w, "is a symlink to '"));
    assert_non_null(strstr(w, "', which does not exist"));
    free(w);
    w = fs_why_not_dir(gone);
    assert_string_equal(w, "does not exist");
    free(w);
    unlink(link);
    rmdir(dir);
    free(link);
    free(gone);
}

static void reads_files_with_limit(void **state)
{
    (void)state;
    char path[] = "/tmp/sb-test-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(fs_write_file(path, "0123456789", 10), 0);
    size_t len = 0;
    char *s = fs_read_file(path, 4, &len);
    assert_string_equal(s, "0123");
    assert_int_equal(len, 4);
    free(s);
    unlink(path);
    assert_null(fs_read_file(path, 10, NULL));
    assert_null(fs_read_file("/tmp", 10, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(joins_paths),
        cmocka_unit_test(which_searches_in_order),
        cmocka_unit_test(colour_rules),
        cmocka_unit_test(xdg_rules),
        cmocka_unit_test(datadir_order),
        cmocka_unit_test(strbuf_grows),
        cmocka_unit_test(reads_files_with_limit),
        cmocka_unit_test(arrays_grow_geometrically),
        cmocka_unit_test(why_not_a_folder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
