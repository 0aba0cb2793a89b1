/* The attention kernel: one block = 128 query rows of one (batch, head); 4 warps x 32 rows;
 * loop over 64-key tiles held in a 2-stage cp.async ring. Templates: MODE (kernel family),
 * D (padded head dim), BF16 (input/output dtype). Included by one .cu file per mode. */
#ifndef SA_MAINLOOP_CUH
#define SA_MAINLOOP_CUH

#include "sa_epilogue.cuh"
#include "sa_softmax.cuh"
#include "sa_tile.cuh"

/* S = Q·Kᵀ for the warp's 32 rows and the 64 keys of the stage, in raw units. */
template <int MODE, int D, bool BF16>
__device__ __forceinline__ void sa_qk(float t[2][8][4], uint32_t sQw, uint32_t sK, uint32_t sKS,
                                      int lane)
{
    using T = sa_tile<MODE, D>;
    const uint32_t a_off = (lane % 16) * T::QK_PITCH + (lane / 16) * 16;
    const uint32_t b_off = ((lane / 16) * 8 + lane % 8) * T::QK_PITCH + ((lane / 8) % 2) * 16;
    if (T::QK_INT8) {
        int acc[2][8][4];
#pragma unroll
        for (int mt = 0; mt < 2; ++mt)
#pragma unroll
            for (int nt = 0; nt < 8; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    acc[mt][nt][e] = 0;
#pragma unroll
        for (int ks = 0; ks < T::QK_KSTEPS; ++ks) {
            uint32_t af[2][4];
#pragma unroll
            for (int mt = 0; mt < 2; ++mt)
                sa_ldmatrix_x4(af[mt], sQw + mt * 16 * T::QK_PITCH + a_off + ks * 32);
#pragma unroll
            for (int np = 0; np < 4; ++np) {
                uint32_t bf[4];
                sa_ldmatrix_x4(bf, sK + np * 16 * T::QK_PITCH + b_off + ks * 32);
#pragma unroll
                for (int mt = 0; mt < 2; ++mt) {
                    sa_mma_s8(acc[mt][2 * np], af[mt], bf[0], bf[1]);
                    sa_mma_s8(acc[mt][2 * np + 1], af[mt], bf[2], bf[3]);
                }
            }
        }
        const int tq = lane % 4;
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
            float2 ks;
            asm volatile("ld.shared.v2.f32 {%0,%1}, [%2];\n"
                         : "=f"(ks.x), "=f"(ks.y)
                         : "r"(sKS + (nt * 8 + 2 * tq) * 4));
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
                t[mt][nt][0] = sa_small_int_to_float(acc[mt][nt][0]) * ks.x;
                t[mt][nt][1] = sa_small_int_to_float(acc[mt][nt][1]) * ks.y;
                t[mt][nt][2] = sa_small_int_to_float(acc[mt][nt][2]) * ks.x;
                t[mt][nt][3] = sa_small_int_to_float(acc[mt][nt][3]) * ks.y;
            }
        }
    } else {
#pragma unroll
        for (int mt = 0; mt < 2; ++mt)
#pragma unroll
            for (int nt = 0; nt < 8; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    t[mt][nt][e] = 0.0f;
#pragma unroll
        for (int ks = 0; ks < T::QK_KSTEPS; ++ks) {
            uint32_t af[2][4];
#pragma unroll
            for (int mt = 0; mt < 2; ++mt)
                sa_ldmatrix_x4(af[mt], sQw + mt * 16 * T::QK_PITCH + a_off + ks * 32);
#pragma unroll
            for (int np = 0; np < 4; ++np) {
                uint32_t bf[4];
                sa_ldmatrix_x4(bf, sK + np * 16 * T::QK_PITCH + b_off + ks * 32);
#pragma unroll
                for (int mt = 0; mt < 2; ++mt) {
                    sa_mma_f16<BF16>(t[mt][2 * np], af[mt], bf[0], bf[1]);
                    sa_mma_f16<BF16>(t[mt][2 * np + 1], af[mt], bf[2], bf[3]);
                }
            }
        }
    }
}

/* O += P·V with P in fp16/bf16 (taken from the S fragment) and V [key][d] in shared memory. */
template <int D, bool BF16>
__device__ __forceinline__ void sa_pv_f16(float o[2][D / 8][4], const float p[2][8][4], uint32_t sV,
                                          int lane)
{
    constexpr int PITCH = D * 2 + 16;
    const uint32_t b_off = (((lane / 8) % 2) * 8 + lane % 8) * PITCH + (lane / 16) * 16;
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
        uint32_t pa[2][4];
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
            pa[mt][0] = sa_pack2<BF16>(p[mt][2 * kk][0], p[mt][2 * kk][1]);
            pa[mt][1] = sa_pack2<BF16>(p[mt][2 * kk][2], p[mt][2 * kk][3]);
            pa[mt][2] = sa_pack2<BF16>(p[mt][2 * kk + 1][0], p[mt][2 * kk + 1][1]);
            pa[mt][3] = sa_pack2<BF16>(p[mt][2 * kk + 1][2], p[mt][2 * kk + 1][3]);
        }
#pragma unroll
        for (int np = 0; np < D / 16; ++np) {
            uint32_t bf[4];
            sa_ldmatrix_x4_trans(bf, sV + kk * 16 * PITCH + b_off + np * 32);
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
                sa_mma_f16<BF16>(o[mt][2 * np], pa[mt], bf[0], bf[1]);
                sa_mma_f16<BF16>(o[mt][2 * np + 1], pa[mt], bf[2], bf[3]);
            }
        }
    }
}

__device__ __forceinline__ uint32_t sa_pack_e4m3x4(float a, float b, float c, float d)
{
    return (uint32_t)sa_pack_e4m3x2(a * SA_FP8_P_SCALE, b * SA_FP8_P_SCALE) |
           ((uint32_t)sa_pack_e4m3x2(c * SA_FP8_P_SCALE, d * SA_FP8_P_SCALE) << 16);
}

/* O += P·V with P and V in E4M3. V^T [d][64 keys, permuted] in shared memory; each 8-channel
 * slice of the tile is summed in a fresh accumulator first (two-level accumulation). */
template <int D>
__device__ __forceinline__ void sa_pv_fp8(float o[2][D / 8][4], const float p[2][8][4], uint32_t sV,
                                          int lane)
{
    constexpr int PITCH = SA_CTA_K + 16;
    uint32_t pa[2][2][4];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt) {
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
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
    const uint32_t b_off = (lane % 8) * PITCH + (lane / 8) * 16;
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt) {
        uint32_t bf[4];
        sa_ldmatrix_x4(bf, sV + nt * 8 * PITCH + b_off);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
            float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            sa_mma_e4m3(acc, pa[mt][0], bf[0], bf[1]);
            sa_mma_e4m3(acc, pa[mt][1], bf[2], bf[3]);
#pragma unroll
            for (int e = 0; e < 4; ++e)
                o[mt][nt][e] += acc[e];
        }
    }
}

template <int MODE, int D, bool BF16>
__global__ void __launch_bounds__(SA_THREADS, 2) sa_attn_kernel(const sa_attn_args a)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
    if (MODE == SA_KMODE_INT8_FP8) {
        __trap();
        return;
    }
#endif
    using T = sa_tile<MODE, D>;
    extern __shared__ __align__(128) char smem[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4;
    const int qtile = gridDim.x - 1 - blockIdx.x; /* heavy causal tiles first */
    const int h = blockIdx.y, b = blockIdx.z, hk = h / a.group;
    const int q0 = qtile * SA_CTA_Q;
    const int diag = a.lkv - a.lq; /* query i sees keys j <= i + diag when causal */

    int n_kt = (a.lkv + SA_CTA_K - 1) / SA_CTA_K;
    if (a.causal) {
        const int last_key = min(q0 + SA_CTA_Q, a.lq) - 1 + diag;
        n_kt = min(n_kt, last_key < 0 ? 0 : last_key / SA_CTA_K + 1);
    }

    const uint32_t sQ = sa_smem_addr(smem);
    const char *qg = (const char *)a.q + b * a.q_b + h * a.q_h + q0 * a.q_t;
    const char *kg = (const char *)a.k + b * a.k_b + hk * a.k_h;
    const size_t bhk = (size_t)b * a.hkv + hk;
    const char *vg = T::PV_FP8 ? (const char *)a.v + bhk * D * a.lk_pad
                               : (const char *)a.v + b * a.v_b + hk * a.v_h;
    const float *ksg = T::QK_INT8 ? a.kscale + bhk * a.lk_pad : nullptr;

    auto stage = [&](int s) { return sQ + T::Q_BYTES + s * T::STAGE_BYTES; };
    auto load_k = [&](int j) {
        const uint32_t s = stage(j & 1);
        const int k0 = j * SA_CTA_K;
        if (T::QK_INT8) {
            sa_load_rows(s, T::QK_PITCH, kg + k0 * a.k_t, a.k_t, SA_CTA_K, T::QK_ROW, SA_CTA_K,
                         T::QK_ROW);
            if (threadIdx.x < SA_CTA_K / 4)
                sa_cp_async16(s + T::K_BYTES + T::V_BYTES + threadIdx.x * 16,
                              ksg + k0 + threadIdx.x * 4, 16);
        } else {
            sa_load_rows(s, T::QK_PITCH, kg + k0 * a.k_t, a.k_t, SA_CTA_K, T::QK_ROW, a.lkv - k0,
                         a.d * 2);
        }
        sa_cp_async_commit();
    };
    auto load_v = [&](int j) {
        const uint32_t s = stage(j & 1) + T::K_BYTES;
        const int k0 = j * SA_CTA_K;
        if (T::PV_FP8)
            sa_load_rows(s, T::V_PITCH, vg + k0, a.lk_pad, D, SA_CTA_K, D, SA_CTA_K);
        else
            sa_load_rows(s, T::V_PITCH, vg + k0 * a.v_t, a.v_t, SA_CTA_K, D * 2, a.lkv - k0,
                         a.d * 2);
        sa_cp_async_commit();
    };

    /* Q tile: the int8 copy is padded in the workspace; the caller's fp16 rows are bounded. */
    if (T::QK_INT8)
        sa_load_rows(sQ, T::QK_PITCH, qg, a.q_t, SA_CTA_Q, T::QK_ROW, SA_CTA_Q, T::QK_ROW);
    else
        sa_load_rows(sQ, T::QK_PITCH, qg, a.q_t, SA_CTA_Q, T::QK_ROW, a.lq - q0, a.d * 2);
    if (n_kt > 0) {
        load_k(0);
        load_v(0);
    } else {
        sa_cp_async_commit();
        sa_cp_async_commit();
    }

    float row_scale[2][2];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
            row_scale[mt][hh] = T::QK_INT8 ? a.qscale[((size_t)b * a.hq + h) * a.lq_pad + q0 +
                                                      warp * SA_WARP_Q + mt * 16 + g + 8 * hh]
                                           : a.score_scale;

    float o[2][D / 8][4];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                o[mt][nt][e] = 0.0f;
    sa_row_state st;
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            st.max[mt][hh] = -INFINITY;
            st.sum[mt][hh] = 0.0f;
        }

    const uint32_t sQw = sQ + warp * SA_WARP_Q * T::QK_PITCH;
    const int row0 = q0 + warp * SA_WARP_Q + g; /* + mt*16 + 8*hh */
    for (int j = 0; j < n_kt; ++j) {
        sa_cp_async_wait<1>();
        __syncthreads(); /* K[j] visible; every warp is done with stage (j+1)&1 */
        if (j + 1 < n_kt) {
            load_k(j + 1);
            load_v(j + 1);
        } else {
            sa_cp_async_commit();
            sa_cp_async_commit();
        }
        const uint32_t s = stage(j & 1);
        float t[2][8][4];
        sa_qk<MODE, D, BF16>(t, sQw, s, s + T::K_BYTES + T::V_BYTES, lane);

        const int k0 = j * SA_CTA_K;
        if (k0 + SA_CTA_K > a.lkv || (a.causal && k0 + SA_CTA_K - 1 > q0 + diag)) {
            const int tq = lane % 4;
#pragma unroll
            for (int mt = 0; mt < 2; ++mt)
#pragma unroll
                for (int nt = 0; nt < 8; ++nt)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int key = k0 + nt * 8 + 2 * tq + (e & 1);
                        const int row = row0 + mt * 16 + 8 * (e >> 1);
                        if (key >= a.lkv || (a.causal && key > row + diag))
                            t[mt][nt][e] = -INFINITY;
                    }
        }

        float alpha[2][2];
        sa_softmax_step<8>(t, st, row_scale, alpha);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt)
#pragma unroll
            for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    o[mt][nt][e] *= alpha[mt][e >> 1];

        sa_cp_async_wait<2>();
        __syncthreads(); /* V[j] visible */
        if (T::PV_FP8)
            sa_pv_fp8<D>(o, t, s + T::K_BYTES, lane);
        else
            sa_pv_f16<D, BF16>(o, t, s + T::K_BYTES, lane);
    }
    sa_cp_async_wait<0>();

    sa_epilogue<MODE, D, BF16>(a, o, st, row_scale, b, h, row0, lane);
}

template <int MODE, int D, bool BF16>
static cudaError_t sa_attn_run(const sa_attn_args *a, int batch, cudaStream_t stream, bool probe)
{
    const auto kernel = sa_attn_kernel<MODE, D, BF16>;
    if (probe) {
        cudaFuncAttributes fa;
        return cudaFuncGetAttributes(&fa, kernel);
    }
    const int smem = sa_tile<MODE, D>::SMEM_BYTES;
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess)
        return e;
    const dim3 grid((a->lq + SA_CTA_Q - 1) / SA_CTA_Q, a->hq, batch);
    kernel<<<grid, SA_THREADS, smem, stream>>>(*a);
    return cudaGetLastError();
}

/* Runs (or probes) the kernel of MODE for the padded head dim and dtype. A head dim that the
 * build left out falls back to 128 (64 is always a zero-padded 128). */
template <int MODE>
static cudaError_t sa_attn_dispatch(int d_pad, int bf16, const sa_attn_args *a, int batch,
                                    cudaStream_t stream, bool probe)
{
#if SA_WITH_D64
    if (d_pad == 64)
        return bf16 ? sa_attn_run<MODE, 64, true>(a, batch, stream, probe)
                    : sa_attn_run<MODE, 64, false>(a, batch, stream, probe);
#endif
#if SA_WITH_D128
    return bf16 ? sa_attn_run<MODE, 128, true>(a, batch, stream, probe)
                : sa_attn_run<MODE, 128, false>(a, batch, stream, probe);
#else
    (void)d_pad, (void)bf16, (void)a, (void)batch, (void)stream, (void)probe;
    return cudaErrorInvalidValue;
#endif
}

#endif
