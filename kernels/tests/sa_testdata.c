#include "sa_testdata.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sa_convert.h"
#include "st_logic.h"

/* splitmix64 of (seed, tensor, index): position-based, so any layout gets the same values. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static double uniform01(uint64_t h)
{
    return ((h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double normal(uint64_t seed, int tensor, uint64_t index)
{
    uint64_t h = mix(seed ^ mix(((uint64_t)tensor << 56) ^ index));
    double u1 = uniform01(h), u2 = uniform01(mix(h));
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static uint16_t encode(double x, sageattn_dtype dtype)
{
    return dtype == SAGEATTN_DTYPE_BF16 ? sa_f32_to_bf16((float)x) : sa_f32_to_f16((float)x);
}

/* Logical value of tensor `which` (0 Q, 1 K, 2 V) at (b, h, t, c) for the input family. */
static double input_value(const struct sa_case *c, int which, int b, int h, int t, int ch,
                          int heads, int len)
{
    uint64_t index = (((uint64_t)b * heads + h) * len + t) * c->d + ch;
    double x = normal(c->seed, which, index);
    switch (c->kind) {
    case SA_INPUT_K_OFFSET:
        if (which == 1) /* the same offset for every token of a channel */
            x += 30.0 * normal(c->seed, 7, ((uint64_t)b * heads + h) * c->d + ch);
        break;
    case SA_INPUT_Q_X10:
        if (which == 0)
            x *= 10.0;
        break;
    case SA_INPUT_V_NEAR_LIMIT:
        if (which == 2)
            x = fmax(-65000.0, fmin(65000.0, x * 15000.0));
        break;
    case SA_INPUT_QK_NEAR_LIMIT:
        if (which != 2)
            x = fmax(-65000.0, fmin(65000.0, x * 15000.0));
        break;
    case SA_INPUT_V_OFFSET:
        if (which == 2)
            x += 8.0 * normal(c->seed, 8, ((uint64_t)b * heads + h) * c->d + ch);
        break;
    case SA_INPUT_RANDOM:
        break;
    }
    return x;
}

static uint16_t *fill(const struct sa_case *c, int which, int heads, int len, const int64_t s[3])
{
    size_t n = (size_t)c->batch * heads * len * c->d;
    uint16_t *buf = malloc(n * sizeof *buf);
    if (!buf)
        return NULL;
    for (int b = 0; b < c->batch; b++)
        for (int h = 0; h < heads; h++)
            for (int t = 0; t < len; t++)
                for (int ch = 0; ch < c->d; ch++)
                    buf[b * s[0] + h * s[1] + t * s[2] + ch] =
                        encode(input_value(c, which, b, h, t, ch, heads, len), c->dtype);
    return buf;
}

/* What sageattn_params_init does, without linking the GPU library, plus the case's layout. */
static void params_for_case(sageattn_params *p, const struct sa_case *c)
{
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->batch = c->batch;
    p->num_q_heads = c->hq;
    p->num_kv_heads = c->hkv;
    p->q_len = c->lq;
    p->kv_len = c->lkv;
    p->head_dim = c->d;
    p->dtype = c->dtype;
    p->causal = c->causal;
    st_strides(p->q_stride, c->hq, c->lq, c->d, c->nhd);
    st_strides(p->k_stride, c->hkv, c->lkv, c->d, c->nhd);
    st_strides(p->v_stride, c->hkv, c->lkv, c->d, c->nhd);
    st_strides(p->o_stride, c->hq, c->lq, c->d, c->nhd);
}

int sa_tensors_make(const struct sa_case *c, struct sa_tensors *t)
{
    memset(t, 0, sizeof *t);
    params_for_case(&t->p, c);
    size_t on = (size_t)c->batch * c->hq * c->lq * c->d;
    size_t rows = (size_t)c->batch * c->hq * c->lq;
    t->q = fill(c, 0, c->hq, c->lq, t->p.q_stride);
    t->k = fill(c, 1, c->hkv, c->lkv, t->p.k_stride);
    t->v = fill(c, 2, c->hkv, c->lkv, t->p.v_stride);
    t->o = malloc(on * sizeof *t->o);
    t->lse = malloc(rows * sizeof *t->lse);
    t->o_exact = malloc(on * sizeof *t->o_exact);
    t->lse_exact = malloc(rows * sizeof *t->lse_exact);
    if (!t->q || !t->k || !t->v || !t->o || !t->lse || !t->o_exact || !t->lse_exact) {
        sa_tensors_free(t);
        return -1;
    }
    for (size_t i = 0; i < on; i++)
        t->o[i] = 0x7fff; /* NaN in both dtypes: anything not written shows up */
    t->p.q = t->q;
    t->p.k = t->k;
    t->p.v = t->v;
    t->p.o = t->o;
    t->p.lse = t->lse;
    return 0;
}

void sa_tensors_free(struct sa_tensors *t)
{
    free(t->q);
    free(t->k);
    free(t->v);
    free(t->o);
    free(t->lse);
    free(t->o_exact);
    free(t->lse_exact);
    memset(t, 0, sizeof *t);
}
