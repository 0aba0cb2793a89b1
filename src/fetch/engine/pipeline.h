/* The fetch pipeline: download (parallel, verified) → unpack while downloading → merge → fix up
 * → post-check → lock file and env.sh → atomic swap into the prefix, under the prefix's lock.
 * Any failure or interruption before the swap leaves the old prefix as it was and removes the
 * staging folder. */
#ifndef SB_FETCH_PIPELINE_H
#define SB_FETCH_PIPELINE_H

#include "download.h"
#include "fetch/sources/source.h"

#include <signal.h>

struct pipeline_request {
    const struct fetch_plan *plan;     /* every archive, with its URLs */
    const struct fetch_source *source; /* how its archives unpack and its tree is fixed up */
    const char *prefix;
    const char *cache_dir; /* archives are kept at cache_dir/relative_path */
    const char *from_dir;  /* --from: archives downloaded elsewhere, or NULL */
    int jobs;              /* concurrent unpackers */
    int force;             /* redo even when the prefix already matches */
    int no_check;          /* skip the compile-and-link post-check */
    const struct dl_opts *dl;
    volatile sig_atomic_t *cancel;
};

struct pipeline_component {
    long long net_bytes;
    int from_cache;
    char *url; /* NULL when not downloaded */
};

enum postcheck_status { POSTCHECK_OK, POSTCHECK_SKIPPED, POSTCHECK_FAILED, POSTCHECK_NOT_RUN };

struct pipeline_result {
    int unchanged; /* the prefix already held exactly this; nothing was done */
    struct pipeline_component *components; /* one per plan item */
    long long net_bytes;
    double seconds;
    enum postcheck_status postcheck;
    char *postcheck_note;
    struct fetch_error error; /* set when the run failed */
};

/* 0 installed or unchanged; 1 installed with a warning (post-check skipped); -1 failed. */
int pipeline_run(const struct pipeline_request *rq, struct pipeline_result *res);
void pipeline_result_free(struct pipeline_result *res, int n);

/* Installs the SIGINT/SIGTERM handler that only sets *flag, and ignores SIGPIPE and SIGXFSZ
 * (so a file-size limit shows up as EFBIG, not a crash). */
void pipeline_install_signals(volatile sig_atomic_t *flag);

#endif
