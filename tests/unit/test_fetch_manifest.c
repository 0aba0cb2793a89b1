/* The redist manifest parser on every real manifest in manifests-ref and on malformed text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "fetch/sources/manifest.h"
#include "fetch/engine/pathsafe.h"
#include "util/fs.h"
#include "util/strbuf.h"

#define REF "tests/integration/fetch/manifests-ref"

static void load(const char *path, struct redist_manifest *m)
{
    size_t len = 0;
    char *text = fs_read_file(path, 1 << 24, &len);
    assert_non_null(text);
    char *err = NULL;
    int rc = manifest_parse(text, len, m, &err);
    if (rc != 0)
        fail_msg("%s: %s", path, err);
    free(text);
}

/* Every platform entry of every real manifest is complete: path safe, 64-hex sha256, size. */
static void every_reference_manifest_parses(void **state)
{
    (void)state;
    const char *dirs[] = {REF, REF "/cudnn"};
    int files = 0, entries = 0;
    for (int d = 0; d < 2; d++) {
        DIR *dir = opendir(dirs[d]);
        assert_non_null(dir);
        struct dirent *de;
        while ((de = readdir(dir))) {
            if (!strstr(de->d_name, ".json"))
                continue;
            char *path = fs_join(dirs[d], de->d_name);
            struct redist_manifest m;
            load(path, &m);
            assert_true(m.ncomponents >= 3);
            assert_non_null(m.release_date);
            for (int i = 0; i < m.ncomponents; i++)
                for (int j = 0; j < m.components[i].nplatforms; j++) {
                    const struct redist_platform *p = &m.components[i].platforms[j];
                    assert_true(p->nentries >= 1);
                    for (int k = 0; k < p->nentries; k++) {
                        const struct redist_entry *e = &p->entries[k];
                        assert_non_null(e->relative_path);
                        assert_null(path_rel_check(e->relative_path));
                        assert_int_equal(strlen(e->sha256), 64);
                        assert_true(e->size > 0);
                        entries++;
                    }
                }
            manifest_free(&m);
            free(path);
            files++;
        }
        closedir(dir);
    }
    assert_int_equal(files, 18);
    assert_true(entries > 1000);
}

static void label_missing_before_12_2(void **state)
{
    (void)state;
    struct redist_manifest m;
    load(REF "/redistrib_11.8.0.json", &m);
    assert_null(m.release_label);
    const struct redist_component *c = manifest_component(&m, "cuda_nvcc");
    assert_non_null(c);
    assert_string_equal(c->version, "11.8.89");
    assert_non_null(manifest_platform(c, "linux-ppc64le"));
    manifest_free(&m);
    load(REF "/redistrib_12.2.2.json", &m);
    assert_string_equal(m.release_label, "12.2.2");
    manifest_free(&m);
}

static void size_is_a_string_and_components_split_in_13(void **state)
{
    (void)state;
    struct redist_manifest m;
    load(REF "/redistrib_13.0.2.json", &m);
    assert_string_equal(m.release_label, "13.0.2");
    const struct redist_component *c = manifest_component(&m, "cuda_nvcc");
    const struct redist_entry *e = manifest_entry_for(c, "linux-x86_64", "13.0.2");
    assert_non_null(e);
    assert_int_equal(e->size, 26657716);
    assert_string_equal(e->relative_path,
                        "cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-13.0.88-archive.tar.xz");
    assert_non_null(manifest_component(&m, "libnvvm"));
    assert_non_null(manifest_component(&m, "cuda_crt"));
    assert_null(manifest_platform(c, "linux-aarch64")); /* Jetson left the 13.x manifests */
    /* imex's file name does not start with its key: relative_path is used as given. */
    const struct redist_component *imex = manifest_component(&m, "imex");
    assert_non_null(imex);
    assert_non_null(
        strstr(manifest_entry_for(imex, "linux-x86_64", "13.0.2")->relative_path, "nvidia-imex-"));
    manifest_free(&m);
}

static void variant_entries_pick_the_release(void **state)
{
    (void)state;
    struct redist_manifest m;
    load(REF "/redistrib_13.1.1.json", &m);
    const struct redist_component *c = manifest_component(&m, "cuda_compat");
    assert_non_null(c);
    const struct redist_entry *e = manifest_entry_for(c, "linux-x86_64", "13.1.1");
    assert_non_null(e);
    assert_string_equal(e->variant, "cuda13.1");
    assert_null(manifest_entry_for(c, "linux-x86_64", "12.9.1"));
    manifest_free(&m);
    load(REF "/cudnn/redistrib_9.13.0.json", &m);
    c = manifest_component(&m, "cudnn");
    e = manifest_entry_for(c, "linux-x86_64", "12.8.1");
    assert_non_null(e);
    assert_string_equal(e->variant, "cuda12");
    assert_non_null(strstr(e->relative_path, "_cuda12-archive"));
    e = manifest_entry_for(c, "linux-x86_64", "13.0");
    assert_string_equal(e->variant, "cuda13");
    /* The "source" platform key and a plain entry under it. */
    c = manifest_component(&m, "cudnn_samples");
    assert_non_null(manifest_entry_for(c, "source", NULL));
    manifest_free(&m);
}

static void linux_all_key(void **state)
{
    (void)state;
    struct redist_manifest m;
    load(REF "/redistrib_12.8.1.json", &m);
    const struct redist_component *c = manifest_component(&m, "driver_assistant");
    const struct redist_entry *e = manifest_entry_for(c, "linux-all", "12.8.1");
    assert_non_null(e);
    assert_non_null(strstr(e->relative_path, "driver_assistant/source/"));
    manifest_free(&m);
}

static void malformed_text_is_an_error(void **state)
{
    (void)state;
    const char *bad[] = {"", "{", "[1,2]", "\"text\"", "{\"a\": }", "nul\0l", "{\"x\":1,}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct redist_manifest m;
        char *err = NULL;
        assert_int_equal(manifest_parse(bad[i], strlen(bad[i]), &m, &err), -1);
        assert_non_null(err);
        free(err);
    }
}

static void odd_entries_are_marked_not_dropped(void **state)
{
    (void)state;
    const char *text = "{\"release_label\":\"9.9.9\",\"cuda_nvcc\":{\"version\":\"9.9\","
                       "\"linux-x86_64\":{\"relative_path\":\"a/b.tar.xz\",\"sha256\":\"zz\","
                       "\"size\":\"12x\"},\"cuda_variant\":[\"9\"],\"name\":7},"
                       "\"cuda_cudart\":{\"linux-x86_64\":{\"relative_path\":\"c.tar.xz\","
                       "\"sha256\":\""
                       "0123456789ABCDEF0123456789abcdef0123456789abcdef"
                       "0123456789abcdef\",\"size\":42}}}";
    struct redist_manifest m;
    char *err = NULL;
    assert_int_equal(manifest_parse(text, strlen(text), &m, &err), 0);
    const struct redist_component *c = manifest_component(&m, "cuda_nvcc");
    assert_int_equal(c->nplatforms, 1); /* cuda_variant (array) is not a platform */
    assert_null(c->name);
    const struct redist_entry *e = manifest_entry_for(c, "linux-x86_64", "9.9.9");
    assert_string_equal(e->sha256, "");
    assert_int_equal(e->size, -1);
    e = manifest_entry_for(manifest_component(&m, "cuda_cudart"), "linux-x86_64", "9.9.9");
    assert_int_equal(e->size, 42);
    assert_string_equal(e->sha256,
                        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    manifest_free(&m);
}

static void label_from_file_name(void **state)
{
    (void)state;
    char *l = manifest_label_from_name("/x/redistrib_12.8.1.json");
    assert_string_equal(l, "12.8.1");
    free(l);
    assert_null(manifest_label_from_name("redistrib_.json"));
    assert_null(manifest_label_from_name("redistrib_12.8.1.json.part"));
    assert_null(manifest_label_from_name("redistrib_abc.json"));
    assert_null(manifest_label_from_name("other_12.8.1.json"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_reference_manifest_parses),
        cmocka_unit_test(label_missing_before_12_2),
        cmocka_unit_test(size_is_a_string_and_components_split_in_13),
        cmocka_unit_test(variant_entries_pick_the_release),
        cmocka_unit_test(linux_all_key),
        cmocka_unit_test(malformed_text_is_an_error),
        cmocka_unit_test(odd_entries_are_marked_not_dropped),
        cmocka_unit_test(label_from_file_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
