/* Small environment lookups shared by fetch-cuda, env and mirror. */
#ifndef SB_FETCH_COMMON_H
#define SB_FETCH_COMMON_H

#include "fetch/download.h"

/* Download options from the environment: SAGEBUILD_TIMEOUT (seconds without progress, default
 * 30; connect timeout is half of it, at most 15), SAGEBUILD_RETRIES (attempts per URL, 3). */
void fetch_dl_opts(struct dl_opts *o, int offline, int progress);
/* Pure core of the above. */
void fetch_dl_opts_from(struct dl_opts *o, const char *timeout_env, const char *retries_env);

/* The redist platform of this machine (uname), or NULL. */
const char *fetch_machine_platform(void);

/* ~/.local/share/sagebuild/cuda-<release> (heap), or NULL without a home. */
char *fetch_default_prefix(const char *release);

/* path made absolute against the current folder, without resolving links (heap). */
char *fetch_absolute(const char *path);

/* torch's CUDA version ("13.0") from torch/version.py, or NULL with *note saying why. */
char *fetch_torch_cuda(char **note);

#endif
