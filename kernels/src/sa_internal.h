/* The boundary between the public API (api.cu: validation, mode choice, messages) and the
 * kernels (attn/: quantization and attention launches). Everything here is already validated. */
#ifndef SA_INTERNAL_H
#define SA_INTERNAL_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "sageattn.h"

struct sa_problem {
    int batch, hq, hkv, lq, lkv;
    int d;      /* the caller's head_dim */
    int d_pad;  /* 64 or 128: what the kernels compute with (zero-padded) */
    sageattn_dtype dtype;
    const void *q, *k, *v;
    void *o;
    int64_t qs[3], ks[3], vs[3], os[3]; /* element strides: batch, head, token */
    float *lse;        /* optional */
    float sm_scale;    /* resolved (never 0) */
    int causal;
    sageattn_mode mode; /* resolved: never AUTO */
    int cc;             /* compute capability as major*10+minor, e.g. 90, 120 */
    int num_sms;
};

/* Device bytes sa_launch needs for p (quantized Q/K/V, scales, means), 256-byte aligned parts. */
size_t sa_workspace_bytes(const struct sa_problem *p);
/* Launches the whole pipeline (quantize, attend, epilogue) on stream. */
cudaError_t sa_launch(const struct sa_problem *p, void *workspace, cudaStream_t stream);

#endif
