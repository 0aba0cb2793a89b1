/* The compilers a build uses, through the toolchain module: nvcc from an explicit --cuda-home,
 * else a toolkit that fetch-cuda installed (toolchain/toolkit.h), else torch's CUDA_HOME rules;
 * and a host C++ compiler within that nvcc's host_config.h limit (toolchain/host.h), with the
 * build's own messages and fixes. */
#ifndef SB_BUILD_TOOLCHAIN_H
#define SB_BUILD_TOOLCHAIN_H

#include "probe/host_compiler.h"
#include "probe/nvcc.h"

struct toolchain {
    char *cuda_home;
    const char *chosen_by; /* "--cuda-home", "fetched toolkit", "$CUDA_HOME", ... */
    char *cuda_note;       /* which fetched toolkit and why, when there was a choice */
    struct nvcc_info nvcc;
    struct host_limits limits; /* from the toolkit's crt/host_config.h; -1 when unknown */
    char *host_config;         /* that file's path, NULL when not found */
    char *host_cxx;            /* absolute path when it could be resolved */
    struct version host_version;
    int host_is_clang;
    char *host_note; /* e.g. "g++ 15.1 is newer than nvcc 12.8 accepts; using g++-14" */
};

/* Picks CUDA_HOME and probes its nvcc; of several fetched toolkits, the one matching the CUDA of
 * python's torch (NULL: $SAGEBUILD_PYTHON, else python3). 0, or -1 with *error and *fix (heap). */
int toolchain_choose_cuda(const char *flag_cuda_home, const char *python, struct toolchain *tc,
                          char **error, char **fix);

/* Picks the host C++ compiler: flag_host_cc, else CMake's default (toolchain/host.h); when that
 * one is too new, the newest g++-N on PATH within the limit. A --host-cc that is too new is
 * refused. 0, or -1 with *error and *fix (heap). */
int toolchain_choose_host(const char *flag_host_cc, struct toolchain *tc, char **error, char **fix);

void toolchain_free(struct toolchain *tc);

#endif
