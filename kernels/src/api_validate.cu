/* Argument checks of the public API that need no GPU: a pure function from the caller's
 * parameters to a resolved problem or a status with a message. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api_validate.h"

#define SA_MAX_GRID_YZ 65535
#define SA_MAX_LEN (1 << 30)

static sageattn_status sa_fail(char *msg, size_t n, sageattn_status s, const char *text)
{
    snprintf(msg, n, "%s", text);
    return s;
}

/* 16-byte row alignment: base pointer and the strides of every dimension longer than 1. */
static int sa_rows_aligned(const void *ptr, const int64_t s[3], const int ext[3])
{
    if (((uintptr_t)ptr & 15u) != 0)
        return 0;
    for (int i = 0; i < 3; ++i)
        if (ext[i] > 1 && s[i] % 8 != 0)
            return 0;
    return 1;
}

/* Whether distinct (batch, head, token) rows of `d` contiguous elements never share an element. */
static int sa_rows_disjoint(const int64_t s[3], const int ext[3], int d)
{
    int64_t st[3];
    int64_t ex[3];
    int n = 0;
    for (int i = 0; i < 3; ++i) {
        if (ext[i] > 1) {
            st[n] = s[i];
            ex[n] = ext[i];
            ++n;
        }
    }
    for (int i = 1; i < n; ++i) /* sort by stride, ascending */
        for (int j = i; j > 0 && st[j] < st[j - 1]; --j) {
            int64_t t = st[j];
            st[j] = st[j - 1];
            st[j - 1] = t;
            t = ex[j];
            ex[j] = ex[j - 1];
            ex[j - 1] = t;
        }
    int64_t span = d;
    for (int i = 0; i < n; ++i) {
        if (st[i] < span)
            return 0;
        span = st[i] * (ex[i] - 1) + span;
    }
    return 1;
}

sageattn_status sa_validate(const sageattn_params *p, char *msg, size_t n, struct sa_problem *out)
{
    if (!p)
        return sa_fail(msg, n, SAGEATTN_ERR_NULL_POINTER, "params is NULL");
    if (p->struct_size != SAGEATTN_PARAMS_V1_SIZE && p->struct_size != SAGEATTN_PARAMS_V11_SIZE &&
        p->struct_size != sizeof(sageattn_params)) {
        snprintf(msg, n,
                 "params.struct_size is %u but this library knows %u (ABI 1.0), %u (1.1) and %zu "
                 "(1.2): initialise params with sageattn_params_init() from sageattn.h",
                 p->struct_size, SAGEATTN_PARAMS_V1_SIZE, SAGEATTN_PARAMS_V11_SIZE,
                 sizeof(sageattn_params));
        return SAGEATTN_ERR_ABI;
    }
    /* Fields past the caller's struct_size are not the caller's memory: never read them. */
    const int v11 = p->struct_size >= SAGEATTN_PARAMS_V11_SIZE;
    const int v12 = p->struct_size >= sizeof(sageattn_params);
    int *const nonfinite_flag = v11 ? p->nonfinite_flag : (int *)0;
    const int *const only_if_nonzero = v11 ? p->only_if_nonzero : (const int *)0;
    sageattn_context *const context = v12 ? p->context : (sageattn_context *)0;
    const int recompute_nonfinite = v12 ? p->recompute_nonfinite != 0 : 0;
    if (p->batch <= 0 || p->num_q_heads <= 0 || p->num_kv_heads <= 0 || p->q_len <= 0 ||
        p->kv_len <= 0) {
        snprintf(msg, n,
                 "sizes must be positive: batch=%d num_q_heads=%d num_kv_heads=%d q_len=%d "
                 "kv_len=%d",
                 p->batch, p->num_q_heads, p->num_kv_heads, p->q_len, p->kv_len);
        return SAGEATTN_ERR_BAD_SHAPE;
    }
    if (p->num_q_heads % p->num_kv_heads != 0) {
        snprintf(msg, n, "num_kv_heads (%d) must divide num_q_heads (%d)", p->num_kv_heads,
                 p->num_q_heads);
        return SAGEATTN_ERR_BAD_SHAPE;
    }
    if (p->batch > SA_MAX_GRID_YZ || p->num_q_heads > SA_MAX_GRID_YZ) {
        snprintf(msg, n, "batch (%d) and num_q_heads (%d) must each be at most %d", p->batch,
                 p->num_q_heads, SA_MAX_GRID_YZ);
        return SAGEATTN_ERR_BAD_SHAPE;
    }
    if (p->q_len > SA_MAX_LEN || p->kv_len > SA_MAX_LEN) {
        snprintf(msg, n, "q_len (%d) and kv_len (%d) must each be at most %d", p->q_len, p->kv_len,
                 SA_MAX_LEN);
        return SAGEATTN_ERR_BAD_SHAPE;
    }
    if (p->head_dim < 1 || p->head_dim > 128) {
        snprintf(msg, n, "head_dim %d is not supported: 1..128 (64 and 128 run natively)",
                 p->head_dim);
        return SAGEATTN_ERR_UNSUPPORTED_HEAD_DIM;
    }
    if (p->dtype != SAGEATTN_DTYPE_FP16 && p->dtype != SAGEATTN_DTYPE_BF16) {
        snprintf(msg, n, "dtype %d is not supported: SAGEATTN_DTYPE_FP16 or _BF16", (int)p->dtype);
        return SAGEATTN_ERR_UNSUPPORTED_DTYPE;
    }
    if (p->mode < SAGEATTN_MODE_AUTO || p->mode > SAGEATTN_MODE_INT8_FP8_WGMMA) {
        snprintf(msg, n, "mode %d is not a sageattn_mode", (int)p->mode);
        return SAGEATTN_ERR_UNSUPPORTED_MODE;
    }
    if (!isfinite(p->sm_scale) || p->sm_scale < 0.0f) {
        snprintf(msg, n, "sm_scale %g must be finite and > 0 (or 0 for 1/sqrt(head_dim))",
                 (double)p->sm_scale);
        return SAGEATTN_ERR_BAD_SHAPE;
    }
    const struct {
        const char *name;
        const void *ptr;
        const int64_t *s;
        int heads, len;
    } t[4] = {{"q", p->q, p->q_stride, p->num_q_heads, p->q_len},
              {"k", p->k, p->k_stride, p->num_kv_heads, p->kv_len},
              {"v", p->v, p->v_stride, p->num_kv_heads, p->kv_len},
              {"o", p->o, p->o_stride, p->num_q_heads, p->q_len}};
    for (int i = 0; i < 4; ++i) {
        if (!t[i].ptr) {
            snprintf(msg, n, "%s is NULL", t[i].name);
            return SAGEATTN_ERR_NULL_POINTER;
        }
        const int ext[3] = {p->batch, t[i].heads, t[i].len};
        for (int j = 0; j < 3; ++j)
            if (t[i].s[j] < 0) {
                snprintf(msg, n, "%s_stride[%d] is negative (%lld)", t[i].name, j,
                         (long long)t[i].s[j]);
                return SAGEATTN_ERR_BAD_STRIDE;
            }
        if (!sa_rows_aligned(t[i].ptr, t[i].s, ext)) {
            snprintf(msg, n,
                     "%s breaks 16-byte row alignment: the pointer must be 16-byte aligned and "
                     "its strides (%lld, %lld, %lld elements) multiples of 8",
                     t[i].name, (long long)t[i].s[0], (long long)t[i].s[1], (long long)t[i].s[2]);
            return SAGEATTN_ERR_MISALIGNED;
        }
    }
    const int o_ext[3] = {p->batch, p->num_q_heads, p->q_len};
    if (!sa_rows_disjoint(p->o_stride, o_ext, p->head_dim)) {
        snprintf(msg, n, "o_stride (%lld, %lld, %lld) makes output rows of %d elements overlap",
                 (long long)p->o_stride[0], (long long)p->o_stride[1], (long long)p->o_stride[2],
                 p->head_dim);
        return SAGEATTN_ERR_BAD_STRIDE;
    }
    if (p->lse && ((uintptr_t)p->lse & 3u) != 0)
        return sa_fail(msg, n, SAGEATTN_ERR_MISALIGNED, "lse must be 4-byte aligned");
    if (nonfinite_flag && ((uintptr_t)nonfinite_flag & 3u) != 0)
        return sa_fail(msg, n, SAGEATTN_ERR_MISALIGNED, "nonfinite_flag must be 4-byte aligned");
    if (only_if_nonzero && ((uintptr_t)only_if_nonzero & 3u) != 0)
        return sa_fail(msg, n, SAGEATTN_ERR_MISALIGNED, "only_if_nonzero must be 4-byte aligned");
    if (only_if_nonzero && p->mode != SAGEATTN_MODE_FP16) {
        snprintf(msg, n, "only_if_nonzero needs mode fp16 (this call asks for %s)",
                 sageattn_mode_name(p->mode));
        return SAGEATTN_ERR_UNSUPPORTED_MODE;
    }
    if (recompute_nonfinite && !nonfinite_flag)
        return sa_fail(msg, n, SAGEATTN_ERR_NULL_POINTER,
                       "recompute_nonfinite needs nonfinite_flag (the flag the recompute reads)");

    memset(out, 0, sizeof(*out));
    out->batch = p->batch;
    out->hq = p->num_q_heads;
    out->hkv = p->num_kv_heads;
    out->lq = p->q_len;
    out->lkv = p->kv_len;
    out->d = p->head_dim;
    out->d_pad = p->head_dim <= 64 ? 64 : 128;
    out->dtype = p->dtype;
    out->q = p->q;
    out->k = p->k;
    out->v = p->v;
    out->o = p->o;
    memcpy(out->qs, p->q_stride, sizeof(out->qs));
    memcpy(out->ks, p->k_stride, sizeof(out->ks));
    memcpy(out->vs, p->v_stride, sizeof(out->vs));
    memcpy(out->os, p->o_stride, sizeof(out->os));
    out->lse = p->lse;
    out->nonfinite_flag = nonfinite_flag;
    out->only_if_nonzero = only_if_nonzero;
    out->ctx = context;
    out->recompute_nonfinite = recompute_nonfinite;
    out->sm_scale = p->sm_scale > 0.0f ? p->sm_scale : 1.0f / sqrtf((float)p->head_dim);
    out->causal = p->causal != 0;
    out->mode = p->mode;
    msg[0] = '\0';
    return SAGEATTN_OK;
}
