/* sageattn-refcheck (GPU machine; built with -DSAGEATTN_REFCHECK=ON): does the library compute
 * what the C reference (kernels/ref) says it computes? The same host inputs go through
 * sageattn_run and through sa_ref_attention; both are compared with fp64 attention and with
 * each other. If the kernels use the reference's scales and rounding, kernel and reference
 * agree far more closely than either agrees with the exact result: the check asks that their
 * distance be under a third of the reference's own error (quantized modes), and prints every
 * figure. Exit 0 agree, 1 disagree, 77 no GPU, 70 internal. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "sageattn.h"
extern "C" {
#include "sa_check.h"
#include "sa_ref.h"
#include "sa_testdata.h"
}

#define F16 SAGEATTN_DTYPE_FP16
#define B16 SAGEATTN_DTYPE_BF16

static const struct sa_case cases[] = {
    {"random L1000 d64", 1, 2, 2, 1000, 1000, 64, 0, 0, F16, SA_INPUT_RANDOM, 1},
    {"random L77 d128 causal NHD bf16", 2, 2, 2, 77, 77, 128, 1, 1, B16, SA_INPUT_RANDOM, 2},
    {"random L17 d40", 1, 2, 2, 17, 17, 40, 0, 0, F16, SA_INPUT_RANDOM, 3},
    {"gqa Lq77/Lkv4096 d128 causal", 1, 4, 1, 77, 4096, 128, 1, 0, F16, SA_INPUT_RANDOM, 4},
    {"k-offset L1024 d128", 1, 2, 2, 256, 1024, 128, 0, 0, F16, SA_INPUT_K_OFFSET, 5},
    {"q-x10 L1024 d64", 1, 2, 2, 256, 1024, 64, 0, 0, F16, SA_INPUT_Q_X10, 6},
    {"v-offset L1024 d128", 1, 2, 2, 256, 1024, 128, 0, 0, F16, SA_INPUT_V_OFFSET, 7},
    /* int8-fp8-wgmma's rank groups (from SA_H_RANK_MIN_KV keys; SA_H_RANK_MIN_KV_CAUSAL with a
     * causal mask, whose keys are masked by position): partial last window and tile; GQA at
     * D=64; causal rows whose diagonal lies in the last windows */
    {"rank groups Lq128/Lkv4500 d128", 1, 2, 2, 128, 4500, 128, 0, 1, F16, SA_INPUT_RANDOM, 8},
    {"rank groups gqa q-x10 Lkv4096 d64", 1, 4, 2, 128, 4096, 64, 0, 0, B16, SA_INPUT_Q_X10, 9},
    {"rank groups causal q-x10 Lq192/Lkv8300 d128", 1, 2, 2, 192, 8300, 128, 1, 0, F16,
     SA_INPUT_Q_X10, 10},
    {"rank groups causal gqa Lq300/Lkv8200 d64", 1, 4, 2, 300, 8200, 64, 1, 1, B16, SA_INPUT_RANDOM,
     11},
    /* a head dim of 72 under 128 (the rank kernel's copy zero-fills channels 72..127, whose
     * mean is 0) with K's offset (a mean that matters), a partial last window; dense rows, so d
     * is a multiple of 8 (the API's 16-byte rows: bench/prepass_same.py covers d = 100 in padded
     * storage, a 16-byte piece cut by d) */
    {"rank groups k-offset Lq64/Lkv2300 d72", 1, 2, 2, 64, 2300, 72, 0, 0, F16, SA_INPUT_K_OFFSET,
     12},
};

/* Every mode, issue 9's P·V variants included: the reference emulates their FP16 in-tile
 * accumulators, so the kernels must agree with it as closely as the FP32 forms do. */
static const sageattn_mode modes[] = {
    SAGEATTN_MODE_FP16,          SAGEATTN_MODE_INT8_FP16,       SAGEATTN_MODE_INT8_FP8,
    SAGEATTN_MODE_INT8_FP8_BS,   SAGEATTN_MODE_INT8_FP8_F16ACC, SAGEATTN_MODE_INT8_FP16_F16ACC,
    SAGEATTN_MODE_INT8_FP8_WGMMA}; /* int8-fp8's numbers; skipped where it cannot run */

static size_t span_elems(const int64_t s[3], int b, int h, int l, int d)
{
    return (size_t)((b - 1) * s[0] + (h - 1) * s[1] + (l - 1) * s[2] + d);
}

/* Dense fp64 copy of p->o, to compare two strided outputs with sa_compare_output. */
static void dense_output(const sageattn_params *p, double *out)
{
    for (int b = 0; b < p->batch; b++)
        for (int h = 0; h < p->num_q_heads; h++)
            for (int i = 0; i < p->q_len; i++)
                for (int c = 0; c < p->head_dim; c++)
                    out[(((size_t)b * p->num_q_heads + h) * p->q_len + i) * p->head_dim + c] =
                        sa_ref_load(p->o, p->o_stride, p->dtype, b, h, i, c);
}

#define CUDA_OK(call)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                            \
            exit(70);                                                                              \
        }                                                                                          \
    } while (0)

static void run_one(const struct sa_case *c, sageattn_mode mode)
{
    struct sa_tensors t;
    if (sa_tensors_make(c, &t) != 0 || sa_exact_attention(&t.p, t.o_exact, t.lse_exact) != 0)
        exit(70);
    const sageattn_params *p = &t.p;
    size_t qn = span_elems(p->q_stride, c->batch, c->hq, c->lq, c->d);
    size_t kn = span_elems(p->k_stride, c->batch, c->hkv, c->lkv, c->d);
    void *dq, *dk, *dv, *dout, *ws = NULL;
    CUDA_OK(cudaMalloc(&dq, qn * 2));
    CUDA_OK(cudaMalloc(&dk, kn * 2));
    CUDA_OK(cudaMalloc(&dv, kn * 2));
    CUDA_OK(cudaMalloc(&dout, qn * 2));
    CUDA_OK(cudaMemcpy(dq, t.q, qn * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dk, t.k, kn * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dv, t.v, kn * 2, cudaMemcpyHostToDevice));
    sageattn_params g = *p;
    g.q = dq;
    g.k = dk;
    g.v = dv;
    g.o = dout;
    g.lse = NULL;
    g.mode = mode;
    size_t ws_bytes = 0;
    sageattn_status s = sageattn_workspace_size(&g, 0, &ws_bytes);
    if (s == SAGEATTN_OK && ws_bytes)
        CUDA_OK(cudaMalloc(&ws, ws_bytes));
    if (s == SAGEATTN_OK)
        s = sageattn_run(&g, ws, ws_bytes, NULL);
    CUDA_OK(cudaDeviceSynchronize());
    const char *mn = sageattn_mode_name(mode);
    CHECK(s == SAGEATTN_OK, "%s %s: %s", c->name, mn, sageattn_last_error());
    if (s == SAGEATTN_OK) {
        /* The kernel's output replaces t.o, then the reference's goes into a copy. */
        CUDA_OK(cudaMemcpy(t.o, dout, qn * 2, cudaMemcpyDeviceToHost));
        struct sa_metrics kernel_exact = sa_compare_output(p, t.o_exact);
        size_t on = (size_t)c->batch * c->hq * c->lq * c->d;
        double *kernel_dense = (double *)malloc(on * sizeof(double));
        dense_output(p, kernel_dense);
        struct sa_ref_config cfg;
        sa_ref_config_default(&cfg, mode);
        if (!kernel_dense || sa_ref_attention(p, &cfg) != 0)
            exit(70);
        struct sa_metrics ref_exact = sa_compare_output(p, t.o_exact);
        struct sa_metrics ref_kernel = sa_compare_output(p, kernel_dense);
        double ratio = ref_exact.rel_l1 > 0 ? ref_kernel.rel_l1 / ref_exact.rel_l1 : 0.0;
        printf("%-32s %-16s kernel-exact %.5f  ref-exact %.5f  kernel-ref %.5f  (ratio %.2f)\n",
               c->name, mn, kernel_exact.rel_l1, ref_exact.rel_l1, ref_kernel.rel_l1, ratio);
        CHECK(kernel_exact.nonfinite == 0, "%s %s: NaN/Inf", c->name, mn);
        if (mode != SAGEATTN_MODE_FP16)
            CHECK(ratio < 1.0 / 3.0,
                  "%s %s: kernel and reference differ by %.5f, %.2f of the "
                  "reference's own error",
                  c->name, mn, ref_kernel.rel_l1, ratio);
        free(kernel_dense);
    }
    cudaFree(dq);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(dout);
    cudaFree(ws);
    sa_tensors_free(&t);
}

int main(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("sageattn-refcheck: skipped: no GPU\n");
        return 77;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            sageattn_mode resolved;
            if (sageattn_resolve_mode(modes[m], 0, &resolved) == SAGEATTN_OK)
                run_one(&cases[i], modes[m]);
        }
    return sa_check_report("sageattn-refcheck");
}
