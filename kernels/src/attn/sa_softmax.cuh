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

/* One online-softmax step over NT*8 keys: turns t into p in place (p = exp2(logit - max) *
 * 2^P_LOG2, i.e. already scaled for FP8 when P_LOG2 = log2(448)), updates the row state, and
 * rescales O and the row sums when a row max moved (a warp-uniform branch).
 * LAZY_ALPHA: compute the rescale factors (one exponential per row) inside that rare branch
 * instead of before the vote: in an interior tile of a long sequence no row max moves, so 4
 * MUFU and their FADD/FMUL/FSETP/FSEL (19 instructions per tile on sm_120a) are not executed.
 * Same values either way; it only moves register pressure, so it is chosen per kernel
 * (sa_lazy_alpha in sa_mainloop.cuh) where ptxas spills no more with it. */
template <int NT, int DN, bool LAZY_ALPHA = false>
__device__ __forceinline__ void sa_softmax_step(float t[SA_MT][NT][4], sa_row_state &st,
                                                const float row_scale[SA_MT][2],
                                                float o[SA_MT][DN][4], float p_log2)
{
    float m_use[SA_MT][2], alpha_or_old[SA_MT][2]; /* alpha, or the old max when LAZY_ALPHA */
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
    /* Two separate loops under a warp-uniform branch, so that only one form is executed. */
    if (SA_FAST_SOFTMAX && __all_sync(0xffffffffu, small)) {
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float rs = row_scale[mt][h], mq = p_log2 - m_use[mt][h] * rs;
#pragma unroll
                for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        t[mt][nt][2 * h + e] = sa_exp2(fmaf(t[mt][nt][2 * h + e], rs, mq));
            }
    } else {
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float rs = row_scale[mt][h], m = m_use[mt][h];
#pragma unroll
                for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        t[mt][nt][2 * h + e] = sa_exp2(fmaf(t[mt][nt][2 * h + e] - m, rs, p_log2));
            }
    }
#pragma unroll
    for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            st.sum[mt][h] += sa_row_sum<NT>(t[mt], h);
}

#endif
