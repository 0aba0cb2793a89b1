/* The self-test's own GPU code: input generation, the high-precision reference attention and
 * the comparison, all independent of libsageattn. */
#ifndef ST_GPU_H
#define ST_GPU_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "st_logic.h"

/* A strided 4-D fp16/bf16 tensor on the device: [b][h][t][c] at base + b*s[0] + h*s[1] + t*s[2] +
 * c. */
struct st_tensor {
    uint16_t *base;
    int64_t s[3];
    int b, h, l, d;
};

/* Fills the logical elements of t with the input family's values for tensor `which` (0 Q,
 * 1 K, 2 V): a counter-based hash of (seed, which, logical index), so layouts agree. */
cudaError_t st_fill(const struct st_tensor *t, int which, enum st_kind kind, uint64_t seed,
                    int bf16, cudaStream_t s);

/* Exact-as-practical attention (fp64 dot products and softmax, one block per query row) of the
 * query rows i with i % row_step == 0 (long problems are sampled to keep the reference cheap):
 * ref_o dense float [b][hq][lq][d], ref_lse dense double [b][hq][lq] (-inf: no key). */
cudaError_t st_reference(const struct st_tensor *q, const struct st_tensor *k,
                         const struct st_tensor *v, int causal, float sm_scale, int bf16,
                         int row_step, float *ref_o, double *ref_lse, cudaStream_t s);

struct st_sums {
    double diff_l1, ref_l1, dot, oo, rr;
    unsigned long long max_abs_bits; /* of a non-negative double: bit order = value order */
    unsigned long long untouched;    /* output elements still holding the poison pattern */
    unsigned long long nonfinite;    /* other NaN/Inf outputs */
    unsigned long long guard_hit;    /* padding elements of O's rows that were written */
    unsigned long long lse_bad_inf;  /* rows whose -inf LSE (no key) disagrees */
    unsigned long long lse_max_err_bits;
};

/* Checks every row of O for coverage (no poison 0xffff left), NaN/Inf and its guard_cols
 * elements past d (which must keep the poison), and compares the rows the reference computed
 * (i % row_step == 0) and, if lse is non-NULL, their LSE; accumulates into *sums (device). */
cudaError_t st_compare(const struct st_tensor *o, const float *ref_o, const float *lse,
                       const double *ref_lse, int bf16, int guard_cols, int row_step,
                       struct st_sums *sums, cudaStream_t s);

#endif
