/* From a request ("13.0", a platform, extras) and a manifest to the list of archives to fetch.
 * Pure functions: they take data and return data, so unit tests cover every rule. */
#ifndef SB_FETCH_RESOLVE_H
#define SB_FETCH_RESOLVE_H

#include "manifest.h"
#include "source.h"

#define REDIST_DEFAULT_MIRROR "https://developer.download.nvidia.com/compute/cuda/redist/"

/* "x86_64" → "linux-x86_64", "aarch64"/"arm64" → "linux-sbsa" (Jetson's linux-aarch64 only on
 * request); NULL for anything else. */
const char *resolve_platform_for_machine(const char *machine);

/* The newest label among labels[0..n) matching request: "13" matches 13.*, "13.0" 13.0.*,
 * "13.0.2" exactly. Heap string or NULL. */
char *resolve_label(const char *request, char *const *labels, int n);

/* The newest of all labels (heap), or NULL when there are none. */
char *resolve_newest(char *const *labels, int n);

/* Labels named "redistrib_X.Y.Z.json" anywhere in an HTML directory listing (NVIDIA's index,
 * nginx/Apache/python autoindex). Deduplicated heap array, *n entries. */
char **resolve_index_labels(const char *html, int *n);
void resolve_free_list(char **list, int n);

/* Whether a release label (from a manifest's release_label, a listing or a file name) may name
 * files and the default prefix: a plain version X.Y[.Z[.W]] of digits, at most 32 bytes. NULL
 * or a reason. */
const char *resolve_label_check(const char *label);

/* The names a plan takes from its manifest or index, checked before any becomes a path: each
 * release label and component key, each relative_path (path_cache_name_check), and no two
 * items sharing a relative_path. 0, or -1 with *err naming the item. */
int resolve_plan_check(const struct fetch_plan *plan, char **err);

/* The components to fetch: cuda_nvcc, cuda_cudart, cuda_cccl always, cuda_crt and libnvvm when
 * the manifest has them (CUDA 13 split them out of cuda_nvcc), then the extras ("nvdisasm" also
 * matches "cuda_nvdisasm", "nvvm" also "libnvvm"). Every entry must be complete and its path
 * safe. 0, or -1 with *err naming the component and what is missing. */
int resolve_plan(const struct redist_manifest *m, const char *release, const char *platform,
                 char *const *extras, int nextras, struct fetch_plan *plan, char **err);

/* base + rel, where base is a redist directory URL (with or without a trailing '/') or the URL of
 * a manifest inside it (".json"), and rel a relative_path. Heap string. */
char *url_join(const char *base, const char *rel);
/* Where the manifest for a label lives under a mirror base. */
char *url_manifest(const char *base, const char *label);

/* The ordered mirror list: command-line mirrors, then SAGEBUILD_MIRRORS (space, comma or
 * newline separated), then NVIDIA's site unless no_default. Duplicates dropped. */
char **resolve_mirrors(char *const *cli, int ncli, const char *env, int no_default, int *n);

#endif
