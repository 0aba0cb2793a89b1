#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "wheel/wheelfmt.h"

static void versions_carry_the_local_label(void **state)
{
    (void)state;
    char *v = wheel_version("0.1.0");
    assert_string_equal(v, "2.2.0+sagebuild.0.1.0");
    assert_true(wheel_version_is_ours(v));
    free(v);
    /* PEP 440 local labels: letters, digits and dots only; runs of others become one dot. */
    v = wheel_version("0.2.0-rc1+dirty");
    assert_string_equal(v, "2.2.0+sagebuild.0.2.0.rc1.dirty");
    free(v);
    v = wheel_version("1.0-");
    assert_string_equal(v, "2.2.0+sagebuild.1.0");
    free(v);
    v = wheel_version("");
    assert_string_equal(v, "2.2.0+sagebuild");
    assert_true(wheel_version_is_ours(v));
    free(v);
    assert_false(wheel_version_is_ours("2.2.0"));
    assert_false(wheel_version_is_ours("2.2.0+cu128torch2.7.1"));
    assert_false(wheel_version_is_ours("2.1.1"));
    assert_false(wheel_version_is_ours(NULL));
    assert_false(wheel_version_is_ours("sagebuild"));
}

static void names_and_tags(void **state)
{
    (void)state;
    char *s = wheel_file_name("2.2.0+sagebuild.0.1.0", "x86_64");
    assert_string_equal(s, "sageattention-2.2.0+sagebuild.0.1.0-py3-none-linux_x86_64.whl");
    free(s);
    s = wheel_tag("aarch64");
    assert_string_equal(s, "py3-none-linux_aarch64");
    free(s);
    s = wheel_dist_info_dir("2.2.0+sagebuild.0.1.0");
    assert_string_equal(s, "sageattention-2.2.0+sagebuild.0.1.0.dist-info");
    free(s);
    assert_null(wheel_tag(""));
    assert_null(wheel_tag(NULL));
    assert_null(wheel_tag("x86-64"));
    assert_null(wheel_file_name("2.2.0", "a b"));
}

static void metadata_and_wheel_texts(void **state)
{
    (void)state;
    struct wheel_meta m = {"2.2.0+sagebuild.0.1.0", "0.1.0", "sm_90,sm_120a", "13.0.88"};
    char *t = wheel_metadata_text(&m);
    assert_true(!strncmp(t,
                         "Metadata-Version: 2.1\nName: sageattention\n"
                         "Version: 2.2.0+sagebuild.0.1.0\n",
                         strlen("Metadata-Version: 2.1\nName: sageattention\n"
                                "Version: 2.2.0+sagebuild.0.1.0\n")));
    assert_non_null(strstr(t, "\nSummary: "));
    assert_non_null(strstr(t, "not the upstream package"));
    assert_non_null(strstr(t, "\n\n")); /* headers end before the description */
    assert_non_null(strstr(t, "sm_90,sm_120a"));
    assert_non_null(strstr(t, "nvcc 13.0.88"));
    free(t);
    m.archs = NULL;
    m.nvcc = NULL;
    t = wheel_metadata_text(&m);
    assert_non_null(strstr(t, "(unknown)"));
    assert_null(strstr(t, "nvcc"));
    free(t);
    t = wheel_wheel_text("py3-none-linux_x86_64", "0.1.0");
    assert_string_equal(t, "Wheel-Version: 1.0\nGenerator: sagebuild 0.1.0\n"
                           "Root-Is-Purelib: false\nTag: py3-none-linux_x86_64\n");
    free(t);
    t = wheel_top_level_text();
    assert_string_equal(t, "sageattention\n");
    free(t);
}

static void base64_urlsafe_without_padding(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t len;
        const char *out;
    } cases[] = {
        {"", 0, ""},
        {"f", 1, "Zg"},
        {"fo", 2, "Zm8"},
        {"foo", 3, "Zm9v"},
        {"foob", 4, "Zm9vYg"},
        {"\xfb\xff", 2, "-_8"},
        {"\xff\xff\xfe", 3, "___-"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = wheel_b64url_nopad((const unsigned char *)cases[i].in, cases[i].len);
        assert_string_equal(s, cases[i].out);
        free(s);
    }
}

static void record_digests_and_rows(void **state)
{
    (void)state;
    /* sha256("") in hex and as pip writes it */
    const char *empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    char *d = wheel_record_digest(empty);
    assert_string_equal(d, "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
    free(d);
    d = wheel_record_digest("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855");
    assert_string_equal(d, "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
    free(d);
    assert_null(wheel_record_digest("e3b0"));
    assert_null(
        wheel_record_digest("g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    assert_null(wheel_record_digest(NULL));

    struct wheel_record_row rows[] = {
        {"sageattention/__init__.py", empty, 0},
        {"sageattention/odd,name\".py", empty, 12},
        {"sageattention-2.2.0.dist-info/RECORD", NULL, 0},
    };
    char *t = wheel_record_text(rows, 3);
    assert_string_equal(t,
                        "sageattention/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3h"
                        "SuFU,0\n"
                        "\"sageattention/odd,name\"\".py\",sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5"
                        "NMpJWZG3hSuFU,12\n"
                        "sageattention-2.2.0.dist-info/RECORD,,\n");
    free(t);
    rows[0].sha256 = "nothex";
    assert_null(wheel_record_text(rows, 3));
    rows[0].sha256 = empty;
    rows[1].size = -1;
    assert_null(wheel_record_text(rows, 3));
}

static void paths_a_wheel_may_hold(void **state)
{
    (void)state;
    assert_true(wheel_path_ok("sageattention/__init__.py"));
    assert_true(wheel_path_ok("sageattention/_lib/libsageattn.so"));
    assert_true(wheel_path_ok("a..b/c"));
    assert_false(wheel_path_ok(""));
    assert_false(wheel_path_ok(NULL));
    assert_false(wheel_path_ok("/etc/passwd"));
    assert_false(wheel_path_ok("sageattention/../x"));
    assert_false(wheel_path_ok("sageattention/./x"));
    assert_false(wheel_path_ok("sageattention//x"));
    assert_false(wheel_path_ok("sageattention/"));
    assert_false(wheel_path_ok("a\\b"));
    assert_false(wheel_path_ok("a\nb"));
    assert_false(wheel_path_ok(".."));
}

static const char *di = "sageattention-2.2.0.dist-info";
static int order(const void *a, const void *b)
{
    return wheel_entry_order(*(const char *const *)a, *(const char *const *)b, di);
}

static void entries_sorted_with_record_last(void **state)
{
    (void)state;
    const char *v[] = {
        "sageattention-2.2.0.dist-info/RECORD",   "sageattention/z.py",
        "sageattention-2.2.0.dist-info/WHEEL",    "sageattention/_lib/libsageattn.so",
        "sageattention-2.2.0.dist-info/METADATA", "sageattention/__init__.py",
        "sageattention-2.2.0.dist-info.x/file",
    };
    qsort(v, sizeof v / sizeof v[0], sizeof v[0], order);
    assert_string_equal(v[0], "sageattention-2.2.0.dist-info.x/file");
    assert_string_equal(v[1], "sageattention/__init__.py");
    assert_string_equal(v[2], "sageattention/_lib/libsageattn.so");
    assert_string_equal(v[3], "sageattention/z.py");
    assert_string_equal(v[4], "sageattention-2.2.0.dist-info/METADATA");
    assert_string_equal(v[5], "sageattention-2.2.0.dist-info/WHEEL");
    assert_string_equal(v[6], "sageattention-2.2.0.dist-info/RECORD");
}

static void recommendation_only_for_its_library(void **state)
{
    (void)state;
    const char *lib = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789";
    char *why = NULL;
    const char *good = "{\"schema\":1,\"kind\":\"sageattn-recommendation\",\"library_sha256\":"
                       "\"ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789\","
                       "\"gpus\":[]}";
    assert_int_equal(wheel_recommendation_fits(good, lib, &why), 1);
    assert_null(why);
    const char *other = "{\"schema\":1,\"kind\":\"sageattn-recommendation\",\"library_sha256\":"
                        "\"00\",\"gpus\":[]}";
    assert_int_equal(wheel_recommendation_fits(other, lib, &why), 0);
    assert_non_null(strstr(why, "another build"));
    free(why);
    why = NULL;
    assert_int_equal(wheel_recommendation_fits("{\"kind\":\"sageattn-recommendation\"}", lib, &why),
                     0);
    free(why);
    assert_int_equal(wheel_recommendation_fits("{\"kind\":\"other\"}", lib, NULL), -1);
    assert_int_equal(wheel_recommendation_fits("not json", lib, NULL), -1);
    assert_int_equal(wheel_recommendation_fits(NULL, lib, NULL), -1);
    assert_int_equal(wheel_recommendation_fits(good, NULL, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(versions_carry_the_local_label),
        cmocka_unit_test(names_and_tags),
        cmocka_unit_test(metadata_and_wheel_texts),
        cmocka_unit_test(base64_urlsafe_without_padding),
        cmocka_unit_test(record_digests_and_rows),
        cmocka_unit_test(paths_a_wheel_may_hold),
        cmocka_unit_test(entries_sorted_with_record_last),
        cmocka_unit_test(recommendation_only_for_its_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
