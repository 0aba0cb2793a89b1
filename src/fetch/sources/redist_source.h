/* fetch-cuda's redist source: NVIDIA's redist tree (or a mirror of it) and its release
 * manifests. The manifest also names the component versions the PyPI source looks for. */
#ifndef SB_FETCH_REDIST_SOURCE_H
#define SB_FETCH_REDIST_SOURCE_H

#include "source.h"

extern const struct fetch_source redist_source;

/* The plan the release's manifest gives: the request resolved to a manifest (bundled, cached,
 * from the mirrors or --manifest), parsed, and its components chosen (resolve_plan), each with
 * every mirror's URL. no_default_mirror leaves NVIDIA's site out whatever the request says;
 * hint (may be NULL) is added to the error when no manifest was found. 0, or -1 with *err. */
int redist_plan_with(const struct source_request *rq, int no_default_mirror, const char *hint,
                     struct fetch_plan *plan, struct fetch_error *err);

#endif
