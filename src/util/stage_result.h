/* The stage result: one JSON object, the same for every command `sagebuild all` runs as a stage
 * (doctor, fetch-cuda, build, selftest, install), put under "result" in the command's --json
 * document beside the command's own fields:
 *   "result": {"schema": 1, "command": "build", "status": "ok"|"warn"|"error"|"skipped",
 *              "exit_code": 0, "summary": "one line (selftest: one per GPU)",
 *              "fix": "a command" | null, "payload": {...the facts a next stage needs}}
 * The status follows the exit code (0 ok, 1 warn, 77 skipped, anything else error), so a reader
 * never has to look at the process's exit status or at message text. Written and read here
 * only; man/sagebuild.1 (JSON OUTPUT) documents it. */
#ifndef SB_UTIL_STAGE_RESULT_H
#define SB_UTIL_STAGE_RESULT_H

#include <cJSON.h>

#define STAGE_RESULT_SCHEMA 1

enum stage_status { STAGE_OK = 0, STAGE_WARN, STAGE_ERROR, STAGE_SKIPPED };

/* The status an exit code means: 0 ok, 1 warn, 77 skipped, else error. */
enum stage_status stage_status_of_exit(int exit_code);
/* "ok", "warn", "error", "skipped". */
const char *stage_status_name(enum stage_status s);

/* Adds "result" to doc. summary and fix may be NULL (fix: null; summary: ""); payload (owned
 * from here on) may be NULL for an empty object. */
void stage_result_add(cJSON *doc, const char *command, int exit_code, const char *summary,
                      const char *fix, cJSON *payload);

/* A stage result as read back; the strings and the payload point into the document read. */
struct stage_result {
    const char *command;
    enum stage_status status;
    int exit_code;
    const char *summary; /* never NULL */
    const char *fix;     /* NULL when null */
    const cJSON *payload;
};

/* Reads doc's "result", which must be schema STAGE_RESULT_SCHEMA, from `command`, with a
 * status that agrees with its exit code. 0, or -1 with *error (heap) saying what is wrong. */
int stage_result_read(const cJSON *doc, const char *command, struct stage_result *out,
                      char **error);

/* A string member of the payload, or NULL. */
const char *stage_payload_str(const struct stage_result *r, const char *key);

#endif
