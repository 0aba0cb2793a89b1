/* The doctor's judgements as pure functions over data, so each is unit-tested without a
 * toolkit, a python or a GPU. Sources are named where the rule is defined. */
#ifndef SB_DOCTOR_RULES_H
#define SB_DOCTOR_RULES_H

#include "probe/arch.h"
#include "util/version.h"

#include <stddef.h>

/* torch's _check_cuda_version: 0 same major.minor, 1 minor differs (warning), 2 major differs
 * (RuntimeError), -1 when either side is unknown. */
int rule_cuda_mismatch(const struct version *torch_cuda, const struct version *nvcc_release);

/* The newest PyTorch wheel index tag ("cu130", "cu129", "cu128", "cu126", "cu118") whose CUDA
 * is ≤ max_cuda (1000*major+10*minor); NULL when none. */
const char *rule_torch_index_tag(int max_cuda);
/* The wheel tag for a CUDA version when PyTorch publishes one ("cu128" for 12.8), else NULL. */
const char *rule_torch_index_tag_exact(const struct version *cuda);

/* Whether the driver can run code from CUDA `cuda` (minor-version compatibility: 13.x needs
 * ≥ 580, 12.x ≥ 525; and the driver's own CUDA major must not be older). 1 yes, 0 no, -1 unknown.
 * driver_cuda is cuDriverGetVersion's value (0 unknown), driver_version the branch string. */
int rule_driver_runs_cuda(int driver_cuda, const char *driver_version, const struct version *cuda);

/* Whether PyTorch's wheels for CUDA `torch_cuda` carry code for a GPU of compute capability cc:
 * builds before cu128 stop at sm_90 (plus PTX), cu128 and later start at sm_75 (the published
 * wheels' arch lists). 1 yes, 0 no, -1 unknown. [inferred from the wheels' lists] */
int rule_torch_covers_cc(const struct version *torch_cuda, int cc_major, int cc_minor);

/* TORCH_CUDA_ARCH_LIST as torch reads it (spaces become ';', named arches expand, "+PTX"
 * kept) and as SageAttention's setup.py reads it (',' or ';', "sm_"/"compute_" and every 'a'
 * stripped, "89" → "8.9"). */
struct arch_entry {
    char *text; /* the entry as written */
    struct gpu_arch arch;
    int parsed;           /* arch is valid */
    int torch_rejects;    /* torch raises "Unknown CUDA arch (X) or GPU not supported" */
    int sage_unsupported; /* not in SageAttention's SUPPORTED_ARCHS */
};
struct arch_entries {
    struct arch_entry *e;
    int n;
};
/* torch_version may be NULL (then the newest known list is used). */
void rule_parse_arch_list(const char *text, const char *torch_version, struct arch_entries *out);
void rule_arch_entries_free(struct arch_entries *l);

/* The compiled modules a GPU needs from a SageAttention install (setup.py and core.py's dispatch):
 * "_qattn_sm80" for 8.0/8.6, "_qattn_sm89" for 8.9/12.0/12.1, "_qattn_sm90" for 9.0; NULL when
 * SageAttention has no kernel for the arch (sm_100 has no dispatch branch, < 8.0). */
const char *rule_sage_module_for_cc(int cc_major, int cc_minor);

/* "2.2.0+cu128torch2.7.1" → cuda "12.8", torch "2.7.1" (heap; NULL when absent). */
void rule_parse_wheel_local_tag(const char *version, char **cuda, char **torch);

/* Where CUDA_HOME looks like pip's nvidia-* runtime wheels (site-packages/nvidia/...): libraries
 * only, no nvcc. Pure over the path and whether bin/nvcc exists there. */
int rule_is_pip_runtime_dir(const char *path, int has_nvcc);

/* The triton version torch pins in its METADATA ("Requires-Dist: triton==3.5.0; ..."), heap, or
 * NULL when it pins none. Pure over the METADATA text. */
char *rule_torch_triton_pin(const char *metadata);

/* Human sizes: "1.5 GiB". Returns buf. */
const char *rule_format_bytes(long long bytes, char *buf, size_t len);

#endif
