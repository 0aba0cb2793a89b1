#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "selftest/render.h"
#include "selftest/report.h"

/* The contract's example (kernel-contracts.md), two GPUs: an H200 with code and an RTX 5090
 * without. */
static const char full_report[] =
    "{\"schema\":1, \"library\":{\"abi\":1,\"archs\":\"sm_90\"},\n"
    " \"skipped\": null,\n"
    " \"devices\":[{\"index\":0,\"name\":\"NVIDIA H200\",\"cc\":\"9.0\",\"has_code\":true,\n"
    "    \"build_hint\": null,\n"
    "    \"modes\":[{\"mode\":\"int8-fp16\",\"supported\":true,\"reason\":null,\n"
    "              \"verdict\":\"pass\",\n"
    "              "
    "\"accuracy\":{\"worst_cos\":0.99991,\"worst_rel_l1\":0.011,\"nan_or_inf\":false,\n"
    "                          "
    "\"cases\":[{\"name\":\"random\",\"b\":1,\"hq\":8,\"hkv\":8,\"lq\":1000,"
    "\"lkv\":1000,\"d\":64,\"causal\":false,\"layout\":\"HND\",\"dtype\":\"fp16\",\"cos\":0.99995,"
    "\"rel_l1\":0.01,\"max_abs\":0.02,\"coverage_ok\":true,\"pass\":true},\n"
    "                                   "
    "{\"name\":\"k-offset\",\"b\":1,\"hq\":8,\"hkv\":2,\"lq\":17,"
    "\"lkv\":77,\"d\":128,\"causal\":true,\"layout\":\"NHD\",\"dtype\":\"bf16\",\"cos\":0.99991,"
    "\"rel_l1\":0.011,\"max_abs\":0.05,\"coverage_ok\":true,\"pass\":true}]},\n"
    "              \"speed\":[{\"b\":1,\"h\":32,\"l\":4096,\"d\":128,\"causal\":false,\"ms\":1.2,"
    "\"tops\":420.0,\"speedup_vs_fp16\":1.3},\n"
    "                       {\"b\":1,\"h\":32,\"l\":16384,\"d\":128,\"causal\":false,\"ms\":14.0,"
    "\"tops\":512.5,\"speedup_vs_fp16\":1.52}]},\n"
    "             {\"mode\":\"int8-fp8\",\"supported\":true,\"reason\":null,\"verdict\":\"warn\",\n"
    "              \"accuracy\":{\"worst_cos\":0.9985,\"worst_rel_l1\":0.052,\"nan_or_inf\":false,"
    "\"cases\":[{\"name\":\"q-x10\",\"cos\":0.9985,\"rel_l1\":0.052,\"pass\":false}]},\n"
    "              \"speed\":[{\"b\":1,\"h\":32,\"l\":16384,\"d\":128,\"ms\":16.0,\"tops\":460.1,"
    "\"speedup_vs_fp16\":null}]},\n"
    "             {\"mode\":\"fp16\",\"supported\":true,\"reason\":null,\"verdict\":\"pass\",\n"
    "              \"accuracy\":{\"worst_cos\":1.0,\"worst_rel_l1\":0.0004,\"nan_or_inf\":false,"
    "\"cases\":[{\"name\":\"random\",\"cos\":1.0,\"rel_l1\":0.0004,\"pass\":true}]},"
    "\"speed\":[{\"b\":1,\"h\":32,\"l\":16384,\"d\":128,\"tops\":337.0,"
    "\"speedup_vs_fp16\":1.0}]}],\n"
    "    \"recommended_mode\":\"int8-fp16\"},\n"
    "   {\"index\":1,\"name\":\"NVIDIA GeForce RTX 5090\",\"cc\":\"12.0\",\"has_code\":false,\n"
    "    \"build_hint\":null,\"modes\":[],\"recommended_mode\":null}]}\n";

static const char skipped_report[] = "{\"schema\":1,\"library\":{\"abi\":1,\"archs\":\"sm_120a\"},"
                                     "\"skipped\":\"no GPU: cuInit returned 100\",\"devices\":[]}";

static void parses_the_contract_example(void **state)
{
    (void)state;
    struct selftest_report r;
    char *err = NULL;
    assert_int_equal(selftest_parse(full_report, strlen(full_report), &r, &err), 0);
    assert_null(err);
    assert_int_equal(r.abi, 1);
    assert_string_equal(r.archs, "sm_90");
    assert_null(r.skipped);
    assert_int_equal(r.ndevices, 2);
    const struct st_device *h = &r.devices[0];
    assert_string_equal(h->name, "NVIDIA H200");
    assert_string_equal(h->cc, "9.0");
    assert_true(h->has_code);
    assert_int_equal(h->nmodes, 3);
    /* an older program (no "safe"): judged here by the shared rules */
    assert_true(r.judged_here);
    assert_string_equal(h->recommended_mode, "int8-fp16");
    assert_string_equal(h->rec.runner_up, "fp16");
    assert_true(h->rec.has_shape && h->rec.shape.l == 16384 && h->rec.shape.d == 128);
    assert_true(h->modes[0].safe && h->modes[2].safe);
    assert_false(h->modes[1].safe); /* int8-fp8: q-x10 cos 0.9985 rel-L1 0.052 */
    assert_int_equal(h->modes[1].nunsafe, 1);
    assert_non_null(strstr(h->modes[1].unsafe_reasons[0], "q-x10: cos 0.998500 < 0.999"));
    assert_int_equal(h->modes[1].goal, 0);
    assert_int_equal(h->modes[0].goal, 1);
    const struct st_mode *m = &h->modes[0];
    assert_string_equal(m->mode, "int8-fp16");
    assert_int_equal(m->verdict, ST_PASS);
    assert_true(m->worst_cos > 0.9999 && m->worst_cos < 0.99992);
    assert_int_equal(m->ncases, 2);
    assert_string_equal(m->cases[1].layout, "NHD");
    assert_int_equal(m->cases[1].hkv, 2);
    assert_true(m->cases[1].causal);
    const struct st_speed *best = st_mode_best_speed(m);
    assert_non_null(best);
    assert_int_equal(best->l, 16384);
    assert_true(best->speedup_vs_fp16 > 1.51 && best->speedup_vs_fp16 < 1.53);
    assert_int_equal(h->modes[1].verdict, ST_WARN);
    assert_int_equal(st_mode_failed_cases(&h->modes[1]), 1);
    assert_true(st_mode_best_speed(&h->modes[1])->speedup_vs_fp16 < 0); /* null: absent */
    assert_int_equal(st_device_verdict(h), ST_WARN);
    assert_false(r.devices[1].has_code);
    char *hint = st_device_build_hint(&r.devices[1]);
    assert_string_equal(hint, "sagebuild build --arch sm_120a");
    free(hint);
    /* a GPU without code is an error, whatever the program's own status said */
    assert_int_equal(selftest_exit_status(&r, 1), SB_EXIT_ERROR);
    selftest_report_free(&r);
}

static void sums_up_verdicts(void **state)
{
    (void)state;
    struct selftest_report r;
    char *err = NULL;
    /* the H200 alone: a warn mode gives 1, a worse child status wins */
    const char *one = strstr(full_report, ",\n   {\"index\":1");
    char *text = strndup(full_report, (size_t)(one - full_report));
    char *whole = malloc(strlen(text) + 4);
    strcpy(whole, text);
    strcat(whole, "]}");
    assert_int_equal(selftest_parse(whole, strlen(whole), &r, &err), 0);
    assert_int_equal(selftest_exit_status(&r, 0), SB_EXIT_WARN);
    /* judged here: an older program's status counted missed goals, so it does not count */
    assert_int_equal(selftest_exit_status(&r, 2), SB_EXIT_WARN);
    r.judged_here = 0; /* a program that judges itself: its worse status wins */
    assert_int_equal(selftest_exit_status(&r, 2), SB_EXIT_ERROR);
    assert_int_equal(selftest_exit_status(&r, 77), SB_EXIT_WARN);
    r.devices[0].modes[1].verdict = ST_UNSUPPORTED;
    assert_int_equal(selftest_exit_status(&r, 0), SB_EXIT_OK);
    /* no safe mode on a GPU is an error */
    r.devices[0].modes[0].safe = r.devices[0].modes[2].safe = 0;
    assert_int_equal(selftest_exit_status(&r, 0), SB_EXIT_ERROR);
    r.devices[0].modes[0].safe = 1;
    r.devices[0].modes[0].verdict = ST_FAIL;
    assert_int_equal(selftest_exit_status(&r, 0), SB_EXIT_ERROR);
    selftest_report_free(&r);
    free(text);
    free(whole);
}

static void reads_a_skip(void **state)
{
    (void)state;
    struct selftest_report r;
    char *err = NULL;
    assert_int_equal(selftest_parse(skipped_report, strlen(skipped_report), &r, &err), 0);
    assert_string_equal(r.skipped, "no GPU: cuInit returned 100");
    assert_int_equal(selftest_exit_status(&r, 77), SB_EXIT_SKIPPED);
    struct st_run run = {.build_dir = "/o", .exit_code = SB_EXIT_SKIPPED, .child_exit = 77};
    char *json = selftest_render_json(&r, &run);
    assert_non_null(strstr(json, "\"status\":\t\"skipped\""));
    assert_non_null(strstr(json, "\"skipped\":\t\"no GPU: cuInit returned 100\""));
    free(json);
    selftest_report_free(&r);
    const char *no_devices = "{\"schema\":1,\"skipped\":\"no GPU\"}";
    assert_int_equal(selftest_parse(no_devices, strlen(no_devices), &r, &err), 0);
    selftest_report_free(&r);
}

/* Lists that come as objects hold nothing: their members are not walked into the (empty)
 * arrays, which ASan would report as an overrun. */
static void reads_lists_given_as_objects_as_empty(void **state)
{
    (void)state;
    const char *text = "{\"schema\":1,\"devices\":[{\"name\":\"x\",\"modes\":[{\"mode\":"
                       "\"fp16\",\"verdict\":\"pass\",\"accuracy\":{\"cases\":{\"a\":{},"
                       "\"b\":{}}},\"speed\":{\"a\":{},\"b\":{}},\"safe\":true,"
                       "\"unsafe_reasons\":{\"a\":\"x\",\"b\":\"y\"}}]}]}";
    struct selftest_report r;
    char *err = NULL;
    assert_int_equal(selftest_parse(text, strlen(text), &r, &err), 0);
    assert_int_equal(r.ndevices, 1);
    assert_int_equal(r.devices[0].nmodes, 1);
    assert_int_equal(r.devices[0].modes[0].ncases, 0);
    assert_int_equal(r.devices[0].modes[0].nspeed, 0);
    assert_int_equal(r.devices[0].modes[0].nunsafe, 0);
    selftest_report_free(&r);
}

static void rejects_garbage(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "Segmentation fault",
        "{\"schema\":1,\"devices\":[",
        "{\"schema\":2,\"devices\":[]}",
        "[1,2,3]",
        "{\"schema\":1}",
        "{\"schema\":1,\"devices\":[]}",
        "{\"schema\":1,\"devices\":[42]}",
        "{\"schema\":1,\"devices\":[{\"name\":\"x\"}]}",
        "{\"schema\":1,\"devices\":[{\"name\":\"x\",\"modes\":[{\"mode\":\"fp16\"}]}]}",
        "{\"schema\":1,\"devices\":[{\"name\":\"x\",\"modes\":[{\"mode\":\"fp16\",\"verdict\":"
        "\"great\"}]}]}",
        "{\"schema\":1,\"skipped\":\"no GPU\"} trailing words",
        "{\"schema\":\"1\",\"skipped\":\"no GPU\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct selftest_report r;
        char *err = NULL;
        assert_int_equal(selftest_parse(bad[i], strlen(bad[i]), &r, &err), -1);
        assert_non_null(err);
        assert_int_equal(r.ndevices, 0);
        free(err);
    }
    /* a length shorter than the text: only that part counts */
    struct selftest_report r;
    char *err = NULL;
    assert_int_equal(selftest_parse(skipped_report, 10, &r, &err), -1);
    free(err);
}

static void renders_normalised_json_and_table(void **state)
{
    (void)state;
    struct selftest_report r;
    char *err = NULL;
    assert_int_equal(selftest_parse(full_report, strlen(full_report), &r, &err), 0);
    struct st_run run = {.build_dir = "/o",
                         .program = "/o/bin/sageattn-selftest",
                         .child_exit = 1,
                         .elapsed_s = 12.5,
                         .exit_code = SB_EXIT_ERROR,
                         .out_flag = " --out /o"};
    char *json = selftest_render_json(&r, &run);
    assert_non_null(strstr(json, "\"best_tops\":\t512.5"));
    assert_non_null(strstr(json, "\"cases_failed\":\t1"));
    assert_non_null(strstr(json, "\"build_hint\":\t\"sagebuild build --arch sm_120a\""));
    assert_non_null(strstr(json, "\"status\":\t\"fail\""));
    assert_non_null(strstr(json, "\"runner_up\":\t\"fp16\""));
    assert_non_null(strstr(json, "\"safe_modes\":\t[\"int8-fp16\", \"fp16\"]"));
    assert_non_null(strstr(json, "\"goal\":\t\"missed\""));
    free(json);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    selftest_render_text(&r, &run, f, &(struct out_style){0});
    fclose(f);
    assert_non_null(strstr(buf, "GPU 0: NVIDIA H200 (compute capability 9.0)"));
    assert_non_null(strstr(buf, "0.99991"));
    assert_non_null(strstr(buf, "512.5"));
    assert_non_null(strstr(buf, "1.52x"));
    assert_non_null(strstr(buf, "recommended mode: int8-fp16"));
    assert_non_null(strstr(buf, "why: int8-fp16 is safe and the fastest: 1.52x fp16"));
    assert_non_null(strstr(buf, "int8-fp8   NO    missed"));
    assert_non_null(strstr(buf, "not safe: q-x10: cos 0.998500 < 0.999, rel-L1 0.0520 > 0.05"));
    assert_non_null(strstr(buf, "goal note: q-x10"));
    assert_non_null(strstr(buf, "TOPS L16384 D128"));
    assert_non_null(strstr(buf, "fix: sagebuild build --arch sm_120a --out /o"));
    assert_null(strstr(buf, "\033[")); /* no colour when asked for none */
    free(buf);
    selftest_report_free(&r);
}

/* What the real writer adds (kernels/selftest/st_report.c): a device error, per-case kind,
 * error, nonfinite and LSE error, and the accuracy bar of each mode. */
static const char writer_extras[] =
    "{\"schema\":1,\"library\":{\"abi\":1,\"archs\":\"sm_90\"},\"skipped\":null,\"devices\":["
    "{\"index\":0,\"name\":\"A\",\"cc\":\"9.0\",\"has_code\":true,\"build_hint\":null,"
    "\"error\":null,\"modes\":[{\"mode\":\"int8-fp8\",\"supported\":true,\"reason\":null,"
    "\"verdict\":\"fail\",\"accuracy\":{\"worst_cos\":0.5,\"worst_rel_l1\":0.9,\"nan_or_inf\":"
    "true,\"bar\":{\"cos\":0.9992,\"rel_l1\":0.04},\"cases\":[{\"name\":\"q x10 L4096\","
    "\"kind\":\"adversarial\",\"cos\":0.5,\"rel_l1\":0.9,\"lse_max_err\":null,\"nonfinite\":12,"
    "\"coverage_ok\":false,\"pass\":false,\"error\":null},{\"name\":\"d40 padded\",\"kind\":"
    "\"random\",\"cos\":null,\"rel_l1\":null,\"pass\":false,\"error\":\"SAGEATTN_ERR_DIM\"}]},"
    "\"speed\":[]},{\"mode\":\"fp16\",\"supported\":false,\"reason\":\"no code\",\"verdict\":"
    "\"unsupported\",\"accuracy\":null,\"speed\":[]}],\"recommended_mode\":null},"
    "{\"index\":1,\"name\":\"B\",\"cc\":\"8.9\",\"has_code\":true,\"error\":\"cudaSetDevice: "
    "busy\",\"modes\":[],\"recommended_mode\":null}]}";

static void reads_the_writers_extras(void **state)
{
    (void)state;
    struct selftest_report r;
    char *err = NULL;
    assert_int_equal(selftest_parse(writer_extras, strlen(writer_extras), &r, &err), 0);
    const struct st_mode *m = &r.devices[0].modes[0];
    assert_true(m->bar_rel_l1 > 0.039 && m->bar_rel_l1 < 0.041);
    assert_true(m->nan_or_inf);
    assert_string_equal(m->cases[0].kind, "adversarial");
    assert_int_equal(m->cases[0].nonfinite, 12);
    assert_true(isnan(m->cases[0].lse_max_err));
    assert_false(m->cases[0].coverage_ok);
    assert_string_equal(m->cases[1].error, "SAGEATTN_ERR_DIM");
    assert_true(isnan(m->cases[1].cos));
    assert_true(isnan(r.devices[0].modes[1].worst_cos)); /* accuracy: null */
    assert_string_equal(r.devices[1].error, "cudaSetDevice: busy");
    assert_int_equal(selftest_exit_status(&r, 2), SB_EXIT_ERROR);

    struct st_run run = {.build_dir = "/o", .child_exit = 2, .exit_code = SB_EXIT_ERROR};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    selftest_render_text(&r, &run, f, &(struct out_style){0});
    fclose(f);
    assert_non_null(strstr(buf, "not safe: q x10 L4096: outputs left unwritten or written"));
    assert_non_null(strstr(buf, "not safe: d40 padded: error: SAGEATTN_ERR_DIM"));
    assert_non_null(strstr(buf, "no mode is safe"));
    assert_non_null(strstr(buf, "could not test this GPU: cudaSetDevice: busy"));
    assert_non_null(strstr(buf, "no code"));
    free(buf);
    char *json = selftest_render_json(&r, &run);
    assert_non_null(strstr(json, "\"nonfinite\":\t12"));
    assert_non_null(strstr(json, "\"error\":\t\"cudaSetDevice: busy\""));
    assert_non_null(strstr(json, "\"lse_max_err\":\tnull"));
    free(json);
    selftest_report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_the_contract_example),
        cmocka_unit_test(sums_up_verdicts),
        cmocka_unit_test(reads_a_skip),
        cmocka_unit_test(reads_lists_given_as_objects_as_empty),
        cmocka_unit_test(rejects_garbage),
        cmocka_unit_test(renders_normalised_json_and_table),
        cmocka_unit_test(reads_the_writers_extras),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
