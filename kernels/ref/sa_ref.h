/* C reference of libsageattn's numerics, for CPU tests.
 *
 * sa_ref_attention() follows the quantized algorithm of kernels/ALGORITHM.md step by step, with
 * the same scales, rounding and accumulation structure as the kernels (but in a plain loop
 * order): K mean subtraction, INT8 absmax quantization with the granularities of
 * src/sa_internal.h, sm_scale·log2(e) folded into Q's scale, base-2 online softmax over key tiles,
 * P rounded to the input dtype (int8-fp16, fp16) or scaled to E4M3 with per-channel V scales and
 * two-level accumulation (int8-fp8), head_dim zero-padded to 64 or 128.
 * sa_exact_attention() is plain softmax attention in fp64, the yardstick for both.
 *
 * Tensors are host memory described exactly like the GPU API's (sageattn_params: base pointers
 * and element strides), fp16 or bf16 stored as uint16_t bit patterns. */
#ifndef SA_REF_H
#define SA_REF_H

#include <stddef.h>

#include "sageattn.h"

/* What the FP16 in-tile accumulators went through (filled when sa_ref_config.stats is set). */
struct sa_ref_stats {
    double tile_acc_peak;    /* largest |partial sum| an in-tile accumulator held */
    long tile_acc_overflows; /* partial sums that overflowed the FP16 range (became inf) */
};

struct sa_ref_config {
    sageattn_mode mode; /* any mode but AUTO */
    int q_quant_rows;   /* consecutive tokens of one head sharing one Q scale */
    int k_quant_rows;   /* the same for K */
    int k_lane_groups;  /* 1: K scales per 64-key tile and lane quad instead (the kernels' lane
                           quads without ranks: a study); 2: rank groups (SA_H_RANK_GROUPS) in
                           windows of k_rank_window keys (a multiple of 64), in calls of
                           k_rank_min_kv keys or more (with a causal mask k_rank_min_kv_causal;
                           the others per token, as the kernels) */
    int k_rank_window, k_rank_min_kv, k_rank_min_kv_causal;
    int smooth_k; /* subtract K's mean over the sequence before quantizing */
    /* fp8 modes: subtract V's mean before quantizing and add it to O (the scale maps the absmax
     * of V less its mean to fp8_v_scale_max), at the shapes where the kernels do (sa_smooth_v) */
    int smooth_v;
    int fold_log2e;    /* fold log2(e) into Q's scale (0 only to show the tests catch it) */
    int k_tile;        /* keys per main-loop step: the unit of online rescaling */
    float fp8_p_scale; /* P in [0,1] is multiplied by this before E4M3 rounding */
    /* > 0 (int8-fp8-wgmma, SA_H_SPEC): P is scaled by fp8_p_scale * 2^-p_headroom at a row's
     * reference max, and in calls of p_headroom_min_kv keys or more, from key
     * p_headroom_from_key of a row, the reference stays while a tile's scores stay within
     * p_headroom (base 2) above it. The kernel decides per warp (16 rows), which moves a row's
     * reference at least as often as this per-row rule. */
    float p_headroom;
    int p_headroom_min_kv, p_headroom_from_key;
    float fp8_v_scale_max; /* V's per-channel absmax maps to this */
    int tile_acc_bits; /* mantissa bits of the per-tile P·V accumulator (23 = fp32, 13 = FP22) */
    int two_level;     /* 1: fresh accumulator per key tile, added into fp32; 0: one
                          accumulator of tile_acc_bits for the whole row */
    /* FP16 accumulator inside each key tile (the f16acc modes): every acc_group keys (aligned to
     * the tile start) the exact sum of their products is added to it and the result rounded to
     * fp16 (RN, overflow to inf), as one MMA does with its k16 (fp16) or k32 (E4M3) slice;
     * acc_group 1 rounds after every product. The tile's sum is then added into fp32. */
    int tile_acc_fp16;
    int acc_group;
    float f16_p_scale;          /* fp16-P modes: P times this before rounding (2^-6 for f16acc) */
    struct sa_ref_stats *stats; /* optional, zeroed and filled by sa_ref_attention */
};

/* The kernels' own settings (from src/sa_internal.h) for `mode`. */
void sa_ref_config_default(struct sa_ref_config *cfg, sageattn_mode mode);

/* Writes p->o (p->dtype) and, if p->lse, the natural-log LSE. Returns 0, or -1 for a bad
 * argument or when memory runs out. */
int sa_ref_attention(const sageattn_params *p, const struct sa_ref_config *cfg);

/* Exact attention in fp64 of the same inputs: o_exact is dense [batch][num_q_heads][q_len]
 * [head_dim], lse_exact (may be NULL) dense [batch][num_q_heads][q_len]. Rows that see no key
 * get 0 and -inf. Returns 0 or -1. */
int sa_exact_attention(const sageattn_params *p, double *o_exact, double *lse_exact);

struct sa_metrics {
    double cos;     /* cosine similarity of the flattened outputs */
    double rel_l1;  /* sum|o - r| / sum|r| */
    double max_abs; /* max |o - r| */
    long nonfinite; /* NaN or Inf elements in o */
};

/* Compares p->o (in p->dtype, with p->o_stride) with a dense fp64 result. */
struct sa_metrics sa_compare_output(const sageattn_params *p, const double *o_exact);

/* The element (b, h, t, c) of a strided uint16 tensor, and its float value in `dtype`. */
size_t sa_ref_offset(const int64_t stride[3], int b, int h, int t, int c);
float sa_ref_load(const void *base, const int64_t stride[3], sageattn_dtype dtype, int b, int h,
                  int t, int c);

#endif
