/* Version → label resolution, components per release, URL joining, mirror lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fetch/engine/download.h"
#include "fetch/fetch_common.h"
#include "fetch/sources/manifest.h"
#include "fetch/engine/pathsafe.h"
#include "fetch/sources/resolve.h"
#include "util/fs.h"
#include "util/strbuf.h"

#define REF "tests/integration/fetch/manifests-ref"

static void plan_for(const char *label, const char *platform, char *const *extras, int nextras,
                     struct fetch_plan *plan, int expect_rc, char **err)
{
    char *path = xasprintf(REF "/redistrib_%s.json", label);
    size_t len = 0;
    char *text = fs_read_file(path, 1 << 24, &len);
    assert_non_null(text);
    struct redist_manifest m;
    char *perr = NULL;
    assert_int_equal(manifest_parse(text, len, &m, &perr), 0);
    assert_int_equal(resolve_plan(&m, label, platform, extras, nextras, plan, err), expect_rc);
    manifest_free(&m);
    free(text);
    free(path);
}

static int has(const struct fetch_plan *p, const char *c)
{
    for (int i = 0; i < p->nitems; i++)
        if (!strcmp(p->items[i].component, c))
            return 1;
    return 0;
}

/* The set follows the manifest's content: crt and nvvm appear exactly where they exist. */
static void components_per_release(void **state)
{
    (void)state;
    const char *labels[] = {"11.8.0", "12.0.0", "12.4.1", "12.6.3", "12.8.1",
                            "12.9.1", "13.0.0", "13.0.2", "13.1.1"};
    for (size_t i = 0; i < sizeof labels / sizeof *labels; i++) {
        struct fetch_plan p;
        char *err = NULL;
        plan_for(labels[i], "linux-x86_64", NULL, 0, &p, 0, &err);
        int thirteen = labels[i][0] == '1' && labels[i][1] == '3';
        assert_int_equal(p.nitems, thirteen ? 5 : 3);
        assert_true(has(&p, "cuda_nvcc") && has(&p, "cuda_cudart") && has(&p, "cuda_cccl"));
        assert_int_equal(has(&p, "libnvvm"), thirteen);
        assert_int_equal(has(&p, "cuda_crt"), thirteen);
        for (int k = 0; k < p.nitems; k++) {
            assert_int_equal(strlen(p.items[k].sha256), 64);
            assert_true(p.items[k].size > 0);
            assert_non_null(strstr(p.items[k].relative_path, "linux-x86_64"));
        }
        fetch_plan_free(&p);
    }
}

static void sizes_of_13_0_2_match_the_reference(void **state)
{
    (void)state;
    struct fetch_plan p;
    char *err = NULL;
    plan_for("13.0.2", "linux-x86_64", NULL, 0, &p, 0, &err);
    long long total = 0;
    for (int i = 0; i < p.nitems; i++)
        total += p.items[i].size;
    /* The 13.0.2 minimal set (manifests/redistrib_13.0.2.json's sizes) is 72.9 MB. */
    assert_true(total > 72800000 && total < 73000000);
    fetch_plan_free(&p);
}

static void extras_and_errors(void **state)
{
    (void)state;
    struct fetch_plan p;
    char *err = NULL;
    char *extras[] = {"nvdisasm", "cuda_cuobjdump", "nvrtc"};
    plan_for("12.8.1", "linux-sbsa", extras, 3, &p, 0, &err);
    assert_int_equal(p.nitems, 6);
    assert_true(has(&p, "cuda_nvdisasm") && has(&p, "cuda_cuobjdump") && has(&p, "cuda_nvrtc"));
    assert_non_null(strstr(p.items[0].relative_path, "linux-sbsa"));
    fetch_plan_free(&p);
    char *bogus[] = {"frobnicator"};
    plan_for("12.8.1", "linux-x86_64", bogus, 1, &p, -1, &err);
    assert_non_null(strstr(err, "frobnicator"));
    free(err);
    err = NULL;
    /* Jetson's platform is gone in 13.x: a clear error naming the component. */
    plan_for("13.0.2", "linux-aarch64", NULL, 0, &p, -1, &err);
    assert_non_null(strstr(err, "cuda_nvcc"));
    assert_non_null(strstr(err, "linux-aarch64"));
    free(err);
}

static void incomplete_entry_is_named(void **state)
{
    (void)state;
    const char *text = "{\"cuda_nvcc\":{\"linux-x86_64\":{\"relative_path\":\"../x.tar.xz\","
                       "\"sha256\":\"0000000000000000000000000000000000000000000000000000000000"
                       "000000\",\"size\":\"1\"}},\"cuda_cudart\":{},\"cuda_cccl\":{}}";
    struct redist_manifest m;
    char *err = NULL;
    assert_int_equal(manifest_parse(text, strlen(text), &m, &err), 0);
    struct fetch_plan p;
    assert_int_equal(resolve_plan(&m, "1.0.0", "linux-x86_64", NULL, 0, &p, &err), -1);
    assert_non_null(strstr(err, "unsafe relative_path"));
    free(err);
    manifest_free(&m);
}

static void labels_resolve_to_the_newest(void **state)
{
    (void)state;
    char *labels[] = {"12.8.0", "12.8.1", "12.9.1", "13.0.0", "13.0.2", "13.0.10", "13.1.1"};
    int n = 7;
    char *l = resolve_label("13.0", labels, n);
    assert_string_equal(l, "13.0.10");
    free(l);
    l = resolve_label("12", labels, n);
    assert_string_equal(l, "12.9.1");
    free(l);
    l = resolve_label("12.8.0", labels, n);
    assert_string_equal(l, "12.8.0");
    free(l);
    assert_null(resolve_label("12.7", labels, n));
    assert_null(resolve_label("13.0.3", labels, n));
    assert_null(resolve_label("abc", labels, n));
    l = resolve_newest(labels, n);
    assert_string_equal(l, "13.1.1");
    free(l);
    assert_null(resolve_newest(labels, 0));
}

static void index_listing(void **state)
{
    (void)state;
    const char *html = "<a href=\"redistrib_12.8.1.json\">redistrib_12.8.1.json</a>\n"
                       "<a href='redistrib_13.0.2.json'>x</a> redistrib_13.0.2.json "
                       "redistrib_9.json redistrib_.json redistrib_13.1.json.sha256 "
                       "redistrib_1x.json";
    int n = 0;
    char **l = resolve_index_labels(html, &n);
    assert_int_equal(n, 4);
    assert_string_equal(l[0], "12.8.1");
    assert_string_equal(l[1], "13.0.2");
    assert_string_equal(l[2], "9");
    assert_string_equal(l[3], "13.1");
    resolve_free_list(l, n);
    l = resolve_index_labels(NULL, &n);
    assert_int_equal(n, 0);
    resolve_free_list(l, n);
    /* A listing that repeats names: each once, in the order first seen. */
    struct strbuf many = STRBUF_INIT;
    for (int i = 0; i < 30000; i++)
        sb_addf(&many, "redistrib_1%d.0.%d.json ", i % 3, i % 2);
    l = resolve_index_labels(sb_str(&many), &n);
    assert_int_equal(n, 6);
    assert_string_equal(l[0], "10.0.0");
    assert_string_equal(l[1], "11.0.1");
    assert_string_equal(l[5], "12.0.1");
    resolve_free_list(l, n);
    sb_free(&many);
}

static void names_from_the_manifest(void **state)
{
    (void)state;
    assert_null(resolve_label_check("13.0.2"));
    assert_null(resolve_label_check("12"));
    assert_non_null(resolve_label_check("9.9.9/../../.."));
    assert_non_null(resolve_label_check("../13.0"));
    assert_non_null(resolve_label_check("13..0"));
    assert_non_null(resolve_label_check("13.0."));
    assert_non_null(resolve_label_check(""));
    assert_non_null(resolve_label_check("1.2.3.4.5.6.7.8.9.10.11.12.13.14.15"));
    assert_null(path_cache_name_check("cuda_nvcc/linux-x86_64/a-13.0.88-archive.tar.xz"));
    assert_null(path_cache_name_check("pypi/nvidia_cuda_nvcc-13.0.88-py3-none-any.whl"));
    assert_non_null(path_cache_name_check(".lock"));
    assert_non_null(path_cache_name_check("a/.hidden/b"));
    assert_non_null(path_cache_name_check("./a"));
    assert_non_null(path_cache_name_check("a//b"));
    assert_non_null(path_cache_name_check("a.tar.xz.part"));
    assert_non_null(path_cache_name_check("/etc/passwd"));
    assert_non_null(path_cache_name_check("a/../b"));
    struct fetch_plan plan = {.release = "13.0.2", .platform = "linux-x86_64"};
    struct fetch_item items[2] = {
        {.component = "cuda_nvcc", .version = "1", .relative_path = "a/x.tar.xz", .size = 1},
        {.component = "cuda_crt", .version = "1", .relative_path = "a/x.tar.xz", .size = 1}};
    plan.items = items;
    plan.nitems = 2;
    char *err = NULL;
    assert_int_equal(resolve_plan_check(&plan, &err), -1);
    assert_non_null(strstr(err, "cuda_nvcc and cuda_crt have the same relative_path"));
    free(err);
    items[1].relative_path = ".lock";
    assert_int_equal(resolve_plan_check(&plan, &err), -1);
    assert_non_null(strstr(err, "cuda_crt: its relative_path '.lock'"));
    free(err);
    items[1].relative_path = "b/y.tar.xz";
    assert_int_equal(resolve_plan_check(&plan, &err), 0);
    plan.release = "9.9.9/../../..";
    assert_int_equal(resolve_plan_check(&plan, &err), -1);
    assert_non_null(strstr(err, "release label"));
    free(err);
}

static void url_joining(void **state)
{
    (void)state;
    struct {
        const char *base, *rel, *want;
    } cases[] = {
        {"https://h/redist/", "a/b.tar.xz", "https://h/redist/a/b.tar.xz"},
        {"https://h/redist", "a/b.tar.xz", "https://h/redist/a/b.tar.xz"},
        {"https://h/redist//", "/a/b.tar.xz", "https://h/redist/a/b.tar.xz"},
        {"https://h/redist/redistrib_13.0.2.json", "a/b", "https://h/redist/a/b"},
        {"file:///srv/m", "x", "file:///srv/m/x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *u = url_join(cases[i].base, cases[i].rel);
        assert_string_equal(u, cases[i].want);
        free(u);
    }
    char *u = url_manifest("http://127.0.0.1:8/m/", "13.0.2");
    assert_string_equal(u, "http://127.0.0.1:8/m/redistrib_13.0.2.json");
    free(u);
}

static void mirror_order(void **state)
{
    (void)state;
    char *cli[] = {"http://a/", "http://b/"};
    int n = 0;
    char **m = resolve_mirrors(cli, 2, " http://c/, http://a/\nhttp://d/ ", 0, &n);
    assert_int_equal(n, 5);
    assert_string_equal(m[0], "http://a/");
    assert_string_equal(m[1], "http://b/");
    assert_string_equal(m[2], "http://c/");
    assert_string_equal(m[3], "http://d/");
    assert_string_equal(m[4], REDIST_DEFAULT_MIRROR);
    resolve_free_list(m, n);
    m = resolve_mirrors(NULL, 0, NULL, 1, &n);
    assert_int_equal(n, 0);
    resolve_free_list(m, n);
}

static void platforms_and_options(void **state)
{
    (void)state;
    assert_string_equal(resolve_platform_for_machine("x86_64"), "linux-x86_64");
    assert_string_equal(resolve_platform_for_machine("aarch64"), "linux-sbsa");
    assert_null(resolve_platform_for_machine("ppc64le"));
    struct dl_opts o;
    dl_opts_defaults(&o);
    fetch_dl_opts_from(&o, "4", "2");
    assert_int_equal(o.stall_timeout, 4);
    assert_int_equal(o.connect_timeout, 2);
    assert_int_equal(o.retries, 2);
    dl_opts_defaults(&o);
    fetch_dl_opts_from(&o, "junk", "-1");
    assert_int_equal(o.stall_timeout, 30);
    assert_int_equal(o.retries, 3);
    /* The minimum rate and the deadline (a dripping server must not hold a transfer). */
    assert_int_equal(o.min_rate, DL_DEFAULT_MIN_RATE);
    assert_int_equal(o.deadline, DL_DEFAULT_DEADLINE);
    fetch_dl_limits_from(&o, "64k", "600");
    assert_int_equal(o.min_rate, 65536);
    assert_int_equal(o.deadline, 600);
    fetch_dl_limits_from(&o, "fast", "-5");
    assert_int_equal(o.min_rate, 65536);
    assert_int_equal(o.deadline, 600);
    long v = 0;
    assert_int_equal(fetch_parse_rate("2M", &v), 0);
    assert_int_equal(v, 2 << 20);
    assert_int_equal(fetch_parse_rate("100B/s", &v), 0);
    assert_int_equal(v, 100);
    assert_int_equal(fetch_parse_rate("0", &v), -1);
    assert_int_equal(fetch_parse_rate("5G", &v), -1);
    assert_int_equal(fetch_parse_rate("99999999999999999999", &v), -1);
    assert_int_equal(fetch_parse_seconds("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(fetch_parse_seconds("90s", &v), 0);
    assert_int_equal(v, 90);
    assert_int_equal(fetch_parse_seconds("1h", &v), -1);
    assert_int_equal(fetch_parse_seconds("999999999", &v), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(components_per_release),
        cmocka_unit_test(sizes_of_13_0_2_match_the_reference),
        cmocka_unit_test(extras_and_errors),
        cmocka_unit_test(incomplete_entry_is_named),
        cmocka_unit_test(labels_resolve_to_the_newest),
        cmocka_unit_test(index_listing),
        cmocka_unit_test(names_from_the_manifest),
        cmocka_unit_test(url_joining),
        cmocka_unit_test(mirror_order),
        cmocka_unit_test(platforms_and_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
