#include "selftest/report.h"
#include "build/arch.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char *const verdict_names[] = {"pass", "warn", "fail", "unsupported"};

const char *st_verdict_name(enum st_verdict v)
{
    return (unsigned)v < 4 ? verdict_names[v] : "fail";
}

static cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static char *str_or_null(const cJSON *o, const char *key)
{
    cJSON *v = get(o, key);
    return cJSON_IsString(v) && v->valuestring ? xstrdup(v->valuestring) : NULL;
}

/* Numbers the program could not compute come as null: NAN here, shown as "-". */
static double num(const cJSON *o, const char *key)
{
    cJSON *v = get(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int integer(const cJSON *o, const char *key)
{
    cJSON *v = get(o, key);
    return cJSON_IsNumber(v) && fabs(v->valuedouble) < 1e9 ? (int)v->valuedouble : 0;
}

static int boolean(const cJSON *o, const char *key, int dflt)
{
    cJSON *v = get(o, key);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

static void parse_case(const cJSON *c, struct st_case *k)
{
    k->name = str_or_null(c, "name");
    k->kind = str_or_null(c, "kind");
    k->error = str_or_null(c, "error");
    k->lse_max_err = num(c, "lse_max_err");
    double nf = num(c, "nonfinite");
    k->nonfinite = isnan(nf) || nf < 0 ? 0 : (long)nf;
    k->b = integer(c, "b");
    k->hq = integer(c, "hq");
    k->hkv = integer(c, "hkv");
    k->lq = integer(c, "lq");
    k->lkv = integer(c, "lkv");
    k->d = integer(c, "d");
    k->causal = boolean(c, "causal", 0);
    k->layout = str_or_null(c, "layout");
    k->dtype = str_or_null(c, "dtype");
    k->cos = num(c, "cos");
    k->rel_l1 = num(c, "rel_l1");
    k->max_abs = num(c, "max_abs");
    k->coverage_ok = boolean(c, "coverage_ok", 1);
    k->pass = boolean(c, "pass", 0);
}

static void parse_speed(const cJSON *c, struct st_speed *s)
{
    s->b = integer(c, "b");
    s->h = integer(c, "h");
    s->l = integer(c, "l");
    s->d = integer(c, "d");
    s->causal = boolean(c, "causal", 0);
    s->ms = num(c, "ms");
    s->tops = num(c, "tops");
    double su = num(c, "speedup_vs_fp16");
    s->speedup_vs_fp16 = isnan(su) ? -1 : su;
}

static int parse_verdict(const char *s, enum st_verdict *v)
{
    for (int i = 0; s && i < 4; i++)
        if (!strcmp(s, verdict_names[i])) {
            *v = (enum st_verdict)i;
            return 0;
        }
    return -1;
}

static int parse_mode(const cJSON *m, struct st_mode *out, char **error)
{
    out->mode = str_or_null(m, "mode");
    cJSON *verdict = get(m, "verdict");
    if (!out->mode || !cJSON_IsString(verdict) ||
        parse_verdict(verdict->valuestring, &out->verdict) < 0) {
        *error =
            xasprintf("a mode entry lacks \"mode\" or a verdict of pass/warn/fail/unsupported");
        return -1;
    }
    out->supported = boolean(m, "supported", out->verdict != ST_UNSUPPORTED);
    out->reason = str_or_null(m, "reason");
    cJSON *acc = get(m, "accuracy");
    if (cJSON_IsObject(acc)) {
        out->has_accuracy = 1;
        out->worst_cos = num(acc, "worst_cos");
        out->worst_rel_l1 = num(acc, "worst_rel_l1");
        out->nan_or_inf = boolean(acc, "nan_or_inf", 0);
        cJSON *bar = get(acc, "bar");
        out->bar_cos = num(bar, "cos");
        out->bar_rel_l1 = num(bar, "rel_l1");
        cJSON *cases = get(acc, "cases");
        int n = cJSON_IsArray(cases) ? cJSON_GetArraySize(cases) : 0;
        out->cases = xcalloc((size_t)n + 1, sizeof *out->cases);
        cJSON *c;
        cJSON_ArrayForEach(c, cases)
        {
            if (cJSON_IsObject(c))
                parse_case(c, &out->cases[out->ncases++]);
        }
    } else {
        out->worst_cos = out->worst_rel_l1 = out->bar_cos = out->bar_rel_l1 = NAN;
    }
    cJSON *speed = get(m, "speed");
    int n = cJSON_IsArray(speed) ? cJSON_GetArraySize(speed) : 0;
    out->speed = xcalloc((size_t)n + 1, sizeof *out->speed);
    cJSON *s;
    cJSON_ArrayForEach(s, speed)
    {
        if (cJSON_IsObject(s))
            parse_speed(s, &out->speed[out->nspeed++]);
    }
    return 0;
}

static int parse_device(const cJSON *d, struct st_device *out, char **error)
{
    out->index = integer(d, "index");
    out->name = str_or_null(d, "name");
    out->cc = str_or_null(d, "cc");
    cJSON *modes = get(d, "modes");
    if (!out->name || !cJSON_IsArray(modes)) {
        *error = xstrdup("a device entry lacks \"name\" or a \"modes\" array");
        return -1;
    }
    out->has_code = boolean(d, "has_code", 1);
    out->build_hint = str_or_null(d, "build_hint");
    out->error = str_or_null(d, "error");
    out->recommended_mode = str_or_null(d, "recommended_mode");
    int n = cJSON_GetArraySize(modes);
    out->modes = xcalloc((size_t)n + 1, sizeof *out->modes);
    cJSON *m;
    cJSON_ArrayForEach(m, modes)
    {
        if (!cJSON_IsObject(m)) {
            *error = xstrdup("a mode entry is not an object");
            return -1;
        }
        if (parse_mode(m, &out->modes[out->nmodes++], error) < 0)
            return -1;
    }
    return 0;
}

int selftest_parse(const char *text, size_t len, struct st_report *out, char **error)
{
    memset(out, 0, sizeof *out);
    *error = NULL;
    if (!text || !len || !memchr(text, '{', len)) {
        *error = xstrdup("it printed no JSON");
        return -1;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t at = end && end >= text ? (size_t)(end - text) : 0;
        *error = xasprintf("its output is not valid JSON (near byte %zu)", at);
        return -1;
    }
    /* Only blanks may follow the document: anything else means the output was mixed up. */
    for (const char *p = end; p && p < text + len; p++)
        if (*p && !strchr(" \t\r\n", *p)) {
            *error = xasprintf("unexpected text after the JSON (at byte %zu)", (size_t)(p - text));
            cJSON_Delete(root);
            return -1;
        }
    cJSON *schema = get(root, "schema");
    int rc = 0;
    if (!cJSON_IsObject(root) || !cJSON_IsNumber(schema) ||
        schema->valuedouble != SELFTEST_SCHEMA) {
        *error = xasprintf("not the self-test's JSON of schema %d", SELFTEST_SCHEMA);
        rc = -1;
        goto out;
    }
    cJSON *lib = get(root, "library");
    out->abi = integer(lib, "abi");
    out->archs = str_or_null(lib, "archs");
    out->skipped = str_or_null(root, "skipped");
    cJSON *devices = get(root, "devices");
    if (!cJSON_IsArray(devices)) {
        if (out->skipped)
            goto out; /* a skipped run need not list devices */
        *error = xstrdup("no \"devices\" array");
        rc = -1;
        goto out;
    }
    int n = cJSON_GetArraySize(devices);
    out->devices = xcalloc((size_t)n + 1, sizeof *out->devices);
    cJSON *d;
    cJSON_ArrayForEach(d, devices)
    {
        if (!cJSON_IsObject(d)) {
            *error = xstrdup("a device entry is not an object");
            rc = -1;
            break;
        }
        if (parse_device(d, &out->devices[out->ndevices++], error) < 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0 && out->ndevices == 0 && !out->skipped) {
        *error = xstrdup("the device list is empty and the run is not marked skipped");
        rc = -1;
    }
out:
    cJSON_Delete(root);
    if (rc < 0)
        selftest_report_free(out);
    return rc;
}

static void free_mode(struct st_mode *m)
{
    for (int i = 0; i < m->ncases; i++) {
        free(m->cases[i].name);
        free(m->cases[i].kind);
        free(m->cases[i].error);
        free(m->cases[i].layout);
        free(m->cases[i].dtype);
    }
    free(m->cases);
    free(m->speed);
    free(m->mode);
    free(m->reason);
}

void selftest_report_free(struct st_report *r)
{
    for (int i = 0; i < r->ndevices; i++) {
        struct st_device *d = &r->devices[i];
        for (int k = 0; k < d->nmodes; k++)
            free_mode(&d->modes[k]);
        free(d->modes);
        free(d->name);
        free(d->cc);
        free(d->build_hint);
        free(d->error);
        free(d->recommended_mode);
    }
    free(r->devices);
    free(r->archs);
    free(r->skipped);
    memset(r, 0, sizeof *r);
}

enum st_verdict st_device_verdict(const struct st_device *d)
{
    enum st_verdict worst = ST_UNSUPPORTED;
    for (int k = 0; k < d->nmodes; k++) {
        enum st_verdict v = d->modes[k].verdict;
        if (v == ST_UNSUPPORTED)
            continue;
        if (worst == ST_UNSUPPORTED || v > worst)
            worst = v;
    }
    return worst;
}

const struct st_speed *st_mode_best_speed(const struct st_mode *m)
{
    const struct st_speed *best = NULL;
    for (int i = 0; i < m->nspeed; i++)
        if (!isnan(m->speed[i].tops) && (!best || m->speed[i].tops > best->tops))
            best = &m->speed[i];
    return best;
}

int st_mode_failed_cases(const struct st_mode *m)
{
    int n = 0;
    for (int i = 0; i < m->ncases; i++)
        n += !m->cases[i].pass;
    return n;
}

int selftest_exit_status(const struct st_report *r, int child_exit)
{
    if (r->skipped && r->ndevices == 0)
        return SB_EXIT_SKIPPED;
    int status = SB_EXIT_OK;
    for (int i = 0; i < r->ndevices; i++) {
        const struct st_device *d = &r->devices[i];
        enum st_verdict v = st_device_verdict(d);
        if (!d->has_code || d->error || v == ST_FAIL)
            status = SB_EXIT_ERROR;
        else if (v == ST_WARN && status == SB_EXIT_OK)
            status = SB_EXIT_WARN;
    }
    /* The program knows things the JSON may not say (a mode that crashed half-way): its own
     * worse status wins; 77 with devices listed is not a skip. */
    if ((child_exit == SB_EXIT_WARN || child_exit == SB_EXIT_ERROR) && child_exit > status)
        status = child_exit;
    return status;
}

char *st_device_build_hint(const struct st_device *d)
{
    if (d->build_hint && *d->build_hint)
        return xstrdup(d->build_hint);
    int major = 0, minor = 0;
    if (!d->cc || sscanf(d->cc, "%d.%d", &major, &minor) != 2)
        return NULL;
    int i = build_arch_for_cc(major, minor);
    return i < 0 ? NULL : xasprintf("sagebuild build --arch %s", build_arch_at(i)->name);
}
