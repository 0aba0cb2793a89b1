/* What `sagebuild build` reports, for people and (with --json) for `sagebuild all`. */
#ifndef SB_BUILD_OUTCOME_H
#define SB_BUILD_OUTCOME_H

#include "record.h"
#include "util/out.h"
#include "util/strbuf.h"

#include <stdio.h>

#define BUILD_JSON_SCHEMA 1

struct build_outcome {
    int exit_code;
    char *error; /* NULL on success */
    char *fix;
    char *log_path;      /* the kept build log, when there is one */
    char *log_tail;      /* its last lines after a failure */
    struct strbuf notes; /* one remark per line */
    int up_to_date;
    int compiled_nothing; /* CMake ran, but nothing needed compiling (files reinstalled) */
    char *reason;         /* why work was (or was not) done */
    char *out_dir;
    struct build_record rec;
    int have_rec;
};

void build_outcome_error(struct build_outcome *o, int exit_code, char *error, char *fix);
/* {"schema":1,"command":"build","status":"ok"|"error","exit_code":..,"up_to_date":..,
 *  "compiled":..,"reason":..,"out":..,"notes":[..],"record":{..}|null,"error":null|{"summary","fix","log",
 *  "log_tail"}}. Heap string. */
char *build_outcome_json(const struct build_outcome *o);
void build_outcome_print(const struct build_outcome *o, FILE *f, const struct out_style *st);
void build_outcome_free(struct build_outcome *o);

#endif
