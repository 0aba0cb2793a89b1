#include "st_report.h"

#include <math.h>
#include <string.h>

#include "sageattn.h"

void st_summarize_mode(struct st_mode_out *m)
{
    if (!m->supported) {
        m->verdict = ST_UNSUPPORTED;
        return;
    }
    double worst_random_rel = 0.0;
    for (size_t i = 0; i < m->ncases; i++)
        if (m->cases[i].c.kind == ST_RANDOM && m->cases[i].r.api_ok)
            worst_random_rel = fmax(worst_random_rel, m->cases[i].r.rel_l1);
    m->verdict = ST_PASS;
    m->worst_cos = 1.0;
    m->worst_rel_l1 = 0.0;
    m->nan_or_inf = 0;
    for (size_t i = 0; i < m->ncases; i++) {
        struct st_case_out *c = &m->cases[i];
        enum st_verdict v = st_judge_case(m->mode, &c->c, &c->r, worst_random_rel);
        if (v > m->verdict)
            m->verdict = v;
        m->nan_or_inf |= c->r.nonfinite > 0;
        if (c->r.api_ok && c->c.kind != ST_QK_NEAR_LIMIT) {
            m->worst_cos = fmin(m->worst_cos, c->r.cos);
            m->worst_rel_l1 = fmax(m->worst_rel_l1, c->r.rel_l1);
        }
    }
}

int st_recommend(const struct st_device_out *d)
{
    for (int want = ST_PASS; want <= ST_WARN; want++) {
        int best = -1;
        double best_speed = -1.0;
        for (int i = 0; i < d->nmodes; i++) {
            const struct st_mode_out *m = &d->modes[i];
            if ((int)m->verdict != want)
                continue;
            double speed = m->nspeed > 0 && m->speed[0].ok ? m->speed[0].tops : 0.0;
            if (speed > best_speed) {
                best_speed = speed;
                best = m->mode;
            }
        }
        if (best >= 0)
            return best;
    }
    return -1;
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
        for (int k = 0; k < d->nmodes; k++) {
            if (d->modes[k].verdict == ST_FAIL)
                return 2;
            if (d->modes[k].verdict == ST_WARN)
                code = 1;
        }
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

static void json_case(FILE *f, const struct st_case_out *co)
{
    const struct st_case *c = &co->c;
    fputs("{\"name\":", f);
    json_str(f, c->name);
    fprintf(f, ",\"kind\":\"%s\",\"b\":%d,\"hq\":%d,\"hkv\":%d,\"lq\":%d,\"lkv\":%d,\"d\":%d",
            c->kind == ST_RANDOM ? "random" : "adversarial", c->b, c->hq, c->hkv, c->lq, c->lkv,
            c->d);
    fprintf(f, ",\"causal\":%s,\"layout\":\"%s\",\"dtype\":\"%s\",\"cos\":", bool_str(c->causal),
            c->nhd ? "NHD" : "HND", c->bf16 ? "bf16" : "fp16");
    json_num(f, co->r.api_ok ? co->r.cos : NAN);
    fputs(",\"rel_l1\":", f);
    json_num(f, co->r.api_ok ? co->r.rel_l1 : NAN);
    fputs(",\"max_abs\":", f);
    json_num(f, co->r.api_ok ? co->r.max_abs : NAN);
    fputs(",\"lse_max_err\":", f);
    json_num(f, c->lse && co->r.lse_err >= 0 ? co->r.lse_err : NAN);
    fprintf(f, ",\"nonfinite\":%ld,\"coverage_ok\":%s,\"pass\":%s,\"skipped\":%s,\"error\":",
            co->r.nonfinite, bool_str(co->r.coverage_ok), bool_str(co->r.pass),
            bool_str(co->r.skipped));
    json_str(f, co->error[0] ? co->error : NULL);
    fputc('}', f);
}

static void json_mode(FILE *f, const struct st_mode_out *m)
{
    fprintf(f, "{\"mode\":\"%s\",\"supported\":%s,\"reason\":", sageattn_mode_name(m->mode),
            bool_str(m->supported));
    json_str(f, m->supported ? NULL : m->reason);
    fprintf(f, ",\"verdict\":\"%s\"", st_verdict_name(m->verdict));
    if (!m->supported) {
        fputs(",\"accuracy\":null,\"speed\":[]}", f);
        return;
    }
    struct st_bar bar = st_bar_for_mode(m->mode);
    fputs(",\"accuracy\":{\"worst_cos\":", f);
    json_num(f, m->worst_cos);
    fputs(",\"worst_rel_l1\":", f);
    json_num(f, m->worst_rel_l1);
    fprintf(f, ",\"nan_or_inf\":%s,\"bar\":{\"cos\":%g,\"rel_l1\":%g},\"cases\":[",
            bool_str(m->nan_or_inf), bar.cos, bar.rel_l1);
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
        fprintf(f, ",\"cc\":\"%d.%d\",\"has_code\":%s,\"build_hint\":", d->cc / 10, d->cc % 10,
                bool_str(d->has_code));
        json_str(f, d->build_hint[0] ? d->build_hint : NULL);
        fputs(",\"error\":", f);
        json_str(f, d->error[0] ? d->error : NULL);
        fputs(",\"modes\":[", f);
        for (int k = 0; k < d->nmodes; k++) {
            if (k)
                fputc(',', f);
            json_mode(f, &d->modes[k]);
        }
        fputs("],\"recommended_mode\":", f);
        json_str(f, d->recommended >= 0 ? sageattn_mode_name(d->recommended) : NULL);
        fputc('}', f);
    }
    fputs("]}\n", f);
}

static void table_mode(FILE *f, const struct st_mode_out *m)
{
    if (!m->supported) {
        fprintf(f, "  %-10s unsupported: %s\n", sageattn_mode_name(m->mode), m->reason);
        return;
    }
    fprintf(f, "  %-10s %-5s worst cos %.6f  worst rel-L1 %.4f%s", sageattn_mode_name(m->mode),
            st_verdict_name(m->verdict), m->worst_cos, m->worst_rel_l1,
            m->nan_or_inf ? "  NaN/Inf!" : "");
    if (m->nspeed > 0 && m->speed[0].ok) {
        fprintf(f, "  %.0f TOPS", m->speed[0].tops);
        if (m->speed[0].speedup_vs_fp16 > 0)
            fprintf(f, " (%.2fx fp16)", m->speed[0].speedup_vs_fp16);
    }
    fputc('\n', f);
    for (size_t i = 0; i < m->ncases; i++) {
        const struct st_case_out *c = &m->cases[i];
        if (c->r.pass)
            continue;
        fprintf(f, "      %-36s ", c->c.name);
        if (c->r.skipped)
            fprintf(f, "skipped: %s\n", c->error);
        else if (!c->r.api_ok)
            fprintf(f, "error: %s\n", c->error);
        else
            fprintf(f, "cos %.6f rel-L1 %.4f%s%s\n", c->r.cos, c->r.rel_l1,
                    c->r.coverage_ok ? "" : " coverage!", c->r.nonfinite ? " NaN/Inf!" : "");
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
            fprintf(f, "  no code for this GPU in the library: run  %s\n", d->build_hint);
            continue;
        }
        if (d->error[0])
            fprintf(f, "  stopped: %s\n", d->error);
        for (int k = 0; k < d->nmodes; k++)
            table_mode(f, &d->modes[k]);
        for (int k = 0; k < d->nmodes; k++) {
            const struct st_mode_out *m = &d->modes[k];
            for (size_t s = 0; s < m->nspeed; s++)
                if (m->speed[s].ok)
                    fprintf(f, "    speed %-9s B%d H%d L%d D%d%s: %.3f ms, %.0f TOPS\n",
                            sageattn_mode_name(m->mode), m->speed[s].s.b, m->speed[s].s.h,
                            m->speed[s].s.l, m->speed[s].s.d, m->speed[s].s.causal ? " causal" : "",
                            m->speed[s].ms, m->speed[s].tops);
        }
        fprintf(f, "  recommended mode: %s\n",
                d->recommended >= 0 ? sageattn_mode_name(d->recommended) : "none");
    }
}
