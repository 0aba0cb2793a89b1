/* Where manifests come from: the bundled manifests/ (offline use and pinning), the cache of
 * manifests fetched before, mirrors' directory indexes, or a file or URL the user names. */
#ifndef SB_FETCH_CATALOG_H
#define SB_FETCH_CATALOG_H

#include "fetch/engine/download.h"

#include <stddef.h>

/* $SAGEBUILD_CACHE (or ~/.cache/sagebuild) + "/cuda": archives by relative_path, manifests
 * as redistrib_<label>.json. Heap string or NULL when there is no home. */
char *catalog_cache_dir(void);
/* Labels of the redistrib_*.json files in a folder (bundled or cache). */
char **catalog_dir_labels(const char *dir, int *n);

struct manifest_text {
    char *text;
    size_t len;
    char *label;  /* from the manifest, its file name, or the request */
    char *origin; /* "bundled PATH", "cache PATH", "URL", "PATH" */
    char sha256[65];
};
void manifest_text_free(struct manifest_text *m);

struct catalog {
    const char *bundled_dir; /* NULL when not found */
    const char *cache_dir;
    char *const *mirrors;
    int nmirrors;
    const struct dl_opts *dl;
};

/* Resolves a request ("13.0", "13.0.2", "13") to a label: the newest known among the bundled
 * and cached manifests and, unless offline or the request names a patch release, the mirrors'
 * indexes. Heap string or NULL with *err. */
char *catalog_resolve(const struct catalog *c, const char *request, struct fetch_error *err);
/* Loads the manifest for a label: bundled first (a pin no mirror can change), then the cache,
 * then the mirrors in order (cached on success). 0 or -1 with *err. */
int catalog_load(const struct catalog *c, const char *label, struct manifest_text *out,
                 struct fetch_error *err);
/* Loads a manifest the user named (file path or URL); the label comes from the manifest, else
 * its file name, else fallback_label. 0 or -1 with *err. */
int catalog_load_named(const struct catalog *c, const char *file_or_url, const char *fallback_label,
                       struct manifest_text *out, struct fetch_error *err);

#endif
