#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "selftest/recommendation.h"
#include "selftest/report.h"
#include "util/fs.h"
#include "util/strbuf.h"

/* The full self-test on the H200 at 6da3ec4 (issue 14): fp16 0.999997/0.0022, int8-fp16
 * 0.999521/0.0216 (its two q-x10 cases miss the goal), int8-fp8 0.999153/0.0388 and slower
 * than fp16. Written by a program from before the safe judgement: judged here. */
#define H200_RUN "bench/results/h200-all-6da3ec4-selftest-full.json"

static const char sha[] = "997890bc85c5796408ceb20b0ca75dabe6fe868136e926d24ad0f36aa424f99d";

static void load(const char *path, struct selftest_report *r)
{
    size_t len = 0;
    char *text = fs_read_file(path, 1u << 22, &len);
    assert_non_null(text);
    char *err = NULL;
    assert_int_equal(selftest_parse(text, len, r, &err), 0);
    free(text);
}

static void h200_recommends_int8_fp16(void **state)
{
    (void)state;
    struct selftest_report r;
    load(H200_RUN, &r);
    assert_true(r.judged_here);
    const struct st_device *d = &r.devices[0];
    assert_int_equal(d->nmodes, 3);
    int fp16 = st_device_mode_index(d, "fp16"), i16 = st_device_mode_index(d, "int8-fp16"),
        i8 = st_device_mode_index(d, "int8-fp8");
    assert_true(fp16 >= 0 && i16 >= 0 && i8 >= 0);
    /* Safe: all three, every case (46 each) within cos >= 0.999 and rel-L1 <= 0.05. */
    assert_true(d->modes[fp16].safe && d->modes[i16].safe && d->modes[i8].safe);
    assert_int_equal(d->modes[i16].nunsafe, 0);
    assert_int_equal(d->modes[i16].verdict, ST_PASS);
    /* The goal: int8-fp16 misses it on the two q-x10 fp16 cases, a note only. */
    assert_int_equal(d->modes[i16].goal, 0);
    assert_int_equal(d->modes[i16].ngoal_notes, 2);
    assert_non_null(strstr(d->modes[i16].goal_notes[0], "q-x10 L1024 d64"));
    assert_int_equal(d->modes[fp16].goal, 1);
    assert_int_equal(d->modes[i8].goal, 1);
    /* At L16384 D128 non-causal: int8-fp16 413.0 vs fp16 339.1; int8-fp8 314.9 never. */
    assert_true(d->rec.has_shape);
    assert_int_equal(d->rec.shape.l, 16384);
    assert_int_equal(d->rec.shape.d, 128);
    assert_false(d->rec.shape.causal);
    assert_string_equal(d->recommended_mode, "int8-fp16");
    assert_string_equal(d->rec.runner_up, "fp16");
    assert_true(d->rec.tops[i16] > 412.9 && d->rec.tops[i16] < 413.1);
    assert_non_null(strstr(d->rec.reason, "1.22x fp16 at L16384 D128"));
    assert_non_null(strstr(d->rec.reason, "int8-fp8 slower than fp16 (0.93x)"));
    /* The program said warn (exit 1) by the old rule; a missed goal alone is a pass now. */
    assert_int_equal(selftest_exit_status(&r, 1), SB_EXIT_OK);
    selftest_report_free(&r);
}

/* The same run judged by a program that writes the judgements (the shape st_report.c writes):
 * they are taken as given, and the recommendation follows them. */
static const char judged[] =
    "{\"schema\":1,\"library\":{\"abi\":1,\"archs\":\"sm_90\"},\"skipped\":null,\"devices\":["
    "{\"index\":0,\"name\":\"NVIDIA H200\",\"cc\":\"9.0\",\"uuid\":\"GPU-0a1b2c3d-0000-1111-2222-"
    "333344445555\",\"has_code\":true,\"build_hint\":null,\"error\":null,\"modes\":["
    "{\"mode\":\"fp16\",\"supported\":true,\"reason\":null,\"verdict\":\"pass\",\"safe\":true,"
    "\"unsafe_reasons\":[],\"goal\":\"met\",\"goal_notes\":[],\"accuracy\":{\"worst_cos\":"
    "0.999997,\"worst_rel_l1\":0.0022,\"nan_or_inf\":false,\"cases\":[]},\"speed\":["
    "{\"b\":1,\"h\":32,\"l\":4096,\"d\":128,\"causal\":false,\"tops\":342.1},"
    "{\"b\":1,\"h\":32,\"l\":4096,\"d\":64,\"causal\":true,\"tops\":225.0}]},"
    "{\"mode\":\"int8-fp16\",\"supported\":true,\"reason\":null,\"verdict\":\"%s\",\"safe\":%s,"
    "\"unsafe_reasons\":%s,\"goal\":\"missed\",\"goal_notes\":[\"q-x10 L1024 d128: cos 0.999521 "
    "rel-L1 0.0216 (goal cos >= 0.999, rel-L1 <= 0.0202)\"],\"accuracy\":{\"worst_cos\":0.999521,"
    "\"worst_rel_l1\":0.0216,\"nan_or_inf\":false,\"cases\":[]},\"speed\":["
    "{\"b\":1,\"h\":32,\"l\":4096,\"d\":128,\"causal\":false,\"tops\":413.7},"
    "{\"b\":1,\"h\":32,\"l\":4096,\"d\":64,\"causal\":true,\"tops\":211.0}]},"
    "{\"mode\":\"int8-fp8\",\"supported\":true,\"reason\":null,\"verdict\":\"pass\",\"safe\":true,"
    "\"unsafe_reasons\":[],\"goal\":\"met\",\"goal_notes\":[],\"accuracy\":{\"worst_cos\":"
    "0.999153,\"worst_rel_l1\":0.0388,\"nan_or_inf\":false,\"cases\":[]},\"speed\":["
    "{\"b\":1,\"h\":32,\"l\":4096,\"d\":128,\"causal\":false,\"tops\":314.9},"
    "{\"b\":1,\"h\":32,\"l\":4096,\"d\":64,\"causal\":true,\"tops\":400.0}]}],"
    "\"recommended_mode\":\"int8-fp16\"}]}";

static void parse_judged(struct selftest_report *r, int int8_fp16_safe)
{
    char *text =
        xasprintf(judged, int8_fp16_safe ? "pass" : "warn", int8_fp16_safe ? "true" : "false",
                  int8_fp16_safe ? "[]" : "[\"q-x10 L1024 d128: cos 0.998500 < 0.999\"]");
    char *err = NULL;
    assert_int_equal(selftest_parse(text, strlen(text), r, &err), 0);
    free(text);
}

static void follows_the_programs_judgement(void **state)
{
    (void)state;
    struct selftest_report r;
    parse_judged(&r, 1);
    assert_false(r.judged_here);
    const struct st_device *d = &r.devices[0];
    assert_string_equal(d->uuid, "GPU-0a1b2c3d-0000-1111-2222-333344445555");
    /* --quick: the key shape is L4096 D128 non-causal, not the causal D64 one where int8-fp8
     * happens to be fastest. */
    assert_int_equal(d->rec.shape.l, 4096);
    assert_int_equal(d->rec.shape.d, 128);
    assert_string_equal(d->recommended_mode, "int8-fp16");
    assert_int_equal(d->modes[1].ngoal_notes, 1);
    assert_int_equal(selftest_exit_status(&r, 0), SB_EXIT_OK);
    selftest_report_free(&r);

    /* int8-fp16 not safe: fp16, never int8-fp8 (safe but slower than fp16), and a warning. */
    parse_judged(&r, 0);
    d = &r.devices[0];
    assert_string_equal(d->recommended_mode, "fp16");
    assert_null(d->rec.runner_up);
    assert_non_null(strstr(d->rec.reason, "no safe quantized mode is faster than fp16"));
    assert_int_equal(d->modes[1].nunsafe, 1);
    assert_int_equal(selftest_exit_status(&r, 1), SB_EXIT_WARN);
    selftest_report_free(&r);
}

static cJSON *build(const struct selftest_report *r, const char *previous, int *n)
{
    struct recommendation_facts f = {sha, "sagebuild selftest " SAGEBUILD_VERSION,
                                     "2026-12-01T15:00:00Z", previous};
    char *text = recommendation_build(r, &f, n);
    if (!text)
        return NULL;
    cJSON *doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    return doc;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void builds_the_record(void **state)
{
    (void)state;
    struct selftest_report r;
    parse_judged(&r, 1);
    int n = 0;
    cJSON *doc = build(&r, NULL, &n);
    assert_int_equal(n, 1);
    assert_int_equal((int)num(doc, "schema"), 1);
    assert_string_equal(str(doc, "kind"), "sageattn-recommendation");
    assert_string_equal(str(doc, "library_sha256"), sha);
    assert_string_equal(str(doc, "written_by"), "sagebuild selftest " SAGEBUILD_VERSION);
    assert_string_equal(str(doc, "date"), "2026-12-01T15:00:00Z");
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "gpus"), 0);
    assert_int_equal((int)num(g, "index"), 0);
    assert_string_equal(str(g, "name"), "NVIDIA H200");
    assert_string_equal(str(g, "cc"), "9.0");
    assert_string_equal(str(g, "uuid"), "GPU-0a1b2c3d-0000-1111-2222-333344445555");
    assert_string_equal(str(g, "mode"), "int8-fp16");
    assert_string_equal(str(g, "runner_up"), "fp16");
    assert_non_null(strstr(str(g, "reason"), "int8-fp16 is safe and the fastest"));
    const cJSON *safe = cJSON_GetObjectItemCaseSensitive(g, "safe_modes");
    assert_int_equal(cJSON_GetArraySize(safe), 3);
    assert_string_equal(cJSON_GetArrayItem(safe, 1)->valuestring, "int8-fp16");
    const cJSON *tops = cJSON_GetObjectItemCaseSensitive(g, "tops");
    assert_true(fabs(num(tops, "int8-fp16") - 413.7) < 1e-9);
    assert_true(fabs(num(tops, "fp16") - 342.1) < 1e-9);
    assert_true(fabs(num(g, "speedup_vs_fp16") - 1.21) < 1e-9);
    char *first = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);

    /* Another GPU from an earlier --device run of the same library stays; the tested GPU's old
     * entry is replaced; a record for another library is dropped whole. */
    char *prev = xasprintf("{\"schema\":1,\"library_sha256\":\"%s\",\"gpus\":["
                           "{\"index\":0,\"name\":\"NVIDIA H200\",\"mode\":\"fp16\"},"
                           "{\"index\":1,\"name\":\"NVIDIA H200\",\"mode\":\"int8-fp8\"}]}",
                           sha);
    doc = build(&r, prev, &n);
    assert_int_equal(n, 2);
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(doc, "gpus");
    assert_string_equal(str(cJSON_GetArrayItem(gpus, 0), "mode"), "int8-fp16");
    assert_int_equal((int)num(cJSON_GetArrayItem(gpus, 1), "index"), 1);
    cJSON_Delete(doc);
    free(prev);
    prev = xstrdup("{\"schema\":1,\"library_sha256\":\"00\",\"gpus\":[{\"index\":1,\"mode\":"
                   "\"fp16\"}]}");
    doc = build(&r, prev, &n);
    assert_int_equal(n, 1);
    char *again = cJSON_PrintUnformatted(doc);
    assert_string_equal(again, first);
    cJSON_Delete(doc);
    free(prev);
    free(again);
    free(first);
    doc = build(&r, "not JSON", &n);
    assert_int_equal(n, 1);
    cJSON_Delete(doc);

    /* No GPU with a recommendation: no record (the old one is stale). */
    free(r.devices[0].rec.mode);
    r.devices[0].rec.mode = NULL;
    assert_null(build(&r, NULL, &n));
    assert_int_equal(n, 0);
    selftest_report_free(&r);
}

static void no_record_for_a_gpu_without_code(void **state)
{
    (void)state;
    static const char nocode[] =
        "{\"schema\":1,\"library\":{\"abi\":1,\"archs\":\"sm_90\"},\"skipped\":null,\"devices\":["
        "{\"index\":0,\"name\":\"NVIDIA GeForce RTX 5090\",\"cc\":\"12.0\",\"has_code\":false,"
        "\"modes\":[],\"recommended_mode\":null}]}";
    struct selftest_report r;
    char *err = NULL;
    assert_int_equal(selftest_parse(nocode, strlen(nocode), &r, &err), 0);
    assert_null(r.devices[0].recommended_mode);
    int n = 0;
    assert_null(build(&r, NULL, &n));
    assert_int_equal(selftest_exit_status(&r, 2), SB_EXIT_ERROR);
    selftest_report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(h200_recommends_int8_fp16),
        cmocka_unit_test(follows_the_programs_judgement),
        cmocka_unit_test(builds_the_record),
        cmocka_unit_test(no_record_for_a_gpu_without_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
