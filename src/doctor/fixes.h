/* Fix commands shared by several checks, built from what the run knows, so that each is a line
 * a user can paste. */
#ifndef SB_DOCTOR_FIXES_H
#define SB_DOCTOR_FIXES_H

#include "doctor/doctor.h"

/* `sagebuild fetch-cuda --cuda X.Y && eval "$(sagebuild env)"` for cuda (NULL: --match-torch). */
char *fix_fetch_cuda(const struct version *cuda);
/* `PY -m pip install [--force-reinstall] torch[==V] --index-url
 * https://download.pytorch.org/whl/TAG` with TAG the newest the driver runs (or the toolkit's when
 * no driver is known). */
char *fix_install_torch(struct doctor_ctx *ctx, int pin_version, int reinstall);
/* Rebuild SageAttention from source for the given TORCH_CUDA_ARCH_LIST (NULL: local GPUs). */
char *fix_rebuild_sage(struct doctor_ctx *ctx, const char *arch_list);
/* "8.9;12.0": the local GPUs' compute capabilities, NULL when none. */
char *local_arch_list(struct doctor_ctx *ctx);
/* A field of an installed distribution's METADATA in site-packages: the first "Key: value" line
 * of site/<name>-<version>.dist-info/METADATA (heap), or NULL. */
char *site_dist_metadata(const char *site, const char *name, const char *key);
/* The whole METADATA text of that distribution (heap), or NULL. */
char *site_dist_metadata_text(const char *site, const char *name);

#endif
