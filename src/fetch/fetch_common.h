/* Small environment lookups shared by fetch-cuda, env and mirror. */
#ifndef SB_FETCH_COMMON_H
#define SB_FETCH_COMMON_H

#include "fetch/engine/download.h"

/* Download options from the environment: SAGEBUILD_TIMEOUT (the window over which the minimum
 * rate is judged, default 30 s; connect timeout is half of it, at most 15), SAGEBUILD_RETRIES
 * (attempts per URL, 3), SAGEBUILD_MIN_RATE (bytes/s, default 1k), SAGEBUILD_DEADLINE (seconds
 * per request, default 3600). */
void fetch_dl_opts(struct dl_opts *o, int offline, int progress);
/* Pure core of the above. */
void fetch_dl_opts_from(struct dl_opts *o, const char *timeout_env, const char *retries_env);

/* A rate in bytes/s: a number with an optional k or M suffix (1024-based), from 1 to 1G. 0, or
 * -1 when s is not one. */
int fetch_parse_rate(const char *s, long *out);
/* Seconds: a whole number from 0 (no limit) to 7 days. 0 or -1. */
int fetch_parse_seconds(const char *s, long *out);
/* SAGEBUILD_MIN_RATE and SAGEBUILD_DEADLINE (values that do not parse are ignored). */
void fetch_dl_limits_from(struct dl_opts *o, const char *min_rate_env, const char *deadline_env);

/* The redist platform of this machine (uname), or NULL. */
const char *fetch_machine_platform(void);

/* path made absolute against the current folder, without resolving links (heap). */
char *fetch_absolute(const char *path);

#endif
