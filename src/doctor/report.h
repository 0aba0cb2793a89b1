/* The doctor's two outputs: flutter-doctor-style rows for people, schema-1 JSON for scripts. */
#ifndef SB_DOCTOR_REPORT_H
#define SB_DOCTOR_REPORT_H

#include "doctor/doctor.h"
#include "util/out.h"

#include <stdio.h>

struct doctor_counts {
    int ok, warn, error, skip;
};

void report_count(struct doctor_counts *c, enum check_status s);
/* One check: "[✓] Title (id): summary", evidence with verbose, the fix for warnings/errors.
 * quiet prints nothing for ok and skip. */
void report_human_row(FILE *f, const struct out_style *st, const struct check_def *def,
                      const struct check_result *r, int verbose, int quiet);
void report_human_summary(FILE *f, const struct out_style *st, const struct doctor_counts *c,
                          long elapsed_ms, int verbose);
/* {"schema":1,"checks":[...],"counts":{...}}; heap string. */
char *report_json(const struct check_def *const *defs, const struct check_result *results, int n,
                  const struct doctor_counts *c);
/* 0 ok, 1 warnings only, 2 errors. */
int report_exit_status(const struct doctor_counts *c);

#endif
