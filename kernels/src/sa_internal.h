/* The boundary between the public API (api.cu: validation, mode choice, messages) and the
 * kernels (attn/: quantization and attention launches). Everything here is already validated.
 *
 * The quantization constants below define the numerics of the quantized modes; the C reference
 * (kernels/ref) mirrors them. kernels/ALGORITHM.md explains each one. */
#ifndef SA_INTERNAL_H
#define SA_INTERNAL_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "sageattn.h"

/* ---- Quantization granularity (int8-fp16 and int8-fp8) ----
 * Q: one scale per token (row of head_dim values), scale = absmax(row) / SA_INT8_MAX, and the
 *    scale stored for the kernel is multiplied by sm_scale * SA_LOG2E (softmax runs in base 2).
 * K: the mean over the kv sequence's sample (per batch, kv head, channel; SA_KMEAN_STRIDE) is
 *    subtracted first (in fp32, from the fp16/bf16 input), then one scale per token like Q.
 * int8 value = round-to-nearest-even(x * (SA_INT8_MAX / absmax)), clamped to +-SA_INT8_MAX;
 *    a row whose absmax is 0 is quantized as if absmax were 1 (all int8 zero, scale 1/127), so
 *    every stored scale is positive (the kernel relies on it). */
#define SA_Q_QUANT_ROWS 1
/* K's mean for the smoothing from every SA_KMEAN_STRIDE-th key only (keys j with j %
 * SA_KMEAN_STRIDE == SA_KMEAN_PHASE), so the statistics pass reads a fraction of K (it reads
 * all of V, whose mean, max and min it needs). Any vector subtracted from every key leaves
 * softmax's output unchanged (each row's scores move by one constant, q.m, which the LSE adds
 * back), so the sample only has to be near the mean for the per-token scales to stay small.
 * The phase keeps key 0 (often an outlier: an attention sink) out of the sample. With no
 * sampled key (kv_len <= SA_KMEAN_PHASE) the mean is 0. 1: every key (SA_KMEAN_PHASE 0), as
 * before round 39. Measured on the H200 (bench/results/h200-f99a1cd-kmean39.md): the statistics
 * kernel 76.4 -> 61.9 us at D=128 L=1K B=16 H=32 (ncu), whole int8-fp8-wgmma calls -3.4 % there,
 * -1.3 % at L=2K, -0.5 % at L=16K; bench.py's accuracy matrix and the self-test unchanged to
 * noise; the C reference over twelve seeds (kernels/ALGORITHM.md) no worse on q-x10. */
#ifndef SA_KMEAN_STRIDE
#define SA_KMEAN_STRIDE 4
#endif
#define SA_KMEAN_PHASE (SA_KMEAN_STRIDE / 2)
/* Keys in the sample of lkv >= 0 keys, ceil((lkv - phase) / stride) or 0 (a macro: the C reference
 * and the device code both use it). */
#define SA_KMEAN_COUNT(lkv) (((lkv) + SA_KMEAN_STRIDE - 1 - SA_KMEAN_PHASE) / SA_KMEAN_STRIDE)
#define SA_K_QUANT_ROWS 1
/* int8-fp8-wgmma: K scales per rank group. Each thread of the attention kernels holds, in its S
 * columns, SA_H_KGROUP_KEYS keys of a 64-key tile (its lane quad's: position % 8 in {2 tq,
 * 2 tq + 1}); when those keys share one scale, the thread dequantizes its 32 scores with one
 * factor per row folded into the exponent's FFMA instead of one FFMA per score. Sharing the
 * largest key's scale with its fixed neighbours loses accuracy (q-x10 L1024 d128 cos 0.998976
 * against the self-test's floor 0.999, bench/results/h200-d1d9d37-round48.md); so the pre-pass
 * permutes the keys: in each window of SA_H_RANK_WINDOW keys they are ranked by the absmax of
 * their smoothed channels (largest first, ties by position) and each lane quad's keys are 16
 * adjacent ranks (sa_rank_slot), with one scale for them. Without a causal mask attention does
 * not depend on the keys' order, so K and V permuted alike give the same output; keys past the
 * sequence stay there. With one, a key may have moved anywhere in its window: a row block runs
 * its last key's window whole and masks each key by its position, which the tile's record
 * carries (SA_H_KG_RECORD_BYTES). Measured on the H200 (round 48,
 * bench/results/h200-dfec327-rankgroups48-w1024-more.json, K and V permuted outside the lane-quad
 * kernel): q-x10 D=128 cos 0.999103 against 0.999129 per token and 0.998990 without the ranks,
 * random inputs equal or better; and the lane-quad kernel's speed +9.9 % at D=128 L=16K, +11.8 %
 * at D=64 (h200-d1d9d37-round48.md). 0: per-token scales everywhere, as before round 49. */
#ifndef SA_H_RANK_GROUPS
#define SA_H_RANK_GROUPS 1
#endif
#define SA_H_KGROUP_KEYS 16
/* Keys of a rank window: 256 keep the accuracy of 1024 in the C reference (within the spread
 * over seeds, kernels/tests/test_sa_ref.c's cases: causal Q x10 L2048 D=128 cos 0.999188
 * against 0.999185 at 1024 and 0.999186 per token; Q x10 Lkv4096 D=128 rel-L1 0.0386 against
 * 0.0381 and 0.0387 per token, Lkv2500 0.0355 against 0.0357; 64 keys fall behind: causal Lq500
 * Lkv2500 cos 0.999036 against 0.999139 per token), bound the extra keys a causal row block
 * runs, and let the rank kernel hold a window's K rows in shared memory (64 KB at D=128). A
 * power of two of 64..256 (the records' position bytes). */
#define SA_H_RANK_WINDOW 256
#if SA_H_RANK_WINDOW > 256 || SA_H_RANK_WINDOW < 64 || (SA_H_RANK_WINDOW & (SA_H_RANK_WINDOW - 1))
#error "SA_H_RANK_WINDOW: a power of two of 64..256"
#endif
/* Each 64-key tile's record of rank-group K in the workspace's kscale part: its four lane
 * quads' scales (floats), then for each position the offset of its key in their window (bytes,
 * at sa_kg_pos_byte(position)), from which a causal mask takes the key's position. */
#define SA_H_KG_RECORD_BYTES 80
#define SA_H_KG_POS_OFFSET 16
/* ... in calls of this many keys or more (a causal mask: SA_H_RANK_MIN_KV_CAUSAL, where the
 * attention kernel's time is half and the rank step's the same): the rank step costs more than
 * K's row quantizer (it sorts each window). Whole calls against per-token scales, round 49
 * (bench/results/h200-2d2ea69-round49.md, in turn with SDPA): D=128 1K keys -2.0 %, 2K +3.5 %,
 * 4K +6.1 %, 16K +8.7 %; D=64 -4.3 %, +0.8 %, +11.7 %, +10.0 %; causal, round 50
 * (h200-4a240df-round50.md): D=128 2K -5.2 %, 4K -1.8 %, 16K +5.3 % (sequentially +6.6 %),
 * D=64 2K -12 %, 4K +0.7 %, 16K +8.2 % (+11 %). Round 51's rank kernel takes a quarter less
 * time (0.073 against 0.098 ms at D=128 L=4K B=4), which moved both thresholds down
 * (h200-d6755c4-round51.md, in turn with SDPA, three passes at 4K causal, two at 1K and 2K):
 * causal from 4096 keys, D=128 4K -0.1 %, +2.0 %, +3.4 %, D=64 +4.6 %, +8.5 %, +6.4 % (from
 * 2048: D=128 2K +2.7 %, -0.5 %, D=64 -2.4 %, -0.1 %); without a mask from 1024, D=128 1K
 * +2.8 %, +4.5 %, D=64 -1.7 %, +9.0 % (SDPA flash in the same passes moved up to 11 %). */
#ifndef SA_H_RANK_MIN_KV
#define SA_H_RANK_MIN_KV 1024
#endif
#ifndef SA_H_RANK_MIN_KV_CAUSAL
#define SA_H_RANK_MIN_KV_CAUSAL 4096
#endif
/* Whether a call's K takes rank groups (above); the pre-pass and the kernel's choice both ask. */
static inline int sa_rank_groups(sageattn_mode m, int causal, int lkv)
{
    return SA_H_RANK_GROUPS && m == SAGEATTN_MODE_INT8_FP8_WGMMA &&
           lkv >= (causal ? SA_H_RANK_MIN_KV_CAUSAL : SA_H_RANK_MIN_KV);
}
#ifdef __CUDACC__
#define SA_HOST_DEVICE __host__ __device__
#else
#define SA_HOST_DEVICE
#endif
/* Position in its 64-key tile of the key of rank r (0 = largest absmax) among the tile's m
 * valid keys (m <= 64, positions 0..m-1): the positions are taken group by group (lane quad g =
 * (position % 8) / 2), each group's in order, so a full tile's group g holds ranks 16 g .. 16 g
 * + 15 and a short one (the sequence's last) as many of them as it has positions. */
static inline SA_HOST_DEVICE int sa_rank_slot(int r, int m)
{
    for (int g = 0; g < 4; ++g) {
        const int rest = m % 8 - 2 * g; /* the last, partial octet's positions in group g */
        const int count = (m / 8) * 2 + (rest < 0 ? 0 : rest > 2 ? 2 : rest);
        if (r < count)
            return (r / 2) * 8 + 2 * g + r % 2;
        r -= count;
    }
    return -1; /* r >= m */
}
/* Byte of position p (0..63) among its tile record's position bytes: lane quad g = (p % 8) / 2
 * holds its 16 positions' bytes together (one 16-byte load), in S's column order. */
static inline SA_HOST_DEVICE int sa_kg_pos_byte(int p)
{
    return 16 * ((p % 8) / 2) + 2 * (p / 8) + p % 2;
}
/* int8-fp8-wgmma, one-tile key steps: a tile whose scores all stay within SA_H_HEADROOM (base
 * 2) above their rows' reference max takes p from that reference as it stands (SA_H_SPEC 1): no
 * row max exchanged between the lanes of a quad, no rescale of O; any row past it (or past
 * SA_FFMA_SAFE_LOGIT, or not finite) runs the exchanging form, which moves the reference to the
 * rows' max. P leaves the softmax scaled by 448 * 2^-SA_H_HEADROOM at a row's reference, so a
 * later tile may grow by that much before p reaches E4M3's 448. A warpgroup runs at its slowest
 * warp's pace: with headroom 0 (exactly the tiles where no row max moved) too few steps of all
 * 64 rows skip the exchange, and it lost 3 %. Measured on the H200 (bench/results/
 * h200-a3b61f0-hopper35-variants.md, h200-55cbf0e-hopper35c-variants.md): headroom 1 +1.5-2.4 %
 * at D=128 L=16K, +2-6 % causal at D=64 from 4K keys; 3: +5.8 % at D=128 L=16K, but the random
 * cases' rel-L1 x1.035 against x1.013 at 1 (the max element of a tile that skips a move is
 * rounded to E4M3, not exactly 448), and the C reference with the rule at every length and key
 * put its L1000 D=64 random case past 0.04 from 2 (0.0397 at 1). kernels/ref mirrors the rule
 * per row (p_headroom). */
#ifndef SA_H_SPEC
#define SA_H_SPEC 1
#endif
#ifndef SA_H_HEADROOM
#define SA_H_HEADROOM 1
#endif
/* SA_H_SPEC's form is tried from this key of a row on: a row's max moves often in its first
 * tiles, and a step that tries and then exchanges costs more than one that only exchanges. */
#ifndef SA_H_SPEC_MIN_KEY
#define SA_H_SPEC_MIN_KEY 1024
#endif
/* ... and only in calls of this many keys or more, which run their own instance of the
 * warp-specialized kernel: ptxas computes the check's arithmetic ahead of the branch on the key
 * (9 instructions a step where it is never tried); with it everywhere D=128 L=1K measured 2 %
 * slower (within that shape's spread) and the one-warpgroup kernel (D=64 up to 2K keys) 5-7 %
 * (round 35c). Shorter calls run the kernels as before round 35, SASS for SASS. */
#ifndef SA_H_SPEC_MIN_KV
#define SA_H_SPEC_MIN_KV 4096
#endif
#define SA_INT8_MAX 127.0f
#define SA_LOG2E 1.4426950408889634f
#define SA_LN2 0.6931471805599453f

/* ---- FP8 P·V (int8-fp8) ----
 * P = exp2(s - rowmax + log2(SA_FP8_P_SCALE)), i.e. exp2(s - rowmax) in [0, 1] times 448 with
 * the scale folded into the exponent, rounded to E4M3 (RN, saturating). V gets one scale per
 * (batch, kv head, channel) over the whole kv sequence:
 * v_scale = absmax(V[:, c]) / SA_FP8_V_SCALE_MAX (0 -> 1), V_e4m3 = RN_sat(V * RN(1 / v_scale))
 * (a group of 8 channels, 0-7, 8-15, ..., with a scale below FLT_MIN: RN_sat(V / v_scale)).
 * The output is O = (sum_j P_e4m3 V_e4m3) * v_scale / rowsum, where rowsum is the fp32 sum of
 * the unrounded, already scaled P (so the 448 cancels). Each 64-key tile's P·V goes into a
 * fresh fp32 accumulator per 8 output channels that is then added into the true fp32 output
 * (two-level accumulation). */
#define SA_FP8_P_SCALE 448.0f
#define SA_FP8_V_SCALE_MAX 448.0f

/* ---- FP16 accumulator inside a key tile (int8-fp8-f16acc, int8-fp16-f16acc) ----
 * Each 64-key tile's P·V goes into a fresh FP16 accumulator (full-rate tensor-core path on
 * GeForce), added into the fp32 O after the tile. The scales make every partial sum provably
 * finite (kernels/ALGORITHM.md, "FP16 accumulator bound"):
 * int8-fp8-f16acc: P <= 448 (E4M3, as int8-fp8) and V scaled to |V| <= SA_FP8_F16ACC_V_SCALE_MAX,
 *   so |partial| <= 64 * 448 * 2.25 = 64512 < 65504 (SageAttention2++'s choice).
 * int8-fp16-f16acc: P = exp2(s - max) * 2^SA_F16ACC_P_LOG2 <= 1/64, so |partial| <= max|V|,
 *   which an fp16 V cannot exceed (<= 65504). */
#define SA_FP8_F16ACC_V_SCALE_MAX 2.25f
#define SA_F16ACC_P_LOG2 (-6.0f)
#define SA_FP16_MAX 65504.0f

/* The FP16-accumulator E4M3 mma.sync (int8-fp8-f16acc) and the block-scaled one need PTX ISA
 * 8.7, i.e. nvcc 12.8; an older nvcc builds everything else and the API refuses that mode. */
#if defined(__CUDACC_VER_MAJOR__) &&                                                               \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8))
#define SA_HAS_E4M3_F16ACC 1
#else
#define SA_HAS_E4M3_F16ACC 0
#endif

/* Which arithmetic a resolved mode uses. */
static inline int sa_mode_pv_fp8(sageattn_mode m)
{
    return m == SAGEATTN_MODE_INT8_FP8 || m == SAGEATTN_MODE_INT8_FP8_BS ||
           m == SAGEATTN_MODE_INT8_FP8_F16ACC || m == SAGEATTN_MODE_INT8_FP8_WGMMA;
}
/* The pre-pass writes Q, K and Vᵀ in wgmma's core-matrix order (attn_hopper.cu). */
/* 1: int8-fp8-wgmma's kernels after the call's first are launched as programmatic dependents
 * (sa_launch_k, attn/sa_kernels.h): each may start while its predecessor's last blocks run (its
 * prologue, and Q's quantization in the attention kernel, need nothing the call wrote). Only that
 * mode: it runs on Hopper alone, where the launch attribute exists. Round 28 (H200,
 * bench/results/h200-74d0a2a-pdl28.md): O, LSE and the workspace bit-identical over 1952 calls;
 * whole calls 5-9 us shorter (D=128 L=1K 768.5 against 776.4 us, L=16K 5635.8 against 5644.4);
 * D=128 L=1K causal 223.6-224.5 against 217.5-222.7 TOPS. */
#ifndef SA_PDL
#define SA_PDL 1
#endif
static inline int sa_use_pdl(sageattn_mode m)
{
    return SA_PDL && m == SAGEATTN_MODE_INT8_FP8_WGMMA;
}
static inline int sa_mode_wgmma_layout(sageattn_mode m)
{
    return m == SAGEATTN_MODE_INT8_FP8_WGMMA;
}
/* int8-fp8-wgmma's kernel (attn/attn_hopper.cu): 0 = one warpgroup per block ("base"), 1 =
 * warp-specialized (attn/sa_hopper_ws.cuh), 2 = by shape, as measured on the H200 (bench/NOTES.md,
 * "Hopper, second round"): the warp-specialized kernel at D=128 (583 against 489 TOPS at L=16K,
 * 248 against 245 at L=1K) and at D=64 from SA_HW_D64_MIN_KV keys (its four consumers, round 14:
 * 395.4 against 347.0 TOPS at L=4K, causal 305.8 against 295.9;
 * bench/results/h200-d226e85-hopper16-final.md); the one-warpgroup kernel at D=64 below that (233
 * against 200 at L=1K, 154 against 117 causal), where one block per SM cannot hide a block's start
 * and end. */
#ifndef SA_H_WS
#define SA_H_WS 2
#endif
#ifndef SA_HW_D64_MIN_KV
#define SA_HW_D64_MIN_KV 2049
#endif
static inline int sa_hopper_uses_ws(int d_pad, int lkv)
{
    return SA_H_WS == 1 || (SA_H_WS == 2 && (d_pad == 128 || lkv >= SA_HW_D64_MIN_KV));
}
/* V smoothed: its per-channel mean over the sequence subtracted before FP8 quantization and
 * added to O after normalization, where int8-fp8-wgmma's warp-specialized kernel runs: its P·V
 * accumulates across the whole row in Hopper's FP8 wgmma accumulator (about 14 bits kept), and a
 * column of V with an offset makes that sum grow like a row sum and lose its late terms (H200,
 * V offsets 5x its spread, 16K keys: rel-L1 0.254 unsmoothed, 0.00021 smoothed,
 * bench/results/h200-69794e0-voffset.md). The one-warpgroup kernel folds every tile and does not
 * need it. The scale then maps the absmax of V less its mean, max(max V - mean, mean - min V),
 * to sa_mode_v_scale_max. */
static inline int sa_smooth_v(sageattn_mode m, int d_pad, int lkv)
{
    return m == SAGEATTN_MODE_INT8_FP8_WGMMA && sa_hopper_uses_ws(d_pad, lkv);
}
/* V's per-channel FP8 scale maps absmax to this (fp8 modes). */
static inline float sa_mode_v_scale_max(sageattn_mode m)
{
    return m == SAGEATTN_MODE_INT8_FP8_F16ACC ? SA_FP8_F16ACC_V_SCALE_MAX : SA_FP8_V_SCALE_MAX;
}

/* ---- Tiles (shared by every mode) ---- */
#define SA_CTA_Q 128 /* query rows per thread block */
#define SA_CTA_K 64  /* keys per main-loop step */
#ifndef SA_WARP_Q
#define SA_WARP_Q 32 /* query rows per warp: 16 or 32 */
#endif
#define SA_MT (SA_WARP_Q / 16)                 /* m16 tiles per warp */
#define SA_THREADS (SA_CTA_Q / SA_WARP_Q * 32) /* 4 warps x 32 rows, or 8 x 16 */
/* Softmax shortcuts (skip O's rescale when no row max moved; fold the row max into one FFMA
 * when the logits are small enough for that to be exact to ~1e-4). */
/* Test builds only (bench/device_fullrate.sh --overlap): SA_TEST_EXTRA_ALU = N adds N FP32
 * instructions per key tile per thread right after the softmax, SA_TEST_EXTRA_ALU_PV = N adds
 * them between the P·V mma of the fp16/bf16 P·V loop (int8-fp16, fp16). Nothing reads their
 * results. They measure how much non-tensor issue work costs next to the tensor work, which
 * the throughput model (bench/model_throughput.py) assumes does not overlap it. */
#ifndef SA_TEST_EXTRA_ALU
#define SA_TEST_EXTRA_ALU 0
#endif
#ifndef SA_TEST_EXTRA_ALU_PV
#define SA_TEST_EXTRA_ALU_PV 0
#endif
/* Blocks per SM the attention kernel's register budget is sized for, per padded head dim
 * (D=128 needs all 255 registers at 2 blocks; D=64 fits 3 blocks = 12 warps per SM). */
#ifndef SA_MIN_BLOCKS
#define SA_MIN_BLOCKS 2
#endif
/* Shared memory a block may opt into on sm_86/87/89/120/121
 * (cudaDevAttrMaxSharedMemoryPerBlockOptin). */
#define SA_SMALL_SMEM_LIMIT 101376
/* 3 blocks of D=64 per SM were measured on sm_90 only (+10-15%); elsewhere the tighter
 * register budget made ptxas spill, so they keep 2. */
#ifndef SA_MIN_BLOCKS_D64
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
#define SA_MIN_BLOCKS_D64 3
#else
#define SA_MIN_BLOCKS_D64 2
#endif
#endif
#ifndef SA_FAST_SOFTMAX
#define SA_FAST_SOFTMAX 1
#endif

/* Head dims compiled in. The build may drop one with -DSA_WITH_D64=0 or -DSA_WITH_D128=0; a
 * problem whose padded head dim was dropped runs padded to the other (64 -> 128). */
#ifndef SA_WITH_D64
#define SA_WITH_D64 1
#endif
#ifndef SA_WITH_D128
#define SA_WITH_D128 1
#endif

/* 1 when the library holds the sm_90a kernel of int8-fp8-wgmma (attn_hopper.cu, built only
 * when the archs include sm_90a). */
#ifndef SA_WITH_HOPPER
#define SA_WITH_HOPPER 0
#endif

/* What sageattn_built_archs() reports; the build passes -DSA_BUILT_ARCHS="sm_90,sm_120a". */
#ifndef SA_BUILT_ARCHS
#define SA_BUILT_ARCHS "unknown"
#endif

struct sa_problem {
    int batch, hq, hkv, lq, lkv;
    int d;     /* the caller's head_dim */
    int d_pad; /* 64 or 128: what the kernels compute with (zero-padded) */
    sageattn_dtype dtype;
    const void *q, *k, *v;
    void *o;
    int64_t qs[3], ks[3], vs[3], os[3]; /* element strides: batch, head, token */
    float *lse;                         /* optional */
    int *nonfinite_flag;          /* optional: set to 1 when a written O element is not finite */
    const int *only_if_nonzero;   /* optional (fp16 mode): compute only if *it != 0 */
    struct sageattn_context *ctx; /* optional: the device's facts and kernel record (ABI 1.2) */
    int recompute_nonfinite;      /* queue the fp16 recompute gated on nonfinite_flag */
    float sm_scale;               /* resolved (never 0) */
    int causal;
    sageattn_mode mode; /* resolved: never AUTO */
    int cc;             /* compute capability as major*10+minor, e.g. 90, 120 */
    int num_sms;
};

/* Device bytes sa_launch needs for p (quantized Q/K/V, scales, means), 256-byte aligned parts. */
size_t sa_workspace_bytes(const struct sa_problem *p);
/* Launches the whole pipeline (quantize, attend, epilogue) on stream. */
cudaError_t sa_launch(const struct sa_problem *p, void *workspace, cudaStream_t stream);
/* cudaSuccess when the library holds code for the current device (all kernels it would run). */
cudaError_t sa_check_code_for_device(void);

#endif
