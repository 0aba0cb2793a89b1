#include "ptxas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 'NAME' after key in line, copied into out (cut to cap); 1 when found. */
static int quoted_after(const char *line, size_t len, const char *key, char *out, size_t cap)
{
    const char *k = NULL;
    size_t kl = strlen(key);
    for (const char *p = line; p + kl <= line + len && !k; p++)
        if (!strncmp(p, key, kl))
            k = p + kl;
    if (!k)
        return 0;
    const char *end = memchr(k, '\'', (size_t)(line + len - k));
    if (!end)
        return 0;
    size_t n = (size_t)(end - k);
    if (n >= cap)
        n = cap - 1;
    memcpy(out, k, n);
    out[n] = '\0';
    return 1;
}

/* The number before " label" in line ("128 registers", "24 bytes spill stores"); -1 if none. */
static long long number_before(const char *line, size_t len, const char *label)
{
    size_t ll = strlen(label);
    for (const char *p = line; p + ll <= line + len; p++) {
        if (strncmp(p, label, ll) || p == line || p[-1] != ' ')
            continue;
        const char *q = p - 1;
        while (q > line && q[-1] >= '0' && q[-1] <= '9')
            q--;
        if (q == p - 1)
            continue;
        return strtoll(q, NULL, 10);
    }
    return -1;
}

int ptxas_summarize(const char *log, size_t len, struct ptxas_summary *s)
{
    memset(s, 0, sizeof *s);
    char entry[160] = "", arch[32] = "";
    long long worst_bytes = 0;
    int any = 0;
    for (const char *line = log; log && line < log + len;) {
        const char *nl = memchr(line, '\n', (size_t)(log + len - line));
        size_t l = nl ? (size_t)(nl - line) : (size_t)(log + len - line);
        char name[160];
        if (quoted_after(line, l, "Compiling entry function '", name, sizeof name)) {
            any = 1;
            s->kernels++;
            memcpy(entry, name, sizeof entry);
            if (!quoted_after(line, l, "' for '", arch, sizeof arch))
                arch[0] = '\0';
        } else {
            long long regs = number_before(line, l, "registers");
            if (regs > s->max_registers)
                s->max_registers = (int)regs;
            long long st = number_before(line, l, "bytes spill stores");
            long long ld = number_before(line, l, "bytes spill loads");
            if (st > 0 || ld > 0) {
                st = st > 0 ? st : 0;
                ld = ld > 0 ? ld : 0;
                s->functions_spilling++;
                s->spill_stores += st;
                s->spill_loads += ld;
                if (st + ld > worst_bytes) {
                    worst_bytes = st + ld;
                    snprintf(s->worst, sizeof s->worst,
                             "%s (%s): %lld bytes spill stores, %lld bytes spill loads", entry,
                             arch[0] ? arch : "?", st, ld);
                }
            }
        }
        line = nl ? nl + 1 : log + len;
    }
    if (!any)
        memset(s, 0, sizeof *s);
    return any;
}
