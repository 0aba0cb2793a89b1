/* The attention kernel: one block = 128 query rows of one (batch, head); 4 warps x 32 rows;
 * loop over 64-key tiles held in a 2-stage cp.async ring. Templates: MODE (kernel family),
 * D (padded head dim), BF16 (input/output dtype). Included by one .cu file per mode. */
#ifndef SA_MAINLOOP_CUH
#define SA_MAINLOOP_CUH

#include "sa_epilogue.cuh"
#include "sa_mma_tiles.cuh"
#include "sa_pipe.cuh"

/* How the epilogue gets its indices, per kernel: 0 = the kernel's values from before the main
 * loop; 1 = batch and head from a fresh blockIdx read; 2 = every index (batch, head, first row,
 * lane) from fresh reads, and the kernel's first row written as sa_first_row. The choices
 * change no result; they only steer ptxas (CUDA 13.0) away from spilling values derived from
 * these indices around the main loop. Each is used only for the kernels (and archs) where it
 * ends or cuts the spills without adding local-memory accesses to the loop; bench/NOTES.md (v7)
 * has the per-kernel SASS counts. Elsewhere the same change moved spills, so it is not used.
 * fp16 D=128 on sm_120a joined rule 1 with the epilogue's non-finite flag (12/8 bytes of spill
 * without it). */
template <int KMODE, int D, bool V1> __device__ constexpr int sa_epilogue_fresh_ids()
{
#if defined(__CUDA_ARCH__)
    constexpr int arch = __CUDA_ARCH__;
#else
    constexpr int arch = 0;
#endif
    /* int8-fp8-bs and int8-fp8-f16acc are int8-fp8 with another P·V instruction: the same
     * choice (for int8-fp8-f16acc on sm_120a it cut 40/108 bytes of spill to 32/104). */
    constexpr int MODE = KMODE == SA_KMODE_INT8_FP8_BS || KMODE == SA_KMODE_INT8_FP8_F16ACC
                             ? SA_KMODE_INT8_FP8
                             : KMODE;
    if ((MODE == SA_KMODE_FP16 && D == 128 && !V1 && arch == 900) ||
        (MODE == SA_KMODE_INT8_FP8 && D == 64 && arch == 1000))
        return 2;
    return (V1 && arch >= 900) || (MODE == SA_KMODE_INT8_FP16 && D == 128 && arch == 1000) ||
                   (MODE == SA_KMODE_INT8_FP8 && D == 128 && arch >= 1200) ||
                   (MODE == SA_KMODE_FP16 && D == 128 && arch >= 1200)
               ? 1
               : 0;
}

/* The first query row of thread tid's S/O fragments in query tile qtile (rows: this + mt*16 +
 * 8*half). */
__device__ __forceinline__ int sa_first_row(int qtile, int tid)
{
    return qtile * SA_CTA_Q + tid / 32 * SA_WARP_Q + tid % 32 / 4;
}

/* 3 blocks per SM at D=64 only where measured (sm_90, fp16 and int8-fp16); the f16acc P·V holds
 * a whole tile of packed P and spilled at 3 blocks' 168 registers (12 B on sm_90). */
template <int MODE, int D, bool BF16, bool V1>
__global__ void __launch_bounds__(SA_THREADS,
                                  D == 64 && !sa_tile<MODE, D>::PV_FP8 &&
                                          !sa_tile<MODE, D>::PV_F16ACC && !sa_pipe_qk<MODE, D>()
                                      ? SA_MIN_BLOCKS_D64
                                      : SA_MIN_BLOCKS) sa_attn_kernel(const sa_attn_args a)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
    if (sa_tile<MODE, D>::PV_FP8) {
        __trap();
        return;
    }
#endif
    /* A queued fp16 recompute (only_if_nonzero) of a call that wrote only finite values. */
    if (MODE == SA_KMODE_FP16 && a.only_if && *a.only_if == 0)
        return;
    using T = sa_tile<MODE, D, V1>;
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

    /* The caller's rows are full tiles when they hold all D columns and 64 rows remain. */
    const bool full_width = a.d == D;
    auto load_k = [&](int j) {
        const uint32_t s = sQ + T::k_off(j & 1);
        const int k0 = j * SA_CTA_K;
        if (T::QK_INT8) {
            /* the workspace rows are exactly QK_ROW bytes apart: a compile-time stride */
            sa_copy_tile<SA_CTA_K, T::QK_ROW, T::QK_PITCH>(s, kg + k0 * T::QK_ROW, T::QK_ROW, true,
                                                           0, 0);
            if (threadIdx.x < SA_CTA_K / 4)
                sa_cp_async16(sQ + T::ks_off(j & 1) + threadIdx.x * 16, ksg + k0 + threadIdx.x * 4,
                              16);
        } else {
            sa_copy_tile<SA_CTA_K, T::QK_ROW, T::QK_PITCH>(s, kg + k0 * a.k_t, a.k_t,
                                                           full_width && k0 + SA_CTA_K <= a.lkv,
                                                           a.lkv - k0, a.d * 2);
        }
        sa_cp_async_commit();
    };
    auto load_v = [&](int j) {
        const uint32_t s = sQ + T::v_off(j & 1);
        const int k0 = j * SA_CTA_K;
        if (T::PV_FP8)
            /* tile-major Vᵀ: each 64-key tile is one contiguous [D][64] block */
            sa_copy_tile<D, SA_CTA_K, T::V_PITCH>(s, vg + (size_t)k0 * D, SA_CTA_K, true, 0, 0);
        else
            sa_copy_tile<SA_CTA_K, D * 2, T::V_PITCH>(s, vg + k0 * a.v_t, a.v_t,
                                                      full_width && k0 + SA_CTA_K <= a.lkv,
                                                      a.lkv - k0, a.d * 2);
        sa_cp_async_commit();
    };

    /* Q tile: the int8 copy is padded in the workspace; the caller's fp16 rows are bounded. */
    if (T::QK_INT8)
        sa_copy_tile<SA_CTA_Q, T::QK_ROW, T::QK_PITCH>(sQ, qg, T::QK_ROW, true, 0, 0);
    else
        sa_copy_tile<SA_CTA_Q, T::QK_ROW, T::QK_PITCH>(
            sQ, qg, a.q_t, full_width && q0 + SA_CTA_Q <= a.lq, a.lq - q0, a.d * 2);
    constexpr bool PIPE = sa_pipe_qk<MODE, D>();
    if (n_kt > 0) {
        load_k(0);
        if (!PIPE)
            load_v(0); /* the pipelined loop loads K[1] first */
    } else {
        sa_cp_async_commit();
        if (!PIPE)
            sa_cp_async_commit();
    }

    float row_scale[SA_MT][2];
#pragma unroll
    for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
            row_scale[mt][hh] = T::QK_INT8 ? a.qscale[((size_t)b * a.hq + h) * a.lq_pad + q0 +
                                                      warp * SA_WARP_Q + mt * 16 + g + 8 * hh]
                                           : a.score_scale;

    float o[SA_MT][D / 8][4];
#pragma unroll
    for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < D / 8; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                o[mt][nt][e] = 0.0f;
    sa_row_state st;
#pragma unroll
    for (int mt = 0; mt < SA_MT; ++mt)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            st.max[mt][hh] = -INFINITY;
            st.sum[mt][hh] = 0.0f;
        }

    /* SA_TEST_EXTRA_ALU* only (sa_internal.h): four distinct chains, so none is merged */
    float test_sink[4] = {row_scale[0][0], row_scale[0][1], row_scale[SA_MT - 1][0],
                          row_scale[SA_MT - 1][1]};
    const uint32_t sQw = sQ + warp * SA_WARP_Q * T::QK_PITCH;
    constexpr int FRESH = sa_epilogue_fresh_ids<MODE, D, V1>();
    const int row0 = FRESH == 2 ? sa_first_row(qtile, threadIdx.x)
                                : q0 + warp * SA_WARP_Q + g; /* + mt*16 + 8*hh */
    if constexpr (PIPE)
        sa_pipe_mainloop<MODE, D, BF16, V1>(a, n_kt, q0, row0, lane, sQ, sQw, row_scale, st, o,
                                            test_sink, load_k, load_v);
    else
        for (int j = 0; j < n_kt; ++j) {
            const uint32_t sK = sQ + T::k_off(j & 1), sV = sQ + T::v_off(j & 1),
                           sKS = sQ + T::ks_off(j & 1);
            const int k0 = j * SA_CTA_K;
            const bool need_mask =
                k0 + SA_CTA_K > a.lkv || (a.causal && k0 + SA_CTA_K - 1 > q0 + diag);
            sa_cp_async_wait<1>();
            __syncthreads(); /* K[j] visible; every warp is done with stage (j+1)&1 */
            if (V1) {        /* V[j+1] goes into the one V buffer after P·V(j), below */
                if (j + 1 < n_kt)
                    load_k(j + 1);
                else
                    sa_cp_async_commit();
            } else if (j + 1 < n_kt) {
                load_k(j + 1);
                load_v(j + 1);
            } else {
                sa_cp_async_commit();
                sa_cp_async_commit();
            }
            float t[SA_MT][8][4];
            sa_qk<MODE, D, BF16, 8>(t, sQw, sK, sKS, lane);
            if (need_mask)
                sa_mask<8>(t, k0, row0, lane, a.lkv, a.causal, diag);
            sa_softmax_step<8, D / 8, sa_lazy_alpha<MODE, D>()>(t, st, row_scale, o, T::P_LOG2);
            sa_test_extra_alu<SA_TEST_EXTRA_ALU>(test_sink, row_scale[0][0]);
            if (V1)
                sa_cp_async_wait<1>(); /* pending: V[j], K[j+1] */
            else
                sa_cp_async_wait<2>(); /* pending: V[j], K[j+1], V[j+1] */
            __syncthreads();           /* V[j] visible */
            if (T::PV_FP8)
                sa_pv_fp8<MODE, D, 8>(o, t, sV, 0, lane);
            else if (T::PV_F16ACC && !BF16)
                sa_pv_f16_f16acc<D, 8>(o, t, sV, lane);
            else
                sa_pv_f16<D, BF16, 8>(o, t, sV, lane, test_sink);
            sa_v1_load_next<V1>(j, n_kt, load_v);
        }
    sa_cp_async_wait<0>();
    if ((SA_TEST_EXTRA_ALU > 0 || SA_TEST_EXTRA_ALU_PV > 0) &&
        sa_test_extra_alu_sink_used(test_sink))
        o[0][0][0] = 0.0f;

    /* Fresh indices (sa_epilogue_fresh_ids): otherwise ptxas keeps 64-bit addresses derived
     * from the prologue's values across the main loop in some kernels, and spills them. */
    if (FRESH == 2) {
        const int tid = sa_fresh_tid_x();
        const int qt = sa_fresh_nctaid_x() - 1 - sa_fresh_ctaid_x();
        sa_epilogue<MODE, D, BF16>(a, o, st, row_scale, sa_fresh_ctaid_z(), sa_fresh_ctaid_y(),
                                   sa_first_row(qt, tid), tid % 32);
    } else if (FRESH == 1) {
        sa_epilogue<MODE, D, BF16>(a, o, st, row_scale, sa_fresh_ctaid_z(), sa_fresh_ctaid_y(),
                                   row0, lane);
    } else {
        sa_epilogue<MODE, D, BF16>(a, o, st, row_scale, b, h, row0, lane);
    }
}

template <int MODE, int D, bool BF16, bool V1>
static cudaError_t sa_attn_launch_one(const sa_attn_args *a, const sa_launch_cfg *l)
{
    const auto kernel = sa_attn_kernel<MODE, D, BF16, V1>;
    const int smem = sa_tile<MODE, D, V1>::SMEM_BYTES;
    cudaError_t e = sa_set_smem_once(l->ctx, (const void *)kernel, smem);
    if (e != cudaSuccess)
        return e;
    const dim3 grid((a->lq + SA_CTA_Q - 1) / SA_CTA_Q, a->hq, l->batch);
    kernel<<<grid, SA_THREADS, smem, l->stream>>>(*a);
    return cudaGetLastError();
}

/* Test builds (-DSA_TEST_FORCE_V1=1) take the one-V-buffer kernel on any GPU, so that the
 * path of small-shared-memory GPUs can be checked on a big one. */
#ifndef SA_TEST_FORCE_V1
#define SA_TEST_FORCE_V1 0
#endif

template <int MODE, int D, bool BF16>
static cudaError_t sa_attn_run(const sa_attn_args *a, const sa_launch_cfg *l)
{
    if (l->probe) {
        cudaFuncAttributes fa;
        return cudaFuncGetAttributes(&fa, sa_attn_kernel<MODE, D, BF16, false>);
    }
    /* The one-V-buffer kernel exists where the 2-stage ring outgrows small GPUs (fp16 mode at
     * D=128: 102 KB), and for the FP8 modes at D=128, where it lets two blocks share an SM whose
     * shared memory holds one with two V buffers: GeForce Ada and Blackwell have 100 KB per SM,
     * 2 x (57.9 + 1) KB does not fit and 2 x (47.6 + 1) KB does (one warp per scheduler instead
     * of two costs ~1.18x in the throughput model, bench/model_throughput.py). */
    using TF = sa_tile<MODE, D, false>;
    using T1 = sa_tile<MODE, D, true>;
    if constexpr (TF::SMEM_BYTES > SA_SMALL_SMEM_LIMIT || (TF::PV_FP8 && D == 128)) {
        int optin = 0, per_sm = 0;
        const cudaError_t e = sa_smem_limits(l->ctx, &optin, &per_sm);
        if (e != cudaSuccess)
            return e;
        constexpr int RESERVED = 1024; /* shared memory the system keeps per block */
        const bool two_with_v1 = TF::PV_FP8 && per_sm < 2 * (TF::SMEM_BYTES + RESERVED) &&
                                 per_sm >= 2 * (T1::SMEM_BYTES + RESERVED);
        if (SA_TEST_FORCE_V1 || optin < TF::SMEM_BYTES || two_with_v1)
            return sa_attn_launch_one<MODE, D, BF16, true>(a, l);
    }
    return sa_attn_launch_one<MODE, D, BF16, false>(a, l);
}

/* Runs (or probes) the kernel of MODE for the padded head dim and dtype. A head dim that the
 * build left out falls back to 128 (64 is always a zero-padded 128). */
template <int MODE>
static cudaError_t sa_attn_dispatch(int d_pad, int bf16, const sa_attn_args *a,
                                    const sa_launch_cfg *l)
{
    /* int8-fp16-f16acc has fp16 kernels only (launch.cu runs bf16 inputs as int8-fp16). */
    constexpr bool HAS_BF16 = MODE != SA_KMODE_INT8_FP16_F16ACC;
    if (bf16 && !HAS_BF16)
        return cudaErrorInvalidValue;
#if SA_WITH_D64
    if (d_pad == 64)
        return bf16 ? sa_attn_run<MODE, 64, HAS_BF16>(a, l) : sa_attn_run<MODE, 64, false>(a, l);
#endif
#if SA_WITH_D128
    return bf16 ? sa_attn_run<MODE, 128, HAS_BF16>(a, l) : sa_attn_run<MODE, 128, false>(a, l);
#else
    (void)d_pad, (void)bf16, (void)a, (void)l;
    return cudaErrorInvalidValue;
#endif
}

#endif
