/* Pre-pass kernels of the int8 modes (memory-bound, one pass each over the input):
 *   stats:    per chunk of SA_STAT_ROWS tokens, partial channel sums of K (over the tokens of
 *             K's mean sample, SA_KMEAN_STRIDE) and channel absmax of V
 *             (with a single chunk it also does finalize's work, and finalize is not launched)
 *   finalize: K channel mean and V per-channel FP8 scale per (batch, kv head)
 *   rowquant: one int8 scale per token for Q (sm_scale*log2e folded in; optional sm_scale*q.k̄
 *             for the LSE) and for K (mean subtracted first), padded rows written as zeros; Q and
 *             K in one launch
 *   vfp8:     V -> E4M3 Vᵀ in 64-token tiles ([b][h][tile][d][64]), zero-padded, tokens
 *             permuted inside groups of 16
 * Where int8-fp8-wgmma's warp-specialized kernel runs (sa_smooth_v), V is smoothed: stats also
 * takes V's channel sums, max and min, finalize its mean and a scale for V less its mean, and
 * vfp8 converts V less its mean (the kernel adds it back to O).
 * int8-fp8-wgmma takes the same values in wgmma's core-matrix order (sa_core_offset).
 * The numerics follow the constants in sa_internal.h; the C reference mirrors them. */
#include <cuda_fp8.h>
#include <float.h>

#include "sa_kernels.h"
#include "sa_ptx.cuh"

#define SA_PRE_THREADS 256
#define SA_MAX_GRID_Y 65535
/* Blocks of 256 threads per SM the pre-pass kernels' register budgets are sized for: on sm_90
 * (where they were measured) 4, 64 registers, 32 warps with enough loads in flight to keep HBM
 * busy; elsewhere 3 (85 registers): at 64, sm_80's and sm_120a's code spill. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
#define SA_PRE_MIN_BLOCKS 4
#else
#define SA_PRE_MIN_BLOCKS 3
#endif

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

/* The 8 fp16/bf16 channels c0..c0+7 of one row as raw bits; channels >= d read as 0 (+0.0). */
template <bool FULL> __device__ __forceinline__ uint4 sa_load8_bits(const char *row, int c0, int d)
{
    if (FULL || c0 + 8 <= d)
        return *(const uint4 *)(row + c0 * 2);
    uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < 8; ++i)
        if (c0 + i < d)
            w[i / 2] |= (uint32_t) * (const uint16_t *)(row + (c0 + i) * 2) << (16 * (i % 2));
    return make_uint4(w[0], w[1], w[2], w[3]);
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

/* Rows of K and V whose loads one statistics thread issues together. */
#ifndef SA_STAT_BATCH /* a build may override it (-D) to measure another */
#define SA_STAT_BATCH 4
#endif

/* The lane-wise max (MAX) or min of two pairs of fp16/bf16 values (raw bits, signed); a NaN
 * lane loses, as with fmaxf / fminf. The float of the result is the max (min) of the floats. */
template <bool BF16, bool MAX>
__device__ __forceinline__ uint32_t sa_extreme2(uint32_t acc, uint32_t v)
{
    if (BF16) {
        const __nv_bfloat162 a = *(const __nv_bfloat162 *)&acc, b = *(const __nv_bfloat162 *)&v;
        const __nv_bfloat162 r = MAX ? __hmax2(a, b) : __hmin2(a, b);
        return *(const uint32_t *)&r;
    }
    const __half2 a = *(const __half2 *)&acc, b = *(const __half2 *)&v;
    const __half2 r = MAX ? __hmax2(a, b) : __hmin2(a, b);
    return *(const uint32_t *)&r;
}

/* The lane-wise max of acc and the magnitudes of v (|v| taken here, sign bits cleared). */
template <bool BF16> __device__ __forceinline__ uint32_t sa_absmax2(uint32_t acc, uint32_t v)
{
    return sa_extreme2<BF16, true>(acc, v & 0x7fff7fffu);
}

/* V smoothed (sa_smooth_v): what one statistics thread takes of V besides K's sums. */
struct sa_vstats {
    float sum[8], hi[8], lo[8];
};

/* One row's 8 channels of K (raw bits) added to the thread's sums. */
template <bool BF16> __device__ __forceinline__ void sa_stats_k_row(uint4 kr, float sum[8])
{
    const uint32_t ku[4] = {kr.x, kr.y, kr.z, kr.w};
#pragma unroll
    for (int k = 0; k < 8; ++k)
        sum[k] += sa_to_float<BF16>((uint16_t)(ku[k / 2] >> (16 * (k % 2))));
}

/* One row's 8 channels of V (raw bits) into the thread's V statistics: SMOOTH, the sums, and
 * the max and min pairs where the row is live; else the absmax pairs. */
template <bool BF16, bool SMOOTH>
__device__ __forceinline__ void sa_stats_v_row(uint4 vr, bool live, sa_vstats &vst, uint32_t hi2[4],
                                               uint32_t lo2[4], uint32_t amax2[4])
{
    const uint32_t vu[4] = {vr.x, vr.y, vr.z, vr.w};
    if (SMOOTH) {
#pragma unroll
        for (int k = 0; k < 8; ++k)
            vst.sum[k] += sa_to_float<BF16>((uint16_t)(vu[k / 2] >> (16 * (k % 2))));
        if (live) {
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                hi2[k] = sa_extreme2<BF16, true>(hi2[k], vu[k]);
                lo2[k] = sa_extreme2<BF16, false>(lo2[k], vu[k]);
            }
        }
    } else {
#pragma unroll
        for (int k = 0; k < 4; ++k)
            amax2[k] = sa_absmax2<BF16>(amax2[k], vu[k]);
    }
}

/* One statistics thread's rows t = first + RPI j (j = 0, 1, ...; t < end): the sum of K's
 * channels c0..c0+7 in that order from +0.0 (with_k: the thread's rows are in K's mean's sample,
 * SA_KMEAN_STRIDE; else it adds +0.0), and V's absmax. Rows past end add +0.0, which leaves
 * the sums as they are (a sum that starts at +0.0 is never -0.0). V's absmax is taken on the
 * fp16/bf16 values: exact, as the conversion to float keeps order. FULL: d == DP. */
template <bool BF16, int DP, bool FULL, bool SMOOTH>
__device__ __forceinline__ void
sa_stats_rows(const char *kp, const char *vp, int64_t kstep, int64_t vstep, int first, int end,
              int c0, int d, bool with_k, bool with_v, float sum[8], float amax[8], sa_vstats &vst)
{
    constexpr int RPI = SA_PRE_THREADS / (DP / 8), NJ = SA_STAT_ROWS / RPI;
    /* a partial d loads channel by channel: one row of those at a time */
    constexpr int BATCH = FULL ? SA_STAT_BATCH : 1;
    static_assert(NJ % BATCH == 0, "whole batches per chunk");
    uint32_t amax2[4] = {0, 0, 0, 0};
    /* SMOOTH: V's max and min pairs from -inf and +inf (fp16 0xfc00/0x7c00, bf16 0xff80/0x7f80),
     * taken over the live rows only (rows past end load zeros) */
    uint32_t hi2[4], lo2[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        hi2[k] = BF16 ? 0xff80ff80u : 0xfc00fc00u;
        lo2[k] = BF16 ? 0x7f807f80u : 0x7c007c00u;
    }
    /* not unrolled: one batch's loads in flight at a time, in 64 registers */
#pragma unroll 1
    for (int j0 = 0; j0 < NJ; j0 += BATCH) {
        uint4 kr[BATCH], vr[BATCH];
#pragma unroll
        for (int i = 0; i < BATCH; ++i) {
            const bool live = first + (j0 + i) * RPI < end;
            kr[i] = live && with_k ? sa_load8_bits<FULL>(kp + (j0 + i) * kstep, c0, d)
                                   : make_uint4(0, 0, 0, 0);
            vr[i] = live && with_v ? sa_load8_bits<FULL>(vp + (j0 + i) * vstep, c0, d)
                                   : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int i = 0; i < BATCH; ++i) {
            sa_stats_k_row<BF16>(kr[i], sum);
            sa_stats_v_row<BF16, SMOOTH>(vr[i], first + (j0 + i) * RPI < end, vst, hi2, lo2, amax2);
        }
    }
    if (SMOOTH) {
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            vst.hi[k] = sa_to_float<BF16>((uint16_t)(hi2[k / 2] >> (16 * (k % 2))));
            vst.lo[k] = sa_to_float<BF16>((uint16_t)(lo2[k / 2] >> (16 * (k % 2))));
        }
    }
#pragma unroll
    for (int k = 0; k < 8; ++k)
        amax[k] = sa_to_float<BF16>((uint16_t)(amax2[k / 2] >> (16 * (k % 2))));
}

/* K's channel mean from the sum over its sample (SA_KMEAN_STRIDE); 0 for an empty sample. */
__device__ __forceinline__ float sa_kmean_of(float sum, int lkv)
{
    const int n = SA_KMEAN_COUNT(lkv);
    return n > 0 ? sum / (float)n : 0.0f;
}

/* V's FP8 scale of one channel, smoothed: the absmax of V less its mean, from V's max hi and min
 * lo, maps to v_max; 1 for a channel of zeros. */
__device__ __forceinline__ float sa_v_scale_smooth(float hi, float lo, float mean, float v_max)
{
    const float r = fmaxf(fmaxf(hi - mean, mean - lo), 0.0f);
    return r > 0.0f ? r / v_max : 1.0f;
}

/* SMOOTH (sa_smooth_v): also V's channel sums, max and min per chunk (vpart: the max, vmin, vsum)
 * and, with one chunk, V's mean; else V's absmax per chunk (vpart). SMOOTH's 16 more live values
 * take one block per SM less (64 registers spilled them). */
template <bool BF16, int DP, bool SMOOTH>
__global__ void __launch_bounds__(SA_PRE_THREADS,
                                  SMOOTH ? SA_PRE_MIN_BLOCKS - 1 : SA_PRE_MIN_BLOCKS)
    sa_stats_kernel(sa_tensor_view k, sa_tensor_view v, int hkv, int lkv, int d, int nchunk,
                    float *kpart, float *vpart, float *vmin, float *vsum, float *km, float *vscale,
                    float *vmean, float v_max)
{
    sa_pdl_enter();
    constexpr int TPR = DP / 8;
    constexpr int RPI = SA_PRE_THREADS / TPR;
    __shared__ float red[SMOOTH ? 4 : 2][RPI][DP];
    const int chunk = blockIdx.x, bh = blockIdx.y;
    const int b = bh / hkv, h = bh % hkv;
    const int c0 = (threadIdx.x % TPR) * 8, r = threadIdx.x / TPR;
    float sum[8] = {0, 0, 0, 0, 0, 0, 0, 0}, amax[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    sa_vstats vst = {};
    const int first = chunk * SA_STAT_ROWS + r, end = min((chunk + 1) * SA_STAT_ROWS, lkv);
    const char *kp = sa_row_ptr(k, b, h, first), *vp = sa_row_ptr(v, b, h, first);
    /* a thread's rows (first + RPI j) all have the same residue modulo SA_KMEAN_STRIDE */
    static_assert(RPI % SA_KMEAN_STRIDE == 0 && SA_STAT_ROWS % SA_KMEAN_STRIDE == 0,
                  "SA_KMEAN_STRIDE divides the rows per statistics pass");
    const bool with_k = r % SA_KMEAN_STRIDE == SA_KMEAN_PHASE;
    if (d == DP)
        sa_stats_rows<BF16, DP, true, SMOOTH>(kp, vp, RPI * k.st, RPI * v.st, first, end, c0, d,
                                              with_k, vpart != nullptr, sum, amax, vst);
    else
        sa_stats_rows<BF16, DP, false, SMOOTH>(kp, vp, RPI * k.st, RPI * v.st, first, end, c0, d,
                                               with_k, vpart != nullptr, sum, amax, vst);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        red[0][r][c0 + i] = sum[i];
        red[1][r][c0 + i] = SMOOTH ? vst.hi[i] : amax[i];
        if constexpr (SMOOTH) {
            red[2][r][c0 + i] = vst.lo[i];
            red[3][r][c0 + i] = vst.sum[i];
        }
    }
    __syncthreads();
    if (threadIdx.x < DP) {
        const int c = threadIdx.x;
        float s = 0.0f, m = SMOOTH ? -INFINITY : 0.0f, n = INFINITY, sv = 0.0f;
        for (int i = 0; i < RPI; ++i) {
            s += red[0][i][c];
            m = fmaxf(m, red[1][i][c]);
            if constexpr (SMOOTH) {
                n = fminf(n, red[2][i][c]);
                sv += red[3][i][c];
            }
        }
        if (nchunk == 1) {
            /* One chunk holds the whole sequence: the finalize step's sums are these, so it is
             * done here (the same expressions, bit for bit) and its launch is saved. */
            km[(size_t)bh * DP + c] = sa_kmean_of(s, lkv);
            if (SMOOTH) {
                const float mean = sv / (float)lkv;
                vmean[(size_t)bh * DP + c] = mean;
                vscale[(size_t)bh * DP + c] = sa_v_scale_smooth(m, n, mean, v_max);
            } else if (vscale) {
                vscale[(size_t)bh * DP + c] = m > 0.0f ? m / v_max : 1.0f;
            }
            return;
        }
        const size_t at = ((size_t)bh * nchunk + chunk) * DP + c;
        kpart[at] = s;
        if (vpart)
            vpart[at] = m;
        if (SMOOTH) {
            vmin[at] = n;
            vsum[at] = sv;
        }
    }
}

#ifndef SA_FIN_BATCH /* a build may override it (-D) to measure another */
#define SA_FIN_BATCH 8
#endif
/* vmean non-NULL: V smoothed (vpart then holds V's chunk maxima, vmin and vsum its minima and
 * sums). */
__global__ void sa_finalize_kernel(int dp, int nchunk, int lkv, const float *kpart,
                                   const float *vpart, const float *vmin, const float *vsum,
                                   float *km, float *vscale, float *vmean, float v_max)
{
    /* the next kernel (the quantizers) free to launch before this one waits: the rank kernel's
     * blocks then copy K, which no kernel of the call writes, while the statistics finish */
    sa_pdl_launch_dependents();
    sa_pdl_wait();
    const int bh = blockIdx.x, c = threadIdx.x;
    float s = 0.0f, m = vmean ? -INFINITY : 0.0f, n = INFINITY, sv = 0.0f;
    /* SA_FIN_BATCH chunks' partials loaded before any is added, then added in chunk order (the
     * sums' order, so the same bits): one block per head leaves most SMs idle, and one memory
     * latency per chunk made this kernel 58 us at D=128 L=16K (64 chunks, torch.profiler). */
    int i = 0;
    for (; i + SA_FIN_BATCH <= nchunk; i += SA_FIN_BATCH) {
        float kp[SA_FIN_BATCH], vp[SA_FIN_BATCH], vn[SA_FIN_BATCH], vs[SA_FIN_BATCH];
#pragma unroll
        for (int u = 0; u < SA_FIN_BATCH; ++u) {
            const size_t at = ((size_t)bh * nchunk + i + u) * dp + c;
            kp[u] = kpart[at];
            vp[u] = vpart ? vpart[at] : 0.0f;
            vn[u] = vmean ? vmin[at] : 0.0f;
            vs[u] = vmean ? vsum[at] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < SA_FIN_BATCH; ++u) {
            s += kp[u];
            if (vpart)
                m = fmaxf(m, vp[u]);
            if (vmean) {
                n = fminf(n, vn[u]);
                sv += vs[u];
            }
        }
    }
    for (; i < nchunk; ++i) {
        const size_t at = ((size_t)bh * nchunk + i) * dp + c;
        s += kpart[at];
        if (vpart)
            m = fmaxf(m, vpart[at]);
        if (vmean) {
            n = fminf(n, vmin[at]);
            sv += vsum[at];
        }
    }
    km[(size_t)bh * dp + c] = sa_kmean_of(s, lkv);
    if (vmean) {
        const float mean = sv / (float)lkv;
        vmean[(size_t)bh * dp + c] = mean;
        vscale[(size_t)bh * dp + c] = sa_v_scale_smooth(m, n, mean, v_max);
    } else if (vscale) {
        vscale[(size_t)bh * dp + c] = m > 0.0f ? m / v_max : 1.0f;
    }
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

/* Rows of one block of the row quantizer: every padded length is a multiple of SA_CTA_K, so a
 * block's last rows may lie past the pad by whole passes, which it skips. */
#ifndef SA_RQ_BLOCK_ROWS /* a build may override it (-D) to measure another */
#define SA_RQ_BLOCK_ROWS 128
#endif
/* Passes (of SA_PRE_THREADS / (DP / 8) rows) whose loads are issued together; the next group's
 * loads are issued before this group is quantized. */
#ifndef SA_RQ_GROUP /* a build may override it (-D) to measure another */
#define SA_RQ_GROUP 4
#endif

/* The absmax of one row whose channels TPR neighbouring lanes hold 8 each (x: this lane's). */
template <int TPR> __device__ __forceinline__ float sa_row_absmax8(const float (&x)[8])
{
    float amax = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k)
        amax = fmaxf(amax, fabsf(x[k]));
#pragma unroll
    for (int off = 1; off < TPR; off *= 2)
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
    return amax;
}

/* Eight channels x of a row (|x| <= amax) as int8 bytes by inv = RN(127 / amax): each
 * RN(x inv) rounded to nearest even, in order (x[0] in the low byte). sa_rint_byte's FADD form
 * where inv is finite; F2I and a clamp where it is not (amax < 127 / FLT_MAX, bf16 only). */
__device__ __forceinline__ uint2 sa_quant8(const float (&x)[8], float inv)
{
    uint32_t q[8];
    if (inv != __int_as_float(0x7f800000)) {
#pragma unroll
        for (int k = 0; k < 8; ++k)
            q[k] = sa_rint_byte(__fmul_rn(x[k], inv));
    } else { /* x * inv is +-inf or NaN */
#pragma unroll
        for (int k = 0; k < 8; ++k)
            q[k] = (uint32_t)max(-127, min(127, __float2int_rn(__fmul_rn(x[k], inv))));
    }
    return make_uint2(sa_pack_low_bytes(q[0], q[1], q[2], q[3]),
                      sa_pack_low_bytes(q[4], q[5], q[6], q[7]));
}

template <int DP> __host__ __device__ constexpr int sa_rq_block_rows()
{
    return SA_RQ_BLOCK_ROWS;
}

/* Block (bx, bh) of the row quantizer of one tensor: rows bx * SA_RQ_BLOCK_ROWS.. of (batch,
 * head) bh. Each thread keeps channels c0..c0+7 (and their mean) for all its rows; lane groups of
 * DP / 8 share a row. The rows' scales (and q.k̄) are written at the end, one thread per row,
 * from shared memory. FULL: d == DP. SUB: K (the mean subtracted; no q.k̄), else Q. */
template <bool BF16, int DP, bool FULL, bool SUB>
__device__ __forceinline__ void sa_rowquant_rows(const sa_rowquant_args &a, int bx, int bh)
{
    /* a partial d loads channel by channel: one row of those at a time */
    constexpr int TPR = DP / 8, RPP = SA_PRE_THREADS / TPR, G = FULL ? SA_RQ_GROUP : 1;
    constexpr int NGROUP = SA_RQ_BLOCK_ROWS / (RPP * G);
    static_assert(SA_CTA_K % RPP == 0 && SA_RQ_BLOCK_ROWS % (RPP * G) == 0,
                  "padded lengths end on whole passes, blocks on whole groups");
    static_assert(RPP % 8 == 0, "a pass moves whole core-matrix row groups");
    __shared__ float row_amax[SA_RQ_BLOCK_ROWS], row_dot[SA_RQ_BLOCK_ROWS];
    const int b = bh / a.heads, h = bh % a.heads;
    const int c0 = (threadIdx.x % TPR) * 8, lr = threadIdx.x / TPR;
    const int first = bx * SA_RQ_BLOCK_ROWS;
    const int nrows = min(SA_RQ_BLOCK_ROWS, a.rows_pad - first); /* a multiple of RPP */
    const char *src = a.src.base + b * a.src.sb + h * a.src.sh + (first + lr) * a.src.st;
    const int64_t src_step = RPP * a.src.st;
    /* RPP rows further is RPP * DP bytes further in both orders (RPP is a multiple of 8) */
    const size_t row = (size_t)bh * a.rows_pad + first + lr;
    signed char *out = a.out + (a.core_order ? sa_core_offset<DP>(row, c0) : row * DP + c0);
    float m[8] = {0, 0, 0, 0, 0, 0, 0, 0}, dm[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (SUB) {
        const float4 *p = (const float4 *)(a.sub_mean + (size_t)bh * DP + c0);
        const float4 u = p[0], v = p[1];
        m[0] = u.x, m[1] = u.y, m[2] = u.z, m[3] = u.w, m[4] = v.x, m[5] = v.y, m[6] = v.z,
        m[7] = v.w;
    }
    if (!SUB && a.dot_mean) {
        const float4 *p =
            (const float4 *)(a.dot_mean + ((size_t)b * (a.heads / a.group) + h / a.group) * DP +
                             c0);
        const float4 u = p[0], v = p[1];
        dm[0] = u.x, dm[1] = u.y, dm[2] = u.z, dm[3] = u.w, dm[4] = v.x, dm[5] = v.y, dm[6] = v.z,
        dm[7] = v.w;
    }
    uint4 cur[G], nxt[G];
#pragma unroll
    for (int i = 0; i < G; ++i)
        cur[i] = first + lr + i * RPP < a.rows ? sa_load8_bits<FULL>(src + i * src_step, c0, a.d)
                                               : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int gi = 0; gi < NGROUP; ++gi) {
        if (gi * G * RPP >= nrows)
            break; /* the rest of the block is past the pad (uniform in the block) */
        if (gi + 1 < NGROUP && (gi + 1) * G * RPP < nrows) {
#pragma unroll
            for (int i = 0; i < G; ++i) {
                const int p = (gi + 1) * G + i;
                nxt[i] = first + lr + p * RPP < a.rows
                             ? sa_load8_bits<FULL>(src + p * src_step, c0, a.d)
                             : make_uint4(0, 0, 0, 0);
            }
        }
#pragma unroll
        for (int i = 0; i < G; ++i) {
            const int p = gi * G + i, r = first + lr + p * RPP;
            if (p * RPP >= nrows)
                break; /* past the pad (uniform in the block) */
            const uint32_t u[4] = {cur[i].x, cur[i].y, cur[i].z, cur[i].w};
            float x[8];
#pragma unroll
            for (int k = 0; k < 8; ++k)
                x[k] = sa_to_float<BF16>((uint16_t)(u[k / 2] >> (16 * (k % 2))));
            if (SUB && r < a.rows) {
#pragma unroll
                for (int k = 0; k < 8; ++k)
                    x[k] = FULL || c0 + k < a.d ? x[k] - m[k] : 0.0f;
            }
            float amax = sa_row_absmax8<TPR>(x);
            if (!SUB && a.dot_mean) {
                float dot = 0.0f;
#pragma unroll
                for (int k = 0; k < 8; ++k)
                    dot = __fmaf_rn(x[k], dm[k], dot);
#pragma unroll
                for (int off = 1; off < TPR; off *= 2)
                    dot += __shfl_xor_sync(0xffffffffu, dot, off);
                if (c0 == 0)
                    row_dot[lr + p * RPP] = dot;
            }
            if (amax == 0.0f)
                amax = 1.0f;
            if (c0 == 0)
                row_amax[lr + p * RPP] = amax;
            *(uint2 *)(out + (size_t)p * RPP * DP) = sa_quant8(x, __fdiv_rn(SA_INT8_MAX, amax));
        }
#pragma unroll
        for (int i = 0; i < G; ++i)
            cur[i] = nxt[i];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < nrows; i += SA_PRE_THREADS) {
        const size_t at = (size_t)bh * a.rows_pad + first + i;
        a.scale[at] = __fmul_rn(__fdiv_rn(row_amax[i], SA_INT8_MAX), a.scale_mul);
        if (!SUB && a.dot_out && first + i < a.rows)
            a.dot_out[(size_t)bh * a.rows + first + i] = row_dot[i] * a.dot_mul;
    }
}

template <bool BF16, int DP, bool FULL>
__device__ __forceinline__ void sa_rowquant_block(const sa_rowquant_args &a, int bx, int bh)
{
    if (a.sub_mean)
        sa_rowquant_rows<BF16, DP, FULL, true>(a, bx, bh);
    else
        sa_rowquant_rows<BF16, DP, FULL, false>(a, bx, bh);
}

/* Q's and K's row quantizers in one launch: blockIdx.y < q_bh are Q's (batch, head) pairs, the
 * rest K's; each tensor's blocks past its own padded length exit (gridDim.x covers the longer).
 * FULL (d == DP, Q's and K's alike) and the rest are separate kernels: inlined side by side in
 * one, their registers add up past 64. */
template <bool BF16, int DP, bool FULL>
__global__ void __launch_bounds__(SA_PRE_THREADS, SA_PRE_MIN_BLOCKS)
    sa_rowquant_kernel(const sa_rowquant_args q, const sa_rowquant_args k, int q_bh)
{
    sa_pdl_enter();
    constexpr int ROWS = sa_rq_block_rows<DP>();
    const int bx = blockIdx.x, by = blockIdx.y;
    if (by < q_bh) {
        if (bx * ROWS < q.rows_pad)
            sa_rowquant_block<BF16, DP, FULL>(q, bx, by);
    } else if (bx * ROWS < k.rows_pad) {
        sa_rowquant_block<BF16, DP, FULL>(k, bx, by - q_bh);
    }
}

template <bool BF16, int DP>
static void sa_rowquant_launch(dim3 grid, const sa_rowquant_args &q, const sa_rowquant_args &k,
                               int q_bh, bool pdl, cudaStream_t stream)
{
    if (k.d == DP)
        sa_launch_k(pdl, sa_rowquant_kernel<BF16, DP, true>, grid, SA_PRE_THREADS, 0, stream, q, k,
                    q_bh);
    else
        sa_launch_k(pdl, sa_rowquant_kernel<BF16, DP, false>, grid, SA_PRE_THREADS, 0, stream, q, k,
                    q_bh);
}

/* Threads of one rank-group block (sa_krank_kernel): one per key of the window (the sort's
 * element; the copy, the absmax and the quantization take a row per DP / 8 threads). */
#define SA_KRANK_THREADS SA_H_RANK_WINDOW
/* Its dynamic shared memory: the window's K rows, whole. */
template <int DP> constexpr int sa_krank_smem()
{
    return SA_H_RANK_WINDOW * DP * 2;
}

/* int8-fp8-wgmma's K by rank groups (sa_internal.h), one block per window of SA_H_RANK_WINDOW
 * keys of one kv head:
 * 1. the window's rows copied into shared memory (cp.async; zeros past the sequence and past d),
 *    so that K is read from memory once (round 50's ncu: reading the rows twice, the second time
 *    after the sort, took 259 MB of DRAM reads for 134 MB of K at D=128 L=16K, 23 % L2 hits),
 *    issued before the wait for the previous kernel;
 * 2. each key's absmax over its smoothed channels (mean subtracted, as sa_rowquant_block; across
 *    a row's lanes by halving, see there), kept as a 64-bit sort key: the absmax's bits
 *    (non-negative floats order as integers) above the key's position reversed, so that one
 *    descending bitonic sort ranks by absmax, ties by position; keys past the sequence sort last
 *    (0); the sort's steps within a warp by shuffles (the first form, a barrier per step, left
 *    the kernel at 0.111 ms for 134 MB of K, D=128 L=16K);
 * 3. the key of rank r goes to its tile's (r / 64) position sa_rank_slot(r % 64, keys of that
 *    tile): perm[position] = key (the sequence's index, for V's conversion), and its group's
 *    absmax is the largest of the group's keys;
 * 4. K's positions quantized with their groups' scales from the shared rows (each group's
 *    reciprocal taken once), in core-matrix order; positions past the sequence as zeros. One
 *    record per tile (k.scale, SA_H_KG_RECORD_BYTES, sa_internal.h): the four groups' scales (a
 *    group without a key gets 1 / 127, as the row quantizer's zero rows), then each position's
 *    key's offset in the window (a position past the sequence its own).
 * Its pace is its instructions: ncu at D=128 L=4K B=4 (round 51, 9c069ee's kernel) put it at
 * 70 % of the SM's issue and 31 % of DRAM's bandwidth; hence the unrolled passes with their
 * addresses stepped, no per-channel liveness tests (the copy's zeros make them), the maxima by
 * halving and one reciprocal per group. */
template <bool BF16, int DP>
__global__ void __launch_bounds__(SA_KRANK_THREADS)
    sa_krank_kernel(const sa_rowquant_args k, int *perm)
{
    constexpr int N = SA_H_RANK_WINDOW, TPR = DP / 8, RPP = SA_KRANK_THREADS / TPR;
    constexpr int TILES = N / SA_CTA_K, PASSES = N / RPP;
    static_assert(N % RPP == 0 && N % SA_CTA_K == 0 && RPP % 8 == 0,
                  "whole passes, whole tiles; a thread's rows keep their place in a core matrix");
    extern __shared__ __align__(16) unsigned char rows[]; /* [N][DP] fp16/bf16 bits */
    __shared__ unsigned long long sort_key[2][N]; /* the sort's exchanges across warps, in turn */
    __shared__ int slot_key[N];                   /* the key (window index) at each position */
    __shared__ unsigned group_amax[TILES * 4];    /* bits, as sort_key's */
    __shared__ float group_inv[TILES * 4];        /* RN(127 / the group's amax) */
    const int bh = blockIdx.y, w0 = blockIdx.x * N, tid = threadIdx.x;
    const int b = bh / k.heads, h = bh % k.heads, c0 = (tid % TPR) * 8, r0 = tid / TPR;
    const int n = min(N, k.rows - w0);             /* keys of the sequence in the window */
    const int positions = min(N, k.rows_pad - w0); /* whole tiles */
    const int bytes = min(16, max(0, (k.d - c0) * 2));
    unsigned char *const my_rows = rows + ((size_t)r0 * DP + c0) * 2; /* row r0, then + RPP */
    constexpr int PASS_BYTES = RPP * DP * 2;
    /* K is the caller's input, which no kernel of this call writes: its copy is issued before
     * the wait for the previous kernel (the statistics' K mean), so that it overlaps its end. */
    {
        const char *src = sa_row_ptr(k.src, b, h, w0 + r0) + c0 * 2;
        const int64_t step = (int64_t)RPP * k.src.st;
        const uint32_t dst = (uint32_t)__cvta_generic_to_shared(my_rows);
        if (n == N && k.d == DP) { /* every row and channel in the source */
#pragma unroll
            for (int i = 0; i < PASSES; ++i, src += step)
                sa_cp_async16_whole(dst + i * PASS_BYTES, src);
        } else { /* the rest zero-filled */
#pragma unroll 4
            for (int i = 0; i < PASSES; ++i, src += step) {
                const bool live = r0 + i * RPP < n && bytes > 0;
                sa_cp_async16(dst + i * PASS_BYTES, live ? src : k.src.base, live ? bytes : 0);
            }
        }
        sa_cp_async_commit();
    }
    sa_pdl_enter();
    float mean[8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
        mean[i] = c0 + i < k.d ? k.sub_mean[(size_t)bh * DP + c0 + i] : 0.0f;
    /* channels c0.. of a shared row (raw bits), smoothed. Channels past d and rows past the
     * sequence were copied as zeros and have a mean of 0 past d: such channels come out 0
     * without a test; rows past the sequence are the callers' to leave out. */
    auto smoothed = [&](const unsigned char *row, float(&x)[8]) {
        const uint4 u = *(const uint4 *)row;
        const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int i = 0; i < 8; ++i)
            x[i] = sa_to_float<BF16>((uint16_t)(w[i / 2] >> (16 * (i % 2)))) - mean[i];
    };
    if (tid < TILES * 4)
        group_amax[tid] = 0u;
    sa_cp_async_wait<0>();
    __syncthreads();
    /* each row's absmax: this thread's eight channels of its PASSES rows, then across the row's
     * TPR lanes by halving: at each step a lane keeps half of its rows (the upper half where its
     * lane bit is set) and takes its partner's maxima of them, PASSES - 1 shuffles in all where a
     * reduction row by row takes log2(TPR) each; lane j of the row's lanes ends with row j's. */
    static_assert(PASSES == TPR && (TPR & (TPR - 1)) == 0, "a row of maxima per lane group");
    float part[PASSES];
#pragma unroll
    for (int i = 0; i < PASSES; ++i) {
        float x[8];
        smoothed(my_rows + i * PASS_BYTES, x);
        part[i] = 0.0f;
#pragma unroll
        for (int c = 0; c < 8; ++c)
            part[i] = fmaxf(part[i], fabsf(x[c]));
    }
    const int lane_j = tid % TPR;
#pragma unroll
    for (int step = 1; step < PASSES; step *= 2) {
        const int half = PASSES / (2 * step);
        const bool upper = lane_j & half;
#pragma unroll
        for (int i = 0; i < half; ++i) {
            const float give = upper ? part[i] : part[i + half];
            const float keep = upper ? part[i + half] : part[i];
            part[i] = fmaxf(keep, __shfl_xor_sync(0xffffffffu, give, half));
        }
    }
    {
        const int r = r0 + lane_j * RPP; /* row lane_j of this thread's rows */
        sort_key[0][r] =                 /* a row past the sequence sorts last */
            r < n ? (unsigned long long)__float_as_uint(part[0]) << 32 | (unsigned)(N - r) : 0ull;
    }
    __syncthreads();
    /* descending bitonic sort, thread t holding element t: each step it keeps the larger or the
     * smaller of its element and element t ^ j (the larger where t is the pair's lower index in
     * a run sorted descending, bit len of t clear); across lanes by shuffles, across warps
     * (j >= 32: 6 of the 36 steps at 256 keys) through shared memory, one barrier each */
    unsigned long long sk = sort_key[0][tid];
    int buf = 0;
#pragma unroll
    for (int len = 2; len <= N; len *= 2)
#pragma unroll
        for (int j = len / 2; j > 0; j /= 2) {
            unsigned long long other;
            if (j >= 32) {
                sort_key[buf][tid] = sk;
                __syncthreads();
                other = sort_key[buf][tid ^ j];
                buf ^= 1;
            } else {
                other = __shfl_xor_sync(0xffffffffu, sk, j);
            }
            const bool keep_max = ((tid & len) == 0) == ((tid & j) == 0);
            sk = keep_max ? max(sk, other) : min(sk, other);
        }
    static_assert(SA_KRANK_THREADS == N && N % 32 == 0, "a thread per key, whole warps");
    if (tid < n) { /* sk: the key of rank tid */
        const int rank = tid, t = rank / SA_CTA_K, m = min(SA_CTA_K, n - t * SA_CTA_K);
        const int pos = t * SA_CTA_K + sa_rank_slot(rank % SA_CTA_K, m);
        const int j = N - (int)(unsigned)sk;
        slot_key[pos] = j;
        perm[(size_t)bh * k.rows_pad + w0 + pos] = w0 + j;
        atomicMax(&group_amax[t * 4 + (pos % 8) / 2], (unsigned)(sk >> 32));
    }
    __syncthreads();
    /* each group's scale's reciprocal, once (a group without a key: amax 1, as the row
     * quantizer's zero rows) */
    if (tid < TILES * 4) {
        const float amax = __uint_as_float(group_amax[tid]);
        group_inv[tid] = __fdiv_rn(SA_INT8_MAX, amax == 0.0f ? 1.0f : amax);
    }
    __syncthreads();
    {
        /* a thread's positions p = r0 + i RPP keep their place in a core matrix (RPP % 8 == 0),
         * so its outputs lie RPP rows of DP bytes apart */
        signed char *out = k.out + sa_core_offset<DP>((size_t)bh * k.rows_pad + w0 + r0, c0);
        const unsigned char *my_cols = rows + c0 * 2;
        const float *my_inv = group_inv + (r0 % 8) / 2; /* the group within its tile: p % 8 */
#pragma unroll
        for (int i = 0; i < PASSES; ++i) {
            const int p = r0 + i * RPP;
            if (p >= positions)
                break;
            float x[8];
            smoothed(my_cols + slot_key[p < n ? p : 0] * (DP * 2), x);
            /* |x| <= the group's amax, as sa_quant8 wants */
            uint2 q = sa_quant8(x, my_inv[(unsigned)p / SA_CTA_K * 4]);
            if (p >= n) /* past the sequence: zeros */
                q = make_uint2(0u, 0u);
            *(uint2 *)(out + (size_t)i * RPP * DP) = q;
        }
    }
    /* the records, a word per thread: word e of tile t */
    constexpr int WORDS = SA_H_KG_RECORD_BYTES / 4, POS_WORD = SA_H_KG_POS_OFFSET / 4;
    static_assert(TILES * WORDS <= SA_KRANK_THREADS && POS_WORD == 4 && WORDS - POS_WORD == 16,
                  "one pass; four scales, then 64 position bytes");
    if (tid < positions / SA_CTA_K * WORDS) {
        const int t = tid / WORDS, e = tid % WORDS;
        uint32_t word = 0;
        if (e < POS_WORD) {
            const float amax = __uint_as_float(group_amax[t * 4 + e]);
            word = __float_as_uint(__fdiv_rn(amax == 0.0f ? 1.0f : amax, SA_INT8_MAX));
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i) { /* byte bb = 16 g + 2 nt + x: position 8 nt + 2 g + x */
                const int bb = 4 * (e - POS_WORD) + i;
                const int p = t * SA_CTA_K + ((bb % 16) / 2) * 8 + 2 * (bb / 16) + bb % 2;
                word |= (uint32_t)(p < n ? slot_key[p] : p) << (8 * i);
            }
        }
        const size_t rec = ((size_t)bh * (k.rows_pad / SA_CTA_K) + w0 / SA_CTA_K + t) * WORDS;
        ((uint32_t *)k.scale)[rec + e] = word;
    }
}

/* Threads of one V -> E4M3 Vᵀ block: one warp per 16 channels of one 64-key tile. */
template <int DP> __host__ __device__ constexpr int sa_vfp8_threads()
{
    return DP * 2;
}

/* Byte offset in the shared copy of one Vᵀ tile of the tile's output byte `o`: the 16-byte
 * pieces of each 128-byte line are permuted by the line's index, so that both the 4-byte writes
 * (8 channels x 4 key groups per instruction) and the 16-byte reads in output order are free of
 * bank conflicts, in row order and in wgmma's core-matrix order alike. */
__device__ __forceinline__ int sa_vt_swizzle(int o)
{
    return o ^ (((o >> 7) & 7) << 4);
}

/* One thread's part of a 64-key Vᵀ tile in shared memory (buf, sa_vt_swizzle's order): its
 * channels c0..c0+7 of the keys {0, 1, 8, 9} + 2 w + 16 g (cur[0..3], raw fp16/bf16 bits; the
 * first of them at sequence position t) make eight 4-byte words of the output, each element
 * __nv_cvt_float_to_fp8(v * vs[k]) with RECIP (vs: the reciprocals), else of __fdiv_rn(v, vs[k]),
 * v less vm[k] where SMOOTH (keys past lkv stay 0).
 * See sa_vfp8_tiles for the layout. */
template <bool BF16, bool SMOOTH, bool RECIP>
__device__ __forceinline__ void sa_vt_words(const uint4 cur[4], const float vs[8],
                                            const float vm[8], int t, int lkv, int g, int w, int c0,
                                            unsigned char *buf, int core_order)
{
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        float x[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const uint32_t u[4] = {cur[j].x, cur[j].y, cur[j].z, cur[j].w};
            float f = sa_to_float<BF16>((uint16_t)(u[k / 2] >> (16 * (k % 2))));
            if (SMOOTH && t + (j / 2) * 8 + j % 2 < lkv) /* keys t, t+1, t+8, t+9 */
                f -= vm[k];
            /* RECIP: vs holds the reciprocals (SA_VT_RECIP) */
            x[j] = RECIP ? __fmul_rn(f, vs[k]) : __fdiv_rn(f, vs[k]);
        }
        /* byte 0: key 2w, byte 1: 2w+1, byte 2: 2w+8, byte 3: 2w+9 */
        const __nv_fp8x2_storage_t lo =
            __nv_cvt_float2_to_fp8x2(make_float2(x[0], x[1]), __NV_SATFINITE, __NV_E4M3);
        const __nv_fp8x2_storage_t hi =
            __nv_cvt_float2_to_fp8x2(make_float2(x[2], x[3]), __NV_SATFINITE, __NV_E4M3);
        /* tile-major: [bh][tile][channel][64 keys], so one key tile is contiguous; wgmma's
         * order permutes the 16-byte pieces inside the tile */
        const int c = c0 + k;
        const int at =
            (core_order ? (int)sa_core_offset<SA_CTA_K>(c, g * 16) : c * SA_CTA_K + g * 16) + w * 4;
        *(uint32_t *)(buf + sa_vt_swizzle(at)) = (uint32_t)lo | (uint32_t)hi << 16;
    }
}

/* A finished Vᵀ tile from shared memory (buf) to out in 16-byte stores, by THREADS threads
 * (tid: this one's index among them). */
template <int DP, int THREADS>
__device__ __forceinline__ void sa_vt_store(const unsigned char *buf, unsigned char *out, int tid)
{
    constexpr int TILE_BYTES = DP * SA_CTA_K;
    static_assert(TILE_BYTES % (THREADS * 16) == 0, "whole 16-byte stores per thread");
#pragma unroll
    for (int o = tid * 16; o < TILE_BYTES; o += THREADS * 16)
        *(uint4 *)(out + o) = *(const uint4 *)(buf + sa_vt_swizzle(o));
}

/* V -> E4M3 by multiplying with the channel scale's reciprocal, RN(1 / v_scale), instead of
 * dividing (sa_internal.h; the C reference does the same): one FMUL per value where __fdiv_rn
 * takes about twelve instructions with its slow-path branch. ncu at D=128 L=1K (round 30): the
 * conversion kernel ran at 71 % of the SM's throughput and 47 % of DRAM's. A group of eight
 * channels with a scale below FLT_MIN (its reciprocal could overflow) divides. 0: every value
 * divides (the conversion before round 31). */
#ifndef SA_VT_RECIP
#define SA_VT_RECIP 1
#endif
/* 64-key tiles of one (batch, kv head) that one V -> E4M3 Vᵀ block converts, one after the
 * other with the next tile's loads in flight. */
#ifndef SA_VT_TILES /* a build may override it (-D) to measure another */
#define SA_VT_TILES 4
#endif
/* As the other pre-pass kernels (blocks of 256 threads at D=128, 128 at D=64). */
#define SA_VT_MIN_BLOCKS (SA_PRE_MIN_BLOCKS * SA_PRE_THREADS / sa_vfp8_threads<DP>())

/* Byte offset in a staged 64-key V tile (rows of DP fp16/bf16 values) of the 16-byte piece
 * `piece` (channels 8 piece..) of key `row`: the piece's index XORed with 2 ((row / 2) % 4), so
 * that both the copy's whole rows and the conversion's reads (keys 16 g + 2 w + {0, 1, 8, 9},
 * pieces 2 warp + lane / 16: eight pieces of each 128 bytes in one instruction) are free of bank
 * conflicts. */
template <int DP> __device__ __forceinline__ int sa_vt_stage_at(int row, int piece)
{
    return row * DP * 2 + ((piece ^ (((row >> 1) & 3) << 1)) * 16);
}

/* V -> E4M3 Vᵀ of tiles tile0.. of (batch, kv head) bh, tile i + 1's copy in flight while tile
 * i is converted. The copy moves V's rows whole into shared memory (cp.async, 16 bytes per
 * thread: 512 contiguous bytes per warp instruction; keys past lkv and channels past d as zeros,
 * by the copy's source size, so whole and partial head dims take one path). Round 24 measured it
 * against loading each thread's keys straight from memory (32 bytes of 16 rows per warp
 * instruction, 16 L1 lines per request): at D=128 L=1K B=16 H=32 81.9 against 104.1 us (ncu),
 * the same output bit for bit. Then lane l of warp wp reads channels c0..c0+7 (c0 = 16 wp + 8 (l
 * / 16)) of the keys {0, 1, 8, 9} + 2 w + 16 g of the tile (g = l / 4 % 4, w = l % 4): exactly
 * the four keys of word w of the tile's 16-key group g in the permuted order (position p of each
 * 16-token group holds token {0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15}[p], the FP8
 * mma's A fragment order), so each of its channels makes one finished 4-byte word of the output.
 * The words meet in shared memory (two buffers: one barrier per tile) in the output's byte order
 * and leave in 16-byte stores. Each element is __nv_cvt_float_to_fp8(v * RN(1 / v_scale)) (see
 * SA_VT_RECIP);
 * SMOOTH (V smoothed, sa_smooth_v): of v less its channel mean (vmean), keys past the sequence
 * staying 0. perm (rank groups, sa_krank_kernel): position t holds the sequence's key perm[t] of
 * this head, as K's; NULL: key t. */
template <bool BF16, int DP, bool SMOOTH>
__device__ __forceinline__ void sa_vfp8_tiles(const sa_tensor_view &v, int bh, int b, int h,
                                              int lkv, int lk_pad, int d, const float *vscale,
                                              const float *vmean, const int *perm,
                                              unsigned char *vt, int core_order)
{
    constexpr int THREADS = sa_vfp8_threads<DP>(), TILE_BYTES = DP * SA_CTA_K;
    constexpr int PIECES = DP / 8, COPIES = SA_CTA_K * PIECES / THREADS; /* per thread */
    __shared__ __align__(16) unsigned char stage[2][SA_CTA_K * DP * 2];
    __shared__ __align__(16) unsigned char tile[2][TILE_BYTES];
    const int lane = threadIdx.x % 32, c0 = (threadIdx.x / 32) * 16 + (lane / 16) * 8;
    const int g = lane / 4 % 4, w = lane % 4, key0 = g * 16 + 2 * w; /* keys +0, +1, +8, +9 */
    const int tile0 = blockIdx.x * SA_VT_TILES;
    const int ntile = min(SA_VT_TILES, lk_pad / SA_CTA_K - tile0);
    const char *src = v.base + b * v.sb + h * v.sh;
    /* the copy's piece and first row: THREADS / PIECES rows per pass, COPIES passes */
    const int cp_piece = threadIdx.x % PIECES, cp_row = threadIdx.x / PIECES;
    const int cp_bytes = min(16, max(0, (d - cp_piece * 8) * 2));
    const auto copy_tile = [&](int tl, unsigned char *dst) {
#pragma unroll
        for (int j = 0; j < COPIES; ++j) {
            const int row = cp_row + j * (THREADS / PIECES), t = tl * SA_CTA_K + row;
            const bool live = t < lkv && cp_bytes > 0;
            const int key = live && perm ? perm[(size_t)bh * lk_pad + t] : t;
            sa_cp_async16(
                (uint32_t)__cvta_generic_to_shared(dst + sa_vt_stage_at<DP>(row, cp_piece)),
                src + (live ? key * v.st + cp_piece * 16 : 0), live ? cp_bytes : 0);
        }
        sa_cp_async_commit();
    };
    copy_tile(tile0, stage[0]);
    /* this thread's eight channels' scales (SA_VT_RECIP: their reciprocals, where every one is
     * a normal float: else 1 / scale could overflow, and they divide) and means */
    const float4 *vs4 = (const float4 *)(vscale + (size_t)bh * DP + c0);
    const float4 va = vs4[0], vb = vs4[1];
    float vs[8] = {va.x, va.y, va.z, va.w, vb.x, vb.y, vb.z, vb.w};
    bool recip = SA_VT_RECIP;
#pragma unroll
    for (int k = 0; k < 8; ++k)
        recip = recip && vs[k] >= FLT_MIN;
    if (recip) {
#pragma unroll
        for (int k = 0; k < 8; ++k)
            vs[k] = __fdiv_rn(1.0f, vs[k]);
    }
    float vm[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if constexpr (SMOOTH) {
        const float4 *vm4 = (const float4 *)(vmean + (size_t)bh * DP + c0);
        const float4 ma = vm4[0], mb = vm4[1];
        const float m8[8] = {ma.x, ma.y, ma.z, ma.w, mb.x, mb.y, mb.z, mb.w};
#pragma unroll
        for (int k = 0; k < 8; ++k)
            vm[k] = m8[k];
    }
#pragma unroll 1
    for (int i = 0; i < ntile; ++i) {
        if (i + 1 < ntile) {
            copy_tile(tile0 + i + 1, stage[(i + 1) & 1]);
            sa_cp_async_wait<1>();
        } else {
            sa_cp_async_wait<0>();
        }
        __syncthreads(); /* tile i's rows landed, every thread's */
        const unsigned char *st = stage[i & 1];
        uint4 cur[4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
            cur[j] = *(const uint4 *)(st + sa_vt_stage_at<DP>(key0 + (j / 2) * 8 + j % 2, c0 / 8));
        unsigned char *buf = tile[i & 1];
        const int t = (tile0 + i) * SA_CTA_K + key0;
        if (recip)
            sa_vt_words<BF16, SMOOTH, true>(cur, vs, vm, t, lkv, g, w, c0, buf, core_order);
        else
            sa_vt_words<BF16, SMOOTH, false>(cur, vs, vm, t, lkv, g, w, c0, buf, core_order);
        /* buf complete; every read of stage[i & 1] done before tile i + 2's copy overwrites it */
        __syncthreads();
        sa_vt_store<DP, THREADS>(buf, vt + ((size_t)bh * lk_pad + (tile0 + i) * SA_CTA_K) * DP,
                                 threadIdx.x);
    }
}

template <bool BF16, int DP, bool SMOOTH>
__global__ void __launch_bounds__(sa_vfp8_threads<DP>(), SA_VT_MIN_BLOCKS)
    sa_vfp8_kernel(sa_tensor_view v, int hkv, int lkv, int lk_pad, int d, const float *vscale,
                   const float *vmean, const int *perm, unsigned char *vt, int core_order)
{
    sa_pdl_enter();
    const int bh = blockIdx.y;
    sa_vfp8_tiles<BF16, DP, SMOOTH>(v, bh, bh / hkv, bh % hkv, lkv, lk_pad, d, vscale, vmean, perm,
                                    vt, core_order);
}

/* A call with rank groups (sa_rank_groups, the workspace plan's choice): K by sa_krank_kernel
 * and *launched set; otherwise nothing launched. Only libraries with Hopper code hold the rank
 * kernel. */
template <bool BF16, int DP>
static cudaError_t sa_krank_launch(const struct sa_problem *p, const struct sa_ws_layout *w,
                                   char *ws, const sa_rowquant_args &k, bool pdl,
                                   cudaStream_t stream, bool *launched)
{
    *launched = false;
    if constexpr (SA_H_RANK_GROUPS && SA_WITH_HOPPER) {
        if (!w->rank_groups)
            return cudaSuccess;
        const auto kernel = sa_krank_kernel<BF16, DP>;
        const cudaError_t e = sa_set_smem_once(p->ctx, (const void *)kernel, sa_krank_smem<DP>());
        if (e != cudaSuccess)
            return e;
        const int windows = (w->lk_pad + SA_H_RANK_WINDOW - 1) / SA_H_RANK_WINDOW;
        sa_launch_k(pdl, kernel, dim3(windows, p->batch * p->hkv), SA_KRANK_THREADS,
                    sa_krank_smem<DP>(), stream, k, (int *)(ws + w->kperm));
        *launched = true;
        return cudaSuccess;
    } else {
        (void)p, (void)w, (void)ws, (void)k, (void)pdl, (void)stream;
        return cudaSuccess;
    }
}

static sa_tensor_view sa_view(const void *base, const int64_t s[3])
{
    sa_tensor_view v = {(const char *)base, s[0] * 2, s[1] * 2, s[2] * 2};
    return v;
}

template <bool BF16, int DP>
static cudaError_t sa_quant_run(const struct sa_problem *p, const struct sa_ws_layout *w, char *ws,
                                bool with_q, bool pdl, cudaStream_t stream)
{
    const bool fp8 = sa_mode_pv_fp8(p->mode);
    const sa_tensor_view kv = sa_view(p->k, p->ks), vv = sa_view(p->v, p->vs);
    const int bhk = p->batch * p->hkv, bhq = p->batch * p->hq;
    float *kpart = (float *)(ws + w->kpart), *vpart = fp8 ? (float *)(ws + w->vpart) : nullptr;
    float *km = (float *)(ws + w->km), *vscale = fp8 ? (float *)(ws + w->vscale) : nullptr;
    /* V smoothed (the workspace plan's choice); only libraries with Hopper code hold the
     * smoothing kernels */
    const bool smooth = w->smooth_v;
    float *vmin = smooth ? (float *)(ws + w->vmin) : nullptr;
    float *vsum = smooth ? (float *)(ws + w->vsum) : nullptr;
    float *vmean = smooth ? (float *)(ws + w->vmean) : nullptr;

    /* With one statistics chunk (kv_len <= SA_STAT_ROWS) the statistics kernel finalizes too. */
    const float v_max = sa_mode_v_scale_max(p->mode);
    const dim3 sgrid(w->nchunk, bhk);
    if constexpr (SA_WITH_HOPPER) {
        if (smooth)
            sa_stats_kernel<BF16, DP, true><<<sgrid, SA_PRE_THREADS, 0, stream>>>(
                kv, vv, p->hkv, p->lkv, p->d, w->nchunk, kpart, vpart, vmin, vsum, km, vscale,
                vmean, v_max);
    }
    if (!smooth)
        sa_stats_kernel<BF16, DP, false><<<sgrid, SA_PRE_THREADS, 0, stream>>>(
            kv, vv, p->hkv, p->lkv, p->d, w->nchunk, kpart, vpart, nullptr, nullptr, km, vscale,
            nullptr, v_max);
    /* the statistics kernel is the call's first (launched after whatever the stream ran before);
     * every later one may be a programmatic dependent */
    if (w->nchunk > 1)
        sa_launch_k(pdl, sa_finalize_kernel, bhk, DP, 0, stream, DP, w->nchunk, p->lkv, kpart,
                    vpart, vmin, vsum, km, vscale, vmean, v_max);

    constexpr int RPB = sa_rq_block_rows<DP>(); /* rows per block */
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
    /* one tensor's rows by themselves (the row quantizer's blocks of Q's or K's heads) */
    const auto q_alone = [&] {
        sa_rowquant_launch<BF16, DP>(dim3((w->lq_pad + RPB - 1) / RPB, bhq), q, q, bhq, pdl,
                                     stream);
    };
    const auto k_alone = [&] {
        sa_rowquant_launch<BF16, DP>(dim3((w->lk_pad + RPB - 1) / RPB, bhk), k, k, bhk, pdl,
                                     stream);
    };
    bool ranked = false;
    const cudaError_t e = sa_krank_launch<BF16, DP>(p, w, ws, k, pdl, stream, &ranked);
    if (e != cudaSuccess)
        return e;
    if (ranked) { /* K by rank groups, Q by rows if wanted */
        if (with_q)
            q_alone();
    } else if (!with_q) { /* the attention kernel quantizes Q (int8-fp8-wgmma) */
        k_alone();
    } else if (bhq + bhk <= SA_MAX_GRID_Y) {
        /* Q and K in one launch (K's needs the mean, Q's the mean only for the LSE: both after
         * the statistics) */
        const int blocks_x = (max(w->lq_pad, w->lk_pad) + RPB - 1) / RPB;
        sa_rowquant_launch<BF16, DP>(dim3(blocks_x, bhq + bhk), q, k, bhq, pdl, stream);
    } else { /* beyond the grid's y limit together: one launch each */
        q_alone();
        k_alone();
    }
    if (fp8) {
        const dim3 grid((w->lk_pad / SA_CTA_K + SA_VT_TILES - 1) / SA_VT_TILES, bhk);
        unsigned char *vt = (unsigned char *)(ws + w->vt);
        const int core = sa_mode_wgmma_layout(p->mode);
        constexpr int T = sa_vfp8_threads<DP>();
        const int *perm = w->rank_groups ? (const int *)(ws + w->kperm) : nullptr;
        if constexpr (SA_WITH_HOPPER) {
            if (smooth)
                sa_launch_k(pdl, sa_vfp8_kernel<BF16, DP, true>, grid, T, 0, stream, vv, p->hkv,
                            p->lkv, w->lk_pad, p->d, vscale, vmean, perm, vt, core);
        }
        if (!smooth)
            sa_launch_k(pdl, sa_vfp8_kernel<BF16, DP, false>, grid, T, 0, stream, vv, p->hkv,
                        p->lkv, w->lk_pad, p->d, vscale, nullptr, perm, vt, core);
    }
    return cudaGetLastError();
}

cudaError_t sa_quant_launch(const struct sa_problem *p, int d_pad, const struct sa_ws_layout *w,
                            char *ws, int with_q, bool pdl, cudaStream_t stream)
{
    const bool bf16 = p->dtype == SAGEATTN_DTYPE_BF16;
    if (d_pad == 64)
        return bf16 ? sa_quant_run<true, 64>(p, w, ws, with_q, pdl, stream)
                    : sa_quant_run<false, 64>(p, w, ws, with_q, pdl, stream);
    return bf16 ? sa_quant_run<true, 128>(p, w, ws, with_q, pdl, stream)
                : sa_quant_run<false, 128>(p, w, ws, with_q, pdl, stream);
}
