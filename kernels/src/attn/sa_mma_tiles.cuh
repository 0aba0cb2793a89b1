/* The tensor-core pieces of the main loop, on one warp's fragments: S = Q·Kᵀ (INT8 or
 * fp16/bf16), masking, the softmax step with O's rescale, and O += P·V (fp16/bf16 or E4M3).
 * NT is the number of 8-key n-tiles handled at once (8 = a whole 64-key tile, 4 = half). */
#ifndef SA_MMA_TILES_CUH
#define SA_MMA_TILES_CUH

#include "sa_softmax.cuh"
#include "sa_tile.cuh"

/* INT8 S = Q·Kᵀ in three parts, so that the software-pipelined main loop (sa_pipe.cuh) can put
 * one tile's MMAs next to another tile's softmax: the accumulators' start value, one 32-byte
 * step of the reduction (ldmatrix of Q and K, 2*NT IMMA per m-tile; or only the 16-key pairs
 * NP0..NP1-1 of the n-tiles), and the dequantization by the K scales at sKS. The integer sums
 * are exact, so the order of the steps changes no bit. */
template <int NT> __device__ __forceinline__ void sa_qk_int8_init(int acc[SA_MT][NT][4])
{
#pragma unroll
    for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                acc[mt][nt][e] = SA_INT_FLOAT_BIAS; /* see sa_biased_int_to_float */
}

/* The lane's ldmatrix offsets into the Q tile (a) and a K tile (b), in bytes. */
template <int MODE, int D> __device__ __forceinline__ uint32_t sa_qk_a_off(int lane)
{
    return (lane % 16) * sa_tile<MODE, D>::QK_PITCH + (lane / 16) * 16;
}
template <int MODE, int D> __device__ __forceinline__ uint32_t sa_qk_b_off(int lane)
{
    return ((lane / 16) * 8 + lane % 8) * sa_tile<MODE, D>::QK_PITCH + ((lane / 8) % 2) * 16;
}

template <int MODE, int D, int NT, int NP0 = 0, int NP1 = NT / 2>
__device__ __forceinline__ void sa_qk_int8_step(int acc[SA_MT][NT][4], uint32_t sQw, uint32_t sK,
                                                uint32_t a_off, uint32_t b_off, int ks)
{
    using T = sa_tile<MODE, D>;
    uint32_t af[SA_MT][4];
#pragma unroll
    for (int mt = 0; mt < SA_MT; ++mt)
        sa_ldmatrix_x4(af[mt], sQw + mt * 16 * T::QK_PITCH + a_off + ks * 32);
#pragma unroll
    for (int np = NP0; np < NP1; ++np) {
        uint32_t bf[4];
        sa_ldmatrix_x4(bf, sK + np * 16 * T::QK_PITCH + b_off + ks * 32);
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt) {
            sa_mma_s8(acc[mt][2 * np], af[mt], bf[0], bf[1]);
            sa_mma_s8(acc[mt][2 * np + 1], af[mt], bf[2], bf[3]);
        }
    }
}

template <int NT>
__device__ __forceinline__ void
sa_qk_int8_dequant(float t[SA_MT][NT][4], const int acc[SA_MT][NT][4], uint32_t sKS, int lane)
{
    const int tq = lane % 4;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        float2 ks;
        asm volatile("ld.shared.v2.f32 {%0,%1}, [%2];\n"
                     : "=f"(ks.x), "=f"(ks.y)
                     : "r"(sKS + (nt * 8 + 2 * tq) * 4));
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const float k = (e & 1) ? ks.y : ks.x;
#if SA_FAST_SOFTMAX
                /* (acc + 1.5*2^23)*k - 1.5*2^23*k in one FFMA: off by at most 0.75 ulp of
                 * 1.5*2^23*k, i.e. < 1 int8 product unit, the same for every row. */
                t[mt][nt][e] = fmaf(__int_as_float(acc[mt][nt][e]), k, -12582912.0f * k);
#else
                t[mt][nt][e] = sa_biased_int_to_float(acc[mt][nt][e]) * k;
#endif
            }
        }
    }
}

/* S = Q·Kᵀ for the warp's rows and NT*8 keys starting at sK (their scales at sKS), in raw
 * units. */
template <int MODE, int D, bool BF16, int NT>
__device__ __forceinline__ void sa_qk(float t[SA_MT][NT][4], uint32_t sQw, uint32_t sK,
                                      uint32_t sKS, int lane)
{
    using T = sa_tile<MODE, D>;
    if (T::QK_INT8) {
        const uint32_t a_off = sa_qk_a_off<MODE, D>(lane), b_off = sa_qk_b_off<MODE, D>(lane);
        int acc[SA_MT][NT][4];
        sa_qk_int8_init<NT>(acc);
#pragma unroll
        for (int ks = 0; ks < T::QK_KSTEPS; ++ks)
            sa_qk_int8_step<MODE, D, NT>(acc, sQw, sK, a_off, b_off, ks);
        sa_qk_int8_dequant<NT>(t, acc, sKS, lane);
    } else {
        const uint32_t a_off = (lane % 16) * T::QK_PITCH + (lane / 16) * 16;
        const uint32_t b_off = ((lane / 16) * 8 + lane % 8) * T::QK_PITCH + ((lane / 8) % 2) * 16;
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    t[mt][nt][e] = 0.0f;
#pragma unroll
        for (int ks = 0; ks < T::QK_KSTEPS; ++ks) {
            uint32_t af[SA_MT][4];
#pragma unroll
            for (int mt = 0; mt < SA_MT; ++mt)
                sa_ldmatrix_x4(af[mt], sQw + mt * 16 * T::QK_PITCH + a_off + ks * 32);
#pragma unroll
            for (int np = 0; np < NT / 2; ++np) {
                uint32_t bf[4];
                sa_ldmatrix_x4(bf, sK + np * 16 * T::QK_PITCH + b_off + ks * 32);
#pragma unroll
                for (int mt = 0; mt < SA_MT; ++mt) {
                    sa_mma_f16<BF16>(t[mt][2 * np], af[mt], bf[0], bf[1]);
                    sa_mma_f16<BF16>(t[mt][2 * np + 1], af[mt], bf[2], bf[3]);
                }
            }
        }
    }
}

/* P's registers for the P·V mma of row half h of one m-tile (the values t[nt][2h], t[nt][2h+1]
 * of every n-tile): the A fragment's registers h and 2+h of each k-step kk. fp16/bf16: k16
 * steps over n-tiles 2kk, 2kk+1. */
template <bool BF16, int NT>
__device__ __forceinline__ void sa_pack_p_f16_half(uint32_t pa[NT / 2][4], const float p[NT][4],
                                                   int h)
{
#pragma unroll
    for (int kk = 0; kk < NT / 2; ++kk) {
        pa[kk][h] = sa_pack2<BF16>(p[2 * kk][2 * h], p[2 * kk][2 * h + 1]);
        pa[kk][2 + h] = sa_pack2<BF16>(p[2 * kk + 1][2 * h], p[2 * kk + 1][2 * h + 1]);
    }
}

/* One k16 step of O += P·V (fp16/bf16 P in A-fragment registers pa, V [key][d] at sVk, the
 * step's first key row). */
template <int D, bool BF16, int NT>
__device__ __forceinline__ void sa_pv_f16_kstep(float o[SA_MT][D / 8][4],
                                                const uint32_t pa[SA_MT][4], uint32_t sVk, int lane,
                                                float (&test_sink)[4], float seed)
{
    constexpr int PITCH = D * 2 + 16;
    const uint32_t b_off = (((lane / 8) % 2) * 8 + lane % 8) * PITCH + (lane / 16) * 16;
#pragma unroll
    for (int np = 0; np < D / 16; ++np) {
        uint32_t bf[4];
        sa_ldmatrix_x4_trans(bf, sVk + b_off + np * 32);
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt) {
            sa_mma_f16<BF16>(o[mt][2 * np], pa[mt], bf[0], bf[1]);
            sa_mma_f16<BF16>(o[mt][2 * np + 1], pa[mt], bf[2], bf[3]);
        }
        sa_test_extra_alu<SA_TEST_EXTRA_ALU_PV / (NT / 2 * D / 16)>(test_sink, seed);
    }
}

/* O += P·V with P in fp16/bf16 (taken from the S fragment: NT*8 keys) and V [key][d] in
 * shared memory, starting at the first of those keys. */
template <int D, bool BF16, int NT>
__device__ __forceinline__ void sa_pv_f16(float o[SA_MT][D / 8][4], const float p[SA_MT][NT][4],
                                          uint32_t sV, int lane, float (&test_sink)[4])
{
    constexpr int PITCH = D * 2 + 16;
#pragma unroll
    for (int kk = 0; kk < NT / 2; ++kk) {
        uint32_t pa[SA_MT][4];
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt) {
            pa[mt][0] = sa_pack2<BF16>(p[mt][2 * kk][0], p[mt][2 * kk][1]);
            pa[mt][1] = sa_pack2<BF16>(p[mt][2 * kk][2], p[mt][2 * kk][3]);
            pa[mt][2] = sa_pack2<BF16>(p[mt][2 * kk + 1][0], p[mt][2 * kk + 1][1]);
            pa[mt][3] = sa_pack2<BF16>(p[mt][2 * kk + 1][2], p[mt][2 * kk + 1][3]);
        }
        sa_pv_f16_kstep<D, BF16, NT>(o, pa, sV + kk * 16 * PITCH, lane, test_sink, p[0][0][0]);
    }
}

/* The same with P already packed (pa[mt][kk]: sa_pack_p_f16_half). */
template <int D, bool BF16, int NT>
__device__ __forceinline__ void sa_pv_f16_packed(float o[SA_MT][D / 8][4],
                                                 const uint32_t pa[SA_MT][NT / 2][4], uint32_t sV,
                                                 int lane, float (&test_sink)[4])
{
    constexpr int PITCH = D * 2 + 16;
#pragma unroll
    for (int kk = 0; kk < NT / 2; ++kk) {
        uint32_t pk[SA_MT][4];
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                pk[mt][r] = pa[mt][kk][r];
        sa_pv_f16_kstep<D, BF16, NT>(o, pk, sV + kk * 16 * PITCH, lane, test_sink, 0.0f);
    }
}

__device__ __forceinline__ uint32_t sa_pack_e4m3x4(float a, float b, float c, float d)
{
    return (uint32_t)sa_pack_e4m3x2(a, b) | ((uint32_t)sa_pack_e4m3x2(c, d) << 16);
}

/* One 8-channel slice's accumulator for one key tile of E4M3 P·V, per kernel family:
 * FP32 through the ordinary MMA (int8-fp8), FP32 through the block-scaled MMA with unit scales
 * (int8-fp8-bs), or FP16 (int8-fp8-f16acc). Fresh per tile, then added into the fp32 O. */
template <int MODE> struct sa_e4m3_tile_acc {
    static constexpr bool F16 = MODE == SA_KMODE_INT8_FP8_F16ACC;
    float f[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    uint32_t h[2] = {0u, 0u};
    __device__ __forceinline__ void mma(const uint32_t a[4], uint32_t b0, uint32_t b1)
    {
        if constexpr (F16)
            sa_mma_e4m3_f16acc(h, a, b0, b1);
        else if constexpr (MODE == SA_KMODE_INT8_FP8_BS)
            sa_mma_e4m3_bs(f, a, b0, b1);
        else
            sa_mma_e4m3(f, a, b0, b1);
    }
    __device__ __forceinline__ void add_to(float o[4]) const
    {
        if constexpr (F16) {
            sa_add_half2_to_f32(o[0], o[1], h[0]);
            sa_add_half2_to_f32(o[2], o[3], h[1]);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e)
                o[e] += f[e];
        }
    }
};

/* P's E4M3 registers for row half h of one m-tile (sa_pack_p_f16_half's layout for k32 steps:
 * step kk covers n-tiles 4kk..4kk+3). */
template <int NT>
__device__ __forceinline__ void sa_pack_p_e4m3_half(uint32_t pa[NT / 4][4], const float p[NT][4],
                                                    int h)
{
#pragma unroll
    for (int kk = 0; kk < NT / 4; ++kk) {
        const int n = 4 * kk;
        pa[kk][h] =
            sa_pack_e4m3x4(p[n][2 * h], p[n][2 * h + 1], p[n + 1][2 * h], p[n + 1][2 * h + 1]);
        pa[kk][2 + h] = sa_pack_e4m3x4(p[n + 2][2 * h], p[n + 2][2 * h + 1], p[n + 3][2 * h],
                                       p[n + 3][2 * h + 1]);
    }
}

/* O += P·V with P (packed: sa_pack_p_e4m3_half) and V in E4M3 for NT*8 keys (NT = 4 or 8).
 * V^T [d][64 keys, permuted] in shared memory; the keys start at byte `key0` (0 or 32) of each
 * row. Each 8-channel slice is summed over these keys in a fresh accumulator first (two-level
 * accumulation). */
template <int MODE, int D, int NT>
__device__ __forceinline__ void sa_pv_fp8_packed(float o[SA_MT][D / 8][4],
                                                 const uint32_t pa[SA_MT][NT / 4][4], uint32_t sV,
                                                 int key0, int lane)
{
    constexpr int PITCH = SA_CTA_K + 16;
    constexpr int KK = NT / 4; /* k32 steps */
    if (KK == 2) {
        const uint32_t b_off = (lane % 8) * PITCH + (lane / 8) * 16;
#pragma unroll
        for (int nt = 0; nt < D / 8; ++nt) {
            uint32_t bf[4];
            sa_ldmatrix_x4(bf, sV + nt * 8 * PITCH + b_off);
#pragma unroll
            for (int mt = 0; mt < SA_MT; ++mt) {
                sa_e4m3_tile_acc<MODE> acc;
                acc.mma(pa[mt][0], bf[0], bf[1]);
                acc.mma(pa[mt][KK - 1], bf[2], bf[3]);
                acc.add_to(o[mt][nt]);
            }
        }
    } else {
        /* matrices: (n-tile 2q, bytes key0..+15), (2q, +16..), (2q+1, key0..), (2q+1, +16..) */
        const uint32_t b_off = ((lane / 16) * 8 + lane % 8) * PITCH + key0 + ((lane / 8) % 2) * 16;
#pragma unroll
        for (int q = 0; q < D / 16; ++q) {
            uint32_t bf[4];
            sa_ldmatrix_x4(bf, sV + q * 16 * PITCH + b_off);
#pragma unroll
            for (int mt = 0; mt < SA_MT; ++mt) {
                sa_e4m3_tile_acc<MODE> acc0, acc1;
                acc0.mma(pa[mt][0], bf[0], bf[1]);
                acc1.mma(pa[mt][0], bf[2], bf[3]);
                acc0.add_to(o[mt][2 * q]);
                acc1.add_to(o[mt][2 * q + 1]);
            }
        }
    }
}

/* O += P·V with P and V in E4M3, P taken from the S fragment (NT*8 keys). */
template <int MODE, int D, int NT>
__device__ __forceinline__ void sa_pv_fp8(float o[SA_MT][D / 8][4], const float p[SA_MT][NT][4],
                                          uint32_t sV, int key0, int lane)
{
    /* packed in this order (not by row half) so that the plain loop's SASS stays as measured */
    uint32_t pa[SA_MT][NT / 4][4];
#pragma unroll
    for (int mt = 0; mt < SA_MT; ++mt) {
#pragma unroll
        for (int kk = 0; kk < NT / 4; ++kk) {
            const int n = 4 * kk;
            pa[mt][kk][0] =
                sa_pack_e4m3x4(p[mt][n][0], p[mt][n][1], p[mt][n + 1][0], p[mt][n + 1][1]);
            pa[mt][kk][1] =
                sa_pack_e4m3x4(p[mt][n][2], p[mt][n][3], p[mt][n + 1][2], p[mt][n + 1][3]);
            pa[mt][kk][2] =
                sa_pack_e4m3x4(p[mt][n + 2][0], p[mt][n + 2][1], p[mt][n + 3][0], p[mt][n + 3][1]);
            pa[mt][kk][3] =
                sa_pack_e4m3x4(p[mt][n + 2][2], p[mt][n + 2][3], p[mt][n + 3][2], p[mt][n + 3][3]);
        }
    }
    sa_pv_fp8_packed<MODE, D, NT>(o, pa, sV, key0, lane);
}

/* O += P·V with P and V in fp16 and an FP16 accumulator per 8-channel slice over these NT*8
 * keys (fresh per tile, then added into the fp32 O): int8-fp16-f16acc. P arrives scaled by
 * 2^SA_F16ACC_P_LOG2, which bounds every partial sum by max|V| (sa_internal.h), and packed
 * (sa_pack_p_f16_half: NT/2 k16 steps, 4 registers each per m-tile), so the k loop can sit
 * inside the channel loop and each accumulator stays one tile's sum. */
template <int D, int NT>
__device__ __forceinline__ void sa_pv_f16_f16acc_packed(float o[SA_MT][D / 8][4],
                                                        const uint32_t pa[SA_MT][NT / 2][4],
                                                        uint32_t sV, int lane)
{
    constexpr int PITCH = D * 2 + 16;
    constexpr int KK = NT / 2;
    const uint32_t b_off = (((lane / 8) % 2) * 8 + lane % 8) * PITCH + (lane / 16) * 16;
#pragma unroll
    for (int np = 0; np < D / 16; ++np) {
        uint32_t acc[SA_MT][2][2];
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
            for (int i = 0; i < 2; ++i)
                acc[mt][i][0] = acc[mt][i][1] = 0u;
#pragma unroll
        for (int kk = 0; kk < KK; ++kk) {
            uint32_t bf[4];
            sa_ldmatrix_x4_trans(bf, sV + kk * 16 * PITCH + b_off + np * 32);
#pragma unroll
            for (int mt = 0; mt < SA_MT; ++mt) {
                sa_mma_f16_f16acc(acc[mt][0], pa[mt][kk], bf[0], bf[1]);
                sa_mma_f16_f16acc(acc[mt][1], pa[mt][kk], bf[2], bf[3]);
            }
        }
#pragma unroll
        for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                sa_add_half2_to_f32(o[mt][2 * np + i][0], o[mt][2 * np + i][1], acc[mt][i][0]);
                sa_add_half2_to_f32(o[mt][2 * np + i][2], o[mt][2 * np + i][3], acc[mt][i][1]);
            }
    }
}

/* The same with P taken from the S fragment (fp16, NT*8 keys). */
template <int D, int NT>
__device__ __forceinline__ void sa_pv_f16_f16acc(float o[SA_MT][D / 8][4],
                                                 const float p[SA_MT][NT][4], uint32_t sV, int lane)
{
    /* packed in this order (not by row half) so that the plain loop's SASS stays as measured */
    uint32_t pa[SA_MT][NT / 2][4];
#pragma unroll
    for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
        for (int kk = 0; kk < NT / 2; ++kk) {
            pa[mt][kk][0] = sa_pack2<false>(p[mt][2 * kk][0], p[mt][2 * kk][1]);
            pa[mt][kk][1] = sa_pack2<false>(p[mt][2 * kk][2], p[mt][2 * kk][3]);
            pa[mt][kk][2] = sa_pack2<false>(p[mt][2 * kk + 1][0], p[mt][2 * kk + 1][1]);
            pa[mt][kk][3] = sa_pack2<false>(p[mt][2 * kk + 1][2], p[mt][2 * kk + 1][3]);
        }
    sa_pv_f16_f16acc_packed<D, NT>(o, pa, sV, lane);
}

/* Sets the scores of keys that a row must not see to -inf: keys at or past lkv and, when
 * causal, keys past the row's diagonal. */
template <int NT>
__device__ __forceinline__ void sa_mask(float t[SA_MT][NT][4], int key0, int row0, int lane,
                                        int lkv, int causal, int diag)
{
    const int tq = lane % 4;
#pragma unroll
    for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int key = key0 + nt * 8 + 2 * tq + (e & 1);
                const int row = row0 + mt * 16 + 8 * (e >> 1);
                if (key >= lkv || (causal && key > row + diag))
                    t[mt][nt][e] = -INFINITY;
            }
}

#endif
