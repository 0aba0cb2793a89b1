/* nvcc: its version (what torch's _check_cuda_version reads) and the archs it lists. Parsers are
 * pure; probe_nvcc runs the program with a timeout. Arch rules live in probe/arch.h. */
#ifndef SB_PROBE_NVCC_H
#define SB_PROBE_NVCC_H

#include "probe/arch.h"
#include "util/version.h"

#include <stddef.h>

struct nvcc_version {
    struct version release; /* "release 13.0" — torch matches `release (\d+[.]\d+)` */
    struct version full;    /* "V13.0.88"; nparts 0 when absent */
};

/* Pure: 0 when "release X.Y" was found (full filled when "VX.Y.Z" follows), -1 for empty output
 * or garbage (out zeroed). */
int nvcc_parse_version(const char *text, struct nvcc_version *out);

/* Pure: the names `nvcc --list-gpu-arch` printed ("compute_75" ...), one per line or separated
 * by spaces; anything that is not an arch name is skipped. Heap array of heap strings; *n set. */
char **nvcc_parse_arch_list(const char *text, size_t *n);
void nvcc_free_arch_list(char **list, size_t n);

struct nvcc_info {
    int found; /* the binary exists and is executable */
    int ran;   /* --version ran and printed a release */
    char *path;
    struct nvcc_version version;
    char **archs; /* --list-gpu-arch; NULL when that failed (nvcc < 11.0 has no such flag) */
    size_t narchs;
    char *error; /* missing, not executable, timed out, printed nothing, ... */
    long elapsed_ms;
};

#define NVCC_PROBE_TIMEOUT_MS 5000

/* Runs `nvcc --version` and `nvcc --list-gpu-arch` with a timeout each (timeout_ms <= 0: the
 * default above). Returns 0 when the version was read. */
int probe_nvcc(const char *nvcc_path, int timeout_ms, struct nvcc_info *out);
void nvcc_info_free(struct nvcc_info *n);

/* "$home/bin/nvcc" (heap). */
char *nvcc_path_in(const char *cuda_home);

#endif
