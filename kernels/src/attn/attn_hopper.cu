/* int8-fp8-wgmma: the Hopper (sm_90a) attention kernel. One block = one warpgroup (128 threads)
 * = 64 query rows of one (batch, head); the kv sequence runs in 64-key tiles through a ring of
 * SA_H_STAGES shared-memory stages filled by the copy engine (cp.async.bulk, completing on an
 * mbarrier per stage). Per tile: INT8 wgmma Q·Kᵀ (s8·s8 -> s32, A and B from shared memory),
 * the online softmax in registers, FP8 E4M3 wgmma P·V (P from registers, Vᵀ from shared
 * memory) into a fresh fp32 accumulator that is then added into O (two-level accumulation).
 *
 * The pre-pass is int8-fp8's (quant.cu) with one difference: it writes Q, K and Vᵀ in the
 * wgmma "core matrix" order (8 rows x 16 bytes contiguous), so each tile is one contiguous
 * block that a single bulk copy moves and a no-swizzle descriptor describes. kernels/
 * ALGORITHM.md ("Hopper") has the layouts and the fragment maps.
 *
 * This file is compiled for compute_90a/sm_90a only (CMake: when SAGEATTN_ARCHS holds
 * sm_90a); the library then defines SA_WITH_HOPPER=1 and the API lets the mode run on cc 9.0. */
#include "sa_kernels.h"
#include "sa_ptx.cuh"
#include "sa_wgmma.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SA_HOPPER_CODE 1
#else
#define SA_HOPPER_CODE 0
#endif

#define SA_H_ROWS 64    /* query rows per block: one warpgroup, 16 rows per warp */
#define SA_H_THREADS 128
#ifndef SA_H_STAGES
#define SA_H_STAGES 3 /* K/V tiles in flight */
#endif
/* Test hook for the descriptor's two offsets (kernels/ALGORITHM.md): 1 swaps them. */
#ifndef SA_H_SWAP_LBO_SBO
#define SA_H_SWAP_LBO_SBO 0
#endif

template <int D> struct sa_htile {
    static constexpr int Q_BYTES = SA_H_ROWS * D;     /* int8 Q, core-matrix order */
    static constexpr int K_BYTES = SA_CTA_K * D;      /* int8 K tile */
    static constexpr int V_BYTES = D * SA_CTA_K;      /* E4M3 Vᵀ tile */
    static constexpr int KS_BYTES = SA_CTA_K * 4;     /* K scales of the tile */
    static constexpr int STAGE_BYTES = K_BYTES + V_BYTES + KS_BYTES;
    static constexpr int BAR_OFF = Q_BYTES + SA_H_STAGES * STAGE_BYTES;
    static constexpr int SMEM_BYTES = BAR_OFF + 8 * (SA_H_STAGES + 1);
    /* Core-matrix strides: K-direction neighbours are 128 bytes apart; row groups of 8 are
     * 8 * (row bytes) apart (Q, K: D bytes per row; Vᵀ: 64 key bytes per channel). */
    static constexpr uint32_t QK_SBO = 8 * D;
    static constexpr uint32_t V_SBO = 8 * SA_CTA_K;
};

__device__ __forceinline__ uint64_t sa_h_desc(uint32_t addr, uint32_t sbo)
{
    return SA_H_SWAP_LBO_SBO ? sa_wg_desc(addr, sbo, 128) : sa_wg_desc(addr, 128, sbo);
}

template <int D, bool BF16>
__global__ void __launch_bounds__(SA_H_THREADS, 2) sa_hopper_kernel(const sa_attn_args a)
{
#if SA_HOPPER_CODE
    using T = sa_htile<D>;
    constexpr int NO = D / 8; /* n8 chunks of O per thread row pair */
    extern __shared__ __align__(128) char smem[];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, tq = lane % 4;
    const int qtile = gridDim.x - 1 - blockIdx.x; /* heavy causal tiles first */
    const int h = blockIdx.y, b = blockIdx.z, hk = h / a.group;
    const int q0 = qtile * SA_H_ROWS;
    const int diag = a.lkv - a.lq;

    int n_kt = (a.lkv + SA_CTA_K - 1) / SA_CTA_K;
    if (a.causal) {
        const int last_key = min(q0 + SA_H_ROWS, a.lq) - 1 + diag;
        n_kt = min(n_kt, last_key < 0 ? 0 : last_key / SA_CTA_K + 1);
    }

    const uint32_t sQ = sa_smem_addr(smem);
    const uint32_t bar0 = sQ + T::BAR_OFF; /* stage s: bar0 + 8s; the Q tile: the last one */
    const uint32_t qbar = bar0 + 8 * SA_H_STAGES;
    const size_t bh = (size_t)b * a.hq + h, bhk = (size_t)b * a.hkv + hk;
    const char *qg = (const char *)a.q + (bh * a.lq_pad + q0) * D;
    const char *kg = (const char *)a.k + bhk * a.lk_pad * D;
    const char *vg = (const char *)a.v + bhk * a.lk_pad * D;
    const float *ksg = a.kscale + bhk * a.lk_pad;
    auto stage = [&](int s) { return sQ + T::Q_BYTES + s * T::STAGE_BYTES; };
    auto load_tile = [&](int j) {
        const int s = j % SA_H_STAGES;
        const uint32_t st = stage(s), bar = bar0 + 8 * s;
        const size_t k0 = (size_t)j * SA_CTA_K;
        sa_mbar_expect_tx(bar, T::STAGE_BYTES);
        sa_bulk_g2s(st, kg + k0 * D, T::K_BYTES, bar);
        sa_bulk_g2s(st + T::K_BYTES, vg + k0 * D, T::V_BYTES, bar);
        sa_bulk_g2s(st + T::K_BYTES + T::V_BYTES, ksg + k0, T::KS_BYTES, bar);
    };
    if (tid == 0) {
        for (int s = 0; s <= SA_H_STAGES; ++s)
            sa_mbar_init(bar0 + 8 * s, 1);
        sa_mbar_init_fence();
    }
    __syncthreads();
    if (tid == 0) {
        sa_mbar_expect_tx(qbar, T::Q_BYTES);
        sa_bulk_g2s(sQ, qg, T::Q_BYTES, qbar);
        for (int j = 0; j < SA_H_STAGES && j < n_kt; ++j)
            load_tile(j);
    }

    /* This thread's rows: r[hh] = q0 + warp*16 + g + 8*hh. */
    const int row0 = q0 + warp * 16 + g;
    float qs[2], mx[2], sum[2];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
        qs[hh] = a.qscale[bh * a.lq_pad + row0 + 8 * hh];
        mx[hh] = -INFINITY;
        sum[hh] = 0.0f;
    }
    float o[NO * 4];
#pragma unroll
    for (int i = 0; i < NO * 4; ++i)
        o[i] = 0.0f;

    /* The A descriptor spans the warpgroup's 64 rows; wgmma hands warp w rows 16w..16w+15. */
    sa_mbar_wait(qbar, 0); /* also when no key is visible: no copy may outlive the block */
    for (int j = 0; j < n_kt; ++j) {
        const int s = j % SA_H_STAGES;
        const uint32_t sK = stage(s), sV = sK + T::K_BYTES, sKS = sV + T::V_BYTES;
        sa_mbar_wait(bar0 + 8 * s, (j / SA_H_STAGES) & 1);

        /* ---- S = Q·Kᵀ (64 x 64 int32; accumulators start at the float-bias bits) ---- */
        int32_t acc[32];
#pragma unroll
        for (int i = 0; i < 32; ++i)
            acc[i] = SA_INT_FLOAT_BIAS;
        sa_wg_fence();
#pragma unroll
        for (int kk = 0; kk < D / 32; ++kk)
            sa_wg_qk_s8(acc, sa_h_desc(sQ + kk * 256, T::QK_SBO),
                        sa_h_desc(sK + kk * 256, T::QK_SBO));
        sa_wg_commit();
        sa_wg_wait<0>();
#pragma unroll
        for (int i = 0; i < 32; ++i)
            sa_wg_touch(acc[i]);

        /* ---- scores in raw units t = acc * k_scale[key]; masks ---- */
        const int k0 = j * SA_CTA_K;
        float t[32];
        const float *ks = (const float *)(smem + (sKS - sQ));
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
            const float2 kv = *(const float2 *)(ks + nt * 8 + 2 * tq);
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const float k = (e & 1) ? kv.y : kv.x;
                t[nt * 4 + e] = fmaf(__int_as_float(acc[nt * 4 + e]), k, -12582912.0f * k);
            }
        }
        const bool need_mask =
            k0 + SA_CTA_K > a.lkv || (a.causal && k0 + SA_CTA_K - 1 > q0 + diag);
        if (need_mask) {
#pragma unroll
            for (int nt = 0; nt < 8; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int key = k0 + nt * 8 + 2 * tq + (e & 1);
                    const int row = row0 + 8 * (e >> 1);
                    if (key >= a.lkv || (a.causal && key > row + diag))
                        t[nt * 4 + e] = -INFINITY;
                }
        }

        /* ---- online softmax (base 2, subtract first: the row max gives exactly p = 448) ---- */
        float alpha[2], m_use[2];
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float m = mx[hh];
#pragma unroll
            for (int nt = 0; nt < 8; ++nt)
                m = fmaxf(m, fmaxf(t[nt * 4 + 2 * hh], t[nt * 4 + 2 * hh + 1]));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
            m_use[hh] = m == -INFINITY ? 0.0f : m;
            alpha[hh] = mx[hh] == -INFINITY ? 0.0f : sa_exp2((mx[hh] - m_use[hh]) * qs[hh]);
            mx[hh] = m;
            sum[hh] *= alpha[hh];
        }
#pragma unroll
        for (int i = 0; i < NO * 4; ++i)
            o[i] *= alpha[(i >> 1) & 1];
#pragma unroll
        for (int i = 0; i < 32; ++i) {
            const int hh = (i >> 1) & 1;
            t[i] = sa_exp2(fmaf(t[i] - m_use[hh], qs[hh], 8.807354922057604f));
            sum[hh] += t[i];
        }
        /* P as the E4M3 A fragment: the pre-pass permuted each 16-key group of Vᵀ so that
         * lane (g, tq)'s S columns are exactly its A columns (ALGORITHM.md). */
        uint32_t pa[2][4];
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
            const int n = kk * 4;
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
                pa[kk][hh] = (uint32_t)sa_pack_e4m3x2(t[n * 4 + 2 * hh], t[n * 4 + 2 * hh + 1]) |
                             ((uint32_t)sa_pack_e4m3x2(t[(n + 1) * 4 + 2 * hh],
                                                       t[(n + 1) * 4 + 2 * hh + 1])
                              << 16);
                pa[kk][2 + hh] =
                    (uint32_t)sa_pack_e4m3x2(t[(n + 2) * 4 + 2 * hh], t[(n + 2) * 4 + 2 * hh + 1]) |
                    ((uint32_t)sa_pack_e4m3x2(t[(n + 3) * 4 + 2 * hh], t[(n + 3) * 4 + 2 * hh + 1])
                     << 16);
            }
        }

        /* ---- O_tile = P·V (fresh fp32 accumulator), O += O_tile ---- */
        float ot[NO * 4];
#pragma unroll
        for (int i = 0; i < NO * 4; ++i)
            ot[i] = 0.0f;
        sa_wg_fence();
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
            const uint64_t vd = sa_h_desc(sV + kk * 256, T::V_SBO);
            if (D == 128)
                sa_wg_pv_e4m3_n128(ot, pa[kk], vd, kk);
            else
                sa_wg_pv_e4m3_n64(ot, pa[kk], vd, kk);
        }
        sa_wg_commit();
        sa_wg_wait<0>();
#pragma unroll
        for (int i = 0; i < NO * 4; ++i) {
            sa_wg_touch(ot[i]);
            o[i] += ot[i];
        }

        /* Every thread is done with stage s (its wgmma reads completed at the wait above). */
        __syncthreads();
        if (tid == 0 && j + SA_H_STAGES < n_kt)
            load_tile(j + SA_H_STAGES);
    }

    /* ---- epilogue: normalise, undo V's scale, store with bounds, LSE, non-finite flag ---- */
    char *ob = (char *)a.o + ((int64_t)b * a.o_b + (int64_t)h * a.o_h) * 2;
    const float *vs = a.vscale + bhk * D;
    bool nonfinite = false;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
        float s_ = sum[hh];
        s_ += __shfl_xor_sync(0xffffffffu, s_, 1);
        s_ += __shfl_xor_sync(0xffffffffu, s_, 2);
        const int row = row0 + 8 * hh;
        if (row >= a.lq)
            continue;
        const float inv = s_ > 0.0f ? 1.0f / s_ : 0.0f;
        char *orow = ob + (int64_t)row * a.o_t * 2;
#pragma unroll
        for (int nt = 0; nt < NO; ++nt) {
            const int col = nt * 8 + 2 * tq;
            if (col >= a.d)
                continue;
            const float2 v2 = *(const float2 *)(vs + col);
            const float x0 = o[nt * 4 + 2 * hh] * inv * v2.x;
            const float x1 = o[nt * 4 + 2 * hh + 1] * inv * v2.y;
            const uint32_t packed = sa_pack2<BF16>(x0, x1);
            const uint32_t exp_mask = BF16 ? 0x7f80u : 0x7c00u;
            if (col + 1 < a.d) {
                *(uint32_t *)(orow + col * 2) = packed;
                nonfinite |= ((packed >> 16) & exp_mask) == exp_mask;
            } else {
                *(uint16_t *)(orow + col * 2) = (uint16_t)(packed & 0xffffu);
            }
            nonfinite |= (packed & exp_mask) == exp_mask;
        }
        if (a.lse && tq == 0) {
            float l = -INFINITY;
            if (s_ > 0.0f) {
                l = (mx[hh] * qs[hh] + log2f(s_) - 8.807354922057604f) * SA_LN2;
                if (a.qkm)
                    l += a.qkm[bh * a.lq + row];
            }
            a.lse[bh * a.lq + row] = l;
        }
    }
    if (a.nonfinite && __any_sync(0xffffffffu, nonfinite) && lane == 0)
        atomicExch(a.nonfinite, 1);
#else
    (void)a;
    __trap();
#endif
}

template <int D, bool BF16>
static cudaError_t sa_hopper_run(const sa_attn_args *a, int batch, cudaStream_t stream, bool probe)
{
    const auto kernel = sa_hopper_kernel<D, BF16>;
    if (probe) {
        cudaFuncAttributes fa;
        return cudaFuncGetAttributes(&fa, kernel);
    }
    const int smem = sa_htile<D>::SMEM_BYTES;
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess)
        return e;
    const dim3 grid((a->lq + SA_H_ROWS - 1) / SA_H_ROWS, a->hq, batch);
    kernel<<<grid, SA_H_THREADS, smem, stream>>>(*a);
    return cudaGetLastError();
}

cudaError_t sa_attn_dispatch_int8_fp8_wgmma(int d_pad, int bf16, const sa_attn_args *a, int batch,
                                            cudaStream_t stream, bool probe)
{
#if SA_WITH_D64
    if (d_pad == 64)
        return bf16 ? sa_hopper_run<64, true>(a, batch, stream, probe)
                    : sa_hopper_run<64, false>(a, batch, stream, probe);
#endif
#if SA_WITH_D128
    return bf16 ? sa_hopper_run<128, true>(a, batch, stream, probe)
                : sa_hopper_run<128, false>(a, batch, stream, probe);
#else
    (void)d_pad, (void)bf16, (void)a, (void)batch, (void)stream, (void)probe;
    return cudaErrorInvalidValue;
#endif
}
