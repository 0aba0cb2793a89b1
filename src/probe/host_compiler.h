/* The host compiler nvcc will call, against the limit nvcc itself enforces in
 * crt/host_config.h (`#if __GNUC__ > N` → `#error -- unsupported GNU version!`). torch checks no
 * gcc bound for CUDA ≥ 12, so this file is the only gate; `build` uses it to pick -ccbin. */
#ifndef SB_PROBE_HOST_COMPILER_H
#define SB_PROBE_HOST_COMPILER_H

#include "util/version.h"

struct host_limits {
    int gcc_max;   /* newest accepted gcc major; -1 when the file has no such check */
    int clang_max; /* newest accepted clang major; -1 when unknown */
};

/* Pure: reads the limits from host_config.h text (12.x and 13.x layouts). Returns 0 when the gcc
 * limit was found, -1 otherwise (limits set to -1 where unknown). */
int host_config_parse(const char *text, struct host_limits *out);

/* Where a toolkit keeps crt/host_config.h: include/crt, else targets/<any>/include/crt (13.x
 * redist trees). Heap path of the first that exists, or NULL. */
char *host_config_find(const char *cuda_home);

struct compiler_info {
    int found;
    char *command; /* as asked: "gcc", "$CC", "/usr/bin/g++-13" */
    char *path;    /* resolved on PATH */
    int is_clang;
    struct version version; /* -dumpfullversion -dumpversion */
    char *error;
};

#define COMPILER_PROBE_TIMEOUT_MS 5000

/* Runs `cc -dumpfullversion -dumpversion` (cc may be gcc, a path, or a command with
 * arguments such as "ccache gcc": then the last word is the compiler). Returns 0 when found. */
int probe_compiler(const char *cc, struct compiler_info *out);
void compiler_info_free(struct compiler_info *c);

/* Looks on path_env (NULL: $PATH) for gcc-N and g++-N with N ≤ gcc_max (newest first) whose
 * -dumpversion agrees. Returns N and sets *cc and *cxx (heap names such as "gcc-13"), or -1. */
int host_compiler_find_fitting(int gcc_max, const char *path_env, char **cc, char **cxx);

#endif
