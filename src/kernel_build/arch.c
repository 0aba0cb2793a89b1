#include "arch.h"
#include "util/strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* kernel-contracts.md lists what SAGEATTN_ARCHS accepts. sm_90a is buildable on request but not
 * part of `all`: the portable family is the same source, and `all` should not compile it twice
 * for one GPU. The FP8 mma.sync the kernels use on sm_89 (e4m3 m16n8k32) arrived with PTX ISA
 * 8.4, i.e. CUDA 12.4 (reference/sageattention.md; SageAttention's setup.py gates 8.9 there). */
static const struct kernel_arch table[] = {
    {"sm_80", {8, 0, '\0', 0}, 1, NULL, NULL},
    {"sm_86", {8, 6, '\0', 0}, 1, NULL, NULL},
    {"sm_89", {8, 9, '\0', 0}, 1, "12.4", "the FP8 mma.sync (e4m3) of the fast mode"},
    {"sm_90", {9, 0, '\0', 0}, 1, NULL, NULL},
    {"sm_90a", {9, 0, 'a', 0}, 0, NULL, NULL},
    {"sm_100a", {10, 0, 'a', 0}, 1, NULL, NULL},
    {"sm_120a", {12, 0, 'a', 0}, 1, NULL, NULL},
    {"sm_121a", {12, 1, 'a', 0}, 1, NULL, NULL},
};
#define NROWS ((int)(sizeof table / sizeof table[0]))

int build_arch_count(void)
{
    return NROWS;
}

const struct kernel_arch *build_arch_at(int i)
{
    return i >= 0 && i < NROWS ? &table[i] : NULL;
}

int build_arch_find(const char *spelling)
{
    struct gpu_arch a;
    if (!spelling || arch_parse(spelling, &a) < 0)
        return -1;
    int same_base = -1, nbase = 0;
    for (int i = 0; i < NROWS; i++) {
        const struct gpu_arch *t = &table[i].arch;
        if (!arch_same_base(t, &a))
            continue;
        if (t->variant == a.variant)
            return i;
        same_base = i;
        nbase++;
    }
    /* A bare "sm_120" means "code for that GPU": the table's one row for it. An explicit other
     * variant ("sm_120f") is a different target the kernels were not written for. */
    return a.variant == '\0' && nbase == 1 ? same_base : -1;
}

int build_arch_for_cc(int major, int minor)
{
    int exact_plain = -1, exact_any = -1, below = -1;
    for (int i = 0; i < NROWS; i++) {
        const struct gpu_arch *t = &table[i].arch;
        if (t->major == major && t->minor == minor) {
            if (t->variant == '\0' && exact_plain < 0)
                exact_plain = i;
            if (exact_any < 0)
                exact_any = i;
        } else if (t->variant == '\0' && t->major == major && t->minor < minor) {
            below = i; /* rows are in ascending order: the last one is the newest */
        }
    }
    if (exact_plain >= 0)
        return exact_plain;
    return exact_any >= 0 ? exact_any : below;
}

static void list_add(struct arch_list *l, int i)
{
    for (int k = 0; k < l->n; k++)
        if (l->idx[k] == i)
            return;
    int pos = l->n;
    while (pos > 0 && l->idx[pos - 1] > i) {
        l->idx[pos] = l->idx[pos - 1];
        pos--;
    }
    l->idx[pos] = i;
    l->n++;
}

static char *accepted_names(void)
{
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < NROWS; i++)
        sb_addf(&sb, "%s%s", i ? ", " : "", table[i].name);
    return sb_detach(&sb);
}

static int add_native(const struct gpu_cc *gpus, int ngpus, struct arch_list *out,
                      struct strbuf *notes, char **error)
{
    if (ngpus <= 0) {
        *error = xstrdup("--arch native: no NVIDIA GPU was found on this machine; name the "
                         "archs to build, e.g. --arch sm_120a (RTX 50) or --arch sm_89 (RTX 40)");
        return -1;
    }
    int added = 0;
    for (int g = 0; g < ngpus; g++) {
        int i = build_arch_for_cc(gpus[g].major, gpus[g].minor);
        if (i < 0) {
            sb_addf(notes,
                    "GPU %d (compute capability %d.%d) has no code in the kernels (they need "
                    "8.0 or newer, from the archs they know)\n",
                    g, gpus[g].major, gpus[g].minor);
            continue;
        }
        list_add(out, i);
        added++;
        if (gpus[g].major == 9 && gpus[g].minor == 0)
            sb_addf(notes,
                    "GPU %d (9.0): building the portable sm_90 code; add sm_90a to --arch "
                    "for Hopper-specific code\n",
                    g);
    }
    if (!added) {
        *error = xstrdup("--arch native: none of this machine's GPUs is one the kernels can be "
                         "built for (compute capability 8.0 or newer)");
        return -1;
    }
    return 0;
}

int build_arch_parse_spec(const char *spec, const struct gpu_cc *gpus, int ngpus,
                          struct arch_list *out, char **notes, char **error)
{
    memset(out, 0, sizeof *out);
    *error = NULL;
    struct strbuf nb = STRBUF_INIT;
    char *copy = xstrdup(spec ? spec : "");
    int rc = 0, tokens = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",; \t\n", &save); tok && rc == 0;
         tok = strtok_r(NULL, ",; \t\n", &save)) {
        tokens++;
        for (char *p = tok; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        if (!strcmp(tok, "all")) {
            for (int i = 0; i < NROWS; i++)
                if (table[i].in_all)
                    list_add(out, i);
        } else if (!strcmp(tok, "native")) {
            rc = add_native(gpus, ngpus, out, &nb, error);
        } else {
            int i = build_arch_find(tok);
            if (i < 0) {
                char *names = accepted_names();
                *error = xasprintf("unknown or unsupported arch '%s'; the kernels are built for: "
                                   "%s (or 'native', 'all')",
                                   tok, names);
                free(names);
                rc = -1;
            } else {
                list_add(out, i);
            }
        }
    }
    free(copy);
    if (rc == 0 && tokens == 0) {
        *error = xstrdup("--arch is empty; give e.g. sm_120a, native or all");
        rc = -1;
    }
    if (rc < 0) {
        sb_free(&nb);
        memset(out, 0, sizeof *out);
        return -1;
    }
    *notes = nb.len ? sb_detach(&nb) : NULL;
    return 0;
}

/* The oldest nvcc release that builds row i: nvcc's own floor raised by the kernels' gate. */
static int row_floor(int i, struct version *out)
{
    struct version need = {{0}, 0};
    int have = arch_min_nvcc(&table[i].arch, &need) == 0;
    struct version gate;
    if (table[i].kernel_gate && version_parse_strict(table[i].kernel_gate, &gate) == 0 &&
        (!have || version_cmp_n(&gate, &need, 2) > 0)) {
        need = gate;
        have = 1;
    }
    if (have)
        *out = need;
    return have ? 0 : -1;
}

char *build_arch_refusal(int i, const struct version *nvcc_release, const char *const *listed,
                         size_t nlisted)
{
    if (i < 0 || i >= NROWS)
        return xstrdup("unknown arch");
    char *why = arch_nvcc_refusal(&table[i].arch, nvcc_release, listed, nlisted);
    if (why)
        return why;
    struct version gate;
    if (table[i].kernel_gate && nvcc_release && nvcc_release->nparts > 0 &&
        version_parse_strict(table[i].kernel_gate, &gate) == 0 &&
        version_cmp_n(nvcc_release, &gate, 2) < 0) {
        char nb[32];
        return xasprintf("%s needs nvcc >= %s for %s; this nvcc is %s", table[i].name,
                         table[i].kernel_gate, table[i].why_gate,
                         version_str(nvcc_release, nb, sizeof nb));
    }
    return NULL;
}

char *build_arch_fix(int i, const struct version *nvcc_release, const struct arch_list *buildable)
{
    struct strbuf sb = STRBUF_INIT;
    struct version need, dropped;
    char vb[32];
    if (i < 0 || i >= NROWS)
        return xstrdup("pass archs from the kernels' table");
    if (nvcc_release && arch_dropped_in(&table[i].arch, &dropped) == 0 &&
        version_cmp_n(nvcc_release, &dropped, 2) >= 0) {
        sb_addf(&sb,
                "use an older toolkit for %s: sagebuild fetch-cuda --cuda 12.9, then "
                "sagebuild build --cuda-home <its prefix>",
                table[i].name);
    } else if (row_floor(i, &need) == 0) {
        sb_addf(&sb,
                "use nvcc >= %s: sagebuild fetch-cuda --cuda %s, then sagebuild build "
                "--cuda-home <its prefix>",
                version_str(&need, vb, sizeof vb), vb);
    } else {
        sb_addf(&sb, "use a newer CUDA toolkit (sagebuild fetch-cuda)");
    }
    if (buildable && buildable->n > 0) {
        char *ok = build_arch_join(buildable, ",");
        sb_addf(&sb, "; or build only what this nvcc can: --arch %s", ok);
        free(ok);
    }
    return sb_detach(&sb);
}

char *build_arch_join(const struct arch_list *l, const char *sep)
{
    struct strbuf sb = STRBUF_INIT;
    for (int k = 0; k < l->n; k++)
        sb_addf(&sb, "%s%s", k ? sep : "", table[l->idx[k]].name);
    return sb_detach(&sb);
}
