#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "all/call.h"

static const char h200[] =
    "{\"version\": \"2.2.0+sagebuild.0.1.0\"}\n"
    "{\"gpu\": 0, \"name\": \"NVIDIA H200\", \"cc\": \"9.0\", \"shape\": [1, 24, 4096, 128], "
    "\"finite\": true, \"sage_cos\": 0.99994, \"sage_rel_l1\": 0.011, \"sdpa_cos\": 0.9999999, "
    "\"sdpa_rel_l1\": 0.0003, \"sage_ms\": 1.30, \"sdpa_ms\": 1.00}\n"
    "{\"gpu\": 1, \"name\": \"NVIDIA GeForce RTX 5090\", \"cc\": \"12.0\", \"shape\": [1, 24, "
    "4096, 128], \"finite\": true, \"sage_cos\": 0.9992, \"sage_rel_l1\": 0.04, \"sdpa_cos\": 1.0, "
    "\"sdpa_rel_l1\": 0.0003, \"sage_ms\": 0.5, \"sdpa_ms\": 1.0}\n";

static void reads_the_lines_and_says_which_is_faster(void **state)
{
    (void)state;
    struct call_report r;
    char *err = NULL;
    /* python's own noise around the lines (a warning on stdout) is skipped */
    char *text = malloc(strlen(h200) + 64);
    strcpy(text, "UserWarning: something\n");
    strcat(text, h200);
    assert_int_equal(all_parse_call(text, &r, &err), 0);
    free(text);
    assert_null(r.skipped);
    assert_string_equal(r.version, "2.2.0+sagebuild.0.1.0");
    assert_int_equal(r.ngpus, 2);
    assert_int_equal(r.gpus[0].l, 4096);
    enum call_verdict v;
    char *line = all_call_line(&r.gpus[0], &v);
    assert_int_equal(v, CALL_OK);
    assert_non_null(strstr(line, "GPU 0 NVIDIA H200"));
    assert_non_null(strstr(line, "SDPA is 1.30x faster than sageattn on this GPU"));
    free(line);
    line = all_call_line(&r.gpus[1], &v);
    assert_int_equal(v, CALL_OK);
    assert_non_null(strstr(line, "sageattn is 2.00x faster than SDPA"));
    assert_null(strstr(line, "SDPA is"));
    free(line);
    all_call_report_free(&r);
}

static void failures_and_skips(void **state)
{
    (void)state;
    struct call_report r;
    char *err = NULL;
    assert_int_equal(
        all_parse_call("{\"skipped\": \"torch 2.11.0+cpu sees no CUDA GPU\"}\n", &r, &err), 0);
    assert_string_equal(r.skipped, "torch 2.11.0+cpu sees no CUDA GPU");
    all_call_report_free(&r);

    assert_int_equal(all_parse_call("{\"gpu\": 0, \"name\": \"NVIDIA GeForce RTX 5090\", "
                                    "\"error\": \"RuntimeError: no kernel image\"}\n"
                                    "{\"gpu\": 1, \"name\": \"B\", \"finite\": false, "
                                    "\"sage_cos\": 0.5, \"sage_rel_l1\": 1.0}\n"
                                    "{\"gpu\": 2, \"name\": \"C\", \"finite\": true, "
                                    "\"sage_cos\": 0.99, \"sage_rel_l1\": 0.1}\n",
                                    &r, &err),
                     0);
    enum call_verdict v;
    char *line = all_call_line(&r.gpus[0], &v);
    assert_int_equal(v, CALL_FAIL);
    assert_non_null(strstr(line, "sageattn raised RuntimeError: no kernel image"));
    free(line);
    line = all_call_line(&r.gpus[1], &v);
    assert_int_equal(v, CALL_FAIL);
    assert_non_null(strstr(line, "non-finite"));
    free(line);
    line = all_call_line(&r.gpus[2], &v);
    assert_int_equal(v, CALL_WARN); /* no timings: no speed claim either */
    assert_non_null(strstr(line, "below the accuracy bar"));
    assert_null(strstr(line, "faster"));
    free(line);
    all_call_report_free(&r);

    assert_int_equal(
        all_parse_call("{\"import_error\": \"ImportError: libsageattn.so\"}\n", &r, &err), 0);
    assert_string_equal(r.import_error, "ImportError: libsageattn.so");
    assert_int_equal(r.ngpus, 0);
    all_call_report_free(&r);

    assert_int_equal(all_parse_call("Traceback (most recent call last):\n  ...\n", &r, &err), -1);
    assert_non_null(err);
    free(err);
    all_call_report_free(&r);
    err = NULL;
    assert_int_equal(all_parse_call(NULL, &r, &err), -1);
    free(err);
    all_call_report_free(&r);
    err = NULL;
    assert_int_equal(all_parse_call("{\"gpu\": \"x\"}\n[1,2]\n{broken\n", &r, &err), -1);
    free(err);
    all_call_report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_the_lines_and_says_which_is_faster),
        cmocka_unit_test(failures_and_skips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
