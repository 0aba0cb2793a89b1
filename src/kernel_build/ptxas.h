/* What ptxas -v said about the kernels of a build, read back from its log: how many kernels,
 * the most registers one uses, and the spills (the figure that costs speed), so the build
 * record keeps them and a person sees them in one line instead of a hundred. Pure. */
#ifndef SB_BUILD_PTXAS_H
#define SB_BUILD_PTXAS_H

#include <stddef.h>

struct ptxas_summary {
    int kernels;            /* "Compiling entry function" reports, one per kernel and arch */
    int max_registers;      /* the largest "Used N registers" */
    int functions_spilling; /* ptxas reports (kernels, their device functions) with spills */
    long long spill_stores; /* bytes, over all kernels */
    long long spill_loads;
    char worst[320]; /* "KERNEL (sm_90): S bytes spill stores, L bytes spill loads", or "" */
};

/* Reads the "ptxas info" lines of a log. 1 when it had any, else 0 (s cleared). */
int ptxas_summarize(const char *log, size_t len, struct ptxas_summary *s);

#endif
