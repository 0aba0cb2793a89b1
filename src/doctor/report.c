#include "doctor/report.h"
#include "cmd.h"
#include "util/json.h"
#include "util/plural.h"
#include "util/stage_result.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <stdlib.h>

static enum out_status out_of(enum check_status s)
{
    switch (s) {
    case CHECK_OK:
        return OUT_OK;
    case CHECK_WARN:
        return OUT_WARN;
    case CHECK_ERROR:
        return OUT_ERROR;
    default:
        return OUT_SKIP;
    }
}

void report_count(struct doctor_counts *c, enum check_status s)
{
    switch (s) {
    case CHECK_OK:
        c->ok++;
        break;
    case CHECK_WARN:
        c->warn++;
        break;
    case CHECK_ERROR:
        c->error++;
        break;
    default:
        c->skip++;
    }
}

void report_human_row(FILE *f, const struct out_style *st, const struct check_def *def,
                      const struct check_result *r, int verbose, int quiet)
{
    int problem = r->status == CHECK_WARN || r->status == CHECK_ERROR;
    if (quiet && !problem)
        return;
    enum out_status os = out_of(r->status);
    fprintf(f, "%s%s%s %s%s%s (%s): %s\n", out_color(st, os), out_status_mark(st, os),
            out_reset(st), out_bold(st), def->title, out_reset(st), def->id,
            r->summary ? r->summary : "");
    if (verbose)
        for (int i = 0; i < r->nevidence; i++)
            fprintf(f, "    %s %s: %s\n", st->unicode ? "•" : "-", r->evidence[i].key,
                    r->evidence[i].value);
    if (problem && r->fix)
        fprintf(f, "    %sfix:%s %s\n", out_color(st, os), out_reset(st), r->fix);
}

void report_human_summary(FILE *f, const struct out_style *st, const struct doctor_counts *c,
                          long elapsed_ms, int verbose)
{
    int total = c->ok + c->warn + c->error + c->skip;
    fputc('\n', f);
    if (c->error || c->warn)
        fprintf(f, "%s!%s Doctor found %d %s and %d %s in %d %s (%d ok, %d skipped).",
                out_color(st, c->error ? OUT_ERROR : OUT_WARN), out_reset(st), c->error,
                plural(c->error, "error", "errors"), c->warn,
                plural(c->warn, "warning", "warnings"), total, plural(total, "check", "checks"),
                c->ok, c->skip);
    else
        fprintf(f, "%s%s%s No issues found (%d %s, %d skipped).", out_color(st, OUT_OK),
                st->unicode ? "•" : "-", out_reset(st), total, plural(total, "check", "checks"),
                c->skip);
    if (verbose)
        fprintf(f, " [%ld ms]", elapsed_ms);
    fputc('\n', f);
}

/* The stage result: the counts, and every warning and error with its id and fix (what `all`
 * acts on), in the order the checks ran. */
static void add_stage_result(cJSON *root, const struct check_def *const *defs,
                             const struct check_result *results, int n,
                             const struct doctor_counts *c)
{
    cJSON *payload = cJSON_CreateObject();
    cJSON *counts = cJSON_AddObjectToObject(payload, "counts");
    cJSON_AddNumberToObject(counts, "ok", c->ok);
    cJSON_AddNumberToObject(counts, "warn", c->warn);
    cJSON_AddNumberToObject(counts, "error", c->error);
    cJSON_AddNumberToObject(counts, "skip", c->skip);
    cJSON *findings = cJSON_AddArrayToObject(payload, "findings");
    for (int i = 0; i < n; i++) {
        const struct check_result *r = &results[i];
        if (r->status != CHECK_WARN && r->status != CHECK_ERROR)
            continue;
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "id", defs[i]->id);
        cJSON_AddStringToObject(f, "status", check_status_name(r->status));
        cJSON_AddStringToObject(f, "summary", r->summary ? r->summary : "");
        cJSON_AddItemToObject(f, "fix", json_str_or_null(r->fix));
        cJSON_AddItemToArray(findings, f);
    }
    char *summary = xasprintf("%d ok, %d %s, %d %s, %d skipped", c->ok, c->warn,
                              plural(c->warn, "warning", "warnings"), c->error,
                              plural(c->error, "error", "errors"), c->skip);
    stage_result_add(root, "doctor", report_exit_status(c), summary, NULL, payload);
    free(summary);
}

char *report_json(const struct check_def *const *defs, const struct check_result *results, int n,
                  const struct doctor_counts *c)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema", 1);
    cJSON_AddStringToObject(root, "sagebuild", SAGEBUILD_VERSION);
    cJSON *checks = cJSON_AddArrayToObject(root, "checks");
    for (int i = 0; i < n; i++) {
        const struct check_result *r = &results[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", defs[i]->id);
        cJSON_AddStringToObject(o, "title", defs[i]->title);
        cJSON_AddStringToObject(o, "status", check_status_name(r->status));
        cJSON_AddStringToObject(o, "summary", r->summary ? r->summary : "");
        cJSON *ev = cJSON_AddObjectToObject(o, "evidence");
        for (int k = 0; k < r->nevidence; k++)
            cJSON_AddStringToObject(ev, r->evidence[k].key, r->evidence[k].value);
        if (r->fix)
            cJSON_AddStringToObject(o, "fix", r->fix);
        else
            cJSON_AddNullToObject(o, "fix");
        cJSON_AddItemToArray(checks, o);
    }
    cJSON *counts = cJSON_AddObjectToObject(root, "counts");
    cJSON_AddNumberToObject(counts, "ok", c->ok);
    cJSON_AddNumberToObject(counts, "warn", c->warn);
    cJSON_AddNumberToObject(counts, "error", c->error);
    cJSON_AddNumberToObject(counts, "skip", c->skip);
    add_stage_result(root, defs, results, n, c);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    char *out = xstrdup(text);
    cJSON_free(text);
    return out;
}

int report_exit_status(const struct doctor_counts *c)
{
    if (c->error)
        return SB_EXIT_ERROR;
    return c->warn ? SB_EXIT_WARN : SB_EXIT_OK;
}
