/* toolkit.wheels: CUDA_HOME and NVIDIA's PyPI wheels (issue 5). Three cases matter:
 *  - a prefix `sagebuild fetch-cuda --source pypi` made: fine, once its fix-ups are in place;
 *  - pip's nvidia-* packages in site-packages used as CUDA_HOME: the runtime libraries torch
 *    installs for itself (no nvcc, no cicc, no headers to speak of), or compiler wheels
 *    pip-installed there, which lack what torch's extension builder links with (lib64,
 *    libcudart.so) — either way not a toolkit, and the fix is a fetched one;
 *  - anything else: not this check's business (skip). */
#ifndef SB_DOCTOR_CHECKS_WHEELS_H
#define SB_DOCTOR_CHECKS_WHEELS_H

#include "doctor/doctor.h"

enum wheel_tree {
    WHEEL_TREE_NONE,         /* not made from wheels */
    WHEEL_TREE_PREFIX,       /* a prefix fetch-cuda made from wheels */
    WHEEL_TREE_SITE_RUNTIME, /* site-packages/nvidia/... without nvcc */
    WHEEL_TREE_SITE_COMPILER /* site-packages/nvidia/cuNN with pip-installed nvcc */
};

/* Pure: what kind of tree a CUDA_HOME is, from its path and what it holds. lock_source is the
 * "source" of its sagebuild-lock.json (NULL without one); has_distinfo: a dist-info/ folder. */
enum wheel_tree wheels_classify(const char *path, int has_nvcc, const char *lock_source,
                                int has_distinfo);

/* Pure: the site-packages (or dist-packages) folder a path lies in, when the path goes through
 * its nvidia/ folder ("/v/lib/python3.12/site-packages/nvidia/cu13" → "/v/lib/python3.12/
 * site-packages"). Heap, or NULL. */
char *wheels_site_dir(const char *path);

/* Pure: the wheel project of a dist-info folder name ("nvidia_cuda_nvcc-13.0.88.dist-info" →
 * "nvidia-cuda-nvcc 13.0.88"), NULL for anything but nvidia-* distributions. Heap. */
char *wheels_distinfo_label(const char *dirname);

void check_toolkit_wheels(struct doctor_ctx *ctx, struct check_result *r);

#endif
