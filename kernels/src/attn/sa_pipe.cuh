/* The software-pipelined main loop (SA_PIPE_QK, issue 9): key tile j+1's INT8 Q·Kᵀ MMAs are
 * issued in the same basic block as tile j's exponentials, row sums and P packing, so that
 * ptxas can interleave the tensor instructions with the FP32/MUFU ones inside one warp (the
 * plain loop runs them one after the other: S = Q·Kᵀ, then the softmax, then P·V).
 *
 * Per key tile j (S_j = tile j's scores, dequantized at the end of step j-1):
 *   wait for K[j+1], barrier, copies of K[j+2] and V[j+1] (the K ring runs one tile further
 *   ahead than in the plain loop: K[j+1] must be resident while tile j's softmax runs);
 *   masks of S_j; row maxima, votes and the rare rescale of O (sa_softmax_max);
 *   one warp-uniform branch on the exponential's form, each side one basic block of two
 *   segments: half of the pipelined 16-key pairs of Q·K[j+1]ᵀ (all k-steps), then half of the
 *   warp's row halves' exponentials, row sums and P packing;
 *   wait for V[j], barrier, P·V(j) from the packed P; the pairs not pipelined (SA_PIPE_QK=2)
 *   and S_{j+1}'s dequantization by K[j+1]'s scales, in a block of their own.
 * The arithmetic of every value is the plain loop's (same instructions, same order of each
 * sum), so the output is bit-identical; only the schedule differs. The last tile's extra
 * MMAs read a K buffer that holds an older tile (or, with one tile, nothing loaded) and their
 * result is never used. Two S-sized sets of registers are live in the interleaved block (the
 * next tile's accumulators and this tile's P, packed as it goes) and during P·V: with 32 query
 * rows per warp at D=128 ptxas spills hundreds of bytes; with 16 (SA_WARP_Q=16, one block of
 * 8 warps per SM) the int8-fp16 kernel fits in 228 registers (kernels/ALGORITHM.md). */
#ifndef SA_PIPE_CUH
#define SA_PIPE_CUH

#include "sa_mma_tiles.cuh"

/* Build switch: N (2 or 4) pipelines the kernels that sa_pipe_qk() names, with N of tile j+1's
 * four 16-key pairs issued under tile j's softmax and the rest after P·V(j) (4: all of Q·Kᵀ;
 * 2: half, for half the registers); 0 (default) is the plain loop. */
#ifndef SA_PIPE_QK
#define SA_PIPE_QK 0
#endif
static_assert(SA_PIPE_QK == 0 || SA_PIPE_QK == 2 || SA_PIPE_QK == 4, "SA_PIPE_QK: 0, 2 or 4");
/* 1: the second segment's MMAs depend on the first segment's row sums (sa_pipe_softmax_qk). */
#ifndef SA_PIPE_FENCE
#define SA_PIPE_FENCE 1
#endif

/* Whether the kernel of (MODE, D) runs the pipelined loop: INT8 Q·Kᵀ at D=128, and at D=64
 * with SA_PIPE_D64 (there O is half as large, so both S tiles fit beside it; two blocks per
 * SM then, as the pipelined loop needs more than three blocks' 168 registers). */
#ifndef SA_PIPE_D64
#define SA_PIPE_D64 0
#endif
template <int MODE, int D> __host__ __device__ constexpr bool sa_pipe_qk()
{
    return SA_PIPE_QK && MODE != SA_KMODE_FP16 && (D == 128 || SA_PIPE_D64);
}

/* P for the P·V mma of one tile, in A-fragment registers: E4M3 (2 k32 steps) or fp16/bf16
 * (4 k16 steps), 4 registers per step and m-tile. */
template <int MODE, bool BF16> struct sa_packed_p {
    static constexpr bool FP8 = sa_tile<MODE, 128>::PV_FP8;
    static constexpr int KK = FP8 ? 2 : 4;
    uint32_t r[SA_MT][KK][4];
    __device__ __forceinline__ void pack_half(const float p[8][4], int mt, int h)
    {
        if constexpr (FP8)
            sa_pack_p_e4m3_half<8>(r[mt], p, h);
        else
            sa_pack_p_f16_half<BF16, 8>(r[mt], p, h);
    }
};

/* Tile j's exponentials (FAST: the one-FFMA form), row sums and P packing, with the first
 * SA_PIPE_QK 16-key pairs of tile j+1's Q·Kᵀ MMAs (K at sKn) into acc: one basic block, in two
 * segments, each half of the warp's row halves after its share of the MMAs (all k-steps of a
 * pair before the next pair). S_j's registers are freed (packed into P) as S_{j+1}'s fill; with
 * SA_PIPE_FENCE a data dependency keeps ptxas from hoisting the second segment's ldmatrix and
 * MMAs above the first segment's exponentials (it otherwise starts every MMA first, and holds
 * all of S_j and S_{j+1} at once: hundreds of bytes of spill). */
template <int MODE, int D, bool BF16, bool FAST>
__device__ __forceinline__ void
sa_pipe_softmax_qk(float t[SA_MT][8][4], sa_row_state &st, const float row_scale[SA_MT][2],
                   const float m_use[SA_MT][2], float p_log2, sa_packed_p<MODE, BF16> &pa,
                   int acc[SA_MT][8][4], uint32_t sQw, uint32_t sKn, int lane, uint32_t zero)
{
    constexpr int KSTEPS = sa_tile<MODE, D>::QK_KSTEPS;
    constexpr int HALF = SA_PIPE_QK / 2; /* pairs per segment */
    constexpr int ROWS = SA_MT;          /* row halves (2 per m-tile) per segment */
    const uint32_t a_off = sa_qk_a_off<MODE, D>(lane), b_off = sa_qk_b_off<MODE, D>(lane);
    sa_qk_int8_init<8>(acc);
    uint32_t dep = 0; /* the first segment's row sums, for the second segment's K address */
#pragma unroll
    for (int seg = 0; seg < 2; ++seg) {
        /* The second segment's K address depends on the first segment's row sums (through
         * `zero`, 0 at run time but opaque to ptxas), i.e. on all of its exponentials. */
        const uint32_t sKs = seg && SA_PIPE_FENCE ? sKn | (dep & zero) : sKn;
#pragma unroll
        for (int ks = 0; ks < KSTEPS; ++ks) {
            if (seg == 0)
                sa_qk_int8_step<MODE, D, 8, 0, HALF>(acc, sQw, sKs, a_off, b_off, ks);
            else
                sa_qk_int8_step<MODE, D, 8, HALF, 2 * HALF>(acc, sQw, sKs, a_off, b_off, ks);
        }
#pragma unroll
        for (int r = seg * ROWS; r < (seg + 1) * ROWS; ++r) {
            const int mt = r / 2, h = r % 2;
            sa_softmax_exp_half<8, FAST>(t[mt], h, row_scale[mt][h], m_use[mt][h], p_log2);
            st.sum[mt][h] += sa_row_sum<8>(t[mt], h);
            pa.pack_half(t[mt], mt, h);
            dep |= __float_as_uint(st.sum[mt][h]);
        }
    }
}

/* O += P·V(j) from the packed P, with the plain loop's instruction per kernel family. */
template <int MODE, int D, bool BF16>
__device__ __forceinline__ void sa_pipe_pv(float o[SA_MT][D / 8][4],
                                           const sa_packed_p<MODE, BF16> &pa, uint32_t sV, int lane,
                                           float (&test_sink)[4])
{
    using T = sa_tile<MODE, D>;
    if constexpr (T::PV_FP8)
        sa_pv_fp8_packed<MODE, D, 8>(o, pa.r, sV, 0, lane);
    else if constexpr (T::PV_F16ACC && !BF16)
        sa_pv_f16_f16acc_packed<D, 8>(o, pa.r, sV, lane);
    else
        sa_pv_f16_packed<D, BF16, 8>(o, pa.r, sV, lane, test_sink);
}

/* The key-tile loop of sa_attn_kernel when sa_pipe_qk<MODE, D>(): copies (load_k, load_v: one
 * cp.async group each; the caller has issued K[0]'s), S, softmax and P·V for tiles 0..n_kt-1.
 * The last groups may still be in flight on return: the caller waits for all of them. */
template <int MODE, int D, bool BF16, bool V1, class LoadK, class LoadV>
__device__ __forceinline__ void
sa_pipe_mainloop(const sa_attn_args &a, int n_kt, int q0, int row0, int lane, uint32_t sQ,
                 uint32_t sQw, const float row_scale[SA_MT][2], sa_row_state &st,
                 float o[SA_MT][D / 8][4], float (&test_sink)[4], LoadK load_k, LoadV load_v)
{
    using T = sa_tile<MODE, D, V1>;
    const int diag = a.lkv - a.lq;
    const uint32_t zero = (uint32_t)a.lk_pad % SA_CTA_K; /* lk_pad is a multiple of SA_CTA_K */
    /* Groups in commit order: K0, K1, V0, then per tile j: K[j+2], V[j+1] (empty past the end). */
    if (n_kt > 1)
        load_k(1);
    else
        sa_cp_async_commit();
    if (n_kt > 0)
        load_v(0);
    else
        sa_cp_async_commit();
    float t[SA_MT][8][4];
    if (n_kt > 0) {
        sa_cp_async_wait<2>(); /* K[0] (and Q) */
        __syncthreads();
        sa_qk<MODE, D, BF16, 8>(t, sQw, sQ + T::k_off(0), sQ + T::ks_off(0), lane);
    }
    for (int j = 0; j < n_kt; ++j) {
        const uint32_t sKn = sQ + T::k_off((j + 1) & 1), sV = sQ + T::v_off(j & 1);
        const int k0 = j * SA_CTA_K;
        const bool need_mask = k0 + SA_CTA_K > a.lkv || (a.causal && k0 + SA_CTA_K - 1 > q0 + diag);
        sa_cp_async_wait<1>(); /* pending: V[j] */
        __syncthreads();       /* K[j+1] visible; every warp is done with K[j] and V[j-1] */
        if (j + 2 < n_kt)
            load_k(j + 2);
        else
            sa_cp_async_commit();
        if (!V1) {
            if (j + 1 < n_kt)
                load_v(j + 1);
            else
                sa_cp_async_commit();
        }
        if (need_mask)
            sa_mask<8>(t, k0, row0, lane, a.lkv, a.causal, diag);
        float m_use[SA_MT][2];
        sa_packed_p<MODE, BF16> pa;
        int acc[SA_MT][8][4];
        if (sa_softmax_max<8, D / 8, sa_lazy_alpha<MODE, D>()>(t, st, row_scale, o, m_use))
            sa_pipe_softmax_qk<MODE, D, BF16, true>(t, st, row_scale, m_use, T::P_LOG2, pa, acc,
                                                    sQw, sKn, lane, zero);
        else
            sa_pipe_softmax_qk<MODE, D, BF16, false>(t, st, row_scale, m_use, T::P_LOG2, pa, acc,
                                                     sQw, sKn, lane, zero);
        sa_test_extra_alu<SA_TEST_EXTRA_ALU>(test_sink, row_scale[0][0]);
        if (V1)
            sa_cp_async_wait<1>(); /* pending: K[j+2] */
        else
            sa_cp_async_wait<2>(); /* pending: K[j+2], V[j+1] */
        __syncthreads();           /* V[j] visible */
        sa_pipe_pv<MODE, D, BF16>(o, pa, sV, lane, test_sink);
        /* A block of its own (the branch), so that ptxas cannot start these MMAs inside P·V,
         * where their accumulators would be live next to O and P. */
        if (j + 1 < n_kt) {
            const uint32_t a_off = sa_qk_a_off<MODE, D>(lane), b_off = sa_qk_b_off<MODE, D>(lane);
#pragma unroll
            for (int ks = 0; ks < T::QK_KSTEPS; ++ks) /* the pairs not issued under the softmax */
                sa_qk_int8_step<MODE, D, 8, SA_PIPE_QK, 4>(acc, sQw, sKn, a_off, b_off, ks);
            sa_qk_int8_dequant<8>(t, acc, sQ + T::ks_off((j + 1) & 1), lane);
        }
        sa_v1_load_next<V1>(j, n_kt, load_v);
    }
}

#endif
