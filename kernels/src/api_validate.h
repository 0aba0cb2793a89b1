/* Pure argument checks of the public API (no CUDA calls), so they can be tested on a CPU. */
#ifndef SA_API_VALIDATE_H
#define SA_API_VALIDATE_H

#include "sa_internal.h"

/* Checks p and fills out (all but cc, num_sms; mode may still be AUTO). On failure returns the
 * status and writes a one-line message naming the argument into msg[n]. */
sageattn_status sa_validate(const sageattn_params *p, char *msg, size_t n, struct sa_problem *out);

#endif
