/* <out>/recommendation.json: the mode `sagebuild selftest` found safe and fastest on each GPU,
 * for the library it tested (TEAM contract 2; the drop-in sageattention package reads it, and
 * uses an entry only when the library's SHA-256, the GPU's name and cc, and its uuid match).
 * Pure: report and facts in, JSON text out. */
#ifndef SB_SELFTEST_RECOMMENDATION_H
#define SB_SELFTEST_RECOMMENDATION_H

#include "selftest/report.h"

#define RECOMMENDATION_NAME "recommendation.json"
#define RECOMMENDATION_SCHEMA 1

struct recommendation_facts {
    const char *library_sha256; /* hex SHA-256 of the libsageattn.so the self-test ran */
    const char *written_by;     /* "sagebuild selftest 0.1.0" */
    const char *date;           /* ISO 8601 UTC */
    const char *previous;       /* the record already there (text), or NULL */
};

/* The record for r: one entry per GPU with a recommended mode; entries of the previous record
 * for the same library and GPUs this run did not test (--device N) are kept. Heap text, or NULL
 * when no GPU has a recommendation (then any old record is stale: remove it). *ngpus gets the
 * entry count. */
char *recommendation_build(const struct selftest_report *r, const struct recommendation_facts *f,
                           int *ngpus);

#endif
