/* The pipeline of one call: plan the workspace, run the pre-pass kernels of the int8 modes,
 * then the attention kernel of the mode. */
#include "sa_kernels.h"

static size_t sa_align256(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

static int sa_round_up(int x, int m)
{
    return (x + m - 1) / m * m;
}

int sa_kernel_dpad(const struct sa_problem *p)
{
    return (p->d_pad == 64 && SA_WITH_D64) ? 64 : 128;
}

void sa_ws_plan(const struct sa_problem *p, struct sa_ws_layout *w)
{
    const size_t dp = (size_t)sa_kernel_dpad(p);
    const size_t bq = (size_t)p->batch * p->hq, bk = (size_t)p->batch * p->hkv;
    *w = sa_ws_layout();
    w->lq_pad = sa_round_up(p->lq, SA_CTA_Q);
    w->lk_pad = sa_round_up(p->lkv, SA_CTA_K);
    w->nchunk = (p->lkv + SA_STAT_ROWS - 1) / SA_STAT_ROWS;
    if (p->mode == SAGEATTN_MODE_FP16)
        return;
    size_t at = 0;
#define SA_PART(field, bytes)                                                                      \
    do {                                                                                           \
        w->field = at;                                                                             \
        at += sa_align256(bytes);                                                                  \
    } while (0)
    SA_PART(q8, bq * w->lq_pad * dp);
    SA_PART(qscale, bq * w->lq_pad * sizeof(float));
    if (p->lse)
        SA_PART(qkm, bq * p->lq * sizeof(float));
    SA_PART(k8, bk * w->lk_pad * dp);
    SA_PART(kscale, bk * w->lk_pad * sizeof(float));
    SA_PART(kpart, bk * w->nchunk * dp * sizeof(float));
    SA_PART(km, bk * dp * sizeof(float));
    if (sa_mode_pv_fp8(p->mode)) {
        SA_PART(vpart, bk * w->nchunk * dp * sizeof(float));
        SA_PART(vscale, bk * dp * sizeof(float));
        SA_PART(vt, bk * dp * w->lk_pad);
    }
    w->smooth_v = SA_WITH_HOPPER && sa_smooth_v(p->mode, (int)dp, p->lkv);
    w->rank_groups = SA_WITH_HOPPER && sa_rank_groups(p->mode, p->causal, p->lkv);
    if (w->rank_groups)
        SA_PART(kperm, bk * w->lk_pad * sizeof(int));
    if (w->smooth_v) {
        SA_PART(vmin, bk * w->nchunk * dp * sizeof(float));
        SA_PART(vsum, bk * w->nchunk * dp * sizeof(float));
        SA_PART(vmean, bk * dp * sizeof(float));
    }
#undef SA_PART
    w->total = at;
}

size_t sa_workspace_bytes(const struct sa_problem *p)
{
    struct sa_ws_layout w;
    sa_ws_plan(p, &w);
    return w.total;
}

static cudaError_t sa_attn_call(sageattn_mode mode, int d_pad, int bf16,
                                const struct sa_attn_args *a, const struct sa_launch_cfg *l)
{
    switch (mode) {
    case SAGEATTN_MODE_INT8_FP16:
        return sa_attn_dispatch_int8_fp16(d_pad, bf16, a, l);
    case SAGEATTN_MODE_INT8_FP8:
        return sa_attn_dispatch_int8_fp8(d_pad, bf16, a, l);
    case SAGEATTN_MODE_INT8_FP8_BS:
        return sa_attn_dispatch_int8_fp8_bs(d_pad, bf16, a, l);
    case SAGEATTN_MODE_INT8_FP8_F16ACC:
        return sa_attn_dispatch_int8_fp8_f16acc(d_pad, bf16, a, l);
    case SAGEATTN_MODE_INT8_FP16_F16ACC:
        /* No bf16 MMA has an FP16 accumulator: bf16 inputs run int8-fp16's FP32 form. */
        return bf16 ? sa_attn_dispatch_int8_fp16(d_pad, bf16, a, l)
                    : sa_attn_dispatch_int8_fp16_f16acc(d_pad, a, l);
    case SAGEATTN_MODE_INT8_FP8_WGMMA:
#if SA_WITH_HOPPER
        return sa_attn_dispatch_int8_fp8_wgmma(d_pad, bf16, a, l);
#else
        return cudaErrorNoKernelImageForDevice;
#endif
    default:
        return sa_attn_dispatch_fp16(d_pad, bf16, a, l);
    }
}

cudaError_t sa_check_code_for_device(void)
{
    /* Every build holds all modes for the same archs, so one kernel tells. */
    const int d_pad = SA_WITH_D128 ? 128 : 64;
    const struct sa_launch_cfg probe = {1, 0, true, nullptr, false};
    return sa_attn_call(SAGEATTN_MODE_FP16, d_pad, 0, nullptr, &probe);
}

cudaError_t sa_launch(const struct sa_problem *p, void *workspace, cudaStream_t stream)
{
    const int dp = sa_kernel_dpad(p);
    struct sa_ws_layout w;
    sa_ws_plan(p, &w);
    char *ws = (char *)workspace;
    const int bf16 = p->dtype == SAGEATTN_DTYPE_BF16;

    struct sa_attn_args a = {};
    a.o = p->o;
    a.lse = p->lse;
    a.nonfinite = p->nonfinite_flag;
    a.only_if = p->only_if_nonzero;
    a.lq = p->lq;
    a.lkv = p->lkv;
    a.hq = p->hq;
    a.hkv = p->hkv;
    a.group = p->hq / p->hkv;
    a.d = p->d;
    a.lq_pad = w.lq_pad;
    a.lk_pad = w.lk_pad;
    a.causal = p->causal;
    a.score_scale = p->sm_scale * SA_LOG2E;
    a.o_b = p->os[0];
    a.o_h = p->os[1];
    a.o_t = p->os[2];
    a.v = p->v;
    a.v_b = p->vs[0] * 2;
    a.v_h = p->vs[1] * 2;
    a.v_t = p->vs[2] * 2;
    if (p->mode == SAGEATTN_MODE_FP16) {
        a.q = p->q;
        a.q_b = p->qs[0] * 2;
        a.q_h = p->qs[1] * 2;
        a.q_t = p->qs[2] * 2;
        a.k = p->k;
        a.k_b = p->ks[0] * 2;
        a.k_h = p->ks[1] * 2;
        a.k_t = p->ks[2] * 2;
    } else {
        int q_in_kernel = 0;
#if SA_WITH_HOPPER
        q_in_kernel = p->mode == SAGEATTN_MODE_INT8_FP8_WGMMA && sa_hopper_quantizes_q(p, dp);
#endif
        cudaError_t e = sa_quant_launch(p, dp, &w, ws, !q_in_kernel, sa_use_pdl(p->mode), stream);
        if (e != cudaSuccess)
            return e;
        if (q_in_kernel) {
            a.q_src = p->q;
            a.qsrc_b = p->qs[0] * 2;
            a.qsrc_h = p->qs[1] * 2;
            a.qsrc_t = p->qs[2] * 2;
        }
        a.q = ws + w.q8;
        a.q_t = dp;
        a.q_h = (int64_t)w.lq_pad * dp;
        a.q_b = a.q_h * p->hq;
        a.qscale = (const float *)(ws + w.qscale);
        a.k = ws + w.k8;
        a.k_t = dp;
        a.k_h = (int64_t)w.lk_pad * dp;
        a.k_b = a.k_h * p->hkv;
        a.kscale = (const float *)(ws + w.kscale);
        if (p->lse)
            a.qkm = (const float *)(ws + w.qkm);
        if (sa_mode_pv_fp8(p->mode)) {
            a.v = ws + w.vt;
            a.vscale = (const float *)(ws + w.vscale);
        }
        if (w.smooth_v)
            a.vmean = (const float *)(ws + w.vmean);
    }
    const struct sa_launch_cfg l = {p->batch, stream, false, p->ctx, (bool)sa_use_pdl(p->mode)};
    return sa_attn_call(p->mode, dp, bf16, &a, &l);
}
