#include "arch.h"
#include "../../kernels/archs/sa_archs.h"
#include "util/strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernels' archs are the rows of kernels/archs/archs.def that have kernel families; a row's
 * index in that table is its index here (so lists keep the table's order). */
const struct sa_arch *build_arch_at(int i)
{
    const struct sa_arch *r = sa_arch_at(i);
    return sa_arch_has_kernels(r) ? r : NULL;
}

static struct gpu_arch row_arch(const struct sa_arch *r)
{
    struct gpu_arch a = {r->major, r->minor, r->variant, 0};
    return a;
}

int build_arch_find(const char *spelling)
{
    struct gpu_arch a;
    if (!spelling || arch_parse(spelling, &a) < 0)
        return -1;
    int same_base = -1, nbase = 0;
    for (int i = 0; i < sa_arch_count(); i++) {
        if (!build_arch_at(i))
            continue;
        struct gpu_arch t = row_arch(build_arch_at(i));
        if (!arch_same_base(&t, &a))
            continue;
        if (t.variant == a.variant)
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
    return sa_arch_kernels_for_cc(major, minor);
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
    for (int i = 0; i < sa_arch_count(); i++)
        if (build_arch_at(i))
            sb_addf(&sb, "%s%s", sb.len ? ", " : "", build_arch_at(i)->name);
    return sb_detach(&sb);
}

/* The short product name the table gives arch `name` ("RTX 50" for sm_120a) into out[n]; ""
 * when it names none. */
static const char *short_products(const char *name, char *out, size_t n)
{
    const struct sa_arch *r = sa_arch_at(sa_arch_index(name));
    out[0] = '\0';
    if (r)
        sa_arch_short_products(r, out, n);
    return out;
}

/* The archs the hints name, most wanted first: RTX 50, RTX 40, Hopper. */
static const char *const example_archs[] = {"sm_120a", "sm_89", "sm_90"};
#define NEXAMPLES (sizeof example_archs / sizeof example_archs[0])

char *build_arch_examples(const char *command, const char *tail)
{
    struct strbuf sb = STRBUF_INIT;
    char pn[64];
    sb_addf(&sb, "%s%s   (%s", command, example_archs[0],
            short_products(example_archs[0], pn, sizeof pn));
    for (size_t k = 1; k < NEXAMPLES; k++)
        sb_addf(&sb, "; %s: %s", example_archs[k], short_products(example_archs[k], pn, sizeof pn));
    sb_addf(&sb, "%s)", tail ? tail : "");
    return sb_detach(&sb);
}

/* The oldest compute capability the kernels have a row for, "8.0". */
static void oldest_cc(char *out, size_t n)
{
    for (int i = 0; i < sa_arch_count(); i++)
        if (build_arch_at(i)) {
            snprintf(out, n, "%d.%d", build_arch_at(i)->major, build_arch_at(i)->minor);
            return;
        }
    snprintf(out, n, "?");
}

/* A kernel row of the same compute capability as row i with families row i lacks (sm_90a
 * beside sm_90: the Hopper kernel, the one such family, hence the note's wording); -1 when
 * none. */
static int richer_sibling(int i)
{
    const struct sa_arch *r = build_arch_at(i);
    for (int j = 0; r && j < sa_arch_count(); j++) {
        const struct sa_arch *s = build_arch_at(j);
        if (j != i && s && s->major == r->major && s->minor == r->minor &&
            (s->families & ~r->families))
            return j;
    }
    return -1;
}

static int add_native(const struct gpu_cc *gpus, int ngpus, struct arch_list *out,
                      struct strbuf *notes, char **error)
{
    char oldest[16];
    oldest_cc(oldest, sizeof oldest);
    if (ngpus <= 0) {
        char p0[64], p1[64];
        *error = xasprintf("--arch native: no NVIDIA GPU was found on this machine; name the "
                           "archs to build, e.g. --arch %s (%s) or --arch %s (%s)",
                           example_archs[0], short_products(example_archs[0], p0, sizeof p0),
                           example_archs[1], short_products(example_archs[1], p1, sizeof p1));
        return ARCH_SPEC_NO_GPU;
    }
    int added = 0;
    for (int g = 0; g < ngpus; g++) {
        int i = build_arch_for_cc(gpus[g].major, gpus[g].minor);
        if (i < 0) {
            sb_addf(notes,
                    "GPU %d (compute capability %d.%d) has no code in the kernels (they need "
                    "%s or newer, from the archs they know)\n",
                    g, gpus[g].major, gpus[g].minor, oldest);
            continue;
        }
        list_add(out, i);
        added++;
        /* Hopper: its own kernel (int8-fp8-wgmma, what auto runs there) needs sm_90a code,
         * which runs on 9.0 alone, beside the portable sm_90 code the other modes use. */
        int j = richer_sibling(i);
        if (j >= 0) {
            list_add(out, j);
            sb_addf(notes,
                    "GPU %d (%d.%d): building %s (the portable kernels) and %s (its own "
                    "kernel, int8-fp8-wgmma)\n",
                    g, gpus[g].major, gpus[g].minor, build_arch_at(i)->name,
                    build_arch_at(j)->name);
        }
    }
    if (!added) {
        *error = xasprintf("--arch native: none of this machine's GPUs is one the kernels can be "
                           "built for (compute capability %s or newer)",
                           oldest);
        return ARCH_SPEC_NO_GPU;
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
            for (int i = 0; i < sa_arch_count(); i++)
                if (build_arch_at(i) && build_arch_at(i)->in_all)
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
                rc = ARCH_SPEC_BAD;
            } else {
                list_add(out, i);
            }
        }
    }
    free(copy);
    if (rc == 0 && tokens == 0) {
        *error = xstrdup("--arch is empty; give e.g. sm_120a, native or all");
        rc = ARCH_SPEC_BAD;
    }
    if (rc < 0) {
        sb_free(&nb);
        memset(out, 0, sizeof *out);
        return rc;
    }
    *notes = nb.len ? sb_detach(&nb) : NULL;
    return 0;
}

/* The oldest nvcc release that builds row i: the table's floor for the kernels (never below
 * nvcc's own). */
static int row_floor(int i, struct version *out)
{
    const struct sa_arch *r = build_arch_at(i);
    return r && version_parse_strict(r->kernels_nvcc, out) == 0 ? 0 : -1;
}

char *build_arch_refusal(int i, const struct version *nvcc_release, const char *const *listed,
                         size_t nlisted)
{
    const struct sa_arch *r = build_arch_at(i);
    if (!r)
        return xstrdup("unknown arch");
    struct gpu_arch a = row_arch(r);
    char *why = arch_nvcc_refusal(&a, nvcc_release, listed, nlisted);
    if (why)
        return why;
    struct version floor;
    if (nvcc_release && nvcc_release->nparts > 0 && row_floor(i, &floor) == 0 &&
        version_cmp_n(nvcc_release, &floor, 2) < 0) {
        char nb[32];
        return xasprintf("%s needs nvcc >= %s for %s; this nvcc is %s", r->name, r->kernels_nvcc,
                         *r->kernels_why ? r->kernels_why : "the kernels",
                         version_str(nvcc_release, nb, sizeof nb));
    }
    return NULL;
}

char *build_arch_fix(int i, const struct version *nvcc_release, const struct arch_list *buildable)
{
    struct strbuf sb = STRBUF_INIT;
    struct version need, dropped;
    char vb[32];
    const struct sa_arch *r = build_arch_at(i);
    if (!r)
        return xstrdup("pass archs from the kernels' table");
    struct gpu_arch a = row_arch(r);
    if (nvcc_release && arch_dropped_in(&a, &dropped) == 0 &&
        version_cmp_n(nvcc_release, &dropped, 2) >= 0) {
        sb_addf(&sb,
                "use an older toolkit for %s: sagebuild fetch-cuda --cuda 12.9, then "
                "sagebuild build --cuda-home <its prefix>",
                r->name);
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
        sb_addf(&sb, "%s%s", k ? sep : "", sa_arch_at(l->idx[k])->name);
    return sb_detach(&sb);
}
