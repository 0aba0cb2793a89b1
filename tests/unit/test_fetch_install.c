/* Staging, atomic swap, debris removal, merging components and the toolkit fix-ups; and the
 * download engine over file:// URLs (cache hits, fall-through, resume, hash mismatch). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetch/engine/download.h"
#include "fetch/engine/install.h"
#include "fetch/engine/layout.h"
#include "fetch/engine/verify.h"
#include "util/fs.h"
#include "util/strbuf.h"

static char *tmp_root(void)
{
    char *d = xstrdup("/tmp/sb-install-test-XXXXXX");
    assert_non_null(mkdtemp(d));
    return d;
}

static void put(const char *root, const char *rel, const char *text)
{
    char *p = fs_join(root, rel);
    char *dir = fs_dirname(p);
    assert_int_equal(fs_mkdir_p(dir, 0755), 0);
    assert_int_equal(fs_write_file(p, text, strlen(text)), 0);
    free(dir);
    free(p);
}

static char *get(const char *root, const char *rel)
{
    char *p = fs_join(root, rel);
    char *t = fs_read_file(p, 1 << 20, NULL);
    free(p);
    return t;
}

static void swap_replaces_old_and_sweeps_debris(void **state)
{
    (void)state;
    char *root = tmp_root();
    char *prefix = fs_join(root, "cuda");
    put(prefix, "marker", "old");
    put(root, ".cuda.staging-dead01/x", "debris");
    struct install_ctx c;
    struct fetch_error err = {0};
    assert_int_equal(install_lock(prefix, NULL, &c, &err), 0);
    char *debris = fs_join(root, ".cuda.staging-dead01");
    assert_false(fs_exists(debris)); /* a killed run's staging is removed under the lock */
    free(debris);
    assert_int_equal(install_staging(&c, &err), 0);
    put(c.staging, "marker", "new");
    assert_int_equal(install_commit(&c, &err), 0);
    char *t = get(prefix, "marker");
    assert_string_equal(t, "new");
    free(t);
    install_release(&c);
    /* Only the prefix and its lock file remain. */
    char *lock = fs_join(root, ".cuda.lock");
    assert_true(fs_exists(lock));
    free(lock);
    /* An aborted run leaves the prefix alone and no staging. */
    assert_int_equal(install_lock(prefix, NULL, &c, &err), 0);
    assert_int_equal(install_staging(&c, &err), 0);
    char *staging = xstrdup(c.staging);
    put(staging, "marker", "half");
    install_release(&c);
    assert_false(fs_exists(staging));
    t = get(prefix, "marker");
    assert_string_equal(t, "new");
    free(t);
    free(staging);
    /* Through a symlink: the tree it points at is replaced, the link stays a link. */
    char *link = fs_join(root, "cuda-link");
    assert_int_equal(symlink(prefix, link), 0);
    assert_int_equal(install_lock(link, NULL, &c, &err), 0);
    assert_int_equal(install_staging(&c, &err), 0);
    put(c.staging, "marker", "via link");
    assert_int_equal(install_commit(&c, &err), 0);
    install_release(&c);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    t = get(prefix, "marker");
    assert_string_equal(t, "via link");
    free(t);
    free(link);
    fs_remove_tree(root);
    free(prefix);
    free(root);
}

static void merge_and_fixups(void **state)
{
    (void)state;
    char *root = tmp_root();
    char *a = fs_join(root, "a"), *b = fs_join(root, "b"), *t = fs_join(root, "t");
    put(a, "bin/nvcc", "nvcc");
    put(a, "LICENSE", "l");
    put(b, "include/cccl/nv/target", "nv");
    put(b, "lib/libcudart.so", "so");
    put(b, "LICENSE", "l");
    fs_mkdir_p(t, 0755);
    struct fetch_error err = {0};
    assert_int_equal(layout_merge(a, t, &err), 0);
    assert_int_equal(layout_merge(b, t, &err), 0);
    assert_false(fs_exists(a));
    char *s = get(t, "bin/nvcc");
    assert_string_equal(s, "nvcc");
    free(s);
    struct strbuf log = STRBUF_INIT, missing = STRBUF_INIT;
    const char *names[] = {"cuda_nvcc"}, *versions[] = {"13.0.88"};
    assert_int_equal(layout_fixup(t, "13.0.2", names, versions, 1, &log, &err), 0);
    assert_non_null(strstr(sb_str(&log), "lib64 -> lib"));
    assert_non_null(strstr(sb_str(&log), "include/nv -> cccl/nv"));
    s = get(t, "lib64/libcudart.so");
    assert_string_equal(s, "so");
    free(s);
    s = get(t, "version.json");
    assert_non_null(strstr(s, "13.0.2"));
    assert_non_null(strstr(s, "13.0.88"));
    free(s);
    /* Most of a toolkit is still missing: each missing piece is named. */
    int n = layout_check(t, &missing);
    assert_true(n > 5);
    assert_non_null(strstr(sb_str(&missing), "nvvm/bin/cicc"));
    assert_null(strstr(sb_str(&missing), "bin/nvcc,"));
    assert_null(strstr(sb_str(&missing), "nv/target"));
    sb_free(&log);
    sb_free(&missing);
    fs_remove_tree(root);
    free(a);
    free(b);
    free(t);
    free(root);
}

static void hex_of(const char *text, char out[65])
{
    struct sha256_ctx c = {0};
    sha256_init(&c);
    sha256_update(&c, text, strlen(text));
    sha256_final(&c, out);
    sha256_free(&c);
}

static void sha256_known_value(void **state)
{
    (void)state;
    char h[65];
    hex_of("abc", h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* One job over file:// URLs; returns the job's ok flag. */
static int run_job(const char *dest, char **urls, int nurls, const char *sha, long long size,
                   int offline, struct dl_job *j)
{
    dl_job_init(j);
    j->label = "comp";
    j->urls = urls;
    j->nurls = nurls;
    j->path = dest;
    j->size = size;
    j->sha256 = sha;
    struct dl_opts o;
    dl_opts_defaults(&o);
    o.retries = 1;
    o.offline = offline;
    dl_run(j, 1, &o);
    return j->ok;
}

static void downloads_over_file_urls(void **state)
{
    (void)state;
    char *root = tmp_root();
    const char *body = "the archive's bytes, several of them";
    put(root, "m2/a.tar.xz", body);
    char sha[65];
    hex_of(body, sha);
    long long size = (long long)strlen(body);
    char *missing = xasprintf("file://%s/m1/a.tar.xz", root);
    char *good = xasprintf("file://%s/m2/a.tar.xz", root);
    char *dest = fs_join(root, "cache/a.tar.xz");
    char *urls[] = {missing, good};
    struct dl_job j;
    assert_true(run_job(dest, urls, 2, sha, size, 0, &j));
    assert_string_equal(j.url_used, good);
    assert_int_equal(j.net_bytes, size);
    assert_int_equal(j.stream.state, DL_VERIFIED);
    dl_job_free(&j);
    /* Verified in the cache: used as it is, offline too. */
    assert_true(run_job(dest, urls, 2, sha, size, 1, &j));
    assert_true(j.from_cache);
    assert_int_equal(j.net_bytes, 0);
    dl_job_free(&j);
    /* A cached copy of the right size but the wrong bytes is fetched again. */
    char *garbage = xstrdup(body);
    garbage[1] = (char)(garbage[1] ^ 0x20); /* same size, other bytes */
    fs_write_file(dest, garbage, strlen(garbage));
    free(garbage);
    assert_true(run_job(dest, urls, 2, sha, size, 0, &j));
    assert_false(j.from_cache);
    assert_int_equal(j.net_bytes, size);
    assert_int_equal(j.stream.gen, 1); /* a consumer reading the bad copy starts over */
    dl_job_free(&j);
    /* A partial .part resumes: only the rest comes over. */
    unlink(dest);
    char *part = xasprintf("%s.part", dest);
    fs_write_file(part, body, 10);
    assert_true(run_job(dest, urls + 1, 1, sha, size, 0, &j));
    assert_int_equal(j.net_bytes, size - 10);
    dl_job_free(&j);
    /* The wrong hash everywhere: the error names the URL and both hashes; nothing is kept. */
    unlink(dest);
    const char *wrong = "0000000000000000000000000000000000000000000000000000000000000000";
    assert_false(run_job(dest, urls, 2, wrong, size, 0, &j));
    assert_int_equal(j.error.kind, FETCH_ERR_UNDELIVERED);
    assert_non_null(strstr(j.error.message, good));
    assert_non_null(strstr(j.error.message, wrong));
    assert_non_null(strstr(j.error.message, sha));
    assert_non_null(strstr(j.error.message, missing));
    assert_false(fs_exists(dest));
    struct stat st;
    assert_true(stat(part, &st) != 0 || st.st_size == 0);
    dl_job_free(&j);
    /* Offline with nothing cached. */
    assert_false(run_job(dest, urls, 2, sha, size, 1, &j));
    assert_int_equal(j.error.kind, FETCH_ERR_OFFLINE);
    assert_non_null(strstr(j.error.message, "offline"));
    dl_job_free(&j);
    /* A file the user brought (--from) that is not the one the manifest names: never replaced,
     * and no mirror is blamed. */
    put(root, "from/a.tar.xz", "some other archive");
    char *mine = fs_join(root, "from/a.tar.xz");
    dl_job_init(&j);
    j.label = "comp";
    j.path = mine;
    j.size = size;
    j.sha256 = sha;
    j.user_file = 1;
    struct dl_opts o;
    dl_opts_defaults(&o);
    assert_int_equal(dl_run(&j, 1, &o), -1);
    assert_int_equal(j.error.kind, FETCH_ERR_MISMATCH);
    assert_non_null(strstr(j.error.message, "does not match the manifest"));
    assert_true(fs_exists(mine));
    dl_job_free(&j);
    free(mine);
    free(part);
    free(missing);
    free(good);
    free(dest);
    fs_remove_tree(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(swap_replaces_old_and_sweeps_debris),
        cmocka_unit_test(merge_and_fixups),
        cmocka_unit_test(sha256_known_value),
        cmocka_unit_test(downloads_over_file_urls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
