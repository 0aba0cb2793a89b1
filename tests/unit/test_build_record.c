#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel_build/record.h"
#include "kernel_build/srcinfo.h"
#include "util/fs.h"
#include "util/strbuf.h"

static void fill(struct build_record *r)
{
    memset(r, 0, sizeof *r);
    r->sagebuild_version = xstrdup("0.1.0");
    r->archs = xstrdup("sm_90,sm_120a");
    r->head_dims = xstrdup("64,128");
    r->nvcc_path = xstrdup("/cuda/bin/nvcc");
    r->nvcc_version = xstrdup("13.0.88");
    r->cuda_home = xstrdup("/cuda");
    r->cuda_home_rule = xstrdup("fetched toolkit");
    r->host_cxx_path = xstrdup("/usr/bin/g++");
    r->host_cxx_version = xstrdup("12.2.0");
    r->generator = xstrdup("Ninja");
    r->cmake_version = xstrdup("3.25.1");
    r->kernels_dir = xstrdup("/src/kernels");
    r->source_hash = xstrdup("abc123");
    r->source_revision = NULL;
    r->nflags = 2;
    r->flags = xcalloc(3, sizeof *r->flags);
    r->flags[0] = xstrdup("cmake");
    r->flags[1] = xstrdup("-DSAGEATTN_ARCHS=sm_90;sm_120a");
    r->jobs = 2;
    r->cpu_seconds = 98.7654;
    r->wall_seconds = 51.2;
    r->finished_at = xstrdup("2026-11-29T16:00:00Z");
}

static void round_trips(void **state)
{
    (void)state;
    struct build_record a, b;
    fill(&a);
    char *json = build_record_to_json(&a);
    assert_non_null(strstr(json, "\"schema\":\t1"));
    assert_non_null(strstr(json, "\"revision\":\tnull"));
    assert_int_equal(build_record_from_json(json, &b), 0);
    assert_string_equal(b.archs, "sm_90,sm_120a");
    assert_string_equal(b.nvcc_version, "13.0.88");
    assert_string_equal(b.host_cxx_path, "/usr/bin/g++");
    assert_string_equal(b.cuda_home_rule, "fetched toolkit");
    assert_null(b.source_revision);
    assert_int_equal(b.nflags, 2);
    assert_string_equal(b.flags[1], "-DSAGEATTN_ARCHS=sm_90;sm_120a");
    assert_int_equal(b.jobs, 2);
    assert_true(b.cpu_seconds > 98.7 && b.cpu_seconds < 98.8);
    assert_int_equal(build_decide(&a, &b, 1, 0, NULL), BUILD_UP_TO_DATE);
    free(json);
    build_record_free(&a);
    build_record_free(&b);
}

/* A build that compiled nothing writes the last record's times again: read and written, the
 * text must not drift (0.57 once became 0.56 by cutting the binary fraction). */
static void rewriting_keeps_the_times(void **state)
{
    (void)state;
    struct build_record a, b;
    fill(&a);
    a.wall_seconds = 0.57;
    a.cpu_seconds = 1234.29;
    a.have_ptxas = 1;
    a.ptxas.kernels = 42;
    a.ptxas.max_registers = 255;
    a.ptxas.functions_spilling = 1;
    a.ptxas.spill_stores = 24;
    a.ptxas.spill_loads = 20;
    snprintf(a.ptxas.worst, sizeof a.ptxas.worst, "k (sm_90): 24 bytes spill stores");
    char *first = build_record_to_json(&a);
    assert_int_equal(build_record_from_json(first, &b), 0);
    char *second = build_record_to_json(&b);
    assert_string_equal(first, second);
    assert_int_equal(b.have_ptxas, 1);
    assert_int_equal(b.ptxas.max_registers, 255);
    assert_string_equal(b.ptxas.worst, "k (sm_90): 24 bytes spill stores");
    assert_non_null(strstr(first, "0.57"));
    assert_non_null(strstr(first, "1234.29"));
    free(first);
    free(second);
    build_record_free(&a);
    build_record_free(&b);
}

static void rejects_other_schemas_and_garbage(void **state)
{
    (void)state;
    struct build_record r;
    assert_int_equal(build_record_from_json("{\"schema\":2}", &r), -1);
    assert_int_equal(build_record_from_json("{\"archs\":\"sm_90\"}", &r), -1);
    assert_int_equal(build_record_from_json("not json", &r), -1);
    assert_int_equal(build_record_from_json("[1,2]", &r), -1);
    assert_int_equal(build_record_from_json(NULL, &r), -1);
    /* wrong types are ignored, not trusted */
    assert_int_equal(build_record_from_json("{\"schema\":1,\"archs\":5,\"flags\":\"x\"}", &r), 0);
    assert_null(r.archs);
    assert_int_equal(r.nflags, 0);
    build_record_free(&r);
}

static void decides_freshness(void **state)
{
    (void)state;
    struct build_record prev, want;
    fill(&prev);
    fill(&want);
    char *why = NULL;
    assert_int_equal(build_decide(&prev, &want, 1, 0, &why), BUILD_UP_TO_DATE);
    assert_string_equal(why, "nothing changed");
    free(why);
    /* times, flags and the revision text are not part of the build's identity */
    want.cpu_seconds = 1;
    free(want.finished_at);
    want.finished_at = NULL;
    assert_int_equal(build_decide(&prev, &want, 1, 0, NULL), BUILD_UP_TO_DATE);

    assert_int_equal(build_decide(NULL, &want, 1, 0, &why), BUILD_NO_RECORD);
    free(why);
    assert_int_equal(build_decide(&prev, &want, 1, 1, &why), BUILD_FORCED);
    free(why);
    assert_int_equal(build_decide(&prev, &want, 0, 0, &why), BUILD_OUTPUTS_MISSING);
    free(why);

    free(want.source_hash);
    want.source_hash = xstrdup("def456");
    assert_int_equal(build_decide(&prev, &want, 1, 0, &why), BUILD_SOURCES_CHANGED);
    free(why);

    free(want.archs);
    want.archs = xstrdup("sm_120a");
    assert_int_equal(build_decide(&prev, &want, 1, 0, &why), BUILD_CONFIG_CHANGED);
    assert_string_equal(why, "archs changed (sm_90,sm_120a -> sm_120a)");
    free(why);

    free(want.host_cxx_path);
    want.host_cxx_path = xstrdup("/usr/bin/g++-11");
    assert_int_equal(build_decide(&prev, &want, 1, 0, NULL), BUILD_CONFIG_CHANGED);
    build_record_free(&prev);
    build_record_free(&want);
}

static void hashes_only_sources(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sb-test-srcinfo-XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char *src = fs_join(dir, "src");
    char *build = fs_join(dir, "build");
    fs_mkdir_p(src, 0755);
    fs_mkdir_p(build, 0755);
    char *a = fs_join(src, "a.cu");
    char *junk = fs_join(build, "a.o");
    assert_int_equal(fs_write_file(a, "x", 1), 0);
    assert_int_equal(fs_write_file(junk, "1", 1), 0);
    char *err = NULL;
    char *h1 = srcinfo_hash_tree(dir, &err);
    assert_non_null(h1);
    assert_int_equal(strlen(h1), 64);
    assert_int_equal(fs_write_file(junk, "2", 1), 0); /* build output: no change */
    char *h2 = srcinfo_hash_tree(dir, &err);
    assert_string_equal(h1, h2);
    assert_int_equal(fs_write_file(a, "y", 1), 0); /* a source: change */
    char *h3 = srcinfo_hash_tree(dir, &err);
    assert_string_not_equal(h1, h3);
    assert_null(srcinfo_hash_tree("/nonexistent/sb-test", &err));
    assert_non_null(err);
    free(err);
    free(h1);
    free(h2);
    free(h3);
    fs_remove_tree(dir);
    free(src);
    free(build);
    free(a);
    free(junk);
}

static int sh(const char *cmd)
{
    return system(cmd);
}

static void reads_the_git_revision(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sb-test-git-XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    assert_null(srcinfo_git_revision(dir)); /* not a checkout */
    char *cmd = xasprintf("cd %s && git init -q . && echo a > f && git add f && "
                          "git -c user.name=t -c user.email=t@t commit -q -m x",
                          dir);
    if (sh(cmd) != 0) { /* no git here: nothing to check */
        free(cmd);
        fs_remove_tree(dir);
        skip();
    }
    free(cmd);
    char *rev = srcinfo_git_revision(dir);
    assert_non_null(rev);
    assert_int_equal(strlen(rev), 40);
    free(rev);
    char *f = fs_join(dir, "f");
    assert_int_equal(fs_write_file(f, "b", 1), 0);
    rev = srcinfo_git_revision(dir);
    assert_non_null(rev);
    assert_non_null(strstr(rev, "-dirty"));
    free(rev);
    free(f);
    fs_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trips),
        cmocka_unit_test(rewriting_keeps_the_times),
        cmocka_unit_test(rejects_other_schemas_and_garbage),
        cmocka_unit_test(decides_freshness),
        cmocka_unit_test(hashes_only_sources),
        cmocka_unit_test(reads_the_git_revision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
