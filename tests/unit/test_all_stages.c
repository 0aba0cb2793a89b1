/* How `sagebuild all` reads its stages: from the stage results the commands really print
 * (fixtures captured from them, tests/unit/fixtures/stages/README.md says how), and through each
 * emitter in this binary, so an emitter and the reader that disagree fail here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "all/stages.h"
#include "doctor/report.h"
#include "fetch/fetch_result.h"
#include "kernel_build/outcome.h"
#include "selftest/render.h"
#include "selftest/summary.h"
#include "util/exitcodes.h"
#include "util/fs.h"
#include "util/stage_result.h"
#include "util/strbuf.h"

#define FIXTURES "tests/unit/fixtures/stages/"

/* A fixture's text (the tests run from the repository root, as make runs them). */
static char *fixture(const char *name)
{
    size_t len = 0;
    char *path = xasprintf(FIXTURES "%s", name);
    char *text = fs_read_file(path, 1u << 20, &len);
    free(path);
    assert_non_null(text);
    return text;
}

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

/* `doctor --arch sm_80 --json` with a CUDA 12.8 toolkit and torch built for 13.0, no GPU. */
static void reads_a_real_doctor(void **state)
{
    (void)state;
    char *json = fixture("doctor-unfit.json"), *err = NULL;
    struct doctor_summary d;
    assert_int_equal(all_read_doctor(json, SB_EXIT_ERROR, 0, &d, &err), 0);
    assert_int_equal(d.ok, 8);
    assert_int_equal(d.warn, 3);
    assert_int_equal(d.error, 2);
    assert_int_equal(d.skip, 10);
    assert_true(d.needs_fetch);
    assert_null(all_first_block(&d)); /* no GPU: driver findings do not block */
    assert_int_equal(d.nfindings, 2);
    assert_string_equal(d.findings[0].id, "toolkit.version_match");
    assert_int_equal(d.findings[0].action, FINDING_FETCH);
    assert_non_null(d.findings[0].fix);
    assert_int_equal(d.nwarnings, 3);
    assert_string_equal(d.warnings[0].id, "driver.present");
    all_doctor_summary_free(&d);
    /* the same output from a process that exited 0 is a misread */
    assert_int_equal(all_read_doctor(json, SB_EXIT_OK, 0, &d, &err), -1);
    assert_non_null(strstr(err, "exited with status 0, but its result says 2"));
    free(err);
    free(json);
}

/* `fetch-cuda --json`: installed from the test mirror, and every mirror refusing. */
static void reads_a_real_fetch(void **state)
{
    (void)state;
    char *json = fixture("fetch-installed.json"), *err = NULL;
    struct stage_outcome r;
    assert_int_equal(all_read_stage(json, "fetch-cuda", SB_EXIT_OK, &r, &err), 0);
    assert_int_equal(r.status, STAGE_OK);
    assert_string_equal(r.prefix, "/home/u/data/sagebuild/cuda-13.0.9");
    assert_string_equal(r.summary, "CUDA 13.0.9 installed in /home/u/data/sagebuild/cuda-13.0.9");
    assert_null(r.fix);
    all_stage_outcome_free(&r);
    free(json);

    json = fixture("fetch-error.json");
    assert_int_equal(all_read_stage(json, "fetch-cuda", SB_EXIT_ERROR, &r, &err), 0);
    assert_int_equal(r.status, STAGE_ERROR);
    assert_int_equal(r.exit_code, SB_EXIT_ERROR);
    assert_null(r.prefix); /* nothing installed */
    assert_non_null(strstr(r.summary, "no mirror delivered"));
    assert_non_null(strstr(r.fix, "--source pypi")); /* CUDA 13 from redist: PyPI first */
    all_stage_outcome_free(&r);
    /* read as another command's result, it is refused */
    assert_int_equal(all_read_stage(json, "build", SB_EXIT_ERROR, &r, &err), -1);
    free(err);
    free(json);
}

/* `build --json`: the sm_80 build of the integration test, and a CMake failure. */
static void reads_a_real_build(void **state)
{
    (void)state;
    char *json = fixture("build-ok.json"), *err = NULL;
    struct stage_outcome r;
    assert_int_equal(all_read_stage(json, "build", SB_EXIT_OK, &r, &err), 0);
    assert_int_equal(r.status, STAGE_OK);
    assert_string_equal(r.out, "/home/u/out");
    assert_non_null(strstr(r.summary, "sm_80 in /home/u/out ("));
    assert_null(r.log);
    all_stage_outcome_free(&r);
    free(json);

    json = fixture("build-error.json");
    assert_int_equal(all_read_stage(json, "build", SB_EXIT_ERROR, &r, &err), 0);
    assert_int_equal(r.status, STAGE_ERROR);
    assert_string_equal(r.summary, "CMake configure exited with status 1");
    assert_string_equal(r.log, "/home/u/o/build.log");
    assert_non_null(r.log_tail);
    assert_non_null(r.fix);
    all_stage_outcome_free(&r);
    free(json);
}

/* `selftest --json`: the real program with no GPU, and the H200 run through the stand-in. */
static void reads_a_real_selftest(void **state)
{
    (void)state;
    char *json = fixture("selftest-skipped.json"), *err = NULL;
    struct stage_outcome r;
    assert_int_equal(all_read_stage(json, "selftest", SB_EXIT_SKIPPED, &r, &err), 0);
    assert_int_equal(r.status, STAGE_SKIPPED);
    assert_non_null(r.skipped);
    assert_true(!strncmp(r.skipped, "no GPU", 6));
    assert_true(!strncmp(r.summary, "skipped: no GPU", 15));
    all_stage_outcome_free(&r);
    free(json);

    json = fixture("selftest-h200.json");
    assert_int_equal(all_read_stage(json, "selftest", SB_EXIT_OK, &r, &err), 0);
    assert_int_equal(r.status, STAGE_OK);
    assert_string_equal(r.summary, "GPU 0 NVIDIA H200: recommended mode int8-fp16 (413 TOPS); "
                                   "safe: fp16, int8-fp16, int8-fp8\n"
                                   "recorded in /home/u/h200/recommendation.json");
    assert_null(r.skipped);
    all_stage_outcome_free(&r);
    free(json);
}

/* Results that say one thing and mean another are refused, never guessed at. */
static void refuses_results_it_would_misread(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "garbage",
        "[]",
        "{\"status\":\"ok\",\"exit_code\":0}", /* no result: an older shape */
        "{\"result\":{\"schema\":2,\"command\":\"build\",\"status\":\"ok\",\"exit_code\":0,"
        "\"summary\":\"\",\"fix\":null,\"payload\":{}}}",
        "{\"result\":{\"schema\":1,\"command\":\"build\",\"status\":\"ok\",\"exit_code\":2,"
        "\"summary\":\"\",\"fix\":null,\"payload\":{}}}", /* status and exit code differ */
        "{\"result\":{\"schema\":1,\"command\":\"build\",\"status\":\"skipped\",\"exit_code\":0,"
        "\"summary\":\"\",\"fix\":null,\"payload\":{}}}",
        "{\"result\":{\"schema\":1,\"command\":\"build\",\"status\":\"ok\",\"exit_code\":0,"
        "\"summary\":\"\",\"fix\":null}}", /* no payload */
        "{\"result\":{\"schema\":1,\"command\":\"build\",\"status\":\"ok\",\"exit_code\":0,"
        "\"summary\":3,\"fix\":null,\"payload\":{}}}",
        NULL,
    };
    struct stage_outcome r;
    for (int i = 0; bad[i]; i++) {
        char *err = NULL;
        assert_int_equal(all_read_stage(bad[i], "build", 0, &r, &err), -1);
        assert_non_null(err);
        free(err);
    }
    char *err = NULL;
    struct doctor_summary d;
    assert_int_equal(all_read_doctor("{\"checks\":[]}", 0, 0, &d, &err), -1);
    free(err);
    assert_int_equal(all_read_doctor(NULL, 0, 0, &d, &err), -1);
    free(err);
}

/* The status follows the exit code, in both directions. */
static void status_follows_exit_code(void **state)
{
    (void)state;
    assert_int_equal(stage_status_of_exit(SB_EXIT_OK), STAGE_OK);
    assert_int_equal(stage_status_of_exit(SB_EXIT_WARN), STAGE_WARN);
    assert_int_equal(stage_status_of_exit(SB_EXIT_SKIPPED), STAGE_SKIPPED);
    assert_int_equal(stage_status_of_exit(SB_EXIT_ERROR), STAGE_ERROR);
    assert_int_equal(stage_status_of_exit(SB_EXIT_USAGE), STAGE_ERROR);
    assert_int_equal(stage_status_of_exit(SB_EXIT_INTERNAL), STAGE_ERROR);
    assert_string_equal(stage_status_name(STAGE_SKIPPED), "skipped");
}

/* Each emitter's output, read back by `all`: the facts put in are the facts read out. */
static void doctor_emitter_and_reader_agree(void **state)
{
    (void)state;
    static const struct check_def toolkit = {"toolkit.version_match", "Toolkit", NULL};
    static const struct check_def arch = {"arch.list", "Arch list", NULL};
    static const struct check_def disk = {"build.disk", "Disk", NULL};
    const struct check_def *defs[] = {&toolkit, &arch, &disk};
    struct check_result results[3] = {
        {.status = CHECK_ERROR, .summary = "nvcc 12.8 vs torch 13.0", .fix = "fetch-cuda"},
        {.status = CHECK_WARN, .summary = "unset", .fix = NULL},
        {.status = CHECK_OK, .summary = "40 GB free"},
    };
    struct doctor_counts c = {0};
    for (int i = 0; i < 3; i++)
        report_count(&c, results[i].status);
    char *json = report_json(defs, results, 3, &c), *err = NULL;
    struct doctor_summary d;
    assert_int_equal(all_read_doctor(json, report_exit_status(&c), 1, &d, &err), 0);
    assert_int_equal(d.ok, 1);
    assert_int_equal(d.warn, 1);
    assert_int_equal(d.error, 1);
    assert_true(d.needs_fetch);
    assert_int_equal(d.nfindings, 1);
    assert_string_equal(d.findings[0].summary, "nvcc 12.8 vs torch 13.0");
    assert_string_equal(d.findings[0].fix, "fetch-cuda");
    assert_int_equal(d.nwarnings, 1);
    assert_string_equal(d.warnings[0].id, "arch.list");
    assert_null(d.warnings[0].fix);
    all_doctor_summary_free(&d);
    free(json);
}

static char *printed(cJSON *doc)
{
    char *text = cJSON_Print(doc);
    char *out = xstrdup(text);
    cJSON_free(text);
    cJSON_Delete(doc);
    return out;
}

static void fetch_emitter_and_reader_agree(void **state)
{
    (void)state;
    struct fetch_result_facts ok = {.exit_code = SB_EXIT_WARN, /* no compiler for the check */
                                    .state = "installed",
                                    .release = "13.0.2",
                                    .prefix = "/p/cuda-13.0.2",
                                    .source = "pypi",
                                    .postcheck = "skipped"};
    cJSON *doc = cJSON_CreateObject();
    fetch_result_add(doc, &ok);
    char *json = printed(doc), *err = NULL;
    struct stage_outcome r;
    assert_int_equal(all_read_stage(json, "fetch-cuda", SB_EXIT_WARN, &r, &err), 0);
    assert_int_equal(r.status, STAGE_WARN);
    assert_string_equal(r.prefix, "/p/cuda-13.0.2");
    assert_string_equal(r.summary, "CUDA 13.0.2 installed in /p/cuda-13.0.2");
    all_stage_outcome_free(&r);
    free(json);

    /* a dry run names the prefix it would use, but installs nothing there */
    struct fetch_result_facts planned = {.exit_code = 0, .state = "planned", .prefix = "/p"};
    doc = cJSON_CreateObject();
    fetch_result_add(doc, &planned);
    json = printed(doc);
    assert_int_equal(all_read_stage(json, "fetch-cuda", 0, &r, &err), 0);
    assert_null(r.prefix);
    all_stage_outcome_free(&r);
    free(json);

    struct fetch_result_facts bad = {.exit_code = SB_EXIT_ERROR,
                                     .state = "error",
                                     .prefix = "/p",
                                     .error = "offline",
                                     .fix = "--mirror URL"};
    doc = cJSON_CreateObject();
    fetch_result_add(doc, &bad);
    json = printed(doc);
    assert_int_equal(all_read_stage(json, "fetch-cuda", SB_EXIT_ERROR, &r, &err), 0);
    assert_int_equal(r.status, STAGE_ERROR);
    assert_string_equal(r.summary, "offline");
    assert_string_equal(r.fix, "--mirror URL");
    assert_null(r.prefix);
    all_stage_outcome_free(&r);
    free(json);
}

static void build_emitter_and_reader_agree(void **state)
{
    (void)state;
    struct build_outcome o;
    memset(&o, 0, sizeof o);
    o.out_dir = xstrdup("/o");
    o.have_rec = 1;
    o.rec.archs = xstrdup("sm_80,sm_90");
    o.rec.cpu_seconds = 88.4;
    char *json = build_outcome_json(&o), *err = NULL;
    struct stage_outcome r;
    assert_int_equal(all_read_stage(json, "build", 0, &r, &err), 0);
    assert_int_equal(r.status, STAGE_OK);
    assert_string_equal(r.out, "/o");
    assert_string_equal(r.summary, "sm_80,sm_90 in /o (88 CPU s)");
    all_stage_outcome_free(&r);
    free(json);

    o.up_to_date = 1;
    json = build_outcome_json(&o);
    assert_int_equal(all_read_stage(json, "build", 0, &r, &err), 0);
    assert_string_equal(r.summary, "sm_80,sm_90 in /o: up to date, no work done");
    all_stage_outcome_free(&r);
    free(json);

    o.log_path = xstrdup("/o/build.log");
    o.log_tail = xstrdup("ninja: build stopped\n");
    build_outcome_error(&o, SB_EXIT_ERROR, xstrdup("compile exited with status 1"),
                        xstrdup("lower --jobs"));
    json = build_outcome_json(&o);
    assert_int_equal(all_read_stage(json, "build", SB_EXIT_ERROR, &r, &err), 0);
    assert_int_equal(r.status, STAGE_ERROR);
    assert_string_equal(r.summary, "compile exited with status 1");
    assert_string_equal(r.fix, "lower --jobs");
    assert_string_equal(r.log, "/o/build.log");
    assert_string_equal(r.log_tail, "ninja: build stopped\n");
    all_stage_outcome_free(&r);
    free(json);
    build_outcome_free(&o);
}

static void selftest_emitter_and_reader_agree(void **state)
{
    (void)state;
    struct selftest_report rep;
    memset(&rep, 0, sizeof rep);
    rep.skipped = xstrdup("no GPU: cuInit failed");
    struct st_run run = {.build_dir = "/b", .exit_code = SB_EXIT_SKIPPED, .child_exit = 77};
    char *json = selftest_render_json(&rep, &run), *err = NULL;
    struct stage_outcome r;
    assert_int_equal(all_read_stage(json, "selftest", SB_EXIT_SKIPPED, &r, &err), 0);
    assert_int_equal(r.status, STAGE_SKIPPED);
    assert_string_equal(r.skipped, "no GPU: cuInit failed");
    assert_string_equal(r.summary, "skipped: no GPU: cuInit failed");
    all_stage_outcome_free(&r);
    free(json);
    selftest_report_free(&rep);

    struct st_run crashed = {.build_dir = "/b",
                             .exit_code = SB_EXIT_ERROR,
                             .child_exit = -1,
                             .error = "the self-test crashed: killed by signal 11",
                             .fix = "run it by hand",
                             .output_tail = "Segmentation fault\n"};
    json = selftest_render_json(NULL, &crashed);
    assert_int_equal(all_read_stage(json, "selftest", SB_EXIT_ERROR, &r, &err), 0);
    assert_int_equal(r.status, STAGE_ERROR);
    assert_string_equal(r.summary, "the self-test crashed: killed by signal 11");
    assert_string_equal(r.fix, "run it by hand");
    assert_string_equal(r.log_tail, "Segmentation fault\n");
    all_stage_outcome_free(&r);
    free(json);
}

/* The self-test's per-GPU lines: the recommendation and which modes are safe; a missed goal is
 * not mentioned. */
static void summarizes_each_gpu(void **state)
{
    (void)state;
    const char *devices =
        "[{\"index\":0,\"name\":\"NVIDIA H200\",\"has_code\":true,\"verdict\":\"warn\","
        "\"recommended_mode\":\"int8-fp16\",\"modes\":["
        "{\"mode\":\"fp16\",\"supported\":true,\"safe\":true,\"goal\":\"met\",\"tops\":339.1},"
        "{\"mode\":\"int8-fp16\",\"supported\":true,\"safe\":true,\"goal\":\"missed\","
        "\"tops\":413.0},"
        "{\"mode\":\"int8-fp8\",\"supported\":true,\"safe\":false,\"goal\":\"met\",\"tops\":null},"
        "{\"mode\":\"int8-fp8-x\",\"supported\":false,\"safe\":false}]},"
        "{\"index\":1,\"name\":\"RTX 5090\",\"has_code\":false,\"build_hint\":\"sagebuild build "
        "--arch sm_120a\"},"
        "{\"index\":2,\"name\":\"L40S\",\"has_code\":true,\"recommended_mode\":null,\"modes\":["
        "{\"mode\":\"fp16\",\"supported\":true,\"safe\":false}]},"
        "{\"index\":3,\"name\":\"H100\",\"verdict\":\"fail\",\"recommended_mode\":null,"
        "\"modes\":[]}]";
    cJSON *d = cJSON_Parse(devices);
    char *lines = selftest_gpu_lines(d);
    assert_string_equal(lines, "GPU 0 NVIDIA H200: recommended mode int8-fp16 (413 TOPS); safe: "
                               "fp16, int8-fp16; not safe: int8-fp8\n"
                               "GPU 1 RTX 5090: no code for it; run: sagebuild build --arch "
                               "sm_120a\n"
                               "GPU 2 L40S: no mode is safe to recommend; not safe: fp16\n"
                               "GPU 3 H100: no mode is safe to recommend; fail");
    free(lines);
    cJSON_Delete(d);
    d = cJSON_CreateArray();
    assert_null(selftest_gpu_lines(d));
    cJSON_Delete(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(acts_on_doctor_ids),
        cmocka_unit_test(reads_a_real_doctor),
        cmocka_unit_test(reads_a_real_fetch),
        cmocka_unit_test(reads_a_real_build),
        cmocka_unit_test(reads_a_real_selftest),
        cmocka_unit_test(refuses_results_it_would_misread),
        cmocka_unit_test(status_follows_exit_code),
        cmocka_unit_test(doctor_emitter_and_reader_agree),
        cmocka_unit_test(fetch_emitter_and_reader_agree),
        cmocka_unit_test(build_emitter_and_reader_agree),
        cmocka_unit_test(selftest_emitter_and_reader_agree),
        cmocka_unit_test(summarizes_each_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
