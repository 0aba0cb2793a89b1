#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "doctor/report.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void run_a(struct doctor_ctx *ctx, struct check_result *r)
{
    (void)ctx;
    (void)r;
}

static const struct check_def def_a = {"toolkit.nvcc", "nvcc in CUDA_HOME", run_a};
static const struct check_def def_b = {"host.compiler", "host compiler", run_a};

static void builds_results(struct check_result *a, struct check_result *b)
{
    memset(a, 0, sizeof *a);
    memset(b, 0, sizeof *b);
    result_set(a, CHECK_OK, "nvcc %s", "13.0");
    result_ev(a, "path", "%s", "/usr/local/cuda/bin/nvcc");
    result_ev(a, "path", "%s", "/opt/cuda/bin/nvcc"); /* a key set twice keeps the last */
    result_set(b, CHECK_ERROR, "gcc %d is too new", 16);
    result_fix(b, "export CC=%s CXX=%s", "gcc-15", "g++-15");
}

static void writes_schema_1_json(void **state)
{
    (void)state;
    struct check_result res[2];
    builds_results(&res[0], &res[1]);
    struct doctor_counts c = {0, 0, 0, 0};
    report_count(&c, res[0].status);
    report_count(&c, res[1].status);
    const struct check_def *defs[] = {&def_a, &def_b};
    char *text = report_json(defs, res, 2, &c);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_int_equal(cJSON_GetObjectItem(root, "schema")->valueint, 1);
    cJSON *checks = cJSON_GetObjectItem(root, "checks");
    assert_int_equal(cJSON_GetArraySize(checks), 2);
    cJSON *a = cJSON_GetArrayItem(checks, 0);
    assert_string_equal(cJSON_GetObjectItem(a, "id")->valuestring, "toolkit.nvcc");
    assert_string_equal(cJSON_GetObjectItem(a, "status")->valuestring, "ok");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(a, "fix")));
    cJSON *ev = cJSON_GetObjectItem(a, "evidence");
    assert_int_equal(cJSON_GetArraySize(ev), 1);
    assert_string_equal(cJSON_GetObjectItem(ev, "path")->valuestring, "/opt/cuda/bin/nvcc");
    cJSON *b = cJSON_GetArrayItem(checks, 1);
    assert_string_equal(cJSON_GetObjectItem(b, "fix")->valuestring, "export CC=gcc-15 CXX=g++-15");
    cJSON *counts = cJSON_GetObjectItem(root, "counts");
    assert_int_equal(cJSON_GetObjectItem(counts, "ok")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(counts, "error")->valueint, 1);
    assert_int_equal(report_exit_status(&c), 2);
    cJSON_Delete(root);
    free(text);
    result_free(&res[0]);
    result_free(&res[1]);
}

static void writes_human_rows(void **state)
{
    (void)state;
    struct check_result res[2];
    builds_results(&res[0], &res[1]);
    struct out_style st = out_style_decide(0, NULL, NULL, "C", 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_human_row(f, &st, &def_a, &res[0], 0, 0);
    report_human_row(f, &st, &def_b, &res[1], 0, 0);
    report_human_row(f, &st, &def_a, &res[0], 1, 0);
    report_human_row(f, &st, &def_a, &res[0], 0, 1); /* quiet: ok rows vanish */
    fclose(f);
    assert_non_null(strstr(buf, "[ok] nvcc in CUDA_HOME (toolkit.nvcc): nvcc 13.0\n"));
    assert_non_null(strstr(buf, "[x] host compiler (host.compiler): gcc 16 is too new\n"
                                "    fix: export CC=gcc-15 CXX=g++-15\n"));
    assert_non_null(strstr(buf, "    - path: /opt/cuda/bin/nvcc\n"));
    /* ok row twice (normal, verbose), never for quiet */
    char *first = strstr(buf, "[ok]");
    char *second = strstr(first + 1, "[ok]");
    assert_non_null(second);
    assert_null(strstr(second + 1, "[ok]"));
    free(buf);

    struct doctor_counts c = {3, 0, 0, 1};
    f = open_memstream(&buf, &len);
    report_human_summary(f, &st, &c, 12, 0);
    fclose(f);
    assert_non_null(strstr(buf, "No issues found (4 checks, 1 skipped)."));
    assert_int_equal(report_exit_status(&c), 0);
    free(buf);
    struct doctor_counts w = {3, 2, 0, 0};
    assert_int_equal(report_exit_status(&w), 1);
    result_free(&res[0]);
    result_free(&res[1]);
}

static void lists_unique_ids_in_a_stable_table(void **state)
{
    (void)state;
    int n;
    const struct check_def *defs = doctor_checks(&n);
    /* Ids are only ever added: every one documented so far must still be there. */
    static const char *const stable[] = {"torch.found",
                                         "torch.cuda",
                                         "torch.triton",
                                         "driver.present",
                                         "driver.gpus",
                                         "driver.torch",
                                         "torch.gpu_arch",
                                         "toolkit.cuda_home",
                                         "toolkit.nvcc",
                                         "toolkit.version_match",
                                         "toolkit.components",
                                         "toolkit.consistency",
                                         "toolkit.archs",
                                         "toolkit.driver_ptx",
                                         "host.compiler",
                                         "build.ninja",
                                         "build.jobs",
                                         "build.disk",
                                         "arch.list",
                                         "sageattention.install",
                                         "sageattention.kernels",
                                         "sageattention.imports"};
    for (size_t k = 0; k < sizeof stable / sizeof stable[0]; k++) {
        int found = 0;
        for (int i = 0; i < n; i++)
            found |= !strcmp(defs[i].id, stable[k]);
        assert_true(found);
    }
    for (int i = 0; i < n; i++) {
        assert_non_null(strchr(defs[i].id, '.'));
        assert_non_null(defs[i].run);
        for (int k = i + 1; k < n; k++)
            assert_string_not_equal(defs[i].id, defs[k].id);
    }
    assert_string_equal(check_status_name(CHECK_SKIP), "skip");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writes_schema_1_json),
        cmocka_unit_test(writes_human_rows),
        cmocka_unit_test(lists_unique_ids_in_a_stable_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
