/* Online softmax in base 2 on the S fragment of one warp (2 m16 tiles x NT n8 tiles).
 *
 * Element e of n-tile nt in m-tile mt belongs to row (mt*16 + lane/4 + 8*(e/2)) and key column
 * (nt*8 + 2*(lane%4) + e%2). Each row is spread over the 4 lanes of a quad. Scores t are in
 * "raw" units; row_scale (> 0) turns them into base-2 logits. p = exp2((t - max) * row_scale):
 * subtracting before scaling makes the row maximum give exactly p = 1, whatever its magnitude
 * (an FFMA with a pre-scaled max loses that for |logit| beyond ~1e5 and can zero a whole row). */
#ifndef SA_SOFTMAX_CUH
#define SA_SOFTMAX_CUH

#include <math.h>

#include "../sa_internal.h"
#include "sa_kernels.h"
#include "sa_ptx.cuh"

struct sa_row_state {
    float max[SA_MT][2]; /* [mt][half]: running max of t (raw units), -inf before any key */
    float sum[SA_MT][2]; /* this lane's partial sum of p (quad-reduced in the epilogue) */
};

/* Logits below this magnitude (base 2) take the one-FFMA path: the rounding of max*scale
 * then costs at most 2^12 * 2^-24 = 2.4e-4 in the exponent. */
#define SA_FFMA_SAFE_LOGIT 4096.0f

/* Max and sum of the 2*NT values of one row half held by this lane, as balanced trees: the
 * dependency chain is log2(2*NT) deep instead of 2*NT. */
template <int NT> __device__ __forceinline__ float sa_row_max(const float t[NT][4], int h)
{
    float v[NT];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
        v[nt] = fmaxf(t[nt][2 * h], t[nt][2 * h + 1]);
#pragma unroll
    for (int w = NT / 2; w >= 1; w /= 2)
#pragma unroll
        for (int i = 0; i < w; ++i)
            v[i] = fmaxf(v[i], v[i + w]);
    return v[0];
}
template <int NT> __device__ __forceinline__ float sa_row_sum(const float t[NT][4], int h)
{
    float v[NT];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
        v[nt] = t[nt][2 * h] + t[nt][2 * h + 1];
#pragma unroll
    for (int w = NT / 2; w >= 1; w /= 2)
#pragma unroll
        for (int i = 0; i < w; ++i)
            v[i] += v[i + w];
    return v[0];
}

/* Whether the kernel computes the softmax's rescale factors only when a row max moved
 * (sa_softmax_max's LAZY_ALPHA): the same values, fewer instructions per interior tile, but
 * ptxas (CUDA 13.0) allocates registers differently. Used where that spills no more: int8-fp8
 * and int8-fp8-bs at D=128 on sm_120a/121a (int8-fp8-bs: 32/104 -> 24/96 bytes; int8-fp8's
 * unchanged). Elsewhere it added spills (int8-fp16 D=128 on sm_90: 0 -> 116/100 bytes;
 * int8-fp8-f16acc on sm_89 and sm_120a), so those kernels keep computing alpha every tile. */
template <int KMODE, int D> __device__ constexpr bool sa_lazy_alpha()
{
#if defined(__CUDA_ARCH__)
    constexpr int arch = __CUDA_ARCH__;
#else
    constexpr int arch = 0;
#endif
    return (KMODE == SA_KMODE_INT8_FP8 || KMODE == SA_KMODE_INT8_FP8_BS) && D == 128 &&
           arch >= 1200;
}

/* The first half of an online-softmax step over NT*8 keys: the new row maxima (st.max), the
 * values the exponentials subtract (m_use), O's and the row sums' rescale when a row max moved
 * (a warp-uniform branch), and whether every row takes the one-FFMA exponential (the returned
 * warp vote).
 * LAZY_ALPHA: compute the rescale factors (one exponential per row) inside that rare branch
 * instead of before the vote: in an interior tile of a long sequence no row max moves, so 4
 * MUFU and their FADD/FMUL/FSETP/FSEL (19 instructions per tile on sm_120a) are not executed.
 * Same values either way; it only moves register pressure, so it is chosen per kernel
 * (sa_lazy_alpha above) where ptxas spills no more with it. */
template <int NT, int DN, bool LAZY_ALPHA>
__device__ __forceinline__ bool sa_softmax_max(const float t[SA_MT][NT][4], sa_row_state &st,
                                               const float row_scale[SA_MT][2],
                                               float o[SA_MT][DN][4], float m_use[SA_MT][2])
{
    float alpha_or_old[SA_MT][2]; /* alpha, or the old max when LAZY_ALPHA */
    bool small = true, moved = false;
#pragma unroll
    for (int mt = 0; mt < SA_MT; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float mx = fmaxf(st.max[mt][h], sa_row_max<NT>(t[mt], h));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            /* A row with no visible key yet keeps max -inf; use 0 so -inf - max stays -inf. */
            m_use[mt][h] = mx == -INFINITY ? 0.0f : mx;
            const float old = st.max[mt][h];
            alpha_or_old[mt][h] = LAZY_ALPHA ? old
                                  : old == -INFINITY
                                      ? 0.0f
                                      : sa_exp2((old - m_use[mt][h]) * row_scale[mt][h]);
            moved |= old != mx;
            small &= fabsf(m_use[mt][h] * row_scale[mt][h]) < SA_FFMA_SAFE_LOGIT;
            st.max[mt][h] = mx;
        }
    }
    /* Rescale first, so that alpha is dead before the exponentials (register pressure). */
    if (!SA_FAST_SOFTMAX || __any_sync(0xffffffffu, moved)) {
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt) {
            float alpha[2];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float old = alpha_or_old[mt][h];
                alpha[h] = !LAZY_ALPHA        ? old
                           : old == -INFINITY ? 0.0f
                                              : sa_exp2((old - m_use[mt][h]) * row_scale[mt][h]);
                st.sum[mt][h] *= alpha[h];
            }
#pragma unroll
            for (int nt = 0; nt < DN; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    o[mt][nt][e] *= alpha[e >> 1];
        }
    }
    return SA_FAST_SOFTMAX && __all_sync(0xffffffffu, small);
}

/* p = exp2(logit - max) * 2^p_log2 for the NT*8 values of row half h of one m-tile, in place:
 * FAST, one FFMA per value (every row's |max * rs| below SA_FFMA_SAFE_LOGIT); else the exact
 * form, which subtracts before it scales. */
template <int NT, bool FAST>
__device__ __forceinline__ void sa_softmax_exp_half(float t[NT][4], int h, float rs, float m,
                                                    float p_log2)
{
    const float mq = p_log2 - m * rs;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e)
            t[nt][2 * h + e] = FAST ? sa_exp2(fmaf(t[nt][2 * h + e], rs, mq))
                                    : sa_exp2(fmaf(t[nt][2 * h + e] - m, rs, p_log2));
}

/* One online-softmax step over NT*8 keys: turns t into p in place (p = exp2(logit - max) *
 * 2^P_LOG2, i.e. already scaled for FP8 when P_LOG2 = log2(448)), updates the row state, and
 * rescales O and the row sums when a row max moved (sa_softmax_max). */
template <int NT, int DN, bool LAZY_ALPHA = false>
__device__ __forceinline__ void sa_softmax_step(float t[SA_MT][NT][4], sa_row_state &st,
                                                const float row_scale[SA_MT][2],
                                                float o[SA_MT][DN][4], float p_log2)
{
    float m_use[SA_MT][2];
    /* Two separate loops under a warp-uniform branch, so that only one form is executed. */
    if (sa_softmax_max<NT, DN, LAZY_ALPHA>(t, st, row_scale, o, m_use)) {
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                sa_softmax_exp_half<NT, true>(t[mt], h, row_scale[mt][h], m_use[mt][h], p_log2);
    } else {
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                sa_softmax_exp_half<NT, false>(t[mt], h, row_scale[mt][h], m_use[mt][h], p_log2);
    }
#pragma unroll
    for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            st.sum[mt][h] += sa_row_sum<NT>(t[mt], h);
}

#endif
