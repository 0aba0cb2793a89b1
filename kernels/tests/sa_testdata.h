/* Host tensors for the reference tests: shapes, HND/NHD layouts and the input families of the
 * accuracy matrix (random and adversarial), filled from a fixed-seed generator so that every run
 * sees the same numbers and both layouts hold the same logical values. */
#ifndef SA_TESTDATA_H
#define SA_TESTDATA_H

#include <stdint.h>

#include "sageattn.h"

enum sa_input_kind {
    SA_INPUT_RANDOM,        /* Q, K, V ~ N(0, 1) */
    SA_INPUT_K_OFFSET,      /* K gets a large per-channel offset (N(0, 1) * 30) */
    SA_INPUT_Q_X10,         /* Q ~ N(0, 1) * 10: a sharp softmax */
    SA_INPUT_V_NEAR_LIMIT,  /* V ~ N(0, 1) scaled so |V| reaches ~60000 (fp16 max is 65504) */
    SA_INPUT_QK_NEAR_LIMIT, /* Q and K reach ~60000: the logits are enormous */
    SA_INPUT_V_OFFSET       /* V gets a per-channel offset (N(0, 1) * 8): sums that grow */
};

struct sa_case {
    const char *name;
    int batch, hq, hkv, lq, lkv, d;
    int causal;
    int nhd; /* 0: HND [B,H,L,D]; 1: NHD [B,L,H,D] */
    sageattn_dtype dtype;
    enum sa_input_kind kind;
    uint64_t seed;
};

struct sa_tensors {
    sageattn_params p; /* points into the buffers below */
    uint16_t *q, *k, *v, *o;
    float *lse;
    double *o_exact, *lse_exact;
};

/* Allocates and fills Q, K, V (O poisoned with NaN); 0 or -1 when memory runs out. */
int sa_tensors_make(const struct sa_case *c, struct sa_tensors *t);
void sa_tensors_free(struct sa_tensors *t);

#endif
