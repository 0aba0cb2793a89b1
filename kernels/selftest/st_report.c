#include "st_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sageattn.h"

void st_summarize_mode(struct st_mode_out *m, const char *stopped)
{
    m->safe = 0;
    m->goal = -1;
    m->worst_cos = 1.0;
    m->worst_rel_l1 = 0.0;
    m->nan_or_inf = 0;
    if (!m->supported) {
        m->verdict = ST_UNSUPPORTED;
        snprintf(m->unsafe_why, sizeof m->unsafe_why, "not supported: %s", m->reason);
        return;
    }
    struct st_bar goal;
    int has_goal = st_bar_for_name(sageattn_mode_name((sageattn_mode)m->mode), &goal);
    double worst_random_rel = 0.0;
    for (size_t i = 0; i < m->ncases; i++)
        if (m->cases[i].c.kind == ST_RANDOM && m->cases[i].r.api_ok)
            worst_random_rel = fmax(worst_random_rel, m->cases[i].r.rel_l1);
    enum st_safety worst = ST_SAFE;
    int judged = 0, goal_met = 1;
    for (size_t i = 0; i < m->ncases; i++) {
        struct st_case_out *c = &m->cases[i];
        if (has_goal)
            goal_met &= st_judge_case(&goal, &c->c, &c->r, worst_random_rel) == ST_PASS;
        c->safety = ST_SAFE;
        c->unsafe_why[0] = '\0';
        if (c->r.skipped)
            continue;
        judged++;
        struct st_figures f = {c->r.api_ok,     c->r.coverage_ok,
                               c->r.nonfinite,  c->r.cos,
                               c->r.rel_l1,     c->c.lse ? c->r.lse_err : -1.0,
                               c->r.lse_inf_ok, c->c.kind == ST_QK_NEAR_LIMIT};
        c->safety = st_judge_safe(&f, c->unsafe_why, sizeof c->unsafe_why);
        if (c->safety > worst)
            worst = c->safety;
        m->nan_or_inf |= c->r.nonfinite > 0;
        if (c->r.api_ok && c->c.kind != ST_QK_NEAR_LIMIT) {
            m->worst_cos = fmin(m->worst_cos, c->r.cos);
            m->worst_rel_l1 = fmax(m->worst_rel_l1, c->r.rel_l1);
        }
    }
    m->goal = has_goal ? goal_met : -1;
    m->unsafe_why[0] = '\0';
    if (stopped && *stopped) {
        snprintf(m->unsafe_why, sizeof m->unsafe_why, "the tests stopped early: %s", stopped);
        worst = ST_BROKEN;
    } else if (judged == 0) {
        snprintf(m->unsafe_why, sizeof m->unsafe_why,
                 "no case ran (every head dim it tried is left out of this build)");
        worst = worst > ST_INACCURATE ? worst : ST_INACCURATE;
    }
    m->safe = worst == ST_SAFE;
    m->verdict = worst == ST_SAFE ? ST_PASS : worst == ST_INACCURATE ? ST_WARN : ST_FAIL;
}

void st_judge_device(struct st_device_out *d)
{
    d->recommended = d->runner_up = d->key_speed = -1;
    d->reason[0] = '\0';
    for (int i = 0; i < d->nmodes; i++)
        st_summarize_mode(&d->modes[i], d->error);
    if (!d->has_code || d->nmodes == 0)
        return;
    /* The speed shapes are the same for every mode that ran: take them from the first. */
    struct st_shape shapes[ST_MAX_SPEED];
    int nshapes = 0;
    for (int i = 0; i < d->nmodes && nshapes == 0; i++)
        for (size_t s = 0; s < d->modes[i].nspeed && s < ST_MAX_SPEED; s++) {
            const struct st_speed_shape *sh = &d->modes[i].speed[s].s;
            shapes[nshapes++] = (struct st_shape){sh->b, sh->h, sh->l, sh->d, sh->causal};
        }
    d->key_speed = st_key_shape(shapes, nshapes);
    struct st_candidate cand[8];
    int n = d->nmodes < 8 ? d->nmodes : 8;
    for (int i = 0; i < n; i++) {
        const struct st_mode_out *m = &d->modes[i];
        int k = d->key_speed;
        cand[i].mode = sageattn_mode_name((sageattn_mode)m->mode);
        cand[i].safe = m->safe;
        cand[i].tops = k >= 0 && (size_t)k < m->nspeed && m->speed[k].ok ? m->speed[k].tops : NAN;
    }
    struct st_choice ch;
    st_choose(cand, n, d->key_speed >= 0 ? &shapes[d->key_speed] : NULL, &ch);
    d->recommended = ch.mode >= 0 ? d->modes[ch.mode].mode : -1;
    d->runner_up = ch.runner_up >= 0 ? d->modes[ch.runner_up].mode : -1;
    snprintf(d->reason, sizeof d->reason, "%s", ch.reason);
}

int st_exit_code(const struct st_report *r)
{
    if (r->skipped)
        return 77;
    int code = 0;
    for (int i = 0; i < r->ndevices; i++) {
        const struct st_device_out *d = &r->devices[i];
        if (!d->has_code || d->error[0])
            return 2;
        int any_safe = 0;
        for (int k = 0; k < d->nmodes; k++) {
            if (d->modes[k].verdict == ST_FAIL)
                return 2;
            if (d->modes[k].verdict == ST_WARN)
                code = 1;
            any_safe |= d->modes[k].safe;
        }
        if (!any_safe)
            return 2;
    }
    return code;
}

static void json_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.9g", x);
    else
        fputs("null", f);
}

static const char *bool_str(int b)
{
    return b ? "true" : "false";
}

/* A goal note for a case that missed its mode's goal: the figures against the limits. */
static void goal_note(char *out, size_t n, const struct st_case_out *c)
{
    if (!c->r.api_ok || !c->r.coverage_ok || c->r.nonfinite > 0)
        snprintf(out, n, "%s: no usable output", c->c.name);
    else
        snprintf(out, n, "%s: cos %.6f rel-L1 %.4f (goal cos >= %.6g, rel-L1 <= %.4g)", c->c.name,
                 c->r.cos, c->r.rel_l1, c->r.goal_cos, c->r.goal_rel_l1);
}

static void json_case(FILE *f, const struct st_case_out *co)
{
    const struct st_case *c = &co->c;
    fputs("{\"name\":", f);
    json_str(f, c->name);
    fprintf(f,
            ",\"kind\":\"%s\",\"family\":\"%s\",\"b\":%d,\"hq\":%d,\"hkv\":%d,\"lq\":%d,"
            "\"lkv\":%d,\"d\":%d",
            c->kind == ST_RANDOM ? "random" : "adversarial", st_kind_name(c->kind), c->b, c->hq,
            c->hkv, c->lq, c->lkv, c->d);
    fprintf(f, ",\"causal\":%s,\"layout\":\"%s\",\"dtype\":\"%s\",\"cos\":", bool_str(c->causal),
            c->nhd ? "NHD" : "HND", c->bf16 ? "bf16" : "fp16");
    json_num(f, co->r.api_ok ? co->r.cos : NAN);
    fputs(",\"rel_l1\":", f);
    json_num(f, co->r.api_ok ? co->r.rel_l1 : NAN);
    fputs(",\"max_abs\":", f);
    json_num(f, co->r.api_ok ? co->r.max_abs : NAN);
    fputs(",\"lse_max_err\":", f);
    json_num(f, c->lse && co->r.lse_err >= 0 ? co->r.lse_err : NAN);
    fprintf(f, ",\"nonfinite\":%ld,\"coverage_ok\":%s,\"pass\":%s,\"safe\":%s,\"unsafe_reason\":",
            co->r.nonfinite, bool_str(co->r.coverage_ok), bool_str(co->r.pass),
            bool_str(!co->r.skipped && co->safety == ST_SAFE));
    json_str(f, co->safety != ST_SAFE ? co->unsafe_why : NULL);
    fprintf(f, ",\"skipped\":%s,\"error\":", bool_str(co->r.skipped));
    json_str(f, co->error[0] ? co->error : NULL);
    fputc('}', f);
}

static void json_judgements(FILE *f, const struct st_mode_out *m)
{
    fprintf(f, ",\"safe\":%s,\"unsafe_reasons\":[", bool_str(m->safe));
    int n = 0;
    if (m->unsafe_why[0]) {
        json_str(f, m->unsafe_why);
        n++;
    }
    for (size_t i = 0; i < m->ncases; i++) {
        const struct st_case_out *c = &m->cases[i];
        if (c->r.skipped || c->safety == ST_SAFE)
            continue;
        char line[300];
        snprintf(line, sizeof line, "%s: %s", c->c.name, c->unsafe_why);
        fputs(n++ ? "," : "", f);
        json_str(f, line);
    }
    fprintf(f, "],\"goal\":\"%s\",\"goal_notes\":[",
            m->goal < 0 ? "none"
            : m->goal   ? "met"
                        : "missed");
    n = 0;
    for (size_t i = 0; m->goal == 0 && i < m->ncases; i++) {
        const struct st_case_out *c = &m->cases[i];
        if (c->r.pass || c->r.skipped)
            continue;
        char line[300];
        goal_note(line, sizeof line, c);
        fputs(n++ ? "," : "", f);
        json_str(f, line);
    }
    fputc(']', f);
}

static void json_mode(FILE *f, const struct st_mode_out *m)
{
    fprintf(f, "{\"mode\":\"%s\",\"supported\":%s,\"reason\":", sageattn_mode_name(m->mode),
            bool_str(m->supported));
    json_str(f, m->supported ? NULL : m->reason);
    fprintf(f, ",\"verdict\":\"%s\"", st_verdict_name(m->verdict));
    json_judgements(f, m);
    if (!m->supported) {
        fputs(",\"accuracy\":null,\"speed\":[]}", f);
        return;
    }
    fputs(",\"accuracy\":{\"worst_cos\":", f);
    json_num(f, m->worst_cos);
    fputs(",\"worst_rel_l1\":", f);
    json_num(f, m->worst_rel_l1);
    fprintf(f, ",\"nan_or_inf\":%s,\"bar\":", bool_str(m->nan_or_inf));
    struct st_bar bar;
    if (st_bar_for_name(sageattn_mode_name((sageattn_mode)m->mode), &bar))
        fprintf(f, "{\"cos\":%g,\"rel_l1\":%g}", bar.cos, bar.rel_l1);
    else
        fputs("null", f);
    fprintf(f, ",\"safe_bar\":{\"cos\":%g,\"rel_l1\":%g,\"lse_abs\":%g},\"cases\":[", ST_SAFE_COS,
            ST_SAFE_REL_L1, ST_SAFE_LSE_ABS);
    for (size_t i = 0; i < m->ncases; i++) {
        if (i)
            fputc(',', f);
        json_case(f, &m->cases[i]);
    }
    fputs("]},\"speed\":[", f);
    for (size_t i = 0; i < m->nspeed; i++) {
        const struct st_speed_out *s = &m->speed[i];
        fprintf(f, "%s{\"b\":%d,\"h\":%d,\"l\":%d,\"d\":%d,\"causal\":%s,\"ms\":", i ? "," : "",
                s->s.b, s->s.h, s->s.l, s->s.d, bool_str(s->s.causal));
        json_num(f, s->ok ? s->ms : NAN);
        fputs(",\"tops\":", f);
        json_num(f, s->ok ? s->tops : NAN);
        fputs(",\"speedup_vs_fp16\":", f);
        json_num(f, s->ok && s->speedup_vs_fp16 > 0 ? s->speedup_vs_fp16 : NAN);
        fputc('}', f);
    }
    fputs("]}", f);
}

static const char *mode_or_null(int mode)
{
    return mode >= 0 ? sageattn_mode_name((sageattn_mode)mode) : NULL;
}

static void json_recommended(FILE *f, const struct st_device_out *d)
{
    fputs(",\"recommended_mode\":", f);
    json_str(f, mode_or_null(d->recommended));
    if (!d->has_code) {
        fputs(",\"recommended\":null", f);
        return;
    }
    fputs(",\"recommended\":{\"mode\":", f);
    json_str(f, mode_or_null(d->recommended));
    fputs(",\"runner_up\":", f);
    json_str(f, mode_or_null(d->runner_up));
    fputs(",\"reason\":", f);
    json_str(f, d->reason);
    fputs(",\"shape\":", f);
    const struct st_speed_shape *key = NULL;
    for (int k = 0; k < d->nmodes && !key && d->key_speed >= 0; k++)
        if ((size_t)d->key_speed < d->modes[k].nspeed)
            key = &d->modes[k].speed[d->key_speed].s;
    if (key)
        fprintf(f, "{\"b\":%d,\"h\":%d,\"l\":%d,\"d\":%d,\"causal\":%s}", key->b, key->h, key->l,
                key->d, bool_str(key->causal));
    else
        fputs("null", f);
    fputs(",\"tops\":{", f);
    for (int k = 0, n = 0; k < d->nmodes; k++) {
        const struct st_mode_out *m = &d->modes[k];
        if (!m->supported)
            continue;
        fprintf(f, "%s\"%s\":", n++ ? "," : "", sageattn_mode_name((sageattn_mode)m->mode));
        json_num(f,
                 d->key_speed >= 0 && (size_t)d->key_speed < m->nspeed && m->speed[d->key_speed].ok
                     ? m->speed[d->key_speed].tops
                     : NAN);
    }
    fputs("}}", f);
}

void st_write_json(FILE *f, const struct st_report *r)
{
    fprintf(f, "{\"schema\":1,\"library\":{\"abi\":%d,\"archs\":", r->abi);
    json_str(f, r->archs);
    fputs("},\"skipped\":", f);
    json_str(f, r->skipped);
    fputs(",\"devices\":[", f);
    for (int i = 0; i < r->ndevices; i++) {
        const struct st_device_out *d = &r->devices[i];
        fprintf(f, "%s{\"index\":%d,\"name\":", i ? "," : "", d->index);
        json_str(f, d->name);
        fprintf(f, ",\"cc\":\"%d.%d\",\"uuid\":", d->cc / 10, d->cc % 10);
        json_str(f, d->uuid[0] ? d->uuid : NULL);
        fprintf(f, ",\"has_code\":%s,\"build_hint\":", bool_str(d->has_code));
        json_str(f, d->build_hint[0] ? d->build_hint : NULL);
        fputs(",\"error\":", f);
        json_str(f, d->error[0] ? d->error : NULL);
        fputs(",\"modes\":[", f);
        for (int k = 0; k < d->nmodes; k++) {
            if (k)
                fputc(',', f);
            json_mode(f, &d->modes[k]);
        }
        fputc(']', f);
        json_recommended(f, d);
        fputc('}', f);
    }
    fputs("]}\n", f);
}

static void table_mode(FILE *f, const struct st_device_out *d, const struct st_mode_out *m)
{
    const char *name = sageattn_mode_name((sageattn_mode)m->mode);
    if (!m->supported) {
        fprintf(f, "  %-10s unsupported: %s\n", name, m->reason);
        return;
    }
    fprintf(f, "  %-10s %-4s %-6s %10.6f %8.4f", name, m->safe ? "yes" : "NO",
            m->goal < 0 ? "-"
            : m->goal   ? "met"
                        : "missed",
            m->worst_cos, m->worst_rel_l1);
    const struct st_speed_out *s =
        d->key_speed >= 0 && (size_t)d->key_speed < m->nspeed ? &m->speed[d->key_speed] : NULL;
    if (s && s->ok) {
        fprintf(f, " %8.1f", s->tops);
        if (s->speedup_vs_fp16 > 0)
            fprintf(f, " %7.2fx", s->speedup_vs_fp16);
    }
    fprintf(f, "%s\n", m->nan_or_inf ? "  NaN/Inf!" : "");
    if (m->unsafe_why[0] && m->supported)
        fprintf(f, "      not safe: %s\n", m->unsafe_why);
    for (size_t i = 0; i < m->ncases; i++) {
        const struct st_case_out *c = &m->cases[i];
        if (c->r.skipped)
            fprintf(f, "      %-36s skipped: %s\n", c->c.name, c->error);
        else if (!c->r.api_ok)
            fprintf(f, "      %-36s error: %s\n", c->c.name, c->error);
        else if (c->safety != ST_SAFE)
            fprintf(f, "      %-36s not safe: %s\n", c->c.name, c->unsafe_why);
        else if (!c->r.pass) {
            char line[300];
            goal_note(line, sizeof line, c);
            fprintf(f, "      goal note: %s\n", line);
        }
    }
}

void st_write_table(FILE *f, const struct st_report *r)
{
    fprintf(f, "libsageattn ABI %d, built for %s\n", r->abi, r->archs);
    if (r->skipped) {
        fprintf(f, "skipped: %s\n", r->skipped);
        return;
    }
    for (int i = 0; i < r->ndevices; i++) {
        const struct st_device_out *d = &r->devices[i];
        fprintf(f, "\nGPU %d: %s (compute capability %d.%d)\n", d->index, d->name, d->cc / 10,
                d->cc % 10);
        if (!d->has_code) {
            if (d->build_hint[0])
                fprintf(f, "  no code for this GPU in the library: run  %s\n", d->build_hint);
            else
                fprintf(f, "  no code for this GPU in the library, and the kernels have no arch "
                           "for it\n");
            continue;
        }
        if (d->error[0])
            fprintf(f, "  stopped: %s\n", d->error);
        fprintf(f, "  %-10s %-4s %-6s %10s %8s %8s %8s   (safe: cos >= %g, rel-L1 <= %g)\n", "mode",
                "safe", "goal", "worst cos", "rel-L1", "TOPS", "vs fp16", ST_SAFE_COS,
                ST_SAFE_REL_L1);
        for (int k = 0; k < d->nmodes; k++)
            table_mode(f, d, &d->modes[k]);
        for (int k = 0; k < d->nmodes; k++) {
            const struct st_mode_out *m = &d->modes[k];
            for (size_t s = 0; s < m->nspeed; s++)
                if (m->speed[s].ok)
                    fprintf(f, "    speed %-9s B%d H%d L%d D%d%s: %.3f ms, %.0f TOPS\n",
                            sageattn_mode_name((sageattn_mode)m->mode), m->speed[s].s.b,
                            m->speed[s].s.h, m->speed[s].s.l, m->speed[s].s.d,
                            m->speed[s].s.causal ? " causal" : "", m->speed[s].ms,
                            m->speed[s].tops);
        }
        fprintf(f, "  recommended mode: %s (%s)\n",
                d->recommended >= 0 ? sageattn_mode_name((sageattn_mode)d->recommended) : "none",
                d->reason);
    }
}
