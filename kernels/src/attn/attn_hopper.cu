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
#include "sa_softmax.cuh" /* SA_FFMA_SAFE_LOGIT */
#include "sa_wgmma.cuh"

/* log2(448), E4M3's largest value, less SA_H_SPEC's headroom (sa_internal.h): p's exponent at
 * a row's reference max */
#define SA_H_P_LOG2 (8.807354922057604f - (SA_H_SPEC ? (float)SA_H_HEADROOM : 0.0f))

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SA_HOPPER_CODE 1
#else
#define SA_HOPPER_CODE 0
#endif

#define SA_H_ROWS 64 /* query rows per block: one warpgroup, 16 rows per warp */
#define SA_H_THREADS 128
#ifndef SA_H_STAGES
#define SA_H_STAGES 3 /* K/V tiles in flight */
#endif
/* 1: the one-warpgroup kernel quantizes its Q rows itself from the caller's Q in calls without
 * LSE (sa_h_quantize_q), and the pre-pass leaves Q out: one read of fp16 Q instead of the
 * pre-pass's read, int8 write and the kernel's int8 read. */
#ifndef SA_H_QFUSE
#define SA_H_QFUSE 1
#endif
/* Test hook for the descriptor's two offsets (kernels/ALGORITHM.md): 1 swaps them. */
#ifndef SA_H_SWAP_LBO_SBO
#define SA_H_SWAP_LBO_SBO 0
#endif
/* Test builds only (bench/build_hopper_variants.sh), results wrong by design: 1 = every
 * exponential a single FMUL (what MUFU costs), 2 = no softmax at all, P = S's bits (what the
 * tensor work, copies and folds take alone); in the warp-specialized kernel 3 = no epilogue (O
 * never written: what a block's end costs), 4 = Q neither read nor quantized (zeros: what a
 * block's start costs there), 5 = the staged epilogue without its copies to O (what they
 * cost). 3 to 5 skip their part on a condition the compiler cannot decide (lq > 0), so the
 * rest compiles as in the product. */
#ifndef SA_TEST_HOPPER_DIAG
#define SA_TEST_HOPPER_DIAG 0
#endif

/* Index (in floats) of the K scales of the tile that starts at key `keys` in the workspace's
 * kscale part: one float per key, or with KG (rank groups, sa_internal.h) one record of
 * SA_H_KG_RECORD_BYTES per tile. */
template <bool KG> __device__ __forceinline__ size_t sa_h_ks_index(size_t keys)
{
    return KG ? keys / SA_CTA_K * (SA_H_KG_RECORD_BYTES / 4) : keys;
}
/* Bytes of one tile's K scales: one per key, or with KG the tile's record. */
template <bool KG> __host__ __device__ constexpr int sa_h_ks_bytes()
{
    return KG ? SA_H_KG_RECORD_BYTES : SA_CTA_K * 4;
}
static_assert(SA_H_KG_RECORD_BYTES % 16 == 0 && SA_H_KG_RECORD_BYTES <= SA_CTA_K * 4,
              "a record is a bulk copy's whole 16-byte units, within a tile's per-key bytes");

/* Causal masks. The last key a 64-key tile at k0 may hold: its own, or with KG (keys ranked
 * within windows of SA_H_RANK_WINDOW) its window's. */
template <bool KG> __device__ __forceinline__ int sa_h_tile_last_key(int k0)
{
    if constexpr (KG)
        return k0 | (SA_H_RANK_WINDOW - 1);
    else
        return k0 + SA_CTA_K - 1;
}
/* Key tiles (of n_all) that rows whose last visible key is last_key run: up to that key's tile,
 * or with KG to the end of its window (the key may have moved anywhere in it). */
template <bool KG> __device__ __forceinline__ int sa_h_causal_tiles(int last_key, int n_all)
{
    const int last = KG ? last_key | (SA_H_RANK_WINDOW - 1) : last_key;
    return last_key < 0 ? 0 : min(n_all, last / SA_CTA_K + 1);
}

/* Row stride of the epilogue's staging area (sa_h_epilogue_staged): 16 bytes past a row, so that
 * the eight rows of a stmatrix land in distinct banks. */
template <int D> __host__ __device__ constexpr int sa_h_epi_row_bytes()
{
    return D * 2 + 16;
}

/* 1: the one-warpgroup kernel's epilogue through shared memory too (sa_h_epilogue_staged), as
 * SA_HW_EPI_STAGE says for the warp-specialized kernel; per head dim, SA_H_EPI_STAGE sets both.
 * Round 38b (H200, bench/results/h200-a4427fb-hopper38-variants.md, two runs each, TOPS end to
 * end; the same bits, memcheck and racecheck clean): D=64 L=1K 279.9-280.4 against 275.3-276.3,
 * causal 196.4-197.5 against 193.2-194.6, L=2K 335.0-335.2 against 331.5-332.6. D=128 runs
 * the warp-specialized kernel at every length, so its switch stays off (not measured). */
#ifdef SA_H_EPI_STAGE
#define SA_H_EPI_STAGE128 SA_H_EPI_STAGE
#define SA_H_EPI_STAGE64 SA_H_EPI_STAGE
#endif
#ifndef SA_H_EPI_STAGE128
#define SA_H_EPI_STAGE128 0
#endif
#ifndef SA_H_EPI_STAGE64
#define SA_H_EPI_STAGE64 1
#endif

template <int D> struct sa_htile {
    static constexpr int Q_BYTES = SA_H_ROWS * D; /* int8 Q, core-matrix order */
    static constexpr int K_BYTES = SA_CTA_K * D;  /* int8 K tile */
    static constexpr int V_BYTES = D * SA_CTA_K;  /* E4M3 Vᵀ tile */
    /* K scales of the tile: the slot holds one per key; with KG the first 16 bytes are used */
    static constexpr int KS_SLOT = sa_h_ks_bytes<false>();
    static constexpr int STAGE_BYTES = K_BYTES + V_BYTES + KS_SLOT;
    static constexpr int BAR_OFF = Q_BYTES + SA_H_STAGES * STAGE_BYTES;
    static constexpr bool EPI_STAGE = D == 128 ? SA_H_EPI_STAGE128 : SA_H_EPI_STAGE64;
    static constexpr int EPI_OFF = (BAR_OFF + 8 * (SA_H_STAGES + 1) + 15) / 16 * 16;
    static constexpr int EPI_WARP_BYTES = 16 * sa_h_epi_row_bytes<D>(); /* a warp's 16 rows */
    static constexpr int SMEM_BYTES =
        EPI_STAGE ? EPI_OFF + 4 * EPI_WARP_BYTES : BAR_OFF + 8 * (SA_H_STAGES + 1);
    /* Core-matrix strides: K-direction neighbours are 128 bytes apart; row groups of 8 are
     * 8 * (row bytes) apart (Q, K: D bytes per row; Vᵀ: 64 key bytes per channel). */
    static constexpr uint32_t QK_SBO = 8 * D;
    static constexpr uint32_t V_SBO = 8 * SA_CTA_K;
};

__device__ __forceinline__ uint64_t sa_h_desc(uint32_t addr, uint32_t sbo)
{
    return SA_H_SWAP_LBO_SBO ? sa_wg_desc(addr, sbo, 128) : sa_wg_desc(addr, 128, sbo);
}

/* The main loop: 0 (default) runs one tile at a time (Q·Kᵀ, softmax, P·V, each waited);
 * 1 issues Q·Kᵀ of tile j+1 before the softmax of tile j, so that the tensor cores work while
 * the warpgroup computes exponentials. Measured on the H200 (bench/NOTES.md, "Hopper"): 1 is
 * no faster at D=128 (+1%, within noise) and 25% slower at D=64, where its 188 registers allow
 * 2 blocks per SM instead of 4; it stays as the starting point of warp specialization. */
#ifndef SA_H_PIPELINE
#define SA_H_PIPELINE 0
#endif

/* S = Q·Kᵀ for one 64-key tile, issued asynchronously (committed as one wgmma group), Q from
 * shared memory (sQ) or, with QF, its A fragment from registers (qa, from sa_h_quantize_q). The
 * int32 accumulators start at the float-bias bits (sa_biased_int_to_float). */
template <int D, bool QF>
__device__ __forceinline__ void sa_h_issue_qk(int32_t (&acc)[32], uint32_t sQ,
                                              const uint32_t (&qa)[D / 32][4], uint32_t sK)
{
#pragma unroll
    for (int i = 0; i < 32; ++i)
        acc[i] = SA_INT_FLOAT_BIAS;
    sa_wg_fence();
#pragma unroll
    for (int kk = 0; kk < D / 32; ++kk) {
        const uint64_t kd = sa_h_desc(sK + kk * 256, sa_htile<D>::QK_SBO);
        if constexpr (QF)
            sa_wg_qk_s8_ra(acc, qa[kk], kd);
        else
            sa_wg_qk_s8(acc, sa_h_desc(sQ + kk * 256, sa_htile<D>::QK_SBO), kd);
    }
    sa_wg_commit();
}

/* Per-thread softmax state of the two rows this thread holds (g and g+8 of its warp). */
struct sa_h_rows {
    int row0; /* first row (query index) */
    float qs[2], mx[2], sum[2];
};

/* The epilogue's per-row part: each row's 1/sum, whether it is stored (row < lq) and takes V's
 * means (V smoothed, the row has keys), and its LSE (stored by the lane quad's first lane). */
struct sa_h_epi_rows {
    float inv[2];
    bool live[2], add_mean[2];
};
template <bool QUAD_SUM>
__device__ __forceinline__ sa_h_epi_rows sa_h_epi_row_part(const sa_attn_args &a,
                                                           const sa_h_rows &r, bool smoothed,
                                                           size_t bh, int tq)
{
    sa_h_epi_rows e;
    float qkm[2] = {0.0f, 0.0f};
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) /* the LSE's q·k̄ terms, before the LSE's stores */
        if (a.lse && a.qkm && tq == 0 && r.row0 + 8 * hh < a.lq)
            qkm[hh] = a.qkm[bh * a.lq + r.row0 + 8 * hh];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
        float s_ = r.sum[hh];
        if (QUAD_SUM) {
            s_ += __shfl_xor_sync(0xffffffffu, s_, 1);
            s_ += __shfl_xor_sync(0xffffffffu, s_, 2);
        }
        const int row = r.row0 + 8 * hh;
        e.live[hh] = row < a.lq;
        e.inv[hh] = s_ > 0.0f ? 1.0f / s_ : 0.0f;
        e.add_mean[hh] = smoothed && s_ > 0.0f; /* V smoothed; rows without keys stay 0 */
        if (a.lse && tq == 0 && e.live[hh]) {
            float l = -INFINITY;
            if (s_ > 0.0f)
                l = (r.mx[hh] * r.qs[hh] + log2f(s_) - SA_H_P_LOG2) * SA_LN2 + qkm[hh];
            a.lse[bh * a.lq + row] = l;
        }
    }
    return e;
}

/* V's channel scales and means (vm: NULL where V is not smoothed) of the lane's column pairs in
 * n8 chunks n0..n0+B-1: one batch, loaded ahead of the stores it feeds. */
template <int B>
__device__ __forceinline__ void sa_h_epi_load_v(float2 (&vscale)[B], float2 (&vmean)[B],
                                                const float *vs, const float *vm, int n0, int tq)
{
#pragma unroll
    for (int i = 0; i < B; ++i) {
        const int col = (n0 + i) * 8 + 2 * tq;
        vscale[i] = *(const float2 *)(vs + col);
        vmean[i] = vm ? *(const float2 *)(vm + col) : make_float2(0.0f, 0.0f);
    }
}

/* One output pair: O's two values normalised, V's scale undone and its means added back. */
template <bool BF16>
__device__ __forceinline__ uint32_t sa_h_epi_pair(float o0, float o1, float inv, float2 vscale,
                                                  float2 vmean, bool add_mean)
{
    float x0 = o0 * inv * vscale.x;
    float x1 = o1 * inv * vscale.y;
    if (add_mean) {
        x0 += vmean.x;
        x1 += vmean.y;
    }
    return sa_pack2<BF16>(x0, x1);
}

/* The epilogue both int8-fp8-wgmma kernels share: normalise O by the row sums, undo V's scale,
 * add V's mean back (V smoothed: a.vmean; rows that see no key stay 0), store with bounds (an odd
 * head_dim ends on a 16-bit store), write the LSE (natural log, with the Q·K mean term) and raise
 * the non-finite flag. QUAD_SUM: the row sums are still per lane and are reduced over the quad here
 * (the warp-specialized kernel takes them from the P·V MMA already reduced). tq_col is the lane's
 * quad index used for the columns (the persistent kernel passes a fresh copy, see SA_HW_FRESH_EPI);
 * tq the one that picks the LSE writer.
 * V's scales and means of the lane's columns are loaded in batches of EPI_BATCH n8 chunks, each
 * batch before its stores: O's stores may alias them as far as the compiler knows, so a load
 * placed after a store waits for it, and loads between the stores cost one memory latency each,
 * 32 per thread at D=128 (ncu, L=1K: a quarter of the kernel's warp samples sat in that chain);
 * batched, two (one batch of all 16 chunks makes ptxas spill in the warp-specialized kernel).
 * The workspace holds D of each per head, so the loads need no channel bound. (Copying them into
 * shared memory by the producer instead measured no faster: round 21, `epismem`.) */
template <int D, bool BF16, bool QUAD_SUM>
__device__ __forceinline__ void sa_h_epilogue(const sa_attn_args &a, const float (&o)[D / 2],
                                              const sa_h_rows &r, int b, int h, size_t bh,
                                              size_t bhk, int tq_col, int tq, int lane)
{
    constexpr int NO = D / 8; /* n8 chunks of O */
    char *ob = (char *)a.o + ((int64_t)b * a.o_b + (int64_t)h * a.o_h) * 2;
    const float *vs = a.vscale + bhk * D;
    const float *vm = a.vmean ? a.vmean + bhk * D : nullptr;
    constexpr int EPI_BATCH = NO < 8 ? NO : 8;
    const sa_h_epi_rows e = sa_h_epi_row_part<QUAD_SUM>(a, r, vm != nullptr, bh, tq);
    bool nonfinite = false;
#pragma unroll
    for (int n0 = 0; n0 < NO; n0 += EPI_BATCH) {
        float2 vscale[EPI_BATCH], vmean[EPI_BATCH];
        sa_h_epi_load_v(vscale, vmean, vs, vm, n0, tq_col);
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            if (!e.live[hh])
                continue;
            char *orow = ob + (int64_t)(r.row0 + 8 * hh) * a.o_t * 2;
#pragma unroll
            for (int i = 0; i < EPI_BATCH; ++i) {
                const int nt = n0 + i, col = nt * 8 + 2 * tq_col;
                if (col >= a.d)
                    continue;
                const uint32_t packed =
                    sa_h_epi_pair<BF16>(o[nt * 4 + 2 * hh], o[nt * 4 + 2 * hh + 1], e.inv[hh],
                                        vscale[i], vmean[i], e.add_mean[hh]);
                const uint32_t exp_mask = BF16 ? 0x7f80u : 0x7c00u;
                if (col + 1 < a.d) {
                    *(uint32_t *)(orow + col * 2) = packed;
                    nonfinite |= ((packed >> 16) & exp_mask) == exp_mask;
                } else {
                    *(uint16_t *)(orow + col * 2) = (uint16_t)(packed & 0xffffu);
                }
                nonfinite |= (packed & exp_mask) == exp_mask;
            }
        }
    }
    if (a.nonfinite && __any_sync(0xffffffffu, nonfinite) && lane == 0)
        atomicExch(a.nonfinite, 1);
}

/* Whether O's rows can leave through shared memory by the copy engine (sa_h_epilogue_staged):
 * head_dim is the kernel's D (no column bound) and every row starts 16-byte aligned. */
template <int D> __device__ __forceinline__ bool sa_h_epi_stage_ok(const sa_attn_args &a)
{
    return a.d == D && ((uintptr_t)a.o & 15) == 0 && ((a.o_b * 2) & 15) == 0 &&
           ((a.o_h * 2) & 15) == 0 && ((a.o_t * 2) & 15) == 0;
}

/* The epilogue through shared memory (where sa_h_epi_stage_ok): the same values as
 * sa_h_epilogue, written by stmatrix into this warp's 16 staged rows (stage: their shared
 * address), then each live row copied to O whole (D·2 bytes) by the copy engine, one row per
 * lane of the first 16: D/16 stmatrix and one copy per row instead of a 4-byte store per value
 * pair with its address, bound and non-finite tests. */
template <int D, bool BF16, bool QUAD_SUM>
__device__ __forceinline__ void sa_h_epilogue_staged(const sa_attn_args &a, const float (&o)[D / 2],
                                                     const sa_h_rows &r, int b, int h, size_t bh,
                                                     size_t bhk, int tq, int lane, uint32_t stage)
{
    constexpr int NO = D / 8, ROW_BYTES = sa_h_epi_row_bytes<D>();
    const float *vs = a.vscale + bhk * D;
    const float *vm = a.vmean ? a.vmean + bhk * D : nullptr;
    constexpr int EPI_BATCH = NO < 8 ? NO : 8;
    const sa_h_epi_rows e = sa_h_epi_row_part<QUAD_SUM>(a, r, vm != nullptr, bh, tq);
    /* Non-finite halves: (bits & exponent) + the exponent's lowest bit carries into the half's
     * top bit exactly when the exponent is all ones (the low half's sum stays below bit 16). */
    constexpr uint32_t EXP2 = BF16 ? 0x7f807f80u : 0x7c007c00u;
    constexpr uint32_t LSB2 = BF16 ? 0x00800080u : 0x04000400u;
    uint32_t nf[2] = {0u, 0u};
    /* lane l gives row l % 8 of matrix l / 8: (chunk, rows 0-7), (chunk, rows 8-15),
     * (chunk + 1, rows 0-7), (chunk + 1, rows 8-15) */
    const uint32_t my_row =
        stage + ((lane & 7) + 8 * ((lane >> 3) & 1)) * ROW_BYTES + (lane >> 4) * 16;
#pragma unroll
    for (int n0 = 0; n0 < NO; n0 += EPI_BATCH) {
        float2 vscale[EPI_BATCH], vmean[EPI_BATCH];
        sa_h_epi_load_v(vscale, vmean, vs, vm, n0, tq);
#pragma unroll
        for (int i = 0; i < EPI_BATCH; i += 2) {
            uint32_t m[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const int nt = n0 + i + (k >> 1), hh = k & 1;
                m[k] =
                    sa_h_epi_pair<BF16>(o[nt * 4 + 2 * hh], o[nt * 4 + 2 * hh + 1], e.inv[hh],
                                        vscale[i + (k >> 1)], vmean[i + (k >> 1)], e.add_mean[hh]);
                nf[hh] |= (m[k] & EXP2) + LSB2;
            }
            sa_stmatrix_x4(my_row + (n0 + i) * 16, m);
        }
    }
    const bool nonfinite =
        (e.live[0] && (nf[0] & 0x80008000u) != 0) || (e.live[1] && (nf[1] & 0x80008000u) != 0);
    /* Each lane's stmatrix writes made visible to the async proxy, then the warp meets: the copy
     * engine reads rows that other lanes wrote (the CUDA programming guide's order for a bulk
     * store from shared memory). Round 38 measured the meeting before the fence; this order
     * gives every key loop the same instructions, only other register numbers at D=128. */
    sa_fence_proxy_async_smem();
    __syncwarp();
    const int row = r.row0 - (lane >> 2) + lane; /* row0: the warp's first row + lane / 4 */
    if (lane < 16 && row < a.lq && !(SA_TEST_HOPPER_DIAG == 5 && a.lq > 0)) {
        char *orow =
            (char *)a.o + ((int64_t)b * a.o_b + (int64_t)h * a.o_h + (int64_t)row * a.o_t) * 2;
        sa_bulk_s2g(orow, stage + lane * ROW_BYTES, D * 2);
        sa_bulk_s2g_wait_read(); /* the block's shared memory must outlive the copy's reads */
    }
    if (a.nonfinite && __any_sync(0xffffffffu, nonfinite) && lane == 0)
        atomicExch(a.nonfinite, 1);
}

/* KG's one-FFMA exponent adds S's bias times the factor (about 6x the largest logit
 * the int8 operands could give) to the row max term: below this bound its rounding stays under
 * 2^-9 in the base-2 exponent (0.14 % of P, against E4M3's 6 % step). */
#define SA_H_KG_SAFE_OFFSET 32768.0f

/* The exponential of one score (SA_TEST_HOPPER_DIAG 1: a stand-in FMUL). Rounds 5 (D=128) and
 * 46 (D=64) measured the alternative, some exponentials on the FMA pipe by a polynomial: slower
 * (bench/NOTES.md). */
__device__ __forceinline__ float sa_h_exp2(float x)
{
    if (SA_TEST_HOPPER_DIAG == 1)
        return x * 0.0625f;
    return sa_exp2(x);
}

/* Row max of one row's 16 scores of a thread (hh: which of its two rows), and m0. */
__device__ __forceinline__ float sa_h_max16(const float (&t)[32], int hh, float m0)
{
    float m = m0;
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
        m = fmaxf(m, fmaxf(t[nt * 4 + 2 * hh], t[nt * 4 + 2 * hh + 1]));
    return m;
}

/* p = exp2(t·kq + off) in place for W tiles' scores, per row (the one-FFMA form). */
template <int W>
__device__ __forceinline__ void sa_h_exp_ffma(float (&t)[W * 32], const float (&kq)[2],
                                              const float (&off)[2])
{
#pragma unroll
    for (int w = 0; w < W; ++w)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
#pragma unroll
            for (int nt = 0; nt < 8; ++nt)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    float &x = t[w * 32 + nt * 4 + 2 * hh + e];
                    x = sa_h_exp2(fmaf(x, kq[hh], off[hh]));
                }
}

/* Nothing to run beside the exponentials (see sa_h_softmax's `beside`). */
struct sa_h_nothing {
    __device__ __forceinline__ void operator()() const {}
};

/* W consecutive 64-key tiles after their S is complete (W = 2: SA_HW_PAIR's 128-key step):
 * scores, masks, online softmax (base 2) over all W·64 keys, and P as the E4M3 A fragments of
 * P·V, two k32 steps per tile. alpha gets O's rescale factors. With ROW_SUM the row sums are
 * rescaled and grown here (FADD per score); without it the caller takes them from P·V's extra
 * columns. ks[w]: tile w's K scales; keys of tile w start at k0 + 64 w; tiles from n_live on are
 * masked whole (an odd tile count's first step). SPEC_K: the kernel instance that may take
 * SA_H_SPEC's form (sa_internal.h; alpha is then 1). PACK_IN_EXP: P packed inside each
 * exponential form (`finish` below; SA_HW_PACK_IN_EXP128). KG: K scales per lane quad (rank
 * groups, sa_internal.h): kg is the thread's one factor and ks is not read. */
template <bool ROW_SUM, int W, bool SPEC_K = false, bool PACK_IN_EXP = false, bool KG = false,
          typename Beside = sa_h_nothing>
__device__ __forceinline__ void
sa_h_softmax_w(const int32_t (&acc)[W][32], uint32_t (&pa)[2 * W][4], float alpha[2], sa_h_rows &r,
               const float *const (&ks)[W], float kg, int k0, const sa_attn_args &a, int diag,
               bool need_mask, int n_live, int tq, Beside &&beside = Beside())
{
    static_assert(W == 1 || !KG, "KG's factor is one tile's");
#if SA_TEST_HOPPER_DIAG == 2
    {
#pragma unroll
        for (int w = 0; w < W; ++w)
#pragma unroll
            for (int kk = 0; kk < 2; ++kk)
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    pa[2 * w + kk][i] = (uint32_t)acc[w][kk * 16 + i * 4] & 0x3f3f3f3fu;
        alpha[0] = alpha[1] = 1.0f;
        (void)r, (void)ks, (void)kg, (void)k0, (void)a, (void)diag, (void)need_mask, (void)tq;
        (void)n_live;
    }
#else
    /* Scores: dequantized here (one K scale per key), or with KG the raw S as biased
     * floats (S + 1.5·2^23, exact) and the thread's one K factor kg applied in the exponent. */
    const float kbias = -12582912.0f * kg;
    float t[W * 32];
#pragma unroll
    for (int w = 0; w < W; ++w)
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
            float2 kv = make_float2(0.0f, 0.0f);
            if (!KG)
                kv = *(const float2 *)(ks[w] + nt * 8 + 2 * tq);
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const float k = (e & 1) ? kv.y : kv.x;
                const float s = __int_as_float(acc[w][nt * 4 + e]);
                t[w * 32 + nt * 4 + e] = KG ? s : fmaf(s, k, -12582912.0f * k);
            }
        }
    if (need_mask) {
        /* KG: a column's key is the one at its position in its rank window, whose offset there
         * the tile record holds (sa_kg_pos_byte: this lane quad's 16 together); the length mask
         * stays by position (keys past the sequence keep theirs) */
        const unsigned char *pos = (const unsigned char *)ks[0] + SA_H_KG_POS_OFFSET + 16 * tq;
        const int base = k0 & -SA_H_RANK_WINDOW;
#pragma unroll
        for (int w = 0; w < W; ++w)
#pragma unroll
            for (int nt = 0; nt < 8; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int at = k0 + w * SA_CTA_K + nt * 8 + 2 * tq + (e & 1);
                    const int row = r.row0 + 8 * (e >> 1);
                    const bool after =
                        KG ? pos[nt * 2 + (e & 1)] > row + diag - base : at > row + diag;
                    if (w >= n_live || at >= a.lkv || (a.causal && after))
                        t[w * 32 + nt * 4 + e] = -INFINITY;
                }
    }
    /* P's row sums (ROW_SUM) and P as the E4M3 A fragment: the pre-pass permuted each 16-key
     * group of Vᵀ so that lane (g, tq)'s S columns are exactly its A columns (ALGORITHM.md).
     * PACK_IN_EXP: at the end of each exponential form, in its basic block, where ptxas can
     * place the conversions among the MUFU stretch (8 cycles between a warp's MUFUs); else once
     * after the forms join. */
    auto finish = [&]() {
        if (ROW_SUM) {
#pragma unroll
            for (int i = 0; i < W * 32; ++i)
                r.sum[(i >> 1) & 1] += t[i];
        }
#pragma unroll
        for (int w = 0; w < W; ++w)
#pragma unroll
            for (int kk = 0; kk < 2; ++kk) {
                const float *tw = t + w * 32;
                const int n = kk * 4;
#pragma unroll
                for (int hh = 0; hh < 2; ++hh) {
                    pa[2 * w + kk][hh] =
                        (uint32_t)sa_pack_e4m3x2(tw[n * 4 + 2 * hh], tw[n * 4 + 2 * hh + 1]) |
                        ((uint32_t)sa_pack_e4m3x2(tw[(n + 1) * 4 + 2 * hh],
                                                  tw[(n + 1) * 4 + 2 * hh + 1])
                         << 16);
                    pa[2 * w + kk][2 + hh] =
                        (uint32_t)sa_pack_e4m3x2(tw[(n + 2) * 4 + 2 * hh],
                                                 tw[(n + 2) * 4 + 2 * hh + 1]) |
                        ((uint32_t)sa_pack_e4m3x2(tw[(n + 3) * 4 + 2 * hh],
                                                  tw[(n + 3) * 4 + 2 * hh + 1])
                         << 16);
                }
            }
    };
    /* Online softmax in base 2; subtract first (the row max gives exactly p = 448) unless every
     * logit of the warp is small enough for the one-FFMA form (SA_FFMA_SAFE_LOGIT; with
     * KG that form also carries S's bias times the factor: SA_H_KG_SAFE_OFFSET). */
    constexpr float P_LOG2 = SA_H_P_LOG2;
    float m_use[2], kq[2], off[2];
    bool small = true;
    /* SA_H_SPEC on one-tile steps (the pair form's 128-key steps move their max more often:
     * round 35 measured no gain there) */
    constexpr bool SPEC = SPEC_K && SA_H_SPEC && W == 1;
    static_assert(!SPEC || !KG, "SA_H_SPEC: per-key K scales");
    float tmax[2] = {-INFINITY, -INFINITY}; /* this thread's max of each row (SPEC) */
    bool fast = false;
    if constexpr (SPEC) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) { /* a tree: the check's latency */
            float v[8];
#pragma unroll
            for (int i = 0; i < 8; ++i)
                v[i] = fmaxf(t[i * 4 + 2 * hh], t[i * 4 + 2 * hh + 1]);
#pragma unroll
            for (int n = 4; n >= 1; n /= 2)
#pragma unroll
                for (int i = 0; i < n; ++i)
                    v[i] = fmaxf(v[i], v[i + n]);
            tmax[hh] = v[0];
        }
        /* Nothing kept between tiles (the D=128 loop has no register to spare: one more live
         * value made ptxas serialize the K scales' loads): the check is recomputed from mx. It
         * asks for the exchanging form's one-FFMA condition too, which a row without a key yet
         * (mx = -inf) fails; NaN compares false, so such a tile exchanges, as before. */
        bool within = true;
        float mq[2]; /* the reference's logit, rounded as the exchanging form rounds it */
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            mq[hh] = r.mx[hh] * r.qs[hh];
            within &= fabsf(mq[hh]) < SA_FFMA_SAFE_LOGIT &&
                      (SA_H_HEADROOM ? fmaf(tmax[hh], r.qs[hh], -mq[hh]) <= (float)SA_H_HEADROOM
                                     : tmax[hh] <= r.mx[hh]);
        }
        fast = k0 >= SA_H_SPEC_MIN_KEY && __all_sync(0xffffffffu, within);
        if (fast) {
            alpha[0] = alpha[1] = 1.0f;
            const float off_f[2] = {P_LOG2 - mq[0], P_LOG2 - mq[1]};
            beside();
            sa_h_exp_ffma<W>(t, r.qs, off_f);
            if constexpr (PACK_IN_EXP)
                finish();
        }
    }
    if (!fast) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float m = r.mx[hh];
            if (KG) { /* kg > 0 is common to the thread's keys: max of S, then scaled */
                const float(&t0)[32] = *reinterpret_cast<const float(*)[32]>(t);
                m = fmaxf(m, fmaf(sa_h_max16(t0, hh, -INFINITY), kg, kbias));
            } else if constexpr (SPEC) {
                m = fmaxf(m, tmax[hh]);
            } else {
#pragma unroll
                for (int w = 0; w < W; ++w)
                    m = sa_h_max16(*reinterpret_cast<const float(*)[32]>(t + 32 * w), hh, m);
            }
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
            m_use[hh] = m == -INFINITY ? 0.0f : m;
            alpha[hh] = r.mx[hh] == -INFINITY ? 0.0f : sa_exp2((r.mx[hh] - m_use[hh]) * r.qs[hh]);
            r.mx[hh] = m;
            if (ROW_SUM)
                r.sum[hh] *= alpha[hh];
            if (KG) {
                kq[hh] = kg * r.qs[hh];
                off[hh] = fmaf(-12582912.0f, kq[hh], fmaf(-m_use[hh], r.qs[hh], P_LOG2));
                small &= fabsf(off[hh]) < SA_H_KG_SAFE_OFFSET;
            } else {
                kq[hh] = r.qs[hh];
                off[hh] = P_LOG2 - m_use[hh] * r.qs[hh];
                small &= fabsf(m_use[hh] * r.qs[hh]) < SA_FFMA_SAFE_LOGIT;
            }
        }
        /* `beside` (SA_HW_FOLD_IN_EXP: the previous tile's fold) is placed in the exponentials'
         * basic block, so its FMA-pipe work fills the MUFU-bound stretch. */
        if (SA_FAST_SOFTMAX && __all_sync(0xffffffffu, small)) {
            beside();
            sa_h_exp_ffma<W>(t, kq, off);
            if constexpr (PACK_IN_EXP)
                finish();
        } else {
            beside();
#pragma unroll
            for (int i = 0; i < W * 32; ++i) {
                const int hh = (i >> 1) & 1;
                const float ti = KG ? fmaf(t[i], kg, kbias) : t[i];
                t[i] = sa_h_exp2(fmaf(ti - m_use[hh], r.qs[hh], P_LOG2));
            }
            if constexpr (PACK_IN_EXP)
                finish();
        }
    } /* the exchanging form */
    if constexpr (!PACK_IN_EXP)
        finish();
#endif
}

/* One 64-key tile: sa_h_softmax_w with W = 1. */
template <bool ROW_SUM, bool SPEC_K = false, bool PACK_IN_EXP = false, bool KG = false,
          typename Beside = sa_h_nothing>
__device__ __forceinline__ void sa_h_softmax(const int32_t (&acc)[32], uint32_t (&pa)[2][4],
                                             float alpha[2], sa_h_rows &r, const float *ks,
                                             float kg, int k0, const sa_attn_args &a, int diag,
                                             bool need_mask, int tq, Beside &&beside = Beside())
{
    const float *const ks1[1] = {ks};
    sa_h_softmax_w<ROW_SUM, 1, SPEC_K, PACK_IN_EXP, KG>(
        *reinterpret_cast<const int32_t(*)[1][32]>(&acc), pa, alpha, r, ks1, kg, k0, a, diag,
        need_mask, 1, tq, static_cast<Beside &&>(beside));
}

/* One tile after its S is complete: the softmax above with the row sums, then the P·V wgmma
 * into a fresh fp32 accumulator ot (issued and committed, not waited). */
template <int D, bool KG>
__device__ __forceinline__ void sa_h_softmax_pv(const int32_t (&acc)[32], float (&ot)[D / 2],
                                                float alpha[2], sa_h_rows &r, const float *ks,
                                                uint32_t sV, int k0, const sa_attn_args &a,
                                                int diag, bool need_mask, int tq)
{
    uint32_t pa[2][4];
    sa_h_softmax<true, false, false, KG>(acc, pa, alpha, r, ks, KG ? ks[tq] : 0.0f, k0, a, diag,
                                         need_mask, tq);
    /* O_tile = P·V into a fresh fp32 accumulator (two-level accumulation). */
    sa_wg_fence();
#pragma unroll
    for (int kk = 0; kk < 2; ++kk) {
        const uint64_t vd = sa_h_desc(sV + kk * 256, sa_htile<D>::V_SBO);
        if constexpr (D == 128)
            sa_wg_pv_e4m3_n128(ot, pa[kk], vd, kk);
        else
            sa_wg_pv_e4m3_n64(ot, pa[kk], vd, kk);
    }
    sa_wg_commit();
}

/* Q·Kᵀ's A fragment of this thread's two rows (row0, row0 + 8) quantized here from the caller's
 * fp16/bf16 Q (a.q_src): the pre-pass's arithmetic (sa_rowquant_block) on the same values, so
 * the same int8 values and scale. The four lanes of a quad hold a row's D channels between them
 * (bytes 32 kk + 16 half + 4 tq .. + 3 of each k32 step), so the row's absmax is two shuffles.
 * Both rows' loads are issued before any is used: with head_dim = D (a branch uniform over the
 * call) as one 8-byte load each, so the block's start waits for memory once (ncu, L=1K: loads
 * mixed with the channel-bound fallback went out in three or four rounds). Rows past lq read 0. */
template <bool FULL>
__device__ __forceinline__ uint2 sa_h_load4_bits(const char *src, int c0, int d, bool row_ok)
{
    if (!row_ok)
        return make_uint2(0u, 0u);
    if (FULL || c0 + 4 <= d) /* 8-byte aligned: rows are 16-byte aligned */
        return *(const uint2 *)(src + c0 * 2);
    uint32_t w[2] = {0u, 0u};
#pragma unroll
    for (int e = 0; e < 4; ++e)
        if (c0 + e < d)
            w[e / 2] |= (uint32_t) * (const uint16_t *)(src + (c0 + e) * 2) << (16 * (e % 2));
    return make_uint2(w[0], w[1]);
}
template <int D, bool BF16, bool FULL>
__device__ __forceinline__ void sa_h_quantize_q_rows(const sa_attn_args &a, int b, int h, int row0,
                                                     int tq, uint32_t (&qa)[D / 32][4],
                                                     float (&qs)[2])
{
    uint2 raw[2][D / 32][2];
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
        const int row = row0 + 8 * hh;
        const char *src = (const char *)a.q_src + b * a.qsrc_b + h * a.qsrc_h + row * a.qsrc_t;
#pragma unroll
        for (int kk = 0; kk < D / 32; ++kk)
#pragma unroll
            for (int half = 0; half < 2; ++half)
                raw[hh][kk][half] =
                    sa_h_load4_bits<FULL>(src, 32 * kk + 16 * half + 4 * tq, a.d, row < a.lq);
    }
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
        float x[D / 32][2][4];
#pragma unroll
        for (int kk = 0; kk < D / 32; ++kk)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const uint2 u = raw[hh][kk][half];
                x[kk][half][0] = sa_to_float<BF16>((uint16_t)(u.x & 0xffffu));
                x[kk][half][1] = sa_to_float<BF16>((uint16_t)(u.x >> 16));
                x[kk][half][2] = sa_to_float<BF16>((uint16_t)(u.y & 0xffffu));
                x[kk][half][3] = sa_to_float<BF16>((uint16_t)(u.y >> 16));
            }
        /* the absmax as four chains of maxima (the same value as one chain: max is exact in
         * any order; one chain of 64 dependent maxima at D=128 sat on the block's start) */
        float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int kk = 0; kk < D / 32; ++kk)
#pragma unroll
            for (int half = 0; half < 2; ++half)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    part[e] = fmaxf(part[e], fabsf(x[kk][half][e]));
        float amax = fmaxf(fmaxf(part[0], part[1]), fmaxf(part[2], part[3]));
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
        if (amax == 0.0f)
            amax = 1.0f;
        const float inv = __fdiv_rn(SA_INT8_MAX, amax);
        /* The bytes as the pre-pass's row quantizer makes them (sa_rint_byte: one FADD and one
         * FMNMX each instead of F2I, 16 per clock per SM, and a clamp); F2I and the clamp where
         * inv is infinite (amax < 127 / FLT_MAX, bf16 only). */
        if (inv != __int_as_float(0x7f800000)) {
#pragma unroll
            for (int kk = 0; kk < D / 32; ++kk)
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    uint32_t q[4];
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        q[e] = sa_rint_byte(__fmul_rn(x[kk][half][e], inv));
                    qa[kk][hh + 2 * half] = sa_pack_low_bytes(q[0], q[1], q[2], q[3]);
                }
        } else {
#pragma unroll
            for (int kk = 0; kk < D / 32; ++kk)
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    uint32_t w = 0;
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int q =
                            max(-127, min(127, __float2int_rn(__fmul_rn(x[kk][half][e], inv))));
                        w |= (uint32_t)(q & 0xff) << (8 * e);
                    }
                    qa[kk][hh + 2 * half] = w;
                }
        }
        qs[hh] = __fmul_rn(__fdiv_rn(amax, SA_INT8_MAX), a.score_scale);
    }
}
template <int D, bool BF16>
__device__ __forceinline__ void sa_h_quantize_q(const sa_attn_args &a, int b, int h, int row0,
                                                int tq, uint32_t (&qa)[D / 32][4], float (&qs)[2])
{
    if (a.d == D)
        sa_h_quantize_q_rows<D, BF16, true>(a, b, h, row0, tq, qa, qs);
    else
        sa_h_quantize_q_rows<D, BF16, false>(a, b, h, row0, tq, qa, qs);
}

/* Blocks per SM the registers are sized for: four at D=64 (128 registers; the Q fragment that QF
 * keeps in registers would otherwise take ptxas to 132 and the SM to three blocks), two at D=128.
 */
#define SA_H_MIN_BLOCKS(D) ((D) == 64 ? 4 : 2)
/* QF: the block quantizes its Q rows itself from the caller's Q (a.q_src; SA_H_QFUSE) and keeps
 * them in registers as Q·Kᵀ's A fragment; else Q comes from the pre-pass's int8 Q by bulk copy.
 * KG: K scales per rank group (sa_internal.h). */
template <int D, bool BF16, bool QF, bool KG>
__global__ void __launch_bounds__(SA_H_THREADS, SA_H_MIN_BLOCKS(D))
    sa_hopper_kernel(const sa_attn_args a)
{
#if SA_HOPPER_CODE
    using T = sa_htile<D>;
    constexpr int NO = D / 8; /* n8 chunks of O */
    extern __shared__ __align__(128) char smem[];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, tq = lane % 4;
    const int qtile = gridDim.x - 1 - blockIdx.x; /* heavy causal tiles first */
    const int h = blockIdx.y, b = blockIdx.z, hk = h / a.group;
    const int q0 = qtile * SA_H_ROWS;
    const int diag = a.lkv - a.lq;

    int n_kt = (a.lkv + SA_CTA_K - 1) / SA_CTA_K;
    if (a.causal)
        n_kt = sa_h_causal_tiles<KG>(min(q0 + SA_H_ROWS, a.lq) - 1 + diag, n_kt);

    const uint32_t sQ = sa_smem_addr(smem);
    const uint32_t bar0 = sQ + T::BAR_OFF; /* stage s: bar0 + 8s; the Q tile: the last one */
    const uint32_t qbar = bar0 + 8 * SA_H_STAGES;
    const size_t bh = (size_t)b * a.hq + h, bhk = (size_t)b * a.hkv + hk;
    const char *qg = (const char *)a.q + (bh * a.lq_pad + q0) * D;
    const char *kg = (const char *)a.k + bhk * a.lk_pad * D;
    const char *vg = (const char *)a.v + bhk * a.lk_pad * D;
    const float *ksg = a.kscale + sa_h_ks_index<KG>(bhk * a.lk_pad);
    constexpr int KS_BYTES = sa_h_ks_bytes<KG>();
    auto stage = [&](int j) { return sQ + T::Q_BYTES + (j % SA_H_STAGES) * T::STAGE_BYTES; };
    auto full_bar = [&](int j) { return bar0 + 8 * (j % SA_H_STAGES); };
    auto load_tile = [&](int j) {
        const uint32_t st = stage(j), bar = full_bar(j);
        const size_t k0 = (size_t)j * SA_CTA_K;
        sa_mbar_expect_tx(bar, T::K_BYTES + T::V_BYTES + KS_BYTES);
        sa_bulk_g2s(st, kg + k0 * D, T::K_BYTES, bar);
        sa_bulk_g2s(st + T::K_BYTES, vg + k0 * D, T::V_BYTES, bar);
        sa_bulk_g2s(st + T::K_BYTES + T::V_BYTES, ksg + sa_h_ks_index<KG>(k0), KS_BYTES, bar);
    };
    /* Tile j's stage is refilled SA_H_STAGES uses later: its barrier's phase parity. */
    auto wait_tile = [&](int j) { sa_mbar_wait(full_bar(j), (j / SA_H_STAGES) & 1); };
    auto ks_of = [&](int j) {
        return (const float *)(smem + (stage(j) - sQ) + T::K_BYTES + T::V_BYTES);
    };
    if (tid == 0) {
        for (int s = 0; s <= SA_H_STAGES; ++s)
            sa_mbar_init(bar0 + 8 * s, 1);
        sa_mbar_init_fence();
    }
    __syncthreads();
    /* The pre-pass's output (SA_PDL): K, V and their scales, Q without QF; with QF the other
     * threads wait after quantizing Q from the caller's tensor, before the epilogue's reads. */
    if (!QF || tid == 0)
        sa_pdl_wait();
    if (tid == 0) {
        if (!QF) {
            sa_mbar_expect_tx(qbar, T::Q_BYTES);
            sa_bulk_g2s(sQ, qg, T::Q_BYTES, qbar);
        }
        for (int j = 0; j < SA_H_STAGES && j < n_kt; ++j)
            load_tile(j);
    }

    sa_h_rows r;
    r.row0 = q0 + warp * 16 + g; /* wgmma hands warp w rows 16w..16w+15 of the 64 */
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
        if (!QF)
            r.qs[hh] = a.qscale[bh * a.lq_pad + r.row0 + 8 * hh];
        r.mx[hh] = -INFINITY;
        r.sum[hh] = 0.0f;
    }
    uint32_t qa[D / 32][4];
    if (QF) {
        sa_h_quantize_q<D, BF16>(a, b, h, r.row0, tq, qa, r.qs);
        sa_pdl_wait();
    }
    auto issue_qk = [&](int32_t(&acc)[32], uint32_t sK) { sa_h_issue_qk<D, QF>(acc, sQ, qa, sK); };
    float o[NO * 4];
#pragma unroll
    for (int i = 0; i < NO * 4; ++i)
        o[i] = 0.0f;
    auto need_mask = [&](int k0) {
        return k0 + SA_CTA_K > a.lkv || (a.causal && sa_h_tile_last_key<KG>(k0) > q0 + diag);
    };
    /* After tile j's P·V: every thread is done with its stage (the wgmma reads completed at the
     * wait), so it can be refilled with tile j + SA_H_STAGES. */
    auto release = [&](int j) {
        __syncthreads();
        if (tid == 0 && j + SA_H_STAGES < n_kt)
            load_tile(j + SA_H_STAGES);
    };

    if (!QF)
        sa_mbar_wait(qbar, 0); /* also when no key is visible: no copy may outlive the block */
#if SA_H_PIPELINE
    int32_t acc0[32], acc1[32];
    float ot[NO * 4];
#pragma unroll
    for (int i = 0; i < NO * 4; ++i)
        ot[i] = 0.0f;
    /* Tile j's S is complete in cur; Q·Kᵀ of tile j+1 runs on the tensor cores (into nxt)
     * while this warpgroup does tile j's softmax. */
    auto step = [&](int j, int32_t(&cur)[32], int32_t(&nxt)[32]) {
        if (j + 1 < n_kt) {
            wait_tile(j + 1);
            issue_qk(nxt, stage(j + 1));
        }
        float alpha[2];
        sa_h_softmax_pv<D, KG>(cur, ot, alpha, r, ks_of(j), stage(j) + T::K_BYTES, j * SA_CTA_K, a,
                               diag, need_mask(j * SA_CTA_K), tq);
        sa_wg_wait<0>();
#pragma unroll
        for (int i = 0; i < 32; ++i)
            sa_wg_touch(nxt[i]);
#pragma unroll
        for (int i = 0; i < NO * 4; ++i) {
            sa_wg_touch(ot[i]);
            o[i] = fmaf(o[i], alpha[(i >> 1) & 1], ot[i]);
        }
        release(j);
    };
    if (n_kt > 0) {
        wait_tile(0);
        issue_qk(acc0, stage(0));
        sa_wg_wait<0>();
#pragma unroll
        for (int i = 0; i < 32; ++i)
            sa_wg_touch(acc0[i]);
    }
#pragma unroll 1
    for (int j = 0; j < n_kt; j += 2) {
        step(j, acc0, acc1);
        if (j + 1 < n_kt)
            step(j + 1, acc1, acc0);
    }
#else
    for (int j = 0; j < n_kt; ++j) {
        int32_t acc[32];
        wait_tile(j);
        issue_qk(acc, stage(j));
        sa_wg_wait<0>();
#pragma unroll
        for (int i = 0; i < 32; ++i)
            sa_wg_touch(acc[i]);
        float ot[NO * 4], alpha[2];
#pragma unroll
        for (int i = 0; i < NO * 4; ++i)
            ot[i] = 0.0f;
        sa_h_softmax_pv<D, KG>(acc, ot, alpha, r, ks_of(j), stage(j) + T::K_BYTES, j * SA_CTA_K, a,
                               diag, need_mask(j * SA_CTA_K), tq);
        sa_wg_wait<0>();
#pragma unroll
        for (int i = 0; i < NO * 4; ++i) {
            sa_wg_touch(ot[i]);
            o[i] = fmaf(o[i], alpha[(i >> 1) & 1], ot[i]);
        }
        release(j);
    }
#endif

    if (T::EPI_STAGE && sa_h_epi_stage_ok<D>(a))
        sa_h_epilogue_staged<D, BF16, true>(a, o, r, b, h, bh, bhk, tq, lane,
                                            sQ + T::EPI_OFF + warp * T::EPI_WARP_BYTES);
    else
        sa_h_epilogue<D, BF16, true>(a, o, r, b, h, bh, bhk, tq, tq, lane);
#else
    (void)a;
    __trap();
#endif
}

#include "sa_hopper_ws.cuh"

template <typename K>
static cudaError_t sa_hopper_prepare(K kernel, int smem, const sa_launch_cfg *l)
{
    if (l->probe) {
        cudaFuncAttributes fa;
        return cudaFuncGetAttributes(&fa, kernel);
    }
    return sa_set_smem_once(l->ctx, (const void *)kernel, smem);
}

template <int D, bool BF16, bool PAIR_K = false, bool SPEC_K = false, bool KG = false>
static cudaError_t sa_hopper_run_ws(const sa_attn_args *a, const sa_launch_cfg *l)
{
    cudaError_t e;
    using C = sa_hw_cfg<D, PAIR_K>;
    const auto kernel = sa_hopper_ws_kernel<D, BF16, PAIR_K, SPEC_K, KG>;
    if ((e = sa_hopper_prepare(kernel, C::SMEM_BYTES, l)) != cudaSuccess || l->probe)
        return e;
    const int nq = (a->lq + C::ROWS - 1) / C::ROWS, heads = a->hq * l->batch;
    const int n_tiles = nq * heads;
    dim3 grid(n_tiles);
    if (!SA_HW_PERSIST && SA_HW_CAUSAL_GROUP_BYTES != 0 && a->causal &&
        a->lkv >= SA_HW_CAUSAL_GROUP_MIN_KV && nq > 1) {
        /* SA_HW_CAUSAL_GROUP_BYTES's order as the grid's shape */
        const long long want = SA_HW_CAUSAL_GROUP_BYTES / (2LL * a->lk_pad * D);
        const int group = (int)(want < 1 ? 1 : want > heads ? heads : want);
        const int groups = (heads + group - 1) / group;
        if (nq <= 65535 && groups <= 65535) /* the grid's y and z limits; else head by head */
            grid = dim3(group, nq, groups);
    }
    if (SA_HW_PERSIST) {
        int sms = l->ctx ? l->ctx->num_sms : 0, dev = 0;
        if (!l->ctx && ((e = cudaGetDevice(&dev)) != cudaSuccess ||
                        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) !=
                            cudaSuccess))
            return e;
        grid = dim3(min(n_tiles, sms * C::CTAS));
    }
    sa_launch_k(l->pdl, kernel, grid, C::THREADS, C::SMEM_BYTES, l->stream, *a, n_tiles);
    return cudaGetLastError();
}

template <int D, bool BF16, bool KG>
static cudaError_t sa_hopper_run_base(const sa_attn_args *a, const sa_launch_cfg *l)
{
    cudaError_t e;
    const auto kernel =
        a && a->q_src ? sa_hopper_kernel<D, BF16, true, KG> : sa_hopper_kernel<D, BF16, false, KG>;
    const int smem = sa_htile<D>::SMEM_BYTES;
    if ((e = sa_hopper_prepare(kernel, smem, l)) != cudaSuccess || l->probe)
        return e;
    const dim3 grid((a->lq + SA_H_ROWS - 1) / SA_H_ROWS, a->hq, l->batch);
    sa_launch_k(l->pdl, kernel, grid, SA_H_THREADS, smem, l->stream, *a);
    return cudaGetLastError();
}

int sa_hopper_quantizes_q(const struct sa_problem *p, int d_pad)
{
    if (p->lse) /* the LSE's q·k̄ term comes from the pre-pass's Q pass */
        return 0;
    if (!sa_hopper_uses_ws(d_pad, p->lkv))
        return SA_H_QFUSE;
    const bool fused = d_pad == 128 ? SA_HW_QFUSE128 : SA_HW_QFUSE64;
    return fused && SA_HW_QREG;
}

/* KG: the call's K has rank groups (sa_rank_groups), which the SA_H_SPEC and SA_HW_PAIR forms
 * do not take (per-key scales; a two-tile step). */
template <int D, bool BF16, bool KG>
static cudaError_t sa_hopper_run_scales(const sa_attn_args *a, const sa_launch_cfg *l)
{
    if constexpr (SA_H_WS == 1)
        return sa_hopper_run_ws<D, BF16, false, false, KG>(a, l);
    else if constexpr (SA_H_WS == 0)
        return sa_hopper_run_base<D, BF16, KG>(a, l);
    else if (sa_hopper_uses_ws(D, a->lkv)) {
        if constexpr (!KG) {
            /* SA_HW_PAIR's form from its threshold (calls without a causal mask: with rank
             * groups those all take KG) */
            if constexpr (D == 64 && sa_hw_pair_possible<D>() && !SA_H_RANK_GROUPS)
                if (a->lkv >= SA_HW_D64_PAIR_MIN_KV && !a->causal)
                    return sa_hopper_run_ws<D, BF16, true>(a, l);
            if constexpr (SA_H_SPEC) /* its own kernels, from SA_H_SPEC_MIN_KV keys */
                if (a->lkv >= SA_H_SPEC_MIN_KV)
                    return sa_hopper_run_ws<D, BF16, false, true>(a, l);
        }
        return sa_hopper_run_ws<D, BF16, false, false, KG>(a, l);
    } else
        return sa_hopper_run_base<D, BF16, KG>(a, l);
}

template <int D, bool BF16>
static cudaError_t sa_hopper_run(const sa_attn_args *a, const sa_launch_cfg *l)
{
    if (l->probe) { /* the code check: the kernels are in the library */
        if constexpr (SA_H_WS == 0)
            return sa_hopper_run_base<D, BF16, false>(a, l);
        else
            return sa_hopper_run_ws<D, BF16>(a, l);
    }
    if constexpr (SA_H_RANK_GROUPS)
        if (sa_rank_groups(SAGEATTN_MODE_INT8_FP8_WGMMA, a->causal, a->lkv))
            return sa_hopper_run_scales<D, BF16, true>(a, l);
    return sa_hopper_run_scales<D, BF16, false>(a, l);
}

cudaError_t sa_attn_dispatch_int8_fp8_wgmma(int d_pad, int bf16, const sa_attn_args *a,
                                            const sa_launch_cfg *l)
{
#if SA_WITH_D64
    if (d_pad == 64)
        return bf16 ? sa_hopper_run<64, true>(a, l) : sa_hopper_run<64, false>(a, l);
#endif
#if SA_WITH_D128
    return bf16 ? sa_hopper_run<128, true>(a, l) : sa_hopper_run<128, false>(a, l);
#else
    (void)d_pad, (void)bf16, (void)a, (void)l;
    return cudaErrorInvalidValue;
#endif
}
