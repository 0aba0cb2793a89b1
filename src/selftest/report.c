#include "selftest/report.h"
#include "kernel_build/arch.h"
#include "util/json.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

const char *st_goal_name(int goal)
{
    return goal < 0 ? "none" : goal ? "met" : "missed";
}

static cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* Numbers the program could not compute come as null: NAN (json_num), shown as "-". */

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

static void add_string(char ***list, int *n, char *s)
{
    *list = xrealloc(*list, ((size_t)*n + 2) * sizeof **list);
    (*list)[(*n)++] = s;
    (*list)[*n] = NULL;
}

static void parse_case(const cJSON *c, void *dst)
{
    struct selftest_case *k = dst;
    k->name = json_strdup(c, "name");
    k->kind = json_strdup(c, "kind");
    k->family = json_strdup(c, "family");
    if (!k->family && k->name) /* older programs: the family is the name's first word */
        k->family = xstrndup(k->name, strcspn(k->name, " "));
    k->skipped = boolean(c, "skipped", 0);
    k->safe = boolean(c, "safe", 0);
    k->unsafe_reason = json_strdup(c, "unsafe_reason");
    k->error = json_strdup(c, "error");
    k->lse_max_err = json_num(c, "lse_max_err");
    double nf = json_num(c, "nonfinite");
    k->nonfinite = isnan(nf) || nf < 0 ? 0 : (long)nf;
    k->b = integer(c, "b");
    k->hq = integer(c, "hq");
    k->hkv = integer(c, "hkv");
    k->lq = integer(c, "lq");
    k->lkv = integer(c, "lkv");
    k->d = integer(c, "d");
    k->causal = boolean(c, "causal", 0);
    k->layout = json_strdup(c, "layout");
    k->dtype = json_strdup(c, "dtype");
    k->cos = json_num(c, "cos");
    k->rel_l1 = json_num(c, "rel_l1");
    k->max_abs = json_num(c, "max_abs");
    k->coverage_ok = boolean(c, "coverage_ok", 1);
    k->pass = boolean(c, "pass", 0);
}

static void parse_speed(const cJSON *c, void *dst)
{
    struct st_speed *s = dst;
    s->b = integer(c, "b");
    s->h = integer(c, "h");
    s->l = integer(c, "l");
    s->d = integer(c, "d");
    s->causal = boolean(c, "causal", 0);
    s->ms = json_num(c, "ms");
    s->tops = json_num(c, "tops");
    double su = json_num(c, "speedup_vs_fp16");
    s->speedup_vs_fp16 = isnan(su) ? -1 : su;
}

/* The objects of array a, each read by parse into an element of `size` bytes, as a zeroed
 * heap array with one spare element; *n their number. Items that are not objects are left
 * out; when a is not an array, there are none. */
static void *parse_objects(const cJSON *a, size_t size, void (*parse)(const cJSON *, void *),
                           int *n)
{
    int cap = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    char *out = xcalloc((size_t)cap + 1, size);
    *n = 0;
    if (!cap) /* an object's members would walk like an array's items */
        return out;
    const cJSON *item;
    cJSON_ArrayForEach(item, a)
    {
        if (cJSON_IsObject(item))
            parse(item, out + (size_t)(*n)++ * size);
    }
    return out;
}

static int parse_mode(const cJSON *m, struct st_mode *out, char **error)
{
    out->mode = json_strdup(m, "mode");
    cJSON *verdict = get(m, "verdict");
    if (!out->mode || !cJSON_IsString(verdict) ||
        st_verdict_from_name(verdict->valuestring, &out->verdict) < 0) {
        *error =
            xasprintf("a mode entry lacks \"mode\" or a verdict of pass/warn/fail/unsupported");
        return -1;
    }
    out->supported = boolean(m, "supported", out->verdict != ST_UNSUPPORTED);
    out->reason = json_strdup(m, "reason");
    cJSON *acc = get(m, "accuracy");
    if (cJSON_IsObject(acc)) {
        out->has_accuracy = 1;
        out->worst_cos = json_num(acc, "worst_cos");
        out->worst_rel_l1 = json_num(acc, "worst_rel_l1");
        out->nan_or_inf = boolean(acc, "nan_or_inf", 0);
        cJSON *bar = get(acc, "bar");
        out->bar_cos = json_num(bar, "cos");
        out->bar_rel_l1 = json_num(bar, "rel_l1");
        out->cases = parse_objects(get(acc, "cases"), sizeof *out->cases, parse_case, &out->ncases);
    } else {
        out->worst_cos = out->worst_rel_l1 = out->bar_cos = out->bar_rel_l1 = NAN;
    }
    out->goal = -1;
    cJSON *safe = get(m, "safe");
    if (cJSON_IsBool(safe)) {
        out->safe = cJSON_IsTrue(safe);
        out->unsafe_reasons = json_string_list(get(m, "unsafe_reasons"), &out->nunsafe);
        cJSON *goal = get(m, "goal");
        const char *g = cJSON_IsString(goal) ? goal->valuestring : "none";
        out->goal = !strcmp(g, "met") ? 1 : !strcmp(g, "missed") ? 0 : -1;
        out->goal_notes = json_string_list(get(m, "goal_notes"), &out->ngoal_notes);
    }
    out->speed = parse_objects(get(m, "speed"), sizeof *out->speed, parse_speed, &out->nspeed);
    return 0;
}

static int parse_device(const cJSON *d, struct st_device *out, int *judged_here, char **error)
{
    out->index = integer(d, "index");
    out->name = json_strdup(d, "name");
    out->cc = json_strdup(d, "cc");
    out->uuid = json_strdup(d, "uuid");
    cJSON *modes = get(d, "modes");
    if (!out->name || !cJSON_IsArray(modes)) {
        *error = xstrdup("a device entry lacks \"name\" or a \"modes\" array");
        return -1;
    }
    out->has_code = boolean(d, "has_code", 1);
    out->build_hint = json_strdup(d, "build_hint");
    out->error = json_strdup(d, "error");
    out->recommended_mode = json_strdup(d, "recommended_mode");
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
        if (!cJSON_IsBool(get(m, "safe")))
            *judged_here = 1;
    }
    return 0;
}

/* An older program's mode: the safe judgement from its figures by the shared rules; its own
 * verdict was the engineering goal. */
static void judge_mode_here(struct st_mode *m, const char *device_error)
{
    int was_goal = m->verdict;
    m->goal = was_goal == ST_UNSUPPORTED ? -1 : was_goal == ST_PASS;
    m->unsafe_reasons = xcalloc(1, sizeof *m->unsafe_reasons);
    m->goal_notes = xcalloc(1, sizeof *m->goal_notes);
    m->nunsafe = m->ngoal_notes = 0;
    m->safe = 0;
    if (!m->supported) {
        m->verdict = ST_UNSUPPORTED;
        add_string(&m->unsafe_reasons, &m->nunsafe,
                   xasprintf("not supported: %s", m->reason ? m->reason : "?"));
        return;
    }
    enum st_safety worst = ST_SAFE;
    int judged = 0;
    for (int i = 0; i < m->ncases; i++) {
        struct selftest_case *k = &m->cases[i];
        if (!k->pass && m->goal == 0)
            add_string(
                &m->goal_notes, &m->ngoal_notes,
                xasprintf("%s: cos %.6f rel-L1 %.4f", k->name ? k->name : "?", k->cos, k->rel_l1));
        if (k->skipped)
            continue;
        judged++;
        struct st_figures f = {!k->error && !isnan(k->cos),
                               k->coverage_ok,
                               k->nonfinite,
                               k->cos,
                               k->rel_l1,
                               isnan(k->lse_max_err) ? -1.0 : k->lse_max_err,
                               1,
                               k->family && !strcmp(k->family, "qk-near-max")};
        /* The judge's own reasons are short ("cos 0.99850 < 0.999"); the API's message is
         * the program's and of any length. */
        char reason[160];
        enum st_safety s = st_judge_safe(&f, reason, sizeof reason);
        k->safe = s == ST_SAFE;
        if (s == ST_SAFE)
            continue;
        free(k->unsafe_reason);
        k->unsafe_reason = k->error ? xasprintf("error: %s", k->error) : xstrdup(reason);
        add_string(&m->unsafe_reasons, &m->nunsafe,
                   xasprintf("%s: %s", k->name ? k->name : "?", k->unsafe_reason));
        if (s > worst)
            worst = s;
    }
    if (device_error) {
        add_string(&m->unsafe_reasons, &m->nunsafe,
                   xasprintf("the tests stopped early: %s", device_error));
        worst = ST_BROKEN;
    } else if (judged == 0) {
        add_string(&m->unsafe_reasons, &m->nunsafe, xstrdup("no case ran"));
        worst = worst > ST_INACCURATE ? worst : ST_INACCURATE;
    }
    m->safe = worst == ST_SAFE;
    m->verdict = worst == ST_SAFE ? ST_PASS : worst == ST_INACCURATE ? ST_WARN : ST_FAIL;
}

static void judge_device_here(struct st_device *d)
{
    for (int k = 0; k < d->nmodes; k++)
        if (!d->modes[k].unsafe_reasons)
            judge_mode_here(&d->modes[k], d->error);
}

static int same_shape(const struct st_speed *s, const struct st_shape *k)
{
    return s->b == k->b && s->h == k->h && s->l == k->l && s->d == k->d && s->causal == k->causal;
}

/* The recommendation by the shared rule, from each mode's safe judgement and its speed at the
 * key shape (the program runs the same shapes for every mode). */
static void recommend(struct st_device *d)
{
    struct st_recommendation *rec = &d->rec;
    rec->tops = xcalloc((size_t)d->nmodes + 1, sizeof *rec->tops);
    for (int k = 0; k < d->nmodes; k++)
        rec->tops[k] = NAN;
    free(d->recommended_mode);
    d->recommended_mode = NULL;
    if (!d->has_code || d->nmodes == 0)
        return;
    for (int k = 0; k < d->nmodes && !rec->has_shape; k++) {
        const struct st_mode *m = &d->modes[k];
        if (m->nspeed == 0)
            continue;
        struct st_shape *shapes = xcalloc((size_t)m->nspeed, sizeof *shapes);
        for (int i = 0; i < m->nspeed; i++)
            shapes[i] = (struct st_shape){m->speed[i].b, m->speed[i].h, m->speed[i].l,
                                          m->speed[i].d, m->speed[i].causal};
        int key = st_key_shape(shapes, m->nspeed);
        rec->shape = shapes[key];
        rec->has_shape = 1;
        free(shapes);
    }
    struct st_candidate *c = xcalloc((size_t)d->nmodes, sizeof *c);
    for (int k = 0; k < d->nmodes; k++) {
        const struct st_mode *m = &d->modes[k];
        for (int i = 0; rec->has_shape && i < m->nspeed; i++)
            if (same_shape(&m->speed[i], &rec->shape))
                rec->tops[k] = m->speed[i].tops;
        c[k] = (struct st_candidate){m->mode, m->supported && m->safe, rec->tops[k]};
    }
    struct st_choice ch;
    st_choose(c, d->nmodes, rec->has_shape ? &rec->shape : NULL, &ch);
    free(c);
    rec->mode = ch.mode >= 0 ? xstrdup(d->modes[ch.mode].mode) : NULL;
    rec->runner_up = ch.runner_up >= 0 ? xstrdup(d->modes[ch.runner_up].mode) : NULL;
    rec->reason = xstrdup(ch.reason);
    d->recommended_mode = rec->mode ? xstrdup(rec->mode) : NULL;
}

int selftest_parse(const char *text, size_t len, struct selftest_report *out, char **error)
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
    out->archs = json_strdup(lib, "archs");
    out->skipped = json_strdup(root, "skipped");
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
        if (parse_device(d, &out->devices[out->ndevices++], &out->judged_here, error) < 0) {
            rc = -1;
            break;
        }
    }
    for (int i = 0; rc == 0 && i < out->ndevices; i++) {
        if (out->judged_here)
            judge_device_here(&out->devices[i]);
        recommend(&out->devices[i]);
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

static void free_strings(char **list, int n)
{
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

static void free_mode(struct st_mode *m)
{
    free_strings(m->unsafe_reasons, m->nunsafe);
    free_strings(m->goal_notes, m->ngoal_notes);
    for (int i = 0; i < m->ncases; i++) {
        free(m->cases[i].name);
        free(m->cases[i].kind);
        free(m->cases[i].family);
        free(m->cases[i].unsafe_reason);
        free(m->cases[i].error);
        free(m->cases[i].layout);
        free(m->cases[i].dtype);
    }
    free(m->cases);
    free(m->speed);
    free(m->mode);
    free(m->reason);
}

void selftest_report_free(struct selftest_report *r)
{
    for (int i = 0; i < r->ndevices; i++) {
        struct st_device *d = &r->devices[i];
        for (int k = 0; k < d->nmodes; k++)
            free_mode(&d->modes[k]);
        free(d->modes);
        free(d->name);
        free(d->cc);
        free(d->uuid);
        free(d->rec.mode);
        free(d->rec.runner_up);
        free(d->rec.reason);
        free(d->rec.tops);
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

int st_device_any_safe(const struct st_device *d)
{
    for (int k = 0; k < d->nmodes; k++)
        if (d->modes[k].supported && d->modes[k].safe)
            return 1;
    return 0;
}

int st_device_mode_index(const struct st_device *d, const char *mode)
{
    for (int k = 0; mode && k < d->nmodes; k++)
        if (d->modes[k].mode && !strcmp(d->modes[k].mode, mode))
            return k;
    return -1;
}

int selftest_exit_status(const struct selftest_report *r, int child_exit)
{
    if (r->skipped && r->ndevices == 0)
        return SB_EXIT_SKIPPED;
    int status = SB_EXIT_OK;
    for (int i = 0; i < r->ndevices; i++) {
        const struct st_device *d = &r->devices[i];
        enum st_verdict v = st_device_verdict(d);
        if (!d->has_code || d->error || v == ST_FAIL || !st_device_any_safe(d))
            status = SB_EXIT_ERROR;
        else if (v == ST_WARN && status == SB_EXIT_OK)
            status = SB_EXIT_WARN;
    }
    /* The program knows things the JSON may not say (a mode that crashed half-way): its own
     * worse status wins; 77 with devices listed is not a skip. An older program's status
     * counted missed goals, which are notes now: then the JSON alone decides. */
    if (!r->judged_here && (child_exit == SB_EXIT_WARN || child_exit == SB_EXIT_ERROR) &&
        child_exit > status)
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
