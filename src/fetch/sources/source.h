/* The one interface between fetch-cuda's sources of archives (NVIDIA's redist tree; NVIDIA's
 * wheels on a PyPI index) and their users: the command asks a source for a plan, the engine
 * downloads, unpacks and lays out what the plan names with the source's rules. Neither knows
 * which source it has; only source.c names them. */
#ifndef SB_FETCH_SOURCE_H
#define SB_FETCH_SOURCE_H

#include "fetch/engine/download.h"
#include "util/strbuf.h"

/* One archive of the plan. */
struct fetch_item {
    char *component;     /* manifest key, "cuda_nvcc" */
    char *version;       /* component version, "13.0.88" ("" when the manifest has none) */
    char *relative_path; /* its file in the cache; checked by path_cache_name_check */
    char sha256[65];
    long long size;
    char **urls; /* NULL-terminated, tried in order; NULL or empty: only the cache or --from */
    char *note;  /* a warning about this archive (a yanked wheel), or NULL */
};

struct fetch_plan {
    char *release;  /* "13.0.2" */
    char *platform; /* "linux-x86_64" */
    struct fetch_item *items;
    int nitems;
    /* Where the plan came from, for messages, --json and the lock file. */
    char *release_date; /* NULL when the manifest has none */
    char *manifest;     /* "bundled PATH", "cache PATH", a URL or a path */
    char manifest_sha256[65];
};

void fetch_plan_free(struct fetch_plan *p);

/* What the user asked for, as a source needs it. */
struct source_request {
    const char *cuda;            /* --cuda X.Y[.Z], or NULL: default_release */
    const char *default_release; /* torch's CUDA ("13.0"), NULL when none was found */
    const char *no_default_why;  /* why there is none ("torch was not found (...)"), or NULL */
    int default_required;        /* --match-torch: no fallback to the newest bundled release */
    const char *manifest;        /* --manifest FILE|URL, or NULL */
    const char *platform;        /* the toolkit's redist platform, "linux-x86_64" */
    const char *host_platform;   /* this machine's, NULL when it has none */
    char *const *extras;         /* --with */
    int nextras;
    char *const *mirrors; /* --mirror */
    int nmirrors;
    int no_default_mirror;
    char *const *indexes; /* --index-url */
    int nindexes;
    const char *cache_dir; /* manifests, archives and wheels fetched before */
    const char *from_dir;  /* --from, or NULL */
    const struct dl_opts *dl;
};

struct fetch_source {
    const char *name;  /* "redist", "pypi": --source, --json and the lock file */
    const char *title; /* "NVIDIA's wheels from PyPI": messages that name the source */
    /* How the progress line names what is fetched ("PyPI wheels"); NULL for NVIDIA's redist
     * archives, which messages take as read. */
    const char *fetched_as;
    /* NULL when this source can serve the release ("13.0.2"), else why not (heap). */
    char *(*refusal)(const char *release);
    /* The request resolved to a plan: every archive with its URLs, size and sha256, its names
     * checked (resolve_plan_check). 0, or -1 with *err. */
    int (*plan)(const struct source_request *rq, struct fetch_plan *plan, struct fetch_error *err);
    /* Unpacking each archive: leading path components to drop, then map (as unpack_opts.map;
     * NULL keeps every entry). */
    int strip;
    char *(*map_entry)(void *unused, const char *rel);
    /* Runs on the merged tree before the generic fix-ups (layout_fixup); NULL: nothing to do.
     * One log line per change. 0, or -1 with *err. */
    int (*fixup)(const char *root, struct strbuf *log, struct fetch_error *err);
};

/* The sources --source NAME tries, in order, into chain[0..max): "redist" and "pypi" one each,
 * "auto" NVIDIA's redist archives and then, when those fail, the wheels. Returns how many, 0
 * for an unknown name. */
int source_chain(const char *name, const struct fetch_source **chain, int max);

#endif
