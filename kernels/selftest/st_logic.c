#include "st_logic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../archs/sa_archs.h"
#include "sageattn.h"
#include "st_judge.h"

static const char *const kind_names[] = {"random",     "k-offset",    "q-x10",
                                         "v-near-max", "qk-near-max", "long"};

const char *st_kind_name(enum st_kind k)
{
    return (unsigned)k < sizeof kind_names / sizeof kind_names[0] ? kind_names[k] : "?";
}

static size_t add_case(struct st_case *out, size_t n, size_t cap, struct st_case c)
{
    if (n >= cap)
        return n;
    if (c.name[0] == '\0') {
        char len[32];
        if (c.lq == c.lkv)
            snprintf(len, sizeof len, "L%d", c.lq);
        else
            snprintf(len, sizeof len, "Lq%d/Lkv%d", c.lq, c.lkv);
        snprintf(c.name, sizeof c.name, "%s %s d%d%s%s%s%s", st_kind_name(c.kind), len, c.d,
                 c.hq != c.hkv ? " gqa" : "", c.causal ? " causal" : "", c.nhd ? " NHD" : "",
                 c.bf16 ? " bf16" : "");
    }
    out[n] = c;
    return n + 1;
}

static struct st_case mk(int b, int hq, int hkv, int lq, int lkv, int d, int causal, int nhd,
                         int bf16, int lse, enum st_kind kind)
{
    struct st_case c;
    memset(&c, 0, sizeof c);
    c.b = b;
    c.hq = hq;
    c.hkv = hkv;
    c.lq = lq;
    c.lkv = lkv;
    c.d = d;
    c.causal = causal;
    c.nhd = nhd;
    c.bf16 = bf16;
    c.lse = lse;
    c.kind = kind;
    return c;
}

void st_strides(int64_t s[3], int heads, int len, int pitch, int nhd)
{
    if (nhd) {
        s[0] = (int64_t)len * heads * pitch;
        s[1] = pitch;
        s[2] = (int64_t)heads * pitch;
    } else {
        s[0] = (int64_t)heads * len * pitch;
        s[1] = (int64_t)len * pitch;
        s[2] = pitch;
    }
}

size_t st_accuracy_cases(int full, struct st_case *out, size_t cap)
{
    size_t n = 0;
    if (!full) {
        n = add_case(out, n, cap, mk(1, 8, 8, 1000, 1000, 64, 0, 0, 0, 1, ST_RANDOM));
        n = add_case(out, n, cap, mk(2, 4, 4, 77, 77, 128, 1, 1, 0, 1, ST_RANDOM));
        n = add_case(out, n, cap, mk(2, 4, 4, 17, 17, 40, 0, 0, 1, 0, ST_RANDOM));
        n = add_case(out, n, cap, mk(1, 2, 2, 1, 1, 96, 0, 1, 0, 1, ST_RANDOM));
        n = add_case(out, n, cap, mk(1, 8, 2, 77, 1000, 128, 0, 0, 0, 1, ST_RANDOM));
        n = add_case(out, n, cap, mk(1, 4, 4, 4096, 4096, 128, 1, 1, 1, 0, ST_RANDOM));
        n = add_case(out, n, cap, mk(1, 4, 4, 1024, 1024, 128, 0, 0, 0, 1, ST_K_OFFSET));
        n = add_case(out, n, cap, mk(1, 4, 4, 1024, 1024, 128, 0, 0, 0, 0, ST_Q_X10));
        n = add_case(out, n, cap, mk(1, 4, 4, 1024, 1024, 64, 0, 1, 0, 0, ST_V_NEAR_LIMIT));
        n = add_case(out, n, cap, mk(1, 2, 2, 256, 256, 64, 0, 0, 0, 0, ST_QK_NEAR_LIMIT));
        n = add_case(out, n, cap, mk(1, 1, 1, 16384, 16384, 128, 0, 0, 0, 0, ST_LONG));
        return n;
    }
    /* Every length with every head dim; layout, dtype and causal alternate over the grid. */
    static const int lens[] = {1, 17, 77, 1000, 4096};
    static const int dims[] = {40, 64, 96, 128};
    int i = 0;
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++, i++) {
            int heads = lens[li] >= 4096 ? 4 : 8;
            n = add_case(out, n, cap,
                         mk(2, heads, heads, lens[li], lens[li], dims[di], i % 2, (i / 2) % 2,
                            (i / 4) % 2, i % 3 == 0, ST_RANDOM));
        }
    /* GQA and MQA, query and key lengths that differ, causal bottom-right alignment. */
    n = add_case(out, n, cap, mk(1, 8, 2, 1000, 1000, 128, 0, 0, 0, 1, ST_RANDOM));
    n = add_case(out, n, cap, mk(1, 8, 1, 1000, 1000, 64, 1, 1, 1, 1, ST_RANDOM));
    n = add_case(out, n, cap, mk(1, 8, 2, 77, 1000, 128, 1, 0, 0, 1, ST_RANDOM));
    n = add_case(out, n, cap, mk(1, 8, 8, 1000, 77, 64, 0, 1, 0, 1, ST_RANDOM));
    n = add_case(out, n, cap, mk(1, 8, 8, 1000, 77, 64, 1, 0, 0, 1, ST_RANDOM));
    n = add_case(out, n, cap, mk(2, 8, 4, 1, 4096, 128, 0, 0, 1, 1, ST_RANDOM));
    n = add_case(out, n, cap, mk(1, 8, 8, 4096, 17, 96, 0, 1, 0, 0, ST_RANDOM));
    /* Adversarial inputs, both head dims and dtypes; long sequences. */
    for (int d = 64; d <= 128; d += 64)
        for (int bf16 = 0; bf16 <= 1; bf16++) {
            n = add_case(out, n, cap, mk(1, 4, 4, 1024, 1024, d, 0, bf16, bf16, 1, ST_K_OFFSET));
            n = add_case(out, n, cap, mk(1, 4, 4, 1024, 1024, d, bf16, 0, bf16, 0, ST_Q_X10));
            n = add_case(out, n, cap, mk(1, 4, 4, 1024, 1024, d, 0, 1, bf16, 0, ST_V_NEAR_LIMIT));
            n = add_case(out, n, cap, mk(1, 2, 2, 256, 256, d, 0, 0, bf16, 0, ST_QK_NEAR_LIMIT));
        }
    n = add_case(out, n, cap, mk(1, 2, 2, 16384, 16384, 128, 0, 0, 0, 1, ST_LONG));
    n = add_case(out, n, cap, mk(1, 4, 1, 32768, 32768, 64, 1, 1, 1, 0, ST_LONG));
    n = add_case(out, n, cap, mk(1, 2, 2, 16384, 16384, 128, 0, 0, 0, 0, ST_K_OFFSET));
    return n;
}

size_t st_speed_shapes(int full, struct st_speed_shape *out, size_t cap)
{
    size_t n = 0;
    if (!full) {
        if (cap >= 2) {
            out[n++] = (struct st_speed_shape){1, 32, 4096, 128, 0};
            out[n++] = (struct st_speed_shape){1, 32, 4096, 64, 1};
        }
        return n;
    }
    static const int lens[] = {1024, 4096, 16384};
    for (int d = 64; d <= 128; d += 64)
        for (size_t li = 0; li < 3; li++)
            for (int causal = 0; causal <= 1 && n < cap; causal++)
                out[n++] = (struct st_speed_shape){1, 32, lens[li], d, causal};
    return n;
}

void st_arch_for_cc(int cc, char *out, size_t n)
{
    const struct sa_arch *r = sa_arch_at(sa_arch_kernels_for_cc(cc / 10, cc % 10));
    snprintf(out, n, "%s", r ? r->name : "");
}

int st_archs_cover_cc(const char *archs, int cc)
{
    const char *p = archs;
    while (p && *p) {
        int num = 0, len = 0;
        if (sscanf(p, " sm_%d%n", &num, &len) == 1) {
            char variant = p[len] == 'a' || p[len] == 'f' ? p[len] : '\0';
            if (sa_arch_runs_on(num / 10, num % 10, variant, cc / 10, cc % 10))
                return 1;
        }
        p = strchr(p, ',');
        if (p)
            p++;
    }
    return 0;
}

int st_mode_from_name(const char *name)
{
    if (strcmp(name, "int8-fp16") == 0)
        return SAGEATTN_MODE_INT8_FP16;
    if (strcmp(name, "int8-fp8") == 0)
        return SAGEATTN_MODE_INT8_FP8;
    if (strcmp(name, "fp16") == 0)
        return SAGEATTN_MODE_FP16;
    if (strcmp(name, "int8-fp8-bs") == 0)
        return SAGEATTN_MODE_INT8_FP8_BS;
    if (strcmp(name, "int8-fp8-f16acc") == 0)
        return SAGEATTN_MODE_INT8_FP8_F16ACC;
    if (strcmp(name, "int8-fp16-f16acc") == 0)
        return SAGEATTN_MODE_INT8_FP16_F16ACC;
    if (strcmp(name, "int8-fp8-wgmma") == 0)
        return SAGEATTN_MODE_INT8_FP8_WGMMA;
    return -1;
}

void st_format_uuid(const unsigned char bytes[16], char *out, size_t n)
{
    int any = 0;
    for (int i = 0; i < 16; i++)
        any |= bytes[i];
    if (!any) {
        snprintf(out, n, "%s", "");
        return;
    }
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
    snprintf(out, n, "GPU-%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
}

int st_bar_for_name(const char *mode, struct st_bar *out)
{
    struct st_goal g;
    if (!st_goal_for_mode(mode, &g))
        return 0;
    *out = (struct st_bar){g.cos, g.rel_l1, g.lse_abs};
    return 1;
}

struct st_bar st_bar_for_mode(int mode)
{
    /* Issue 9's P·V variants share their FP32 form's goal (st_goal_for_mode goes by name). */
    struct st_bar b;
    st_bar_for_name(mode == SAGEATTN_MODE_INT8_FP16          ? "int8-fp16"
                    : mode == SAGEATTN_MODE_INT8_FP16_F16ACC ? "int8-fp16-f16acc"
                    : mode == SAGEATTN_MODE_INT8_FP8         ? "int8-fp8"
                    : mode == SAGEATTN_MODE_INT8_FP8_BS      ? "int8-fp8-bs"
                    : mode == SAGEATTN_MODE_INT8_FP8_F16ACC  ? "int8-fp8-f16acc"
                    : mode == SAGEATTN_MODE_INT8_FP8_WGMMA   ? "int8-fp8-wgmma"
                                                             : "fp16",
                    &b);
    return b;
}

enum st_verdict st_judge_case(const struct st_bar *goal, const struct st_case *c,
                              struct st_case_result *r, double random_rel)
{
    const struct st_bar bar = *goal;
    r->pass = 0;
    r->goal_cos = r->goal_rel_l1 = 0;
    if (r->skipped)
        return ST_PASS;
    if (!r->api_ok || !r->coverage_ok || r->nonfinite > 0)
        return ST_FAIL;
    if (c->kind == ST_QK_NEAR_LIMIT) {
        r->pass = 1;
        return ST_PASS;
    }
    double rel_limit = c->kind == ST_RANDOM ? bar.rel_l1 : 2.0 * random_rel;
    if (rel_limit <= 0.0 || rel_limit > bar.rel_l1 * 2.0)
        rel_limit = c->kind == ST_RANDOM ? bar.rel_l1 : bar.rel_l1 * 2.0;
    /* Adversarial inputs are judged on rel-L1 (the goal is "at most twice the random one");
     * their cosine only has to stay within 10x the random bar's distance from 1. */
    double cos_floor = c->kind == ST_RANDOM ? bar.cos : 1.0 - 10.0 * (1.0 - bar.cos);
    r->goal_cos = cos_floor;
    r->goal_rel_l1 = rel_limit;
    int ok = r->rel_l1 <= rel_limit && r->cos >= cos_floor;
    if (c->lse && r->lse_err >= 0.0)
        ok = ok && r->lse_err <= bar.lse_abs && r->lse_inf_ok;
    if (ok) {
        r->pass = 1;
        return ST_PASS;
    }
    double cos_fail = c->kind == ST_RANDOM ? 1.0 - 4.0 * (1.0 - bar.cos) : cos_floor;
    if (r->rel_l1 > 2.0 * rel_limit || r->cos < cos_fail || !r->lse_inf_ok)
        return ST_FAIL;
    return ST_WARN;
}
