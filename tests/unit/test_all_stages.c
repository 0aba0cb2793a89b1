#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "all/stages.h"

static void acts_on_doctor_ids(void **state)
{
    (void)state;
    assert_int_equal(all_doctor_action("toolkit.version_match", 1), FINDING_FETCH);
    assert_int_equal(all_doctor_action("toolkit.components", 0), FINDING_FETCH);
    assert_int_equal(all_doctor_action("host.compiler", 1), FINDING_BUILD);
    assert_int_equal(all_doctor_action("build.ninja", 1), FINDING_BUILD);
    assert_int_equal(all_doctor_action("build.disk", 0), FINDING_BLOCK);
    assert_int_equal(all_doctor_action("driver.torch", 1), FINDING_IGNORE);
    assert_int_equal(all_doctor_action("driver.gpus", 1), FINDING_BLOCK);
    assert_int_equal(all_doctor_action("driver.present", 0), FINDING_IGNORE);
    assert_int_equal(all_doctor_action("torch.found", 1), FINDING_IGNORE);
    assert_int_equal(all_doctor_action("sageattention.imports", 1), FINDING_IGNORE);
    assert_int_equal(all_doctor_action("arch.list", 1), FINDING_IGNORE);
    assert_int_equal(all_doctor_action(NULL, 1), FINDING_IGNORE);
}

static const char doctor_json[] =
    "{\"schema\":1,\"checks\":["
    "{\"id\":\"torch.found\",\"status\":\"ok\",\"summary\":\"torch 2.11.0+cu130\",\"fix\":null},"
    "{\"id\":\"driver.torch\",\"status\":\"ok\",\"summary\":\"580.65.06 runs CUDA 13.0\"},"
    "{\"id\":\"toolkit.version_match\",\"status\":\"error\",\"summary\":\"nvcc 12.8 vs torch "
    "13.0\","
    "\"fix\":\"sagebuild fetch-cuda --match-torch\"},"
    "{\"id\":\"host.compiler\",\"status\":\"error\",\"summary\":\"gcc 15 > "
    "14\",\"fix\":\"CC=gcc-14\"},"
    "{\"id\":\"arch.list\",\"status\":\"warn\",\"summary\":\"unset\"},"
    "{\"id\":\"sageattention.install\",\"status\":\"skip\",\"summary\":\"not installed\"}],"
    "\"counts\":{\"ok\":2,\"warn\":1,\"error\":2,\"skip\":1}}";

static void reads_the_doctor(void **state)
{
    (void)state;
    struct doctor_summary d;
    char *err = NULL;
    assert_int_equal(all_read_doctor(doctor_json, 1, &d, &err), 0);
    assert_int_equal(d.ok, 2);
    assert_int_equal(d.warn, 1);
    assert_int_equal(d.error, 2);
    assert_int_equal(d.skip, 1);
    assert_true(d.needs_fetch);
    assert_int_equal(d.nfindings, 2);
    assert_string_equal(d.findings[0].id, "toolkit.version_match");
    assert_string_equal(d.findings[0].fix, "sagebuild fetch-cuda --match-torch");
    assert_int_equal(d.findings[1].action, FINDING_BUILD);
    assert_null(all_first_block(&d));
    /* the warnings by id, for `all` to name each one */
    assert_int_equal(d.nwarnings, 1);
    assert_string_equal(d.warnings[0].id, "arch.list");
    assert_string_equal(d.warnings[0].summary, "unset");
    all_doctor_summary_free(&d);

    const char *blocked = "{\"checks\":[{\"id\":\"host.compiler\",\"status\":\"error\"},"
                          "{\"id\":\"driver.torch\",\"status\":\"error\",\"summary\":\"too "
                          "old for torch\"},"
                          "{\"id\":\"driver.gpus\",\"status\":\"error\",\"summary\":\"cuInit "
                          "failed\",\"fix\":\"sudo reboot\"}]}";
    assert_int_equal(all_read_doctor(blocked, 1, &d, &err), 0);
    const struct finding *b = all_first_block(&d);
    assert_non_null(b);
    assert_string_equal(b->id, "driver.gpus"); /* driver.torch is torch's business */
    assert_false(d.needs_fetch);
    assert_int_equal(d.error, 3); /* counted when the doctor gives no totals */
    all_doctor_summary_free(&d);
    /* with no GPU, a driver finding does not stop a build-only run */
    assert_int_equal(all_read_doctor(blocked, 0, &d, &err), 0);
    assert_null(all_first_block(&d));
    all_doctor_summary_free(&d);

    assert_int_equal(all_read_doctor("not json", 1, &d, &err), -1);
    assert_non_null(err);
    free(err);
    assert_int_equal(all_read_doctor("{\"checks\":3}", 1, &d, &err), -1);
    free(err);
    assert_int_equal(all_read_doctor(NULL, 1, &d, &err), -1);
    free(err);
}

static void reads_stage_results(void **state)
{
    (void)state;
    struct stage_result r;
    char *err = NULL;
    const char *build_ok = "{\"schema\":1,\"command\":\"build\",\"status\":\"ok\",\"exit_code\":0,"
                           "\"up_to_date\":true,\"out\":\"/o\",\"record\":{\"archs\":\"sm_90\","
                           "\"time\":{\"cpu_seconds\":88.5}},\"error\":null}";
    assert_int_equal(all_read_stage(build_ok, &r, &err), 0);
    assert_string_equal(r.status, "ok");
    assert_int_equal(r.exit_code, 0);
    assert_true(r.up_to_date);
    assert_string_equal(r.out, "/o");
    assert_string_equal(r.archs, "sm_90");
    assert_true(r.cpu_seconds > 88 && r.cpu_seconds < 89);
    assert_null(r.error);
    all_stage_result_free(&r);

    const char *build_bad =
        "{\"status\":\"error\",\"exit_code\":2,\"error\":{\"summary\":\"compile "
        "failed\",\"fix\":\"lower --jobs\",\"log\":\"/o/build.log\","
        "\"log_tail\":\"ninja: stopped\"}}";
    assert_int_equal(all_read_stage(build_bad, &r, &err), 0);
    assert_string_equal(r.error, "compile failed");
    assert_string_equal(r.fix, "lower --jobs");
    assert_string_equal(r.log, "/o/build.log");
    assert_string_equal(r.log_tail, "ninja: stopped");
    all_stage_result_free(&r);

    /* fetch-cuda: the prefix wherever it sits; a plain-string error */
    const char *fetch = "{\"status\":\"ok\",\"result\":{\"prefix\":\"/h/cuda-13.0.2\"}}";
    assert_int_equal(all_read_stage(fetch, &r, &err), 0);
    assert_string_equal(r.prefix, "/h/cuda-13.0.2");
    assert_int_equal(r.exit_code, -1);
    all_stage_result_free(&r);
    assert_int_equal(
        all_read_stage("{\"status\":\"error\",\"error\":\"404\",\"fix\":\"--mirror\"}", &r, &err),
        0);
    assert_string_equal(r.error, "404");
    assert_string_equal(r.fix, "--mirror");
    all_stage_result_free(&r);

    /* `sagebuild selftest --json` (src/selftest/render.c): per GPU the recommendation and
     * which modes are safe; a missed goal is not mentioned. */
    const char *selftest =
        "{\"status\":\"warn\",\"exit_code\":1,\"skipped\":null,"
        "\"recommendation_record\":\"/o/recommendation.json\",\"devices\":["
        "{\"index\":0,\"name\":\"NVIDIA H200\",\"has_code\":true,\"verdict\":\"warn\","
        "\"recommended_mode\":\"int8-fp16\",\"modes\":["
        "{\"mode\":\"fp16\",\"supported\":true,\"safe\":true,\"goal\":\"met\",\"tops\":339.1},"
        "{\"mode\":\"int8-fp16\",\"supported\":true,\"safe\":true,\"goal\":\"missed\","
        "\"tops\":413.0},"
        "{\"mode\":\"int8-fp8\",\"supported\":true,\"safe\":false,\"goal\":\"met\",\"tops\":null},"
        "{\"mode\":\"int8-fp8-x\",\"supported\":false,\"safe\":false}]},"
        "{\"index\":1,\"name\":\"RTX 5090\",\"has_code\":false,\"build_hint\":\"sagebuild build "
        "--arch sm_120a\"},"
        "{\"index\":2,\"name\":\"L40S\",\"has_code\":true,\"recommended_mode\":null,\"modes\":["
        "{\"mode\":\"fp16\",\"supported\":true,\"safe\":false}]}]}";
    assert_int_equal(all_read_stage(selftest, &r, &err), 0);
    assert_string_equal(r.verdicts,
                        "GPU 0 NVIDIA H200: recommended mode int8-fp16 (413 TOPS); safe: fp16, "
                        "int8-fp16; not safe: int8-fp8\n"
                        "GPU 1 RTX 5090: no code for it; run: sagebuild build --arch sm_120a\n"
                        "GPU 2 L40S: no mode is safe to recommend; not safe: fp16\n"
                        "recorded in /o/recommendation.json\n");
    assert_string_equal(r.record, "/o/recommendation.json");
    all_stage_result_free(&r);
    /* An older sagebuild's JSON, verdicts only. */
    const char *older = "{\"status\":\"warn\",\"exit_code\":1,\"devices\":[{\"index\":0,"
                        "\"name\":\"H200\",\"verdict\":\"warn\",\"recommended_mode\":\"fp16\"}]}";
    assert_int_equal(all_read_stage(older, &r, &err), 0);
    assert_string_equal(r.verdicts, "GPU 0 H200: recommended mode fp16; warn\n");
    all_stage_result_free(&r);

    assert_int_equal(all_read_stage("{\"exit_code\":0}", &r, &err), -1); /* no status */
    free(err);
    assert_int_equal(all_read_stage("garbage", &r, &err), -1);
    free(err);
    assert_int_equal(all_read_stage("[]", &r, &err), -1);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(acts_on_doctor_ids),
        cmocka_unit_test(reads_the_doctor),
        cmocka_unit_test(reads_stage_results),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
