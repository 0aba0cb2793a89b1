/* NVIDIA redist manifests (redistrib_X.Y.Z.json) parsed into plain data. Pure: text in, data out.
 * Format facts (manifests/ holds four real ones): string metadata at the top level
 * (release_label absent before 12.2), one object per component, platform keys holding either a
 * plain entry or, in the newer variant form, an object of variant tags ("cuda13.1", "cuda12")
 * each holding a plain entry; `size` is a decimal string; non-object members such as
 * `cuda_variant` are skipped. */
#ifndef SB_FETCH_MANIFEST_H
#define SB_FETCH_MANIFEST_H

#include <stddef.h>

/* One downloadable archive. Fields the manifest lacks are NULL / -1 / "". */
struct redist_entry {
    char *variant;       /* NULL for the plain form, else the tag ("cuda13.1") */
    char *relative_path; /* relative to the directory that holds the manifest */
    char sha256[65];     /* lowercase hex, "" when missing or malformed */
    long long size;      /* bytes, -1 when missing or malformed */
};

struct redist_platform {
    char *name; /* "linux-x86_64", "linux-sbsa", "linux-all", "source", ... */
    struct redist_entry *entries;
    int nentries;
};

struct redist_component {
    char *key;     /* "cuda_nvcc" */
    char *name;    /* display name, may be NULL */
    char *version; /* component version ("13.0.88"), may be NULL */
    struct redist_platform *platforms;
    int nplatforms;
};

struct redist_manifest {
    char *release_label; /* NULL in 11.8-12.1 manifests */
    char *release_date;
    char *release_product;
    struct redist_component *components;
    int ncomponents;
};

/* Parses len bytes of JSON. 0 on success; -1 with *err (heap string) when the text is not JSON
 * or its top level is not an object. Malformed entries are kept with their missing fields marked,
 * so the caller can name exactly what is wrong with the one it needs. */
int manifest_parse(const char *text, size_t len, struct redist_manifest *m, char **err);
void manifest_free(struct redist_manifest *m);

const struct redist_component *manifest_component(const struct redist_manifest *m, const char *key);
const struct redist_platform *manifest_platform(const struct redist_component *c,
                                                const char *platform);
/* The entry to download for a release "X.Y.Z" on a platform: the plain entry, or the variant
 * tagged "cudaX.Y", else "cudaX". NULL when none fits. */
const struct redist_entry *manifest_entry_for(const struct redist_component *c,
                                              const char *platform, const char *release);

/* Heap string: the label in a file name "redistrib_13.0.2.json" (any directory part), or NULL. */
char *manifest_label_from_name(const char *name);

#endif
