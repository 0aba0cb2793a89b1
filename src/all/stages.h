/* `sagebuild all` runs each stage as its own `sagebuild <command> --json` process; these pure
 * functions read the stages' JSON and decide what happens next. */
#ifndef SB_ALL_STAGES_H
#define SB_ALL_STAGES_H

#include "util/stage_result.h"
#include "util/strbuf.h"

/* What `all` does about a doctor finding. */
enum finding_action {
    FINDING_IGNORE = 0, /* not about building these kernels (torch extensions, sageattention) */
    FINDING_FETCH,      /* a fetched toolkit fixes it */
    FINDING_BUILD,      /* `build` handles it itself (a fitting host compiler, Makefiles) */
    FINDING_BLOCK,      /* nothing later can work until the user fixes it */
};

/* Pure: the action for a doctor check id with status "error" (warnings never block).
 * gpus_present: driver findings only block when there is a GPU to run on. */
enum finding_action all_doctor_action(const char *id, int gpus_present);

#define ALL_MAX_FINDINGS 32

struct finding {
    char *id;
    char *summary;
    char *fix;
    enum finding_action action;
};

struct doctor_summary {
    int ok, warn, error, skip;
    int needs_fetch;
    struct finding findings[ALL_MAX_FINDINGS]; /* the errors, in the doctor's order */
    int nfindings;
    struct finding warnings[ALL_MAX_FINDINGS]; /* the warnings, in the doctor's order */
    int nwarnings;
};

/* Reads the output of `doctor --json` that exited with process_exit: its stage result
 * (util/stage_result.h), whose payload holds the counts and every warning and error. 0, or -1
 * with *error (heap), as all_read_stage. */
int all_read_doctor(const char *json, int process_exit, int gpus_present,
                    struct doctor_summary *out, char **error);
/* The first blocking finding, or NULL. */
const struct finding *all_first_block(const struct doctor_summary *d);
void all_doctor_summary_free(struct doctor_summary *d);

/* What a stage's result says (util/stage_result.h), copied out, with the payload members later
 * steps use. */
struct stage_outcome {
    enum stage_status status;
    int exit_code;
    char *summary;
    char *fix;      /* NULL: the stage gave none */
    char *prefix;   /* fetch-cuda: the toolkit it installed (NULL unless installed/unchanged) */
    char *out;      /* build: the install prefix */
    char *log;      /* build: the kept log, after a failure */
    char *log_tail; /* build: its last lines; selftest: the program's output tail */
    char *skipped;  /* selftest: why nothing was tested */
    cJSON *payload; /* the whole payload (install: "version", "replaced", "notes") */
};

/* Reads the result of `sagebuild <command> --json` that exited with process_exit: 0, or -1 with
 * *error (heap) when the output is not JSON with a result from that command, or when the result's
 * exit code is not the process's (one of them is misread). */
int all_read_stage(const char *json, const char *command, int process_exit,
                   struct stage_outcome *out, char **error);
void all_stage_outcome_free(struct stage_outcome *r);

#endif
