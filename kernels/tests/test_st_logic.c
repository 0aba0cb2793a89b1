/* CPU tests of sageattn-selftest's pure logic (selftest/st_logic.c, st_report.c): arch hints and
 * coverage, the accuracy matrix against issue 4's list, the goal and safe judgements, the
 * recommendation (issue 14's H200 rows among the fixtures), the exit code, and the JSON
 * rendering (written to argv[1] for check_selftest_json.py). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sa_check.h"
#include "sageattn.h"
#include "st_report.h"

/* st_report.c names modes through the library; the test links no GPU library. */
const char *sageattn_mode_name(sageattn_mode m)
{
    static const char *names[] = {
        "auto",        "int8-fp16",       "int8-fp8",         "fp16",
        "int8-fp8-bs", "int8-fp8-f16acc", "int8-fp16-f16acc", "int8-fp8-wgmma"};
    return (int)m >= 0 && (int)m < 8 ? names[m] : "?";
}

static void test_arch_rules(void)
{
    char a[16];
    static const struct {
        int cc;
        const char *arch;
    } hints[] = {{80, "sm_80"}, {86, "sm_86"},    {87, "sm_86"},    {89, "sm_89"},
                 {90, "sm_90"}, {100, "sm_100a"}, {120, "sm_120a"}, {121, "sm_121a"},
                 {75, ""},      {103, ""},        {110, ""}};
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
    /* Issue 9's P·V variants: known by name, judged by the bar of the arithmetic they share. */
    CHECK(st_mode_from_name("int8-fp8-bs") == SAGEATTN_MODE_INT8_FP8_BS &&
              st_mode_from_name("int8-fp8-f16acc") == SAGEATTN_MODE_INT8_FP8_F16ACC &&
              st_mode_from_name("int8-fp16-f16acc") == SAGEATTN_MODE_INT8_FP16_F16ACC &&
              st_mode_from_name("int8-fp8-wgmma") == SAGEATTN_MODE_INT8_FP8_WGMMA &&
              st_mode_from_name("int8-fp16-f16") == -1,
          "P·V variant names");
    CHECK(st_bar_for_mode(SAGEATTN_MODE_INT8_FP8_WGMMA).rel_l1 ==
              st_bar_for_mode(SAGEATTN_MODE_INT8_FP8).rel_l1,
          "int8-fp8-wgmma answers to int8-fp8's bar");
    CHECK(st_bar_for_mode(SAGEATTN_MODE_INT8_FP16_F16ACC).rel_l1 ==
                  st_bar_for_mode(SAGEATTN_MODE_INT8_FP16).rel_l1 &&
              st_bar_for_mode(SAGEATTN_MODE_INT8_FP8_BS).cos ==
                  st_bar_for_mode(SAGEATTN_MODE_INT8_FP8).cos &&
              st_bar_for_mode(SAGEATTN_MODE_INT8_FP8_F16ACC).rel_l1 ==
                  st_bar_for_mode(SAGEATTN_MODE_INT8_FP8).rel_l1,
          "P·V variants' bars");
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
    struct st_case_result r = {0, 1, 1, 0, cos, rel, 0.01, 0.001, 1, 0, 0, 0};
    return r;
}

static void test_goal(void)
{
    struct st_case rnd = {.kind = ST_RANDOM, .lse = 1}, adv = {.kind = ST_Q_X10},
                   qk = {.kind = ST_QK_NEAR_LIMIT};
    struct st_bar b;
    CHECK(st_bar_for_name("int8-fp16", &b) && b.cos == 0.9999 && b.rel_l1 == 0.012,
          "int8-fp16 goal");
    const struct st_bar *m = &b;
    struct st_case_result r = good(0.99995, 0.009);
    CHECK(st_judge_case(m, &rnd, &r, 0.009) == ST_PASS && r.pass, "within the bar");
    CHECK(r.goal_cos == 0.9999 && r.goal_rel_l1 == 0.012, "the limits it used are kept");
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
    CHECK(r.goal_rel_l1 == 0.018, "adversarial limit is 2x random, got %g", r.goal_rel_l1);
    r = good(0.9995, 0.019);
    CHECK(st_judge_case(m, &adv, &r, 0.009) == ST_WARN, "adversarial over 2x random: warn");
    r = good(0.5, 0.8);
    CHECK(st_judge_case(m, &qk, &r, 0.009) == ST_PASS, "QK near max: only finiteness counts");
    r.nonfinite = 3;
    CHECK(st_judge_case(m, &qk, &r, 0.009) == ST_FAIL, "QK near max with NaN: fail");

    /* Goals by name: variants of a family share its goal; unknown modes have none. */
    struct st_goal g;
    CHECK(st_goal_for_mode("int8-fp8-fullrate", &g) && g.rel_l1 == 0.04, "variant goal");
    CHECK(st_goal_for_mode("int8-fp16", &g) && g.rel_l1 == 0.012, "int8-fp16 goal");
    CHECK(st_goal_for_mode("fp16", &g) && g.lse_abs == 0.001, "fp16 goal");
    CHECK(!st_goal_for_mode("int8-fp8x", &g) && !st_goal_for_mode("fp4", &g),
          "no goal for an unknown mode");
    CHECK(st_bar_for_mode(SAGEATTN_MODE_INT8_FP8).rel_l1 == 0.04, "bar by number");
    CHECK(st_mode_is_quantized("int8-fp8-fullrate") && !st_mode_is_quantized("fp16"),
          "quantized unless fp16");
}

static struct st_figures fig(double cos, double rel)
{
    struct st_figures f = {1, 1, 0, cos, rel, -1.0, 1, 0};
    return f;
}

static void test_safe(void)
{
    char why[120];
    struct st_figures f = fig(0.999521, 0.0216); /* our int8-fp16 on q-x10, H200 */
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_SAFE && !why[0], "issue 14's q-x10 is safe");
    f = fig(0.99922, 0.0285); /* SageAttention itself on q-x10 */
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_SAFE, "SageAttention's q-x10 is safe");
    f = fig(0.99926, 0.038); /* SageAttention int8-fp8, random */
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_SAFE, "SageAttention's fp8 is safe");
    f = fig(0.99899, 0.02);
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_INACCURATE && strstr(why, "cos 0.998990"),
          "cos under the bar: %s", why);
    f = fig(0.9995, 0.051);
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_INACCURATE && strstr(why, "rel-L1 0.0510"),
          "rel-L1 over the bar: %s", why);
    f = fig(0.9985, 0.06);
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_INACCURATE && strstr(why, "cos") &&
              strstr(why, ", rel-L1"),
          "both named: %s", why);
    f = fig(0.997, 0.02);
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_BROKEN, "cos past twice the bar: broken");
    f = fig(0.9995, 0.11);
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_BROKEN, "rel-L1 past twice: broken");
    f = fig(NAN, NAN);
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_BROKEN, "NaN figures are not safe");
    f = fig(0.9999, 0.01);
    f.lse_err = 0.06;
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_INACCURATE && strstr(why, "LSE"), "LSE: %s",
          why);
    f.lse_err = 0.02;
    f.lse_inf_ok = 0;
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_BROKEN, "LSE not -inf without keys");
    f = fig(0.9999, 0.01);
    f.nonfinite = 2;
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_BROKEN && strstr(why, "2 NaN"), "NaN: %s", why);
    f = fig(0.9999, 0.01);
    f.coverage_ok = 0;
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_BROKEN, "coverage");
    f = fig(0.9999, 0.01);
    f.api_ok = 0;
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_BROKEN, "API error");
    f = fig(0.98, 0.05); /* int8 on Q and K near +-60000: argmax flips, finite is enough */
    f.finite_only = 1;
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_SAFE, "finite-only case");
    f.nonfinite = 1;
    CHECK(st_judge_safe(&f, why, sizeof why) == ST_BROKEN, "finite-only case with NaN");
    f = fig(0.5, 0.9);
    CHECK(st_judge_safe(&f, why, 8) == ST_BROKEN && strlen(why) < 8, "reason fits its buffer");
}

static void test_key_shape_and_uuid(void)
{
    struct st_shape full[12];
    int n = 0;
    for (int d = 64; d <= 128; d += 64)
        for (int l = 1024; l <= 16384; l *= 4)
            for (int c = 0; c <= 1; c++)
                full[n++] = (struct st_shape){1, 32, l, d, c};
    int k = st_key_shape(full, n);
    CHECK(k >= 0 && full[k].l == 16384 && full[k].d == 128 && !full[k].causal,
          "full: L16384 D128 non-causal");
    struct st_shape quick[2] = {{1, 32, 4096, 128, 0}, {1, 32, 4096, 64, 1}};
    k = st_key_shape(quick, 2);
    CHECK(k == 0, "quick: L4096 D128");
    struct st_shape odd[2] = {{1, 32, 4096, 64, 1}, {1, 32, 8192, 64, 0}};
    CHECK(st_key_shape(odd, 2) == 1, "no D128: the longest non-causal");
    CHECK(st_key_shape(odd, 0) == -1, "no shape");

    unsigned char b[16];
    for (int i = 0; i < 16; i++)
        b[i] = (unsigned char)(0xa0 + i);
    char u[48];
    st_format_uuid(b, u, sizeof u);
    CHECK(strcmp(u, "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf") == 0, "uuid %s", u);
    memset(b, 0, sizeof b);
    st_format_uuid(b, u, sizeof u);
    CHECK(u[0] == '\0', "no uuid");
}

static void test_choose(void)
{
    struct st_shape key = {1, 32, 16384, 128, 0};
    struct st_choice ch;
    /* Issue 14's H200 rows, with today's judgement: all three modes safe. */
    struct st_candidate h200[3] = {
        {"fp16", 1, 342.1}, {"int8-fp16", 1, 413.7}, {"int8-fp8", 1, 314.9}};
    st_choose(h200, 3, &key, &ch);
    CHECK(ch.mode == 1 && ch.runner_up == 0, "H200: int8-fp16, runner-up fp16 (%d, %d)", ch.mode,
          ch.runner_up);
    CHECK(strstr(ch.reason, "1.21x fp16 at L16384 D128") && strstr(ch.reason, "runner-up fp16") &&
              strstr(ch.reason, "int8-fp8 slower than fp16 (0.92x)"),
          "reason: %s", ch.reason);
    CHECK(!strchr(ch.reason, '\n'), "one line");
    /* int8-fp8 faster but unsafe: never chosen; a slower safe one never either. */
    struct st_candidate c2[3] = {{"fp16", 1, 300}, {"int8-fp16", 0, 450}, {"int8-fp8", 1, 290}};
    st_choose(c2, 3, &key, &ch);
    CHECK(ch.mode == 0 && ch.runner_up == -1, "fp16 when the faster mode is unsafe");
    CHECK(strstr(ch.reason, "no safe quantized mode is faster") &&
              strstr(ch.reason, "int8-fp16 not safe"),
          "reason: %s", ch.reason);
    struct st_candidate c3[3] = {{"fp16", 1, 300}, {"int8-fp16", 0, 450}, {"int8-fp8", 0, 500}};
    st_choose(c3, 3, &key, &ch);
    CHECK(ch.mode == 0 && strstr(ch.reason, "no quantized mode is safe"), "none safe: %s",
          ch.reason);
    /* The fastest of several safe ones; the runner-up is the next faster than fp16. */
    struct st_candidate c4[4] = {
        {"fp16", 1, 300}, {"int8-fp16", 1, 450}, {"int8-fp8", 1, 500}, {"int8-fp8-x", 1, 310}};
    st_choose(c4, 4, &key, &ch);
    CHECK(ch.mode == 2 && ch.runner_up == 1, "fastest safe (%d, %d)", ch.mode, ch.runner_up);
    CHECK(strstr(ch.reason, "runner-up int8-fp16 (1.50x)") &&
              strstr(ch.reason, "int8-fp8-x slower (1.03x)"),
          "reason: %s", ch.reason);
    /* No fp16 figure: nothing quantized can be shown faster. */
    struct st_candidate c5[2] = {{"fp16", 1, NAN}, {"int8-fp16", 1, 450}};
    st_choose(c5, 2, &key, &ch);
    CHECK(ch.mode == 0, "no fp16 speed: fp16");
    struct st_candidate c6[1] = {{"int8-fp16", 1, 450}};
    st_choose(c6, 1, &key, &ch);
    CHECK(ch.mode == -1 && strstr(ch.reason, "fp16 was not run"), "fp16 not run: %s", ch.reason);
    /* fp16 itself unsafe: a safe faster quantized mode still wins; else nothing. */
    struct st_candidate c7[2] = {{"fp16", 0, 300}, {"int8-fp16", 1, 450}};
    st_choose(c7, 2, &key, &ch);
    CHECK(ch.mode == 1 && ch.runner_up == -1 && strstr(ch.reason, "fp16 not safe"),
          "unsafe fp16: %s", ch.reason);
    c7[1].safe = 0;
    st_choose(c7, 2, &key, &ch);
    CHECK(ch.mode == -1 && strstr(ch.reason, "no mode is safe"), "nothing safe: %s", ch.reason);
    /* Equal to fp16 is not faster. */
    struct st_candidate c8[2] = {{"fp16", 1, 300}, {"int8-fp16", 1, 300}};
    st_choose(c8, 2, &key, &ch);
    CHECK(ch.mode == 0, "a tie goes to fp16");
}

/* A case with the figures given, in a mode of the device. */
static void add_result(struct st_mode_out *m, const struct st_case *c, double cos, double rel)
{
    struct st_case_out *co = &m->cases[m->ncases++];
    memset(co, 0, sizeof *co);
    co->c = *c;
    co->r = good(cos, rel);
    co->r.lse_err = -1.0;
}

/* Issue 14's H200 run, in short: the random L1000 d64 case and the q-x10 d128 one per mode,
 * speed at L16384 D128 and a causal D64 shape. */
static void h200_device(struct st_device_out *d)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "Test \"GPU\"");
    snprintf(d->uuid, sizeof d->uuid, "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
    d->cc = 90;
    d->has_code = 1;
    d->nmodes = 3;
    struct st_case cases[ST_MAX_CASES];
    size_t n = st_accuracy_cases(0, cases, ST_MAX_CASES);
    const struct st_case *rnd = &cases[0], *qx10 = NULL;
    for (size_t i = 0; i < n; i++)
        if (cases[i].kind == ST_Q_X10)
            qx10 = &cases[i];
    static const int modes[3] = {SAGEATTN_MODE_FP16, SAGEATTN_MODE_INT8_FP16,
                                 SAGEATTN_MODE_INT8_FP8};
    static const double tops[3] = {342.1, 413.7, 314.9}, tops_d64[3] = {298.9, 315.2, 236.5};
    static const double rnd_fig[3][2] = {{0.999998, 0.0020}, {0.999959, 0.0101}, {0.99927, 0.0383}};
    static const double q_fig[3][2] = {{0.999997, 0.0022}, {0.999521, 0.0216}, {0.999153, 0.0357}};
    for (int k = 0; k < 3; k++) {
        struct st_mode_out *m = &d->modes[k];
        m->mode = modes[k];
        m->supported = 1;
        add_result(m, rnd, rnd_fig[k][0], rnd_fig[k][1]);
        add_result(m, qx10, q_fig[k][0], q_fig[k][1]);
        m->speed[0] =
            (struct st_speed_out){{1, 32, 16384, 64, 1}, 1, 3.5, tops_d64[k], tops_d64[k] / 298.9};
        m->speed[1] =
            (struct st_speed_out){{1, 32, 16384, 128, 0}, 1, 10.0, tops[k], tops[k] / 342.1};
        m->nspeed = 2;
    }
}

static void test_report(const char *json_path)
{
    struct st_device_out *d = calloc(1, sizeof *d);
    if (!d) {
        CHECK(0, "out of memory");
        return;
    }
    h200_device(d);
    st_judge_device(d);
    const struct st_mode_out *f16 = &d->modes[0], *i16 = &d->modes[1], *i8 = &d->modes[2];
    CHECK(f16->safe && i16->safe && i8->safe, "all three safe");
    CHECK(f16->verdict == ST_PASS && i16->verdict == ST_PASS && i8->verdict == ST_PASS,
          "verdicts follow safety");
    CHECK(f16->goal == 1 && i16->goal == 0 && i8->goal == 1,
          "goals: int8-fp16 misses on q-x10 (%d %d %d)", f16->goal, i16->goal, i8->goal);
    CHECK(d->key_speed == 1, "recommendation made at L16384 D128");
    CHECK(d->recommended == SAGEATTN_MODE_INT8_FP16 && d->runner_up == SAGEATTN_MODE_FP16,
          "recommends int8-fp16 (got %d, runner-up %d)", d->recommended, d->runner_up);
    struct st_report r = {"sm_90", 1, NULL, d, 1};
    CHECK(st_exit_code(&r) == 0, "a missed goal alone is exit 0");
    FILE *f = fopen(json_path, "w");
    CHECK(f != NULL, "cannot write %s", json_path);
    if (f) {
        st_write_json(f, &r);
        fclose(f);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *t = open_memstream(&buf, &len);
    if (t) {
        st_write_table(t, &r);
        fclose(t);
        CHECK(strstr(buf, "int8-fp16  yes  missed") && strstr(buf, "goal note: q-x10") &&
                  strstr(buf, "recommended mode: int8-fp16 (int8-fp16 is safe"),
              "table:\n%s", buf);
        free(buf);
    }

    /* int8-fp16 just outside the safe bar on q-x10: warn, exit 1, fp16 recommended. */
    d->modes[1].cases[1].r.cos = 0.9985;
    st_judge_device(d);
    CHECK(!d->modes[1].safe && d->modes[1].verdict == ST_WARN, "inaccurate: warn");
    CHECK(d->recommended == SAGEATTN_MODE_FP16, "then fp16");
    CHECK(st_exit_code(&r) == 1, "an unsafe mode gives exit 1");
    /* NaN: broken, exit 2. */
    d->modes[1].cases[1].r.nonfinite = 5;
    st_judge_device(d);
    CHECK(d->modes[1].verdict == ST_FAIL && st_exit_code(&r) == 2, "NaN gives exit 2");
    /* Nothing safe at all: exit 2. */
    h200_device(d);
    for (int k = 0; k < 3; k++)
        d->modes[k].cases[0].r.rel_l1 = 0.07;
    st_judge_device(d);
    CHECK(d->recommended == -1 && st_exit_code(&r) == 2, "no safe mode gives exit 2");
    /* A CUDA error that stopped the tests: nothing is proven safe. */
    h200_device(d);
    snprintf(d->error, sizeof d->error, "cudaMalloc: out of memory");
    st_judge_device(d);
    CHECK(!d->modes[1].safe && d->recommended == -1 && st_exit_code(&r) == 2, "stopped");
    /* Every case skipped (head dims left out of the build): not shown safe. */
    h200_device(d);
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < d->modes[k].ncases; i++)
            d->modes[k].cases[i].r.skipped = 1;
    st_judge_device(d);
    CHECK(!d->modes[0].safe && d->modes[0].verdict == ST_WARN, "no case ran: not safe");
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
    test_goal();
    test_safe();
    test_key_shape_and_uuid();
    test_choose();
    test_report(argc > 1 ? argv[1] : "/dev/null");
    return sa_check_report("test_st_logic");
}
