/* Which mode runs for a requested one on a compute capability: what `auto` picks and which
 * modes a GPU or this build cannot run. Pure host code (no CUDA calls), so it is tested on a
 * CPU. */
#ifndef SA_MODE_POLICY_H
#define SA_MODE_POLICY_H

#include <stddef.h>

#include "sageattn.h"

/* What a library build holds that the policy depends on. */
struct sa_build_caps {
    int e4m3_f16acc;   /* the FP16-accumulator E4M3 mma.sync (nvcc >= 12.8): int8-fp8-f16acc */
    int hopper;        /* the sm_90a kernel of int8-fp8-wgmma */
    const char *archs; /* the archs compiled in, for messages ("sm_90,sm_120a") */
};

/* The caps of this build (SA_HAS_E4M3_F16ACC, SA_WITH_HOPPER, SA_BUILT_ARCHS). */
struct sa_build_caps sa_this_build(void);

/* The mode that runs for `requested` on compute capability cc (major*10+minor) in a library
 * with `caps`; on refusal the status and a one-line message in msg[n]. */
sageattn_status sa_mode_policy(sageattn_mode requested, int cc, const struct sa_build_caps *caps,
                               sageattn_mode *out, char *msg, size_t n);

/* sa_mode_policy for this build. */
sageattn_status sa_mode_for_cc(sageattn_mode requested, int cc, sageattn_mode *out, char *msg,
                               size_t n);

#endif
