/* GPU architecture names and the rules that tie them to nvcc versions. Pure functions.
 * Names: compute capability "12.0" ↔ "sm_120"; a variant letter 'a' (arch-specific features:
 * wgmma on sm_90a, tcgen05 on sm_100a) or 'f' (family-portable, nvcc ≥ 12.9). */
#ifndef SB_PROBE_ARCH_H
#define SB_PROBE_ARCH_H

#include "util/version.h"

#include <stddef.h>

struct gpu_arch {
    int major;    /* 12 for sm_120 */
    int minor;    /* 0 */
    char variant; /* '\0', 'a' or 'f' */
    int ptx;      /* "+PTX" was given (TORCH_CUDA_ARCH_LIST form) */
};

/* Accepts "sm_120a", "compute_90", "sm120", "120a", "12.0", "12.0a", "8.6+PTX", "9.0a".
 * Returns 0, or -1 for anything else (out zeroed). */
int arch_parse(const char *s, struct gpu_arch *out);
const char *arch_sm_name(const struct gpu_arch *a, char *buf, size_t len); /* "sm_120a" */
int arch_number(const struct gpu_arch *a);                                 /* 120 */
int arch_same_base(const struct gpu_arch *a, const struct gpu_arch *b);    /* 12.0 == 12.0a */

/* The facts below are the rows of kernels/archs/archs.def (sources there). */

/* The oldest nvcc that accepts this arch (with its variant) as a code target; -1 when the arch
 * is unknown here. */
int arch_min_nvcc(const struct gpu_arch *a, struct version *out);
/* The first nvcc major.minor that no longer builds it (nvcc 13.0 dropped everything below sm_75
 * and renamed sm_101 to sm_110); -1 when none did. */
int arch_dropped_in(const struct gpu_arch *a, struct version *out);
/* Whether the variant letter exists for this arch at all ("sm_89a" does not). */
int arch_variant_valid(const struct gpu_arch *a);
/* The oldest nvcc that SageAttention-class kernels need on this arch: the higher of upstream
 * SageAttention's setup.py gate and sagebuild's kernels' floor for its compute capability
 * (FP8 mma.sync on sm_89/sm_90 >= 12.4), never below arch_min_nvcc; -1 when neither is known. */
int arch_min_nvcc_for_kernels(const struct gpu_arch *a, struct version *out);

/* Why nvcc `nvcc_release` cannot build `a`, given what its --list-gpu-arch printed (archs may be
 * NULL when the list is unknown); NULL when it can. nvcc lists compute_120 but accepts
 * sm_120a, so a variant is judged by its base plus the version floor. Heap string. */
char *arch_nvcc_refusal(const struct gpu_arch *a, const struct version *nvcc_release,
                        const char *const *listed, size_t nlisted);

/* The `-gencode` code name SageAttention's setup.py uses for a GPU of this compute capability
 * (the table's sage_code rows): 9.0 → sm_90a, 10.0 → sm_100a, 12.0 → sm_120a, 12.1 → sm_121a,
 * others as they are. */
struct gpu_arch arch_for_kernels(int cc_major, int cc_minor);

/* Whether SASS built for `built` runs on a GPU of compute capability cc: same major and a minor
 * not above the GPU's; an 'a' build only on its exact arch (sa_arch_runs_on). */
int arch_runs_on(const struct gpu_arch *built, int cc_major, int cc_minor);

#endif
