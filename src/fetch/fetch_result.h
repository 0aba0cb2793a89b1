/* fetch-cuda's stage result (util/stage_result.h): what `sagebuild all` reads from
 * `fetch-cuda --json`. Pure. */
#ifndef SB_FETCH_RESULT_H
#define SB_FETCH_RESULT_H

#include <cJSON.h>

/* What a run of fetch-cuda came to. */
struct fetch_result_facts {
    int exit_code;
    const char *state;     /* the document's own "status": installed, unchanged, planned, error */
    const char *release;   /* "13.0.2", or NULL when it failed before one was chosen */
    const char *prefix;    /* where the toolkit is (or would go); NULL when not known */
    const char *source;    /* "redist" or "pypi" */
    const char *postcheck; /* "ok", "skipped", "failed", "not-run"; NULL: none was due */
    const char *error;     /* NULL on success */
    const char *fix;
};

/* Adds "result" to doc. The payload: {"prefix": the toolkit installed (null unless the state is
 * installed or unchanged), "release", "source", "postcheck"}. */
void fetch_result_add(cJSON *doc, const struct fetch_result_facts *f);

#endif
