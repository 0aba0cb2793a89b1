/* Showing a self-test report: a table per GPU for people, a normalised JSON for programs. */
#ifndef SB_SELFTEST_RENDER_H
#define SB_SELFTEST_RENDER_H

#include "selftest/report.h"
#include "util/out.h"

#include <stdio.h>

struct st_run {
    const char *build_dir;
    const char *program; /* the sageattn-selftest that ran */
    int child_exit;      /* its exit status, -1 when it did not exit */
    double elapsed_s;
    int exit_code;     /* what `sagebuild selftest` returns */
    const char *error; /* set when no report could be had */
    const char *fix;
    const char *output_tail; /* the program's last output lines, after an error */
    const char *out_flag;    /* " --out DIR" to add to build hints, or "" */
    const char *record_path; /* the recommendation.json written, or NULL */
    const char *record_note; /* why none was written (or an old one removed), or NULL */
};

/* Exit-status word: "pass", "warn", "fail", "skipped", "error". */
const char *st_status_word(int exit_code, int have_error);

/* {"schema":1,"command":"selftest","status",..,"exit_code",..,"build",..,"program",..,
 *  "child_exit",..,"elapsed_s",..,"library":{"abi","archs"},"skipped",..,
 *  "recommendation_record":path|null,"recommendation_note":..|null,"error":null|{..},
 *  "devices":[{"index","name","cc","uuid","has_code","build_hint","verdict","recommended_mode",
 *  "recommended":{"mode","runner_up","reason","shape","safe_modes"}|null,
 *  "modes":[{"mode","supported","reason","verdict","safe","unsafe_reasons","goal","goal_notes",
 *  "tops" (at the recommendation's shape),"worst_cos","worst_rel_l1","nan_or_inf",
 *  "cases_total","cases_failed","best_tops","speedup_vs_fp16","cases":[..],"speed":[..]}]}]}
 * r may be NULL (an error before any report). Heap string. */
char *selftest_render_json(const struct selftest_report *r, const struct st_run *run);
void selftest_render_text(const struct selftest_report *r, const struct st_run *run, FILE *f,
                          const struct out_style *st);

#endif
