/* CPU tests of sageattn-selftest's pure logic (selftest/st_logic.c, st_report.c): arch hints and
 * coverage, the accuracy matrix against issue 4's list, the verdict rules, the exit code, and
 * the JSON rendering (written to argv[1] for check_selftest_json.py). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_check.h"
#include "sageattn.h"
#include "st_report.h"

/* st_report.c names modes through the library; the test links no GPU library. */
const char *sageattn_mode_name(sageattn_mode m)
{
    static const char *names[] = {"auto", "int8-fp16", "int8-fp8", "fp16"};
    return (int)m >= 0 && (int)m < 4 ? names[m] : "?";
}

static void test_arch_rules(void)
{
    char a[16];
    static const struct {
        int cc;
        const char *arch;
    } hints[] = {{80, "sm_80"},    {86, "sm_86"},    {89, "sm_89"},   {90, "sm_90"},
                 {100, "sm_100a"}, {120, "sm_120a"}, {121, "sm_121a"}};
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
        st_arch_for_cc(hints[i].cc, a, sizeof a);
        CHECK(strcmp(a, hints[i].arch) == 0, "cc %d -> %s", hints[i].cc, a);
    }
    CHECK(st_archs_cover_cc("sm_90,sm_120a", 90), "sm_90 runs on 9.0");
    CHECK(st_archs_cover_cc("sm_90,sm_120a", 120), "sm_120a runs on 12.0");
    CHECK(!st_archs_cover_cc("sm_90,sm_120a", 121), "sm_120a does not run on 12.1");
    CHECK(!st_archs_cover_cc("sm_90,sm_120a", 89), "nothing for 8.9");
    CHECK(st_archs_cover_cc("sm_80", 86), "sm_80 SASS runs on 8.6");
    CHECK(!st_archs_cover_cc("sm_86", 80), "sm_86 SASS does not run on 8.0");
    CHECK(!st_archs_cover_cc("sm_90", 100), "no SASS compatibility across majors");
    CHECK(!st_archs_cover_cc("sm_100a", 103), "sm_100a only on 10.0");
    CHECK(!st_archs_cover_cc("", 90) && !st_archs_cover_cc("unknown", 90), "empty list");
    CHECK(st_mode_from_name("int8-fp8") == SAGEATTN_MODE_INT8_FP8, "mode names");
    CHECK(st_mode_from_name("fp8") == -1, "unknown mode name");
}

static void test_matrix(int full)
{
    struct st_case c[ST_MAX_CASES + 1];
    size_t n = st_accuracy_cases(full, c, ST_MAX_CASES + 1);
    CHECK(n > 5 && n <= ST_MAX_CASES, "%zu cases (full=%d)", n, full);
    int len_seen[5] = {0}, d_seen[4] = {0}, kind_seen[6] = {0};
    int gqa = 0, diff_len = 0, causal = 0, nhd = 0, hnd = 0, bf16 = 0, fp16 = 0, lse = 0, lng = 0;
    static const int lens[5] = {1, 17, 77, 1000, 4096}, dims[4] = {40, 64, 96, 128};
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 5; k++)
            len_seen[k] |= c[i].lq == lens[k];
        for (int k = 0; k < 4; k++)
            d_seen[k] |= c[i].d == dims[k];
        kind_seen[c[i].kind] = 1;
        gqa |= c[i].hq != c[i].hkv;
        diff_len |= c[i].lq != c[i].lkv;
        causal |= c[i].causal;
        nhd |= c[i].nhd;
        hnd |= !c[i].nhd;
        bf16 |= c[i].bf16;
        fp16 |= !c[i].bf16;
        lse |= c[i].lse;
        lng |= c[i].lkv >= 16384;
        CHECK(c[i].hq % c[i].hkv == 0 && c[i].d <= 128, "%s: bad shape", c[i].name);
        CHECK(!(c[i].causal && c[i].lq > c[i].lkv) || full, "quick: no-key rows only in full");
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(c[i].name, c[j].name) != 0, "duplicate case name %s", c[i].name);
    }
    for (int k = 0; k < 6; k++)
        CHECK(kind_seen[k], "full=%d: input kind %d missing", full, k);
    CHECK(gqa && diff_len && causal && nhd && hnd && bf16 && fp16 && lse && lng,
          "full=%d: a dimension of the matrix is missing", full);
    if (full) {
        for (int k = 0; k < 5; k++)
            CHECK(len_seen[k], "full: length %d missing", lens[k]);
        for (int k = 0; k < 4; k++)
            CHECK(d_seen[k], "full: head dim %d missing", dims[k]);
    }
    struct st_speed_shape s[ST_MAX_SPEED];
    size_t ns = st_speed_shapes(full, s, ST_MAX_SPEED);
    CHECK(ns >= 1 && ns <= ST_MAX_SPEED, "%zu speed shapes", ns);
}

static struct st_case_result good(double cos, double rel)
{
    struct st_case_result r = {0, 1, 1, 0, cos, rel, 0.01, 0.001, 1, 0};
    return r;
}

static void test_judge(void)
{
    struct st_case rnd = {.kind = ST_RANDOM, .lse = 1}, adv = {.kind = ST_Q_X10},
                   qk = {.kind = ST_QK_NEAR_LIMIT};
    int m = SAGEATTN_MODE_INT8_FP16;
    struct st_case_result r = good(0.99995, 0.009);
    CHECK(st_judge_case(m, &rnd, &r, 0.009) == ST_PASS && r.pass, "within the bar");
    r = good(0.99995, 0.013);
    CHECK(st_judge_case(m, &rnd, &r, 0.013) == ST_WARN && !r.pass, "just over rel-L1: warn");
    r = good(0.99995, 0.03);
    CHECK(st_judge_case(m, &rnd, &r, 0.03) == ST_FAIL, "over 2x rel-L1: fail");
    r = good(0.9998, 0.009);
    CHECK(st_judge_case(m, &rnd, &r, 0.009) == ST_WARN, "cos below the bar: warn");
    r = good(0.999, 0.009);
    CHECK(st_judge_case(m, &rnd, &r, 0.009) == ST_FAIL, "cos far below: fail");
    r = good(0.99995, 0.009);
    r.nonfinite = 1;
    CHECK(st_judge_case(m, &rnd, &r, 0.009) == ST_FAIL, "NaN: fail");
    r = good(0.99995, 0.009);
    r.coverage_ok = 0;
    CHECK(st_judge_case(m, &rnd, &r, 0.009) == ST_FAIL, "coverage: fail");
    r = good(0.99995, 0.009);
    r.api_ok = 0;
    CHECK(st_judge_case(m, &rnd, &r, 0.009) == ST_FAIL, "API error: fail");
    r = good(0.99995, 0.009);
    r.lse_err = 0.2;
    CHECK(st_judge_case(m, &rnd, &r, 0.009) == ST_WARN, "LSE off: warn");
    r = good(0.99995, 0.009);
    r.api_ok = 0;
    r.skipped = 1;
    CHECK(st_judge_case(m, &rnd, &r, 0.009) == ST_PASS && !r.pass,
          "skipped: neither pass nor fail");
    r = good(0.9995, 0.017);
    CHECK(st_judge_case(m, &adv, &r, 0.009) == ST_PASS, "adversarial within 2x random");
    r = good(0.9995, 0.019);
    CHECK(st_judge_case(m, &adv, &r, 0.009) == ST_WARN, "adversarial over 2x random: warn");
    r = good(0.5, 0.8);
    CHECK(st_judge_case(m, &qk, &r, 0.009) == ST_PASS, "QK near max: only finiteness counts");
    r.nonfinite = 3;
    CHECK(st_judge_case(m, &qk, &r, 0.009) == ST_FAIL, "QK near max with NaN: fail");
}

static void test_report(const char *json_path)
{
    struct st_device_out *d = calloc(1, sizeof *d);
    if (!d) {
        CHECK(0, "out of memory");
        return;
    }
    d->index = 0;
    snprintf(d->name, sizeof d->name, "Test \"GPU\"");
    d->cc = 90;
    d->has_code = 1;
    d->nmodes = 3;
    int modes[3] = {SAGEATTN_MODE_FP16, SAGEATTN_MODE_INT8_FP16, SAGEATTN_MODE_INT8_FP8};
    double tops[3] = {300, 450, 500};
    for (int k = 0; k < 3; k++) {
        struct st_mode_out *m = &d->modes[k];
        m->mode = modes[k];
        m->supported = 1;
        struct st_case_out *c = &m->cases[m->ncases++];
        st_accuracy_cases(0, &c->c, 1);
        c->r = good(0.999999, k == 2 ? 0.05 : 0.001); /* int8-fp8 misses its bar: warn */
        m->speed[0] = (struct st_speed_out){{1, 32, 4096, 128, 0}, 1, 1.0, tops[k], tops[k] / 300};
        m->nspeed = 1;
        st_summarize_mode(m);
    }
    CHECK(d->modes[0].verdict == ST_PASS && d->modes[2].verdict == ST_WARN, "mode verdicts");
    d->recommended = st_recommend(d);
    CHECK(d->recommended == SAGEATTN_MODE_INT8_FP16, "recommends the fastest passing mode, got %d",
          d->recommended);
    struct st_report r = {"sm_90", 1, NULL, d, 1};
    CHECK(st_exit_code(&r) == 1, "a warning gives exit 1");
    FILE *f = fopen(json_path, "w");
    CHECK(f != NULL, "cannot write %s", json_path);
    if (f) {
        st_write_json(f, &r);
        fclose(f);
    }
    d->has_code = 0;
    CHECK(st_exit_code(&r) == 2, "a GPU without code gives exit 2");
    struct st_report skipped = {"sm_90", 1, "no GPU: none", NULL, 0};
    CHECK(st_exit_code(&skipped) == 77, "no GPU gives exit 77");
    free(d);
}

int main(int argc, char **argv)
{
    test_arch_rules();
    test_matrix(0);
    test_matrix(1);
    test_judge();
    test_report(argc > 1 ? argv[1] : "/dev/null");
    return sa_check_report("test_st_logic");
}
