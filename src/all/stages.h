/* `sagebuild all` runs each stage as its own `sagebuild <command> --json` process; these pure
 * functions read the stages' JSON and decide what happens next. */
#ifndef SB_ALL_STAGES_H
#define SB_ALL_STAGES_H

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

/* Reads `doctor --json` output. 0, or -1 with *error (heap). */
int all_read_doctor(const char *json, int gpus_present, struct doctor_summary *out, char **error);
/* The first blocking finding, or NULL. */
const struct finding *all_first_block(const struct doctor_summary *d);
void all_doctor_summary_free(struct doctor_summary *d);

/* What any stage's JSON says in common ("status", "exit_code", "error": {"summary","fix"}),
 * plus the few fields later stages need. */
struct stage_result {
    char *status; /* "ok", "error", "pass", "warn", "fail", "skipped", ... */
    int exit_code;
    char *error;
    char *fix;
    char *prefix;   /* fetch-cuda: the toolkit it installed */
    char *out;      /* build: the install prefix */
    char *archs;    /* build: record.archs */
    int up_to_date; /* build */
    double cpu_seconds;
    char *log;      /* build: the kept log, and its last lines after a failure */
    char *log_tail; /* (selftest: its output tail) */
    char *skipped;  /* selftest */
    char *verdicts; /* selftest: "GPU 0 NVIDIA H200: recommended mode int8-fp16 (414 TOPS);
                       safe: fp16, int8-fp16, int8-fp8" lines */
    char *record;   /* selftest: the recommendation.json it wrote */
};

/* Reads a stage's JSON. 0, or -1 with *error (heap) for output that is not JSON of ours. */
int all_read_stage(const char *json, struct stage_result *out, char **error);
void all_stage_result_free(struct stage_result *r);

#endif
