/* The arch table (archs.def) as C data, and the rules every consumer shares: which of the
 * kernels' archs a GPU gets, and which GPUs a code target runs on. Pure C11, no CUDA: the CLI,
 * sageattn-selftest and the CPU tests compile it. */
#ifndef SA_ARCHS_H
#define SA_ARCHS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel families (archs.def, "families"). */
#define SA_FAMILY_MMA 1u   /* the portable mma.sync kernels */
#define SA_FAMILY_WGMMA 2u /* Hopper's warpgroup kernel (int8-fp8-wgmma) */

/* What the library embeds for a row (archs.def, "code"). */
#define SA_CODE_SASS 1 /* -gencode=arch=compute_X,code=sm_X */
#define SA_CODE_PTX 2  /* -gencode=arch=compute_X,code=compute_X */

/* One row of archs.def; the strings are "" where the table leaves a fact out. */
struct sa_arch {
    const char *name; /* "sm_120a" */
    int major, minor; /* compute capability 12.0 */
    char variant;     /* '\0', 'a' or 'f' */
    const char *nvcc_since;
    const char *nvcc_dropped;
    const char *kernels_nvcc;
    const char *kernels_why;
    unsigned families;
    int code;
    int in_all;
    const char *sage_nvcc;
    int sage_code;
    int fp8;                /* FP8 tensor cores on this compute capability */
    const char *auto_modes; /* "int8-fp8-f16acc,int8-fp8": what auto runs, first runnable */
    const char *products;
};

int sa_arch_count(void);
/* Row i, or NULL outside 0 .. sa_arch_count()-1. */
const struct sa_arch *sa_arch_at(int i);
/* The row named exactly `name` ("sm_90a"); -1 when there is none. */
int sa_arch_index(const char *name);
/* Whether the kernels are built for row r at all. */
int sa_arch_has_kernels(const struct sa_arch *r);

/* Whether code built for (major, minor, variant) runs on a GPU of compute capability
 * cc_major.cc_minor: the same major and a minor not above the GPU's; an 'a' build only on its
 * exact compute capability. */
int sa_arch_runs_on(int major, int minor, char variant, int cc_major, int cc_minor);

/* The kernels' row a GPU of this compute capability gets (what `--arch native` picks and what a
 * "no code for this GPU" hint names): the plain row of that compute capability, else its only
 * row (12.0 -> sm_120a), else the newest plain row of the same major that runs on it
 * (8.7 -> sm_86); -1 when the kernels have none (7.5, 10.3). */
int sa_arch_kernels_for_cc(int major, int minor);

/* Facts of a compute capability (the fp8 and auto_modes columns), for any compute capability:
 * one the table does not know takes fp8 from the newest known one below it (none: 0), and
 * auto_modes "int8-fp8" with FP8, else "int8-fp16" (no tuning is known for it). */
int sa_cc_has_fp8(int major, int minor);
const char *sa_cc_auto_modes(int major, int minor);
/* The oldest row with FP8 tensor cores (8.9), for messages; NULL when none has. */
const struct sa_arch *sa_arch_oldest_fp8(void);

/* The first row that builds kernel family `family` (SA_FAMILY_WGMMA: sm_90a); NULL: none. */
const struct sa_arch *sa_arch_with_family(unsigned family);
/* Whether some row that builds `family` runs on a GPU of compute capability major.minor. */
int sa_family_runs_on(unsigned family, int major, int minor);

/* The short product name of row r ("RTX 40" from "RTX 40, L40S, L4") into out[n]; "" when the
 * table names none. */
void sa_arch_short_products(const struct sa_arch *r, char *out, size_t n);

#ifdef __cplusplus
}
#endif

#endif
