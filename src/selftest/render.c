#include "selftest/render.h"
#include "util/json.h"
#include "cmd.h"
#include "selftest/summary.h"
#include "util/stage_result.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *st_status_word(int exit_code, int have_error)
{
    if (have_error)
        return "error";
    switch (exit_code) {
    case SB_EXIT_OK:
        return "pass";
    case SB_EXIT_WARN:
        return "warn";
    case SB_EXIT_SKIPPED:
        return "skipped";
    default:
        return "fail";
    }
}

/* NaN (a number the program did not give) becomes null. */
static void add_num(cJSON *o, const char *key, double v)
{
    if (isnan(v) || isinf(v))
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, v);
}

static void add_strings(cJSON *o, const char *key, char *const *list, int n)
{
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(list[i]));
}

static cJSON *mode_json(const struct st_mode *m, double key_tops)
{
    cJSON *o = cJSON_CreateObject();
    json_add_str_or_null(o, "mode", m->mode);
    cJSON_AddBoolToObject(o, "supported", m->supported);
    json_add_str_or_null(o, "reason", m->reason);
    cJSON_AddStringToObject(o, "verdict", st_verdict_name(m->verdict));
    cJSON_AddBoolToObject(o, "safe", m->supported && m->safe);
    add_strings(o, "unsafe_reasons", m->unsafe_reasons, m->nunsafe);
    cJSON_AddStringToObject(o, "goal", st_goal_name(m->goal));
    add_strings(o, "goal_notes", m->goal_notes, m->ngoal_notes);
    add_num(o, "tops", key_tops);
    add_num(o, "worst_cos", m->has_accuracy ? m->worst_cos : NAN);
    add_num(o, "worst_rel_l1", m->has_accuracy ? m->worst_rel_l1 : NAN);
    add_num(o, "bar_cos", m->bar_cos);
    add_num(o, "bar_rel_l1", m->bar_rel_l1);
    cJSON_AddBoolToObject(o, "nan_or_inf", m->nan_or_inf);
    cJSON_AddNumberToObject(o, "cases_total", m->ncases);
    cJSON_AddNumberToObject(o, "cases_failed", st_mode_failed_cases(m));
    const struct st_speed *best = st_mode_best_speed(m);
    add_num(o, "best_tops", best ? best->tops : NAN);
    add_num(o, "speedup_vs_fp16", best && best->speedup_vs_fp16 >= 0 ? best->speedup_vs_fp16 : NAN);
    cJSON *cases = cJSON_AddArrayToObject(o, "cases");
    for (int i = 0; i < m->ncases; i++) {
        const struct selftest_case *k = &m->cases[i];
        cJSON *c = cJSON_CreateObject();
        json_add_str_or_null(c, "name", k->name);
        json_add_str_or_null(c, "kind", k->kind);
        json_add_str_or_null(c, "family", k->family);
        cJSON_AddNumberToObject(c, "b", k->b);
        cJSON_AddNumberToObject(c, "hq", k->hq);
        cJSON_AddNumberToObject(c, "hkv", k->hkv);
        cJSON_AddNumberToObject(c, "lq", k->lq);
        cJSON_AddNumberToObject(c, "lkv", k->lkv);
        cJSON_AddNumberToObject(c, "d", k->d);
        cJSON_AddBoolToObject(c, "causal", k->causal);
        json_add_str_or_null(c, "layout", k->layout);
        json_add_str_or_null(c, "dtype", k->dtype);
        add_num(c, "cos", k->cos);
        add_num(c, "rel_l1", k->rel_l1);
        add_num(c, "max_abs", k->max_abs);
        add_num(c, "lse_max_err", k->lse_max_err);
        cJSON_AddNumberToObject(c, "nonfinite", (double)k->nonfinite);
        cJSON_AddBoolToObject(c, "coverage_ok", k->coverage_ok);
        cJSON_AddBoolToObject(c, "pass", k->pass);
        cJSON_AddBoolToObject(c, "safe", k->safe);
        json_add_str_or_null(c, "unsafe_reason", k->unsafe_reason);
        cJSON_AddBoolToObject(c, "skipped", k->skipped);
        json_add_str_or_null(c, "error", k->error);
        cJSON_AddItemToArray(cases, c);
    }
    cJSON *speed = cJSON_AddArrayToObject(o, "speed");
    for (int i = 0; i < m->nspeed; i++) {
        const struct st_speed *s = &m->speed[i];
        cJSON *c = cJSON_CreateObject();
        cJSON_AddNumberToObject(c, "b", s->b);
        cJSON_AddNumberToObject(c, "h", s->h);
        cJSON_AddNumberToObject(c, "l", s->l);
        cJSON_AddNumberToObject(c, "d", s->d);
        cJSON_AddBoolToObject(c, "causal", s->causal);
        add_num(c, "ms", s->ms);
        add_num(c, "tops", s->tops);
        add_num(c, "speedup_vs_fp16", s->speedup_vs_fp16 >= 0 ? s->speedup_vs_fp16 : NAN);
        cJSON_AddItemToArray(speed, c);
    }
    return o;
}

static cJSON *recommendation_json(const struct st_device *d)
{
    if (!d->has_code || !d->rec.reason)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    json_add_str_or_null(o, "mode", d->rec.mode);
    json_add_str_or_null(o, "runner_up", d->rec.runner_up);
    json_add_str_or_null(o, "reason", d->rec.reason);
    if (d->rec.has_shape) {
        cJSON *s = cJSON_AddObjectToObject(o, "shape");
        cJSON_AddNumberToObject(s, "b", d->rec.shape.b);
        cJSON_AddNumberToObject(s, "h", d->rec.shape.h);
        cJSON_AddNumberToObject(s, "l", d->rec.shape.l);
        cJSON_AddNumberToObject(s, "d", d->rec.shape.d);
        cJSON_AddBoolToObject(s, "causal", d->rec.shape.causal);
    } else {
        cJSON_AddNullToObject(o, "shape");
    }
    cJSON *safe = cJSON_AddArrayToObject(o, "safe_modes");
    for (int k = 0; k < d->nmodes; k++)
        if (d->modes[k].supported && d->modes[k].safe)
            cJSON_AddItemToArray(safe, cJSON_CreateString(d->modes[k].mode));
    return o;
}

/* The stage result: the error, the skip, or a line per GPU and where the recommendation went. */
static void add_stage_result(cJSON *root, const cJSON *devs, const struct selftest_report *r,
                             const struct st_run *run)
{
    const char *skipped = r && !run->error ? r->skipped : NULL;
    cJSON *payload = cJSON_CreateObject();
    cJSON_AddItemToObject(payload, "build", json_str_or_null(run->build_dir));
    cJSON_AddItemToObject(payload, "skipped", json_str_or_null(skipped));
    cJSON_AddItemToObject(payload, "recommendation_record", json_str_or_null(run->record_path));
    cJSON_AddItemToObject(payload, "output_tail",
                          json_str_or_null(run->error ? run->output_tail : NULL));
    char *lines = run->error ? NULL : selftest_gpu_lines(devs);
    struct strbuf summary = STRBUF_INIT;
    if (run->error)
        sb_adds(&summary, run->error);
    else if (run->exit_code == SB_EXIT_SKIPPED)
        sb_addf(&summary, "skipped: %s", skipped ? skipped : "no GPU");
    else
        sb_adds(&summary, lines ? lines : st_status_word(run->exit_code, 0));
    if (lines && run->record_path)
        sb_addf(&summary, "\nrecorded in %s", run->record_path);
    stage_result_add(root, "selftest", run->exit_code, sb_str(&summary),
                     run->error ? run->fix : NULL, payload);
    free(lines);
    sb_free(&summary);
}

char *selftest_render_json(const struct selftest_report *r, const struct st_run *run)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema", 1);
    cJSON_AddStringToObject(root, "command", "selftest");
    cJSON_AddStringToObject(root, "status", st_status_word(run->exit_code, run->error != NULL));
    cJSON_AddNumberToObject(root, "exit_code", run->exit_code);
    json_add_str_or_null(root, "build", run->build_dir);
    json_add_str_or_null(root, "program", run->program);
    if (run->child_exit >= 0)
        cJSON_AddNumberToObject(root, "child_exit", run->child_exit);
    else
        cJSON_AddNullToObject(root, "child_exit");
    add_num(root, "elapsed_s", (double)(long long)(run->elapsed_s * 100) / 100);
    cJSON *lib = cJSON_AddObjectToObject(root, "library");
    if (r && r->abi)
        cJSON_AddNumberToObject(lib, "abi", r->abi);
    else
        cJSON_AddNullToObject(lib, "abi");
    json_add_str_or_null(lib, "archs", r ? r->archs : NULL);
    json_add_str_or_null(root, "skipped", r ? r->skipped : NULL);
    json_add_str_or_null(root, "recommendation_record", run->record_path);
    json_add_str_or_null(root, "recommendation_note", run->record_note);
    if (run->error) {
        cJSON *e = cJSON_AddObjectToObject(root, "error");
        cJSON_AddStringToObject(e, "summary", run->error);
        json_add_str_or_null(e, "fix", run->fix);
        json_add_str_or_null(e, "output_tail", run->output_tail);
    } else {
        cJSON_AddNullToObject(root, "error");
    }
    cJSON *devs = cJSON_AddArrayToObject(root, "devices");
    for (int i = 0; r && i < r->ndevices; i++) {
        const struct st_device *d = &r->devices[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", d->index);
        json_add_str_or_null(o, "name", d->name);
        json_add_str_or_null(o, "cc", d->cc);
        cJSON_AddBoolToObject(o, "has_code", d->has_code);
        char *hint = d->has_code ? NULL : st_device_build_hint(d);
        json_add_str_or_null(o, "build_hint", hint);
        free(hint);
        json_add_str_or_null(o, "error", d->error);
        cJSON_AddStringToObject(o, "verdict", st_verdict_name(st_device_verdict(d)));
        json_add_str_or_null(o, "uuid", d->uuid);
        json_add_str_or_null(o, "recommended_mode", d->recommended_mode);
        cJSON_AddItemToObject(o, "recommended", recommendation_json(d));
        cJSON *modes = cJSON_AddArrayToObject(o, "modes");
        for (int k = 0; k < d->nmodes; k++)
            cJSON_AddItemToArray(modes,
                                 mode_json(&d->modes[k], d->rec.tops ? d->rec.tops[k] : NAN));
        cJSON_AddItemToArray(devs, o);
    }
    add_stage_result(root, devs, r, run);
    return json_text(root);
}

static const char *verdict_color(enum st_verdict v, const struct out_style *st)
{
    return out_color(st, v == ST_PASS   ? OUT_OK
                         : v == ST_WARN ? OUT_WARN
                         : v == ST_FAIL ? OUT_ERROR
                                        : OUT_SKIP);
}

static void fmt_num(char *buf, size_t len, int decimals, const char *suffix, double v)
{
    if (isnan(v) || isinf(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f%s", decimals, v, suffix);
}

/* Up to `shown` lines of a list, then how many more. */
static void print_lines(FILE *f, const char *label, char *const *lines, int n, int shown)
{
    for (int i = 0; i < n && i < shown; i++)
        fprintf(f, "             %s%s\n", label, lines[i]);
    if (n > shown)
        fprintf(f, "             ... and %d more (--json lists them all)\n", n - shown);
}

static void print_device(const struct st_device *d, const struct st_run *run, FILE *f,
                         const struct out_style *st)
{
    const char *reset = out_reset(st), *bold = out_bold(st);
    fprintf(f, "%sGPU %d: %s (compute capability %s)%s\n", bold, d->index, d->name,
            d->cc ? d->cc : "?", reset);
    if (d->error)
        fprintf(f, "  %scould not test this GPU:%s %s\n", verdict_color(ST_FAIL, st), reset,
                d->error);
    if (!d->has_code) {
        char *hint = st_device_build_hint(d);
        fprintf(f, "  %sthe library has no code for this GPU%s\n", verdict_color(ST_FAIL, st),
                reset);
        if (hint)
            fprintf(f, "  fix: %s%s\n", hint, run->out_flag ? run->out_flag : "");
        else
            fprintf(f, "  no arch the kernels know runs on compute capability %s\n",
                    d->cc ? d->cc : "?");
        free(hint);
        if (d->nmodes == 0)
            return;
    }
    char at[48] = "TOPS";
    if (d->rec.has_shape)
        snprintf(at, sizeof at, "TOPS L%d D%d%s", d->rec.shape.l, d->rec.shape.d,
                 d->rec.shape.causal ? " causal" : "");
    fprintf(f, "  %-10s %-5s %-7s %10s %8s %6s %16s %8s\n", "mode", "safe", "goal", "worst cos",
            "rel-L1", "cases", at, "vs fp16");
    int fp16 = st_device_mode_index(d, "fp16");
    double base = fp16 >= 0 && d->rec.tops ? d->rec.tops[fp16] : NAN;
    for (int k = 0; k < d->nmodes; k++) {
        const struct st_mode *m = &d->modes[k];
        char cosb[16], relb[16], topsb[16], sub[16], casesb[16];
        double tops = d->rec.tops ? d->rec.tops[k] : NAN;
        fmt_num(cosb, sizeof cosb, 6, "", m->has_accuracy ? m->worst_cos : NAN);
        fmt_num(relb, sizeof relb, 4, "", m->has_accuracy ? m->worst_rel_l1 : NAN);
        fmt_num(topsb, sizeof topsb, 1, "", tops);
        fmt_num(sub, sizeof sub, 2, "x", base > 0 ? tops / base : NAN);
        if (m->ncases)
            snprintf(casesb, sizeof casesb, "%d", m->ncases);
        else
            snprintf(casesb, sizeof casesb, "-");
        enum st_verdict v = m->verdict;
        const char *safe = !m->supported ? "-" : m->safe ? "yes" : v == ST_FAIL ? "BROKEN" : "NO";
        fprintf(f, "  %-10s %s%-5s%s %-7s %10s %8s %6s %16s %8s\n", m->mode,
                verdict_color(m->supported ? v : ST_UNSUPPORTED, st), safe, reset,
                st_goal_name(m->goal), cosb, relb, casesb, topsb, sub);
        if (m->nan_or_inf)
            fprintf(f, "             NaN or Inf in the output\n");
        if (m->reason && *m->reason)
            fprintf(f, "             %s\n", m->reason);
        if (m->supported)
            print_lines(f, "not safe: ", m->unsafe_reasons, m->nunsafe, 8);
        print_lines(f, "goal note: ", m->goal_notes, m->ngoal_notes, 4);
    }
    enum st_verdict v = st_device_verdict(d);
    fprintf(f, "  verdict: %s%s%s", verdict_color(v, st), st_verdict_name(v), reset);
    if (d->recommended_mode)
        fprintf(f, "; recommended mode: %s%s%s", bold, d->recommended_mode, reset);
    else if (d->has_code)
        fputs("; no recommended mode", f);
    fputc('\n', f);
    if (d->rec.reason && *d->rec.reason)
        fprintf(f, "  why: %s\n", d->rec.reason);
}

void selftest_render_text(const struct selftest_report *r, const struct st_run *run, FILE *f,
                          const struct out_style *st)
{
    if (run->error) {
        if (run->output_tail && *run->output_tail)
            fprintf(f, "--- last output of %s ---\n%s%s--- end ---\n",
                    run->program ? run->program : "sageattn-selftest", run->output_tail,
                    run->output_tail[strlen(run->output_tail) - 1] == '\n' ? "" : "\n");
        fprintf(f, "%sselftest error:%s %s\n", out_color(st, OUT_ERROR), out_reset(st), run->error);
        if (run->fix)
            fprintf(f, "  fix: %s\n", run->fix);
        return;
    }
    if (r->skipped && r->ndevices == 0) {
        fprintf(f, "skipped: %s\n", r->skipped);
        return;
    }
    if (r->archs)
        fprintf(f, "library: %s/lib/libsageattn.so, code for %s\n", run->build_dir, r->archs);
    for (int i = 0; i < r->ndevices; i++) {
        if (i)
            fputc('\n', f);
        print_device(&r->devices[i], run, f, st);
    }
    fprintf(f,
            "\n  (safe: every case within cos >= %g and rel-L1 <= %g, finite and complete; goal:\n"
            "   each mode's engineering bar, a note only)\n",
            ST_SAFE_COS, ST_SAFE_REL_L1);
    if (run->record_path)
        fprintf(f, "recommendation recorded in %s\n", run->record_path);
    else if (run->record_note)
        fprintf(f, "recommendation not recorded: %s\n", run->record_note);
    fprintf(f, "\nselftest: %s (%.1f s)\n", st_status_word(run->exit_code, 0), run->elapsed_s);
}
