#include "st_judge.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const verdict_names[] = {"pass", "warn", "fail", "unsupported"};

const char *st_verdict_name(enum st_verdict v)
{
    return (unsigned)v < 4 ? verdict_names[v] : "fail";
}

int st_verdict_from_name(const char *name, enum st_verdict *out)
{
    for (int i = 0; name && i < 4; i++)
        if (!strcmp(name, verdict_names[i])) {
            *out = (enum st_verdict)i;
            return 0;
        }
    return -1;
}

enum st_safety st_judge_safe(const struct st_figures *f, char *why, size_t n)
{
    if (n)
        why[0] = '\0';
    if (!f->api_ok) {
        snprintf(why, n, "the library refused or failed the call");
        return ST_BROKEN;
    }
    if (!f->coverage_ok) {
        snprintf(why, n, "outputs left unwritten or written outside O");
        return ST_BROKEN;
    }
    if (f->nonfinite > 0) {
        snprintf(why, n, "%ld NaN/Inf outputs", f->nonfinite);
        return ST_BROKEN;
    }
    if (!f->lse_inf_ok) {
        snprintf(why, n, "rows without keys did not give an LSE of -inf");
        return ST_BROKEN;
    }
    if (f->finite_only)
        return ST_SAFE;
    /* NaN figures compare false both ways: !(x >= bar) catches them. */
    enum st_safety s = ST_SAFE;
    size_t used = 0;
    const char *sep = "";
    if (!(f->cos >= ST_SAFE_COS)) {
        s = f->cos >= ST_BROKEN_COS ? ST_INACCURATE : ST_BROKEN;
        used += (size_t)snprintf(why + used, used < n ? n - used : 0, "cos %.6f < %g", f->cos,
                                 ST_SAFE_COS);
        sep = ", ";
    }
    if (!(f->rel_l1 <= ST_SAFE_REL_L1)) {
        enum st_safety r = f->rel_l1 <= ST_BROKEN_REL_L1 ? ST_INACCURATE : ST_BROKEN;
        s = r > s ? r : s;
        used += (size_t)snprintf(why + (used < n ? used : n), used < n ? n - used : 0,
                                 "%srel-L1 %.4f > %g", sep, f->rel_l1, ST_SAFE_REL_L1);
        sep = ", ";
    }
    if (f->lse_err >= 0 && !(f->lse_err <= ST_SAFE_LSE_ABS)) {
        s = s == ST_SAFE ? ST_INACCURATE : s;
        snprintf(why + (used < n ? used : n), used < n ? n - used : 0, "%sLSE error %.4f > %g", sep,
                 f->lse_err, ST_SAFE_LSE_ABS);
    }
    return s;
}

int st_goal_for_mode(const char *mode, struct st_goal *out)
{
    if (!mode)
        return 0;
    if (strcmp(mode, "fp16") == 0) {
        *out = (struct st_goal){0.99999, 0.003, 0.001};
        return 1;
    }
    if (strncmp(mode, "int8-fp16", 9) == 0 && (mode[9] == '\0' || mode[9] == '-')) {
        *out = (struct st_goal){0.9999, 0.012, 0.05};
        return 1;
    }
    if (strncmp(mode, "int8-fp8", 8) == 0 && (mode[8] == '\0' || mode[8] == '-')) {
        *out = (struct st_goal){0.9992, 0.04, 0.05};
        return 1;
    }
    return 0;
}

int st_mode_is_quantized(const char *mode)
{
    return mode && strcmp(mode, "fp16") != 0;
}

int st_key_shape(const struct st_shape *s, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (best < 0) {
            best = i;
            continue;
        }
        const struct st_shape *a = &s[i], *b = &s[best];
        /* D=128 first, then non-causal, then the longest sequence. */
        int ka[3] = {a->d == 128, !a->causal, a->l}, kb[3] = {b->d == 128, !b->causal, b->l};
        for (int k = 0; k < 3; k++)
            if (ka[k] != kb[k]) {
                if (ka[k] > kb[k])
                    best = i;
                break;
            }
    }
    return best;
}

static int measured(double tops)
{
    return isfinite(tops) && tops > 0;
}

/* Appends to the reason, never past its end. */
static void say(struct st_choice *out, const char *fmt, ...)
{
    size_t used = strlen(out->reason);
    if (used + 1 >= sizeof out->reason)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason + used, sizeof out->reason - used, fmt, ap);
    va_end(ap);
}

void st_choose(const struct st_candidate *c, int n, const struct st_shape *key,
               struct st_choice *out)
{
    out->mode = out->runner_up = -1;
    out->reason[0] = '\0';
    int fp16 = -1;
    for (int i = 0; i < n; i++)
        if (c[i].mode && strcmp(c[i].mode, "fp16") == 0)
            fp16 = i;
    double base = fp16 >= 0 && measured(c[fp16].tops) ? c[fp16].tops : NAN;
    char at[64] = "";
    if (key)
        snprintf(at, sizeof at, " at L%d D%d%s", key->l, key->d, key->causal ? " causal" : "");

    /* Eligible: safe, and either fp16 itself or measured faster than fp16. */
    int eligible[64] = {0};
    for (int i = 0; i < n && i < 64; i++)
        eligible[i] = c[i].mode && c[i].safe &&
                      (i == fp16 || (measured(c[i].tops) && isfinite(base) && c[i].tops > base));
    int first = -1, second = -1;
    for (int i = 0; i < n && i < 64; i++) {
        if (!eligible[i])
            continue;
        /* fp16 without a speed figure still ranks, below every measured mode. */
        double t = measured(c[i].tops) ? c[i].tops : 0;
        double tf = first >= 0 && measured(c[first].tops) ? c[first].tops : 0;
        double ts = second >= 0 && measured(c[second].tops) ? c[second].tops : 0;
        if (first < 0 || t > tf) {
            second = first;
            first = i;
        } else if (second < 0 || t > ts) {
            second = i;
        }
    }
    out->mode = first;
    out->runner_up = second;

    if (first >= 0 && first != fp16) {
        say(out, "%s is safe and the fastest: %.2fx fp16%s (%.1f vs %.1f TOPS)", c[first].mode,
            c[first].tops / base, at, c[first].tops, base);
        if (second >= 0 && second != fp16)
            say(out, "; runner-up %s (%.2fx)", c[second].mode, c[second].tops / base);
        else if (second >= 0)
            say(out, "; runner-up fp16, the unquantized baseline");
    } else if (first >= 0) {
        int any_safe = 0;
        for (int i = 0; i < n; i++)
            any_safe |= i != fp16 && c[i].safe;
        if (!any_safe)
            say(out, "fp16: no quantized mode is safe on this GPU");
        else if (!isfinite(base))
            say(out, "fp16: no fp16 speed%s to compare the quantized modes with", at);
        else
            say(out, "fp16: no safe quantized mode is faster than fp16%s", at);
    } else if (fp16 < 0) {
        say(out, "no recommendation: fp16 was not run, so no mode can be shown faster than it");
    } else {
        say(out, "no recommendation: no mode is safe on this GPU");
    }
    /* Why each other mode lost, briefly. */
    for (int i = 0; i < n; i++) {
        if (i == first || i == second || (i == fp16 && c[i].safe) || !c[i].mode)
            continue;
        if (!c[i].safe)
            say(out, "; %s not safe", c[i].mode);
        else if (!measured(c[i].tops) || !isfinite(base))
            say(out, "; %s not measured", c[i].mode);
        else if (c[i].tops <= base)
            say(out, "; %s slower than fp16 (%.2fx)", c[i].mode, c[i].tops / base);
        else
            say(out, "; %s slower (%.2fx)", c[i].mode, c[i].tops / base);
    }
}
