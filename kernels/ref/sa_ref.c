#include "sa_ref.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sa_convert.h"
#include "sa_internal.h"

size_t sa_ref_offset(const int64_t stride[3], int b, int h, int t, int c)
{
    return (size_t)(b * stride[0] + h * stride[1] + t * stride[2] + c);
}

float sa_ref_load(const void *base, const int64_t stride[3], sageattn_dtype dtype, int b, int h,
                  int t, int c)
{
    uint16_t bits = ((const uint16_t *)base)[sa_ref_offset(stride, b, h, t, c)];
    return dtype == SAGEATTN_DTYPE_BF16 ? sa_bf16_to_f32(bits) : sa_f16_to_f32(bits);
}

static uint16_t to_dtype(float x, sageattn_dtype dtype)
{
    return dtype == SAGEATTN_DTYPE_BF16 ? sa_f32_to_bf16(x) : sa_f32_to_f16(x);
}

static float round_to_dtype(float x, sageattn_dtype dtype)
{
    return dtype == SAGEATTN_DTYPE_BF16 ? sa_bf16_to_f32(sa_f32_to_bf16(x))
                                        : sa_f16_to_f32(sa_f32_to_f16(x));
}

static int params_ok(const sageattn_params *p)
{
    if (!p || !p->q || !p->k || !p->v || !p->o)
        return 0;
    if (p->batch <= 0 || p->num_q_heads <= 0 || p->num_kv_heads <= 0 || p->q_len <= 0 ||
        p->kv_len <= 0 || p->head_dim <= 0 || p->head_dim > 128)
        return 0;
    return p->num_q_heads % p->num_kv_heads == 0;
}

static float resolved_sm_scale(const sageattn_params *p)
{
    return p->sm_scale != 0.0f ? p->sm_scale : 1.0f / sqrtf((float)p->head_dim);
}

/* Keys query i may see: all, or (causal, bottom-right aligned) those j <= i + kv_len - q_len. */
static int visible_keys(const sageattn_params *p, int i)
{
    if (!p->causal)
        return p->kv_len;
    long n = (long)i + p->kv_len - p->q_len + 1;
    return n < 0 ? 0 : (n > p->kv_len ? p->kv_len : (int)n);
}

/* The absmax of one row of dp values. */
static float row_absmax(const float *xr, int dp)
{
    float amax = 0.0f;
    for (int c = 0; c < dp; c++)
        amax = fmaxf(amax, fabsf(xr[c]));
    return amax;
}

/* One row by its group's absmax: scale = absmax/127, q = RNE(x·(127/absmax)); an all-zero group
 * is quantized as if its absmax were 1 (zeros, scale 1/127), so every scale is positive as the
 * kernels require. */
static void quantize_row(const float *xr, int dp, float group_amax, int8_t *qr, float *scale)
{
    const float amax = group_amax > 0.0f ? group_amax : 1.0f;
    const float inv = SA_INT8_MAX / amax;
    *scale = amax / SA_INT8_MAX;
    for (int c = 0; c < dp; c++)
        qr[c] = sa_f32_to_int8(xr[c] * inv);
}

/* Per-token-group INT8 absmax quantization of rows x[rows][dp] (groups of `group` rows). */
static void quantize_rows(const float *x, int rows, int dp, int group, int8_t *q, float *scale)
{
    for (int g0 = 0; g0 < rows; g0 += group) {
        int g1 = g0 + group < rows ? g0 + group : rows;
        float amax = 0.0f;
        for (int r = g0; r < g1; r++)
            amax = fmaxf(amax, row_absmax(x + (size_t)r * dp, dp));
        for (int r = g0; r < g1; r++)
            quantize_row(x + (size_t)r * dp, dp, amax, q + (size_t)r * dp, &scale[r]);
    }
}

/* K by the groups of SA_H_KGROUP: in each k_tile-key tile, key j belongs to group (j % 8) / 2
 * (the keys one lane quad of the wgmma kernel holds); one scale per group, as quantize_rows. */
static void quantize_lane_groups(const float *x, int rows, int dp, int k_tile, int8_t *q,
                                 float *scale)
{
    for (int t0 = 0; t0 < rows; t0 += k_tile) {
        int t1 = t0 + k_tile < rows ? t0 + k_tile : rows;
        for (int g = 0; g < 4; g++) {
            float amax = 0.0f;
            for (int r = t0; r < t1; r++)
                if ((r % 8) / 2 == g)
                    amax = fmaxf(amax, row_absmax(x + (size_t)r * dp, dp));
            for (int r = t0; r < t1; r++)
                if ((r % 8) / 2 == g)
                    quantize_row(x + (size_t)r * dp, dp, amax, q + (size_t)r * dp, &scale[r]);
        }
    }
}

/* K by rank groups (k_lane_groups 2; SA_H_RANK_GROUPS, sa_internal.h): in each window of
 * k_rank_window keys the keys are ranked by their absmax (largest first, ties by position); the
 * key of rank i takes position sa_rank_slot(i % 64, keys of its tile) of 64-key tile i / 64 of
 * the window, and the keys whose positions share a lane quad ((position % 8) / 2) share one
 * scale, as quantize_rows; order[position] = the key there. The kernels permute K and V so
 * (without a causal mask that leaves attention as it was, but not its rounding: the online
 * softmax meets the keys in that order; with one, attend_row masks each key by the position it
 * came from), and so does the reference (permute_rows). rank: scratch of rows entries. */
struct key_rank {
    float amax;
    int row;
};

static int by_amax_desc(const void *a, const void *b)
{
    const struct key_rank *x = a, *y = b;
    if (x->amax != y->amax)
        return x->amax < y->amax ? 1 : -1;
    return (x->row > y->row) - (x->row < y->row);
}

static void quantize_rank_groups(const float *x, int rows, int dp, int window, int8_t *q,
                                 float *scale, struct key_rank *rank, int *order)
{
    for (int w0 = 0; w0 < rows; w0 += window) {
        int n = w0 + window < rows ? window : rows - w0;
        for (int i = 0; i < n; i++)
            rank[i] = (struct key_rank){row_absmax(x + (size_t)(w0 + i) * dp, dp), w0 + i};
        qsort(rank, (size_t)n, sizeof *rank, by_amax_desc);
        for (int t0 = 0; t0 < n; t0 += SA_CTA_K) {
            const int m = n - t0 < SA_CTA_K ? n - t0 : SA_CTA_K;
            float group_amax[4] = {-1.0f, -1.0f, -1.0f, -1.0f};
            for (int i = t0; i < t0 + m; i++) { /* a group's absmax: its first (largest) rank's */
                const int slot = sa_rank_slot(i - t0, m), g = (slot % 8) / 2;
                if (group_amax[g] < 0.0f)
                    group_amax[g] = rank[i].amax;
                const int r = rank[i].row;
                order[w0 + t0 + slot] = r;
                quantize_row(x + (size_t)r * dp, dp, group_amax[g], q + (size_t)r * dp, &scale[r]);
            }
        }
    }
}

/* Rows of base ([n][row_bytes]) rearranged so that position i holds the row that was at order[i]
 * (a permutation), by its cycles: moved is scratch of n bytes, row_bytes <= 512. */
static void permute_rows(void *base, size_t row_bytes, const int *order, int n,
                         unsigned char *moved)
{
    unsigned char *rows = base, tmp[512];
    memset(moved, 0, (size_t)n);
    for (int i = 0; i < n; i++) {
        if (moved[i] || order[i] == i)
            continue;
        memcpy(tmp, rows + (size_t)i * row_bytes, row_bytes);
        int j = i;
        while (order[j] != i) {
            memcpy(rows + (size_t)j * row_bytes, rows + (size_t)order[j] * row_bytes, row_bytes);
            moved[j] = 1;
            j = order[j];
        }
        memcpy(rows + (size_t)j * row_bytes, tmp, row_bytes);
        moved[j] = 1;
    }
}

/* The window of a call's rank groups: the config's (k_rank_window), in calls of k_rank_min_kv
 * keys or more (with a causal mask k_rank_min_kv_causal); 0: per-token scales (as the kernels:
 * sa_rank_groups). */
static int rank_window(const sageattn_params *p, const struct sa_ref_config *cfg)
{
    const int min_kv = p->causal ? cfg->k_rank_min_kv_causal : cfg->k_rank_min_kv;
    if (cfg->mode == SAGEATTN_MODE_FP16 || cfg->k_lane_groups != 2 || p->kv_len < min_kv)
        return 0;
    return cfg->k_rank_window;
}

/* One (batch, kv head): the key and value operands as the main loop sees them. */
struct kv_operands {
    float *k;      /* [lkv][dp], mean-subtracted when smoothing (fp16 mode: raw) */
    int8_t *kq;    /* [lkv][dp] */
    float *kscale; /* [lkv] */
    float *kmean;  /* [dp] (zeros when not smoothing) */
    float *v;      /* [lkv][dp]: input values, or E4M3 values (int8-fp8) */
    float *vscale; /* [dp]: 1 except int8-fp8 */
    float *vmean;  /* [dp]: added to O (zeros unless smoothing V) */
    /* [lkv]: quantize_rank_groups' scratch, the key at each position, permute_rows' scratch */
    struct key_rank *rank;
    int *order;
    unsigned char *moved;
};

static void prepare_kv(const sageattn_params *p, const struct sa_ref_config *cfg, int window, int b,
                       int hk, int dp, struct kv_operands *kv)
{
    int lkv = p->kv_len, d = p->head_dim;
    int quantized = cfg->mode != SAGEATTN_MODE_FP16;
    memset(kv->kmean, 0, sizeof(float) * (size_t)dp);
    for (int j = 0; j < lkv; j++)
        for (int c = 0; c < dp; c++) {
            size_t e = (size_t)j * dp + c;
            kv->k[e] = c < d ? sa_ref_load(p->k, p->k_stride, p->dtype, b, hk, j, c) : 0.0f;
            kv->v[e] = c < d ? sa_ref_load(p->v, p->v_stride, p->dtype, b, hk, j, c) : 0.0f;
        }
    if (quantized && cfg->smooth_k) {
        const int n = SA_KMEAN_COUNT(lkv); /* the sampled keys (sa_internal.h) */
        for (int c = 0; c < d && n > 0; c++) {
            double sum = 0.0;
            for (int j = SA_KMEAN_PHASE; j < lkv; j += SA_KMEAN_STRIDE)
                sum += kv->k[(size_t)j * dp + c];
            kv->kmean[c] = (float)(sum / n);
        }
        for (int j = 0; j < lkv; j++)
            for (int c = 0; c < dp; c++)
                kv->k[(size_t)j * dp + c] -= kv->kmean[c];
    }
    const int ranked = window > 0;
    if (ranked)
        quantize_rank_groups(kv->k, lkv, dp, window, kv->kq, kv->kscale, kv->rank, kv->order);
    else if (quantized && cfg->k_lane_groups == 1)
        quantize_lane_groups(kv->k, lkv, dp, cfg->k_tile, kv->kq, kv->kscale);
    else if (quantized)
        quantize_rows(kv->k, lkv, dp, cfg->k_quant_rows, kv->kq, kv->kscale);
    for (int c = 0; c < dp; c++) {
        kv->vscale[c] = 1.0f;
        kv->vmean[c] = 0.0f;
    }
    if (sa_mode_pv_fp8(cfg->mode)) {
        for (int c = 0; c < dp; c++) {
            float hi = -INFINITY, lo = INFINITY;
            double sum = 0.0;
            for (int j = 0; j < lkv; j++) {
                hi = fmaxf(hi, kv->v[(size_t)j * dp + c]);
                lo = fminf(lo, kv->v[(size_t)j * dp + c]);
                sum += kv->v[(size_t)j * dp + c];
            }
            if (cfg->smooth_v && lkv > 0 && sa_smooth_v(cfg->mode, dp, lkv))
                kv->vmean[c] = (float)(sum / lkv);
            /* the absmax of V less its mean (of V itself when not smoothing) */
            float range = fmaxf(fmaxf(hi - kv->vmean[c], kv->vmean[c] - lo), 0.0f);
            kv->vscale[c] = range > 0.0f ? range / cfg->fp8_v_scale_max : 1.0f;
        }
        /* V / v_scale as the kernel computes it (quant.cu, SA_VT_RECIP): times the float
         * reciprocal of the scale, except in a group of 8 channels (0-7, 8-15, ...) where a
         * scale is below FLT_MIN (its reciprocal could overflow), which divides */
        int recip[128]; /* dp <= 128: each channel takes its group of 8's choice */
        for (int c0 = 0; c0 < dp; c0 += 8) {
            int all_normal = 1;
            for (int c = c0; c < c0 + 8 && c < dp; c++)
                all_normal = all_normal && kv->vscale[c] >= FLT_MIN;
            for (int c = c0; c < c0 + 8 && c < dp; c++)
                recip[c] = all_normal;
        }
        for (int j = 0; j < lkv; j++)
            for (int c = 0; c < dp; c++) {
                size_t e = (size_t)j * dp + c;
                const float x = kv->v[e] - kv->vmean[c];
                const float q = recip[c] ? x * (1.0f / kv->vscale[c]) : x / kv->vscale[c];
                kv->v[e] = sa_e4m3_to_f32(sa_f32_to_e4m3(q));
            }
    }
    if (ranked) { /* the keys in the kernels' order (V's statistics do not depend on it) */
        permute_rows(kv->k, sizeof(float) * (size_t)dp, kv->order, lkv, kv->moved);
        permute_rows(kv->kq, (size_t)dp, kv->order, lkv, kv->moved);
        permute_rows(kv->kscale, sizeof(float), kv->order, lkv, kv->moved);
        permute_rows(kv->v, sizeof(float) * (size_t)dp, kv->order, lkv, kv->moved);
    }
}

/* Score of query row i against key j in the "t" domain: the kernel's pre-scale value whose
 * product with qs is the base-2 logit. */
static float score_t(const struct sa_ref_config *cfg, const int8_t *qq, const float *qf,
                     const struct kv_operands *kv, int j, int dp)
{
    if (cfg->mode == SAGEATTN_MODE_FP16) {
        float acc = 0.0f;
        for (int c = 0; c < dp; c++)
            acc = fmaf(qf[c], kv->k[(size_t)j * dp + c], acc);
        return acc;
    }
    int32_t acc = 0;
    for (int c = 0; c < dp; c++)
        acc += (int32_t)qq[c] * kv->kq[(size_t)j * dp + c];
    return (float)acc * kv->kscale[j];
}

struct row_work {
    float *t;      /* [k_tile] */
    float *acc;    /* [dp] fp32 output accumulator */
    float *tile;   /* [dp] per-tile accumulator (fp8 and f16acc modes) */
    double *group; /* [dp] exact sum of the current acc_group keys (f16acc modes) */
};

static float round_f16(double x)
{
    return sa_f16_to_f32(sa_f32_to_f16((float)x));
}

/* The FP16 in-tile accumulator takes the exact sum of the last group of products. */
static void flush_group(const struct sa_ref_config *cfg, struct row_work *w, int dp)
{
    for (int c = 0; c < dp; c++) {
        w->tile[c] = round_f16((double)w->tile[c] + w->group[c]);
        w->group[c] = 0.0;
        if (cfg->stats) {
            if (isinf(w->tile[c]))
                cfg->stats->tile_acc_overflows++;
            else if (fabs(w->tile[c]) > cfg->stats->tile_acc_peak)
                cfg->stats->tile_acc_peak = fabs(w->tile[c]);
        }
    }
}

/* One query row through the tiled online softmax; writes o_row[d] and *lse. f16acc is set when
 * the in-tile accumulator is FP16 (cfg->tile_acc_fp16, except for bf16 P, which has none). The
 * row sees the keys before position nkeys; window: the call's rank window (rank_window). With
 * rank groups and a causal mask the keys are in rank order within each window, so the row runs
 * to the end of the window that holds key nkeys - 1 and masks each key by the position it came
 * from (kv->order), as the kernels do. */
static void attend_row(const sageattn_params *p, const struct sa_ref_config *cfg, int f16acc,
                       int window, const struct kv_operands *kv, const int8_t *qq, const float *qf,
                       float qs, float q_dot_kmean, int nkeys, int dp, struct row_work *w,
                       float *o_row, float *lse)
{
    const int by_position = window > 0 && p->causal;
    int end = nkeys;
    if (by_position && nkeys > 0) {
        end = (nkeys + window - 1) / window * window;
        end = end < p->kv_len ? end : p->kv_len;
    }
    int fp8 = sa_mode_pv_fp8(cfg->mode);
    float p_scale =
        fp8 ? cfg->fp8_p_scale * exp2f(-cfg->p_headroom) : (f16acc ? cfg->f16_p_scale : 1.0f);
    int group = cfg->acc_group > 0 ? cfg->acc_group : 1;
    float mt = -INFINITY, l = 0.0f;
    memset(w->acc, 0, sizeof(float) * (size_t)dp);
    for (int j0 = 0; j0 < end; j0 += cfg->k_tile) {
        int j1 = j0 + cfg->k_tile < end ? j0 + cfg->k_tile : end;
        float tile_max = -INFINITY;
        for (int j = j0; j < j1; j++) {
            const int masked = by_position && kv->order[j] >= nkeys;
            w->t[j - j0] = masked ? -INFINITY : score_t(cfg, qq, qf, kv, j, dp);
            tile_max = fmaxf(tile_max, w->t[j - j0]);
        }
        if (by_position && tile_max == -INFINITY && mt == -INFINITY) /* none seen yet */
            continue;
        /* p = exp2((t - max)·qs): subtracting before scaling keeps the row maximum at exactly
         * p = 1 whatever the logits' magnitude (as attn/sa_softmax.cuh does). */
        float mt_new = fmaxf(mt, tile_max);
        /* p_headroom: within it the reference stays (p up to fp8_p_scale); qs > 0 */
        if (cfg->p_headroom > 0.0f && p->kv_len >= cfg->p_headroom_min_kv &&
            window == 0 && /* the kernels' SA_H_SPEC form: per-key scales */
            j0 >= cfg->p_headroom_from_key && mt != -INFINITY &&
            (tile_max - mt) * qs <= cfg->p_headroom)
            mt_new = mt;
        float alpha = mt == -INFINITY ? 0.0f : exp2f((mt - mt_new) * qs);
        l *= alpha;
        for (int c = 0; c < dp; c++)
            w->acc[c] *= alpha;
        memset(w->tile, 0, sizeof(float) * (size_t)dp);
        for (int c = 0; c < dp; c++)
            w->group[c] = 0.0;
        for (int j = j0; j < j1; j++) {
            if (by_position && kv->order[j] >= nkeys) /* masked: p = 0 adds nothing */
                continue;
            float pj = exp2f((w->t[j - j0] - mt_new) * qs);
            l += pj;
            const float *vj = kv->v + (size_t)j * dp;
            float pq = fp8 ? sa_e4m3_to_f32(sa_f32_to_e4m3(pj * p_scale))
                           : round_to_dtype(pj * p_scale, p->dtype);
            if (f16acc) {
                for (int c = 0; c < dp; c++)
                    w->group[c] += (double)pq * vj[c];
                if ((j - j0) % group == group - 1 || j == j1 - 1)
                    flush_group(cfg, w, dp);
            } else if (fp8) {
                float *target = cfg->two_level ? w->tile : w->acc;
                for (int c = 0; c < dp; c++)
                    target[c] = sa_round_mantissa(fmaf(pq, vj[c], target[c]), cfg->tile_acc_bits);
            } else {
                for (int c = 0; c < dp; c++)
                    w->acc[c] = fmaf(pq, vj[c], w->acc[c]);
            }
        }
        if (f16acc || (fp8 && cfg->two_level))
            for (int c = 0; c < dp; c++)
                w->acc[c] += w->tile[c];
        mt = mt_new;
    }
    for (int c = 0; c < p->head_dim; c++)
        o_row[c] = nkeys == 0 ? 0.0f : w->acc[c] * kv->vscale[c] / (p_scale * l) + kv->vmean[c];
    *lse = nkeys == 0 ? -INFINITY : SA_LN2 * (mt * qs + log2f(l)) + q_dot_kmean;
}

struct ref_buffers {
    struct kv_operands kv;
    float *qf;     /* [q_len][dp] */
    int8_t *qq;    /* [q_len][dp] */
    float *qscale; /* [q_len] */
    float *o_row;  /* [dp] */
    struct row_work w;
};

static void free_buffers(struct ref_buffers *r)
{
    free(r->kv.k);
    free(r->kv.kq);
    free(r->kv.kscale);
    free(r->kv.kmean);
    free(r->kv.v);
    free(r->kv.vscale);
    free(r->kv.vmean);
    free(r->kv.rank);
    free(r->kv.order);
    free(r->kv.moved);
    free(r->qf);
    free(r->qq);
    free(r->qscale);
    free(r->o_row);
    free(r->w.t);
    free(r->w.acc);
    free(r->w.tile);
    free(r->w.group);
}

static int alloc_buffers(struct ref_buffers *r, const sageattn_params *p, int dp, int k_tile)
{
    size_t kvn = (size_t)p->kv_len * dp, qn = (size_t)p->q_len * dp;
    memset(r, 0, sizeof *r);
    r->kv.k = malloc(sizeof(float) * kvn);
    r->kv.kq = malloc(kvn);
    r->kv.kscale = malloc(sizeof(float) * (size_t)p->kv_len);
    r->kv.kmean = malloc(sizeof(float) * (size_t)dp);
    r->kv.v = malloc(sizeof(float) * kvn);
    r->kv.vscale = malloc(sizeof(float) * (size_t)dp);
    r->kv.vmean = malloc(sizeof(float) * (size_t)dp);
    r->kv.rank = malloc(sizeof(struct key_rank) * (size_t)p->kv_len);
    r->kv.order = malloc(sizeof(int) * (size_t)p->kv_len);
    r->kv.moved = malloc((size_t)p->kv_len);
    r->qf = malloc(sizeof(float) * qn);
    r->qq = malloc(qn);
    r->qscale = malloc(sizeof(float) * (size_t)p->q_len);
    r->o_row = malloc(sizeof(float) * (size_t)dp);
    r->w.t = malloc(sizeof(float) * (size_t)k_tile);
    r->w.acc = malloc(sizeof(float) * (size_t)dp);
    r->w.tile = malloc(sizeof(float) * (size_t)dp);
    r->w.group = malloc(sizeof(double) * (size_t)dp);
    if (r->kv.k && r->kv.kq && r->kv.kscale && r->kv.kmean && r->kv.v && r->kv.vscale &&
        r->kv.vmean && r->kv.rank && r->kv.order && r->kv.moved && r->qf && r->qq && r->qscale &&
        r->o_row && r->w.t && r->w.acc && r->w.tile && r->w.group)
        return 0;
    free_buffers(r);
    return -1;
}

/* Q of one (batch, head): loaded, zero-padded, quantized with sm_scale·log2(e) folded in. */
static void prepare_q(const sageattn_params *p, const struct sa_ref_config *cfg, int b, int h,
                      int dp, struct ref_buffers *r)
{
    for (int i = 0; i < p->q_len; i++)
        for (int c = 0; c < dp; c++)
            r->qf[(size_t)i * dp + c] =
                c < p->head_dim ? sa_ref_load(p->q, p->q_stride, p->dtype, b, h, i, c) : 0.0f;
    float fold = resolved_sm_scale(p) * (cfg->fold_log2e ? SA_LOG2E : 1.0f);
    if (cfg->mode == SAGEATTN_MODE_FP16) {
        for (int i = 0; i < p->q_len; i++)
            r->qscale[i] = fold;
        return;
    }
    quantize_rows(r->qf, p->q_len, dp, cfg->q_quant_rows, r->qq, r->qscale);
    for (int i = 0; i < p->q_len; i++)
        r->qscale[i] *= fold;
}

int sa_ref_attention(const sageattn_params *p, const struct sa_ref_config *cfg)
{
    if (!params_ok(p) || !cfg || cfg->k_tile <= 0 || cfg->q_quant_rows <= 0 ||
        cfg->k_quant_rows <= 0 ||
        (cfg->k_lane_groups == 2 && (cfg->k_rank_window <= 0 || cfg->k_rank_window % SA_CTA_K)))
        return -1;
    int dp = p->head_dim <= 64 ? 64 : 128;
    int group = p->num_q_heads / p->num_kv_heads;
    float sm_scale = resolved_sm_scale(p);
    /* bf16 P·V has no FP16-accumulator MMA: the kernels run those inputs in FP32 (launch.cu). */
    int f16acc =
        cfg->tile_acc_fp16 && (sa_mode_pv_fp8(cfg->mode) || p->dtype != SAGEATTN_DTYPE_BF16);
    if (cfg->stats)
        memset(cfg->stats, 0, sizeof *cfg->stats);
    const int window = rank_window(p, cfg); /* one choice per call, as the kernels' */
    struct ref_buffers r;
    if (alloc_buffers(&r, p, dp, cfg->k_tile) != 0)
        return -1;
    for (int b = 0; b < p->batch; b++)
        for (int hk = 0; hk < p->num_kv_heads; hk++) {
            prepare_kv(p, cfg, window, b, hk, dp, &r.kv);
            for (int h = hk * group; h < (hk + 1) * group; h++) {
                prepare_q(p, cfg, b, h, dp, &r);
                for (int i = 0; i < p->q_len; i++) {
                    const float *qf = r.qf + (size_t)i * dp;
                    float q_dot_kmean = 0.0f;
                    for (int c = 0; c < dp; c++)
                        q_dot_kmean = fmaf(qf[c], r.kv.kmean[c], q_dot_kmean);
                    float lse;
                    attend_row(p, cfg, f16acc, window, &r.kv, r.qq + (size_t)i * dp, qf,
                               r.qscale[i], sm_scale * q_dot_kmean, visible_keys(p, i), dp, &r.w,
                               r.o_row, &lse);
                    uint16_t *o = p->o;
                    for (int c = 0; c < p->head_dim; c++)
                        o[sa_ref_offset(p->o_stride, b, h, i, c)] = to_dtype(r.o_row[c], p->dtype);
                    if (p->lse)
                        p->lse[((size_t)b * p->num_q_heads + h) * p->q_len + i] = lse;
                }
            }
        }
    free_buffers(&r);
    return 0;
}

int sa_exact_attention(const sageattn_params *p, double *o_exact, double *lse_exact)
{
    if (!params_ok(p) || !o_exact)
        return -1;
    int d = p->head_dim, group = p->num_q_heads / p->num_kv_heads;
    double scale = resolved_sm_scale(p);
    double *s = malloc(sizeof(double) * (size_t)p->kv_len);
    double *q = malloc(sizeof(double) * (size_t)d);
    if (!s || !q) {
        free(s);
        free(q);
        return -1;
    }
    for (int b = 0; b < p->batch; b++)
        for (int h = 0; h < p->num_q_heads; h++)
            for (int i = 0; i < p->q_len; i++) {
                int hk = h / group, nkeys = visible_keys(p, i);
                size_t row = ((size_t)b * p->num_q_heads + h) * p->q_len + i;
                double *o = o_exact + row * d;
                for (int c = 0; c < d; c++) {
                    q[c] = sa_ref_load(p->q, p->q_stride, p->dtype, b, h, i, c);
                    o[c] = 0.0;
                }
                double m = -INFINITY, l = 0.0;
                for (int j = 0; j < nkeys; j++) {
                    double acc = 0.0;
                    for (int c = 0; c < d; c++)
                        acc += q[c] * sa_ref_load(p->k, p->k_stride, p->dtype, b, hk, j, c);
                    s[j] = acc * scale;
                    m = fmax(m, s[j]);
                }
                for (int j = 0; j < nkeys; j++) {
                    double pj = exp(s[j] - m);
                    l += pj;
                    for (int c = 0; c < d; c++)
                        o[c] += pj * sa_ref_load(p->v, p->v_stride, p->dtype, b, hk, j, c);
                }
                for (int c = 0; c < d && nkeys > 0; c++)
                    o[c] /= l;
                if (lse_exact)
                    lse_exact[row] = nkeys > 0 ? m + log(l) : -INFINITY;
            }
    free(s);
    free(q);
    return 0;
}

struct sa_metrics sa_compare_output(const sageattn_params *p, const double *o_exact)
{
    struct sa_metrics m = {0};
    double diff_l1 = 0.0, ref_l1 = 0.0, dot = 0.0, oo = 0.0, rr = 0.0;
    int d = p->head_dim;
    for (int b = 0; b < p->batch; b++)
        for (int h = 0; h < p->num_q_heads; h++)
            for (int i = 0; i < p->q_len; i++)
                for (int c = 0; c < d; c++) {
                    double o = sa_ref_load(p->o, p->o_stride, p->dtype, b, h, i, c);
                    double r = o_exact[(((size_t)b * p->num_q_heads + h) * p->q_len + i) * d + c];
                    if (!isfinite(o)) {
                        m.nonfinite++;
                        continue;
                    }
                    diff_l1 += fabs(o - r);
                    ref_l1 += fabs(r);
                    dot += o * r;
                    oo += o * o;
                    rr += r * r;
                    m.max_abs = fmax(m.max_abs, fabs(o - r));
                }
    m.rel_l1 = ref_l1 > 0.0 ? diff_l1 / ref_l1 : (diff_l1 > 0.0 ? INFINITY : 0.0);
    m.cos = (oo > 0.0 && rr > 0.0) ? dot / sqrt(oo * rr) : (oo == rr ? 1.0 : 0.0);
    return m;
}
