/* Pre-pass kernels of the int8 modes (memory-bound, one pass each over the input):
 *   stats:    per chunk of SA_STAT_ROWS tokens, partial channel sums of K and channel absmax of V
 *             (with a single chunk it also does finalize's work, and finalize is not launched)
 *   finalize: K channel mean and V per-channel FP8 scale per (batch, kv head)
 *   rowquant: one int8 scale per token for Q (sm_scale*log2e folded in; optional sm_scale*q.k̄
 *             for the LSE) and for K (mean subtracted first), padded rows written as zeros; Q and
 *             K in one launch
 *   vfp8:     V -> E4M3 Vᵀ in 64-token tiles ([b][h][tile][d][64]), zero-padded, tokens
 *             permuted inside groups of 16
 * int8-fp8-wgmma takes the same values in wgmma's core-matrix order (sa_core_offset).
 * The numerics follow the constants in sa_internal.h; the C reference mirrors them. */
#include <cuda_fp8.h>

#include "sa_kernels.h"
#include "sa_ptx.cuh"

#define SA_PRE_THREADS 256
#define SA_MAX_GRID_Y 65535

/* 8 channels starting at c0 of one row, as floats; channels >= d read as 0. The 16-byte load is
 * used only when all 8 are in bounds (rows are 16-byte aligned, checked by the API). */
template <bool BF16>
__device__ __forceinline__ void sa_load8(const char *row, int c0, int d, float x[8])
{
    if (c0 + 8 <= d) {
        const uint4 u = *(const uint4 *)(row + c0 * 2);
        const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            x[2 * i] = sa_to_float<BF16>((uint16_t)(w[i] & 0xffffu));
            x[2 * i + 1] = sa_to_float<BF16>((uint16_t)(w[i] >> 16));
        }
    } else {
#pragma unroll
        for (int i = 0; i < 8; ++i)
            x[i] = c0 + i < d ? sa_to_float<BF16>(*(const uint16_t *)(row + (c0 + i) * 2)) : 0.0f;
    }
}

/* Byte offset of byte `col` of row `row` in a matrix of ROW_BYTES-byte rows stored as wgmma
 * core matrices (8 rows x 16 bytes, 128 contiguous bytes): the 16-byte chunks of a group of 8
 * rows follow each other, then the next group. A multiple of 8 rows is one contiguous block. */
template <int ROW_BYTES> __device__ __forceinline__ size_t sa_core_offset(size_t row, int col)
{
    return (row / 8) * (8 * ROW_BYTES) + (size_t)(col / 16) * 128 + (row % 8) * 16 + col % 16;
}

struct sa_tensor_view {
    const char *base;
    int64_t sb, sh, st; /* byte strides */
};

__device__ __forceinline__ const char *sa_row_ptr(const sa_tensor_view &v, int b, int h, int t)
{
    return v.base + b * v.sb + h * v.sh + t * v.st;
}

template <bool BF16, int DP>
__global__ void __launch_bounds__(SA_PRE_THREADS)
    sa_stats_kernel(sa_tensor_view k, sa_tensor_view v, int hkv, int lkv, int d, int nchunk,
                    float *kpart, float *vpart, float *km, float *vscale, float v_max)
{
    constexpr int TPR = DP / 8;
    constexpr int RPI = SA_PRE_THREADS / TPR;
    __shared__ float red[2][RPI][DP];
    const int chunk = blockIdx.x, bh = blockIdx.y;
    const int b = bh / hkv, h = bh % hkv;
    const int c0 = (threadIdx.x % TPR) * 8, r = threadIdx.x / TPR;
    float sum[8] = {0, 0, 0, 0, 0, 0, 0, 0}, amax[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const int end = min((chunk + 1) * SA_STAT_ROWS, lkv);
#pragma unroll 4
    for (int t = chunk * SA_STAT_ROWS + r; t < end; t += RPI) {
        float x[8];
        sa_load8<BF16>(sa_row_ptr(k, b, h, t), c0, d, x);
#pragma unroll
        for (int i = 0; i < 8; ++i)
            sum[i] += x[i];
        if (vpart) {
            sa_load8<BF16>(sa_row_ptr(v, b, h, t), c0, d, x);
#pragma unroll
            for (int i = 0; i < 8; ++i)
                amax[i] = fmaxf(amax[i], fabsf(x[i]));
        }
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        red[0][r][c0 + i] = sum[i];
        red[1][r][c0 + i] = amax[i];
    }
    __syncthreads();
    if (threadIdx.x < DP) {
        const int c = threadIdx.x;
        float s = 0.0f, m = 0.0f;
        for (int i = 0; i < RPI; ++i) {
            s += red[0][i][c];
            m = fmaxf(m, red[1][i][c]);
        }
        if (nchunk == 1) {
            /* One chunk holds the whole sequence: the finalize step's sums are these, so it is
             * done here (the same expressions, bit for bit) and its launch is saved. */
            km[(size_t)bh * DP + c] = s / (float)lkv;
            if (vscale)
                vscale[(size_t)bh * DP + c] = m > 0.0f ? m / v_max : 1.0f;
            return;
        }
        const size_t at = ((size_t)bh * nchunk + chunk) * DP + c;
        kpart[at] = s;
        if (vpart)
            vpart[at] = m;
    }
}

__global__ void sa_finalize_kernel(int dp, int nchunk, int lkv, const float *kpart,
                                   const float *vpart, float *km, float *vscale, float v_max)
{
    const int bh = blockIdx.x, c = threadIdx.x;
    float s = 0.0f, m = 0.0f;
    for (int i = 0; i < nchunk; ++i) {
        const size_t at = ((size_t)bh * nchunk + i) * dp + c;
        s += kpart[at];
        if (vpart)
            m = fmaxf(m, vpart[at]);
    }
    km[(size_t)bh * dp + c] = s / (float)lkv;
    if (vscale)
        vscale[(size_t)bh * dp + c] = m > 0.0f ? m / v_max : 1.0f;
}

struct sa_rowquant_args {
    sa_tensor_view src;
    int heads, rows, rows_pad, d;
    signed char *out;      /* [b][heads][rows_pad][DP] */
    float *scale;          /* [b][heads][rows_pad] */
    float scale_mul;       /* sm_scale*log2e for Q, 1 for K */
    const float *sub_mean; /* K: k̄ of this head, [b][heads][DP] */
    const float *dot_mean; /* Q with LSE: k̄ of the kv head */
    int group;             /* Q heads per kv head (for dot_mean) */
    float *dot_out;        /* [b][heads][rows]: dot_mul * q.k̄ */
    float dot_mul;
    int core_order; /* int8-fp8-wgmma: out in core-matrix order (sa_core_offset) */
};

/* Rows each thread group of the row quantizer handles: their loads are issued together. */
#define SA_RQ_ROWS 2

/* Rows of one block of the row quantizer (SA_RQ_ROWS groups of SA_PRE_THREADS / (DP / 8)). */
template <int DP> __host__ __device__ constexpr int sa_rq_block_rows()
{
    return SA_PRE_THREADS / (DP / 8) * SA_RQ_ROWS;
}

/* Block (bx, bh) of the row quantizer of one tensor: rows bx * sa_rq_block_rows of (batch, head)
 * bh. */
template <bool BF16, int DP>
__device__ __forceinline__ void sa_rowquant_block(const sa_rowquant_args &a, int bx, int bh)
{
    constexpr int TPR = DP / 8;
    constexpr int RPB = SA_PRE_THREADS / TPR;
    const int b = bh / a.heads, h = bh % a.heads;
    const int c0 = (threadIdx.x % TPR) * 8;
    const float *dm = a.dot_mean
                          ? a.dot_mean + ((size_t)b * (a.heads / a.group) + h / a.group) * DP + c0
                          : nullptr;
    float x[SA_RQ_ROWS][8];
#pragma unroll
    for (int i = 0; i < SA_RQ_ROWS; ++i) {
        const int r = (bx * SA_RQ_ROWS + i) * RPB + threadIdx.x / TPR;
#pragma unroll
        for (int k = 0; k < 8; ++k)
            x[i][k] = 0.0f;
        if (r < a.rows)
            sa_load8<BF16>(sa_row_ptr(a.src, b, h, r), c0, a.d, x[i]);
    }
#pragma unroll
    for (int i = 0; i < SA_RQ_ROWS; ++i) {
        /* rows_pad is a multiple of SA_RQ_ROWS * RPB: every row group here is in the pad. */
        const int r = (bx * SA_RQ_ROWS + i) * RPB + threadIdx.x / TPR;
        if (a.sub_mean && r < a.rows) {
            const float *m = a.sub_mean + (size_t)bh * DP + c0;
#pragma unroll
            for (int k = 0; k < 8; ++k)
                x[i][k] = c0 + k < a.d ? x[i][k] - m[k] : 0.0f;
        }
        float amax = 0.0f, dot = 0.0f;
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            amax = fmaxf(amax, fabsf(x[i][k]));
            if (dm)
                dot += x[i][k] * dm[k];
        }
#pragma unroll
        for (int off = 1; off < TPR; off *= 2) {
            amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
            dot += __shfl_xor_sync(0xffffffffu, dot, off);
        }
        if (amax == 0.0f)
            amax = 1.0f;
        const float inv = __fdiv_rn(SA_INT8_MAX, amax);
        uint32_t w[2] = {0, 0};
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            int q = __float2int_rn(__fmul_rn(x[i][k], inv));
            q = max(-127, min(127, q));
            w[k / 4] |= (uint32_t)(q & 0xff) << (8 * (k % 4));
        }
        const size_t row = (size_t)bh * a.rows_pad + r;
        *(uint2 *)(a.out + (a.core_order ? sa_core_offset<DP>(row, c0) : row * DP + c0)) =
            make_uint2(w[0], w[1]);
        if (threadIdx.x % TPR == 0) {
            a.scale[row] = __fmul_rn(__fdiv_rn(amax, SA_INT8_MAX), a.scale_mul);
            if (a.dot_out && r < a.rows)
                a.dot_out[(size_t)bh * a.rows + r] = dot * a.dot_mul;
        }
    }
}

/* Q's and K's row quantizers in one launch: blockIdx.y < q_bh are Q's (batch, head) pairs, the
 * rest K's; each tensor's blocks past its own padded length exit (gridDim.x covers the longer). */
template <bool BF16, int DP>
__global__ void __launch_bounds__(SA_PRE_THREADS)
    sa_rowquant_kernel(const sa_rowquant_args q, const sa_rowquant_args k, int q_bh)
{
    constexpr int ROWS = sa_rq_block_rows<DP>();
    const int bx = blockIdx.x, by = blockIdx.y;
    if (by < q_bh) {
        if (bx * ROWS < q.rows_pad)
            sa_rowquant_block<BF16, DP>(q, bx, by);
    } else if (bx * ROWS < k.rows_pad) {
        sa_rowquant_block<BF16, DP>(k, bx, by - q_bh);
    }
}

/* int8-fp8-wgmma's K with SA_H_KGROUP (sa_internal.h): one block per 64-key tile of one kv head.
 * Each key's channels (mean subtracted, as sa_rowquant_block) are quantized with the scale of
 * its group, the SA_H_KGROUP_KEYS keys of the tile one lane quad of the attention kernel holds
 * (group (key % 8) / 2); scales [bh][tile][4] (k.scale, lk_pad / 16 per head). Keys past the
 * sequence are zeros, as the row quantizer writes them. */
template <bool BF16, int DP>
__global__ void __launch_bounds__(SA_PRE_THREADS) sa_kquant_grouped_kernel(const sa_rowquant_args k)
{
    constexpr int TPR = DP / 8, RPP = SA_PRE_THREADS / TPR, PASSES = SA_CTA_K / RPP;
    constexpr int GROUPS = SA_CTA_K / SA_H_KGROUP_KEYS;
    static_assert(GROUPS == 4 && SA_CTA_K % RPP == 0, "four lane-quad groups per 64-key tile");
    __shared__ unsigned group_amax[GROUPS]; /* bits of non-negative floats: ordered as integers */
    const int bh = blockIdx.y, t0 = blockIdx.x * SA_CTA_K;
    const int b = bh / k.heads, h = bh % k.heads, c0 = (threadIdx.x % TPR) * 8;
    const float *mean = k.sub_mean + (size_t)bh * DP + c0;
    if (threadIdx.x < GROUPS)
        group_amax[threadIdx.x] = 0u;
    __syncthreads();
    float x[PASSES][8];
#pragma unroll
    for (int p = 0; p < PASSES; ++p) {
        const int r = p * RPP + threadIdx.x / TPR;
#pragma unroll
        for (int i = 0; i < 8; ++i)
            x[p][i] = 0.0f;
        if (t0 + r < k.rows) {
            sa_load8<BF16>(sa_row_ptr(k.src, b, h, t0 + r), c0, k.d, x[p]);
#pragma unroll
            for (int i = 0; i < 8; ++i)
                x[p][i] = c0 + i < k.d ? x[p][i] - mean[i] : 0.0f;
        }
        float amax = 0.0f;
#pragma unroll
        for (int i = 0; i < 8; ++i)
            amax = fmaxf(amax, fabsf(x[p][i]));
#pragma unroll
        for (int off = 1; off < TPR; off *= 2)
            amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
        if (threadIdx.x % TPR == 0)
            atomicMax(&group_amax[(r % 8) / 2], __float_as_uint(amax));
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < PASSES; ++p) {
        const int r = p * RPP + threadIdx.x / TPR;
        float amax = __uint_as_float(group_amax[(r % 8) / 2]);
        if (amax == 0.0f)
            amax = 1.0f;
        const float inv = __fdiv_rn(SA_INT8_MAX, amax);
        uint32_t w[2] = {0, 0};
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int q = max(-127, min(127, __float2int_rn(__fmul_rn(x[p][i], inv))));
            w[i / 4] |= (uint32_t)(q & 0xff) << (8 * (i % 4));
        }
        const size_t row = (size_t)bh * k.rows_pad + t0 + r;
        *(uint2 *)(k.out + sa_core_offset<DP>(row, c0)) = make_uint2(w[0], w[1]);
    }
    if (threadIdx.x < GROUPS) {
        const float amax = __uint_as_float(group_amax[threadIdx.x]);
        k.scale[(size_t)bh * (k.rows_pad / SA_H_KGROUP_KEYS) + blockIdx.x * GROUPS + threadIdx.x] =
            __fdiv_rn(amax == 0.0f ? 1.0f : amax, SA_INT8_MAX);
    }
}

template <bool BF16, int DP>
__global__ void __launch_bounds__(SA_PRE_THREADS)
    sa_vfp8_kernel(sa_tensor_view v, int hkv, int lkv, int lk_pad, int d, const float *vscale,
                   unsigned char *vt, int core_order)
{
    constexpr int TPR = DP / 8;
    __shared__ float tile[SA_CTA_K][DP + 1];
    const int bh = blockIdx.y, b = bh / hkv, h = bh % hkv;
    const int t0 = blockIdx.x * SA_CTA_K;
    const float *vs = vscale + (size_t)bh * DP;
#pragma unroll
    for (int i = threadIdx.x; i < SA_CTA_K * TPR; i += SA_PRE_THREADS) {
        const int r = i / TPR, c0 = (i % TPR) * 8;
        float x[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        if (t0 + r < lkv)
            sa_load8<BF16>(sa_row_ptr(v, b, h, t0 + r), c0, d, x);
#pragma unroll
        for (int k = 0; k < 8; ++k)
            tile[r][c0 + k] = __fdiv_rn(x[k], vs[c0 + k]);
    }
    __syncthreads();
    /* Position p of each 16-token group holds token perm[p]: the FP8 mma's A fragment order. */
    const int perm[16] = {0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15};
    for (int i = threadIdx.x; i < DP * (SA_CTA_K / 16); i += SA_PRE_THREADS) {
        const int c = i / (SA_CTA_K / 16), grp = i % (SA_CTA_K / 16);
        uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
        for (int p = 0; p < 16; ++p) {
            const __nv_fp8_storage_t q =
                __nv_cvt_float_to_fp8(tile[grp * 16 + perm[p]][c], __NV_SATFINITE, __NV_E4M3);
            w[p / 4] |= (uint32_t)q << (8 * (p % 4));
        }
        /* tile-major: [bh][tile][channel][64 keys], so one key tile is contiguous; wgmma's
         * order permutes the 16-byte pieces inside the tile */
        const int at =
            core_order ? (int)sa_core_offset<SA_CTA_K>(c, grp * 16) : c * SA_CTA_K + grp * 16;
        *(uint4 *)(vt + ((size_t)bh * lk_pad + t0) * DP + at) = make_uint4(w[0], w[1], w[2], w[3]);
    }
}

/* int8-fp8-wgmma with SA_H_KGROUP: K by its grouped quantizer, Q (when the pre-pass does it) by
 * rows; false (nothing launched) otherwise. A compile-time branch, so that builds without
 * SA_H_KGROUP hold no grouped quantizer. */
template <bool BF16, int DP>
static bool sa_kquant_grouped_launch(const struct sa_problem *p, const struct sa_ws_layout *w,
                                     const sa_rowquant_args &q, const sa_rowquant_args &k,
                                     bool with_q, cudaStream_t stream)
{
    if constexpr (SA_H_KGROUP) {
        if (!sa_mode_wgmma_layout(p->mode))
            return false;
        constexpr int RPB = sa_rq_block_rows<DP>();
        sa_kquant_grouped_kernel<BF16, DP>
            <<<dim3(w->lk_pad / SA_CTA_K, p->batch * p->hkv), SA_PRE_THREADS, 0, stream>>>(k);
        if (with_q)
            sa_rowquant_kernel<BF16, DP><<<dim3((w->lq_pad + RPB - 1) / RPB, p->batch * p->hq),
                                           SA_PRE_THREADS, 0, stream>>>(q, q, p->batch * p->hq);
        return true;
    } else {
        (void)p, (void)w, (void)q, (void)k, (void)with_q, (void)stream;
        return false;
    }
}

static sa_tensor_view sa_view(const void *base, const int64_t s[3])
{
    sa_tensor_view v = {(const char *)base, s[0] * 2, s[1] * 2, s[2] * 2};
    return v;
}

template <bool BF16, int DP>
static cudaError_t sa_quant_run(const struct sa_problem *p, const struct sa_ws_layout *w, char *ws,
                                bool with_q, cudaStream_t stream)
{
    const bool fp8 = sa_mode_pv_fp8(p->mode);
    const sa_tensor_view kv = sa_view(p->k, p->ks), vv = sa_view(p->v, p->vs);
    const int bhk = p->batch * p->hkv, bhq = p->batch * p->hq;
    float *kpart = (float *)(ws + w->kpart), *vpart = fp8 ? (float *)(ws + w->vpart) : nullptr;
    float *km = (float *)(ws + w->km), *vscale = fp8 ? (float *)(ws + w->vscale) : nullptr;

    /* With one statistics chunk (kv_len <= SA_STAT_ROWS) the statistics kernel finalizes too. */
    const float v_max = sa_mode_v_scale_max(p->mode);
    sa_stats_kernel<BF16, DP><<<dim3(w->nchunk, bhk), SA_PRE_THREADS, 0, stream>>>(
        kv, vv, p->hkv, p->lkv, p->d, w->nchunk, kpart, vpart, km, vscale, v_max);
    if (w->nchunk > 1)
        sa_finalize_kernel<<<bhk, DP, 0, stream>>>(DP, w->nchunk, p->lkv, kpart, vpart, km, vscale,
                                                   v_max);

    constexpr int RPB = sa_rq_block_rows<DP>(); /* rows per block */
    static_assert(SA_CTA_K % RPB == 0, "padded lengths must split into whole blocks");
    sa_rowquant_args q = {};
    q.src = sa_view(p->q, p->qs);
    q.heads = p->hq;
    q.rows = p->lq;
    q.rows_pad = w->lq_pad;
    q.d = p->d;
    q.out = (signed char *)(ws + w->q8);
    q.scale = (float *)(ws + w->qscale);
    q.scale_mul = p->sm_scale * SA_LOG2E;
    q.core_order = sa_mode_wgmma_layout(p->mode);
    q.group = p->hq / p->hkv;
    if (p->lse) {
        q.dot_mean = km;
        q.dot_out = (float *)(ws + w->qkm);
        q.dot_mul = p->sm_scale;
    }

    sa_rowquant_args k = {};
    k.src = kv;
    k.heads = p->hkv;
    k.rows = p->lkv;
    k.rows_pad = w->lk_pad;
    k.d = p->d;
    k.out = (signed char *)(ws + w->k8);
    k.scale = (float *)(ws + w->kscale);
    k.scale_mul = 1.0f;
    k.sub_mean = km;
    k.core_order = sa_mode_wgmma_layout(p->mode);
    k.group = 1;
    /* Q and K in one launch (K's needs the mean, Q's the mean only for the LSE: both after the
     * statistics). */
    if (sa_kquant_grouped_launch<BF16, DP>(p, w, q, k, with_q, stream)) {
        /* K by groups, Q by rows if wanted */
    } else if (!with_q) { /* the attention kernel quantizes Q (int8-fp8-wgmma) */
        sa_rowquant_kernel<BF16, DP>
            <<<dim3((w->lk_pad + RPB - 1) / RPB, bhk), SA_PRE_THREADS, 0, stream>>>(k, k, 0);
    } else if (bhq + bhk <= SA_MAX_GRID_Y) {
        const int blocks_x = (max(w->lq_pad, w->lk_pad) + RPB - 1) / RPB;
        sa_rowquant_kernel<BF16, DP>
            <<<dim3(blocks_x, bhq + bhk), SA_PRE_THREADS, 0, stream>>>(q, k, bhq);
    } else { /* beyond the grid's y limit together: one launch each */
        sa_rowquant_kernel<BF16, DP>
            <<<dim3((w->lq_pad + RPB - 1) / RPB, bhq), SA_PRE_THREADS, 0, stream>>>(q, q, bhq);
        sa_rowquant_kernel<BF16, DP>
            <<<dim3((w->lk_pad + RPB - 1) / RPB, bhk), SA_PRE_THREADS, 0, stream>>>(k, k, bhk);
    }
    if (fp8)
        sa_vfp8_kernel<BF16, DP><<<dim3(w->lk_pad / SA_CTA_K, bhk), SA_PRE_THREADS, 0, stream>>>(
            vv, p->hkv, p->lkv, w->lk_pad, p->d, vscale, (unsigned char *)(ws + w->vt),
            sa_mode_wgmma_layout(p->mode));
    return cudaGetLastError();
}

cudaError_t sa_quant_launch(const struct sa_problem *p, int d_pad, const struct sa_ws_layout *w,
                            char *ws, int with_q, cudaStream_t stream)
{
    const bool bf16 = p->dtype == SAGEATTN_DTYPE_BF16;
    if (d_pad == 64)
        return bf16 ? sa_quant_run<true, 64>(p, w, ws, with_q, stream)
                    : sa_quant_run<false, 64>(p, w, ws, with_q, stream);
    return bf16 ? sa_quant_run<true, 128>(p, w, ws, with_q, stream)
                : sa_quant_run<false, 128>(p, w, ws, with_q, stream);
}
