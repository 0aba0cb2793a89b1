#include "probe/arch.h"
#include "../../kernels/archs/sa_archs.h"
#include "util/strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_digits(const char **p, int *n)
{
    int v = 0, k = 0;
    while (isdigit((unsigned char)**p) && k < 4) {
        v = v * 10 + (**p - '0');
        (*p)++;
        k++;
    }
    *n = v;
    return k;
}

int arch_parse(const char *s, struct gpu_arch *out)
{
    memset(out, 0, sizeof *out);
    if (!s)
        return -1;
    const char *p = s;
    while (*p == ' ')
        p++;
    if (!strncmp(p, "sm_", 3))
        p += 3;
    else if (!strncmp(p, "compute_", 8))
        p += 8;
    else if (!strncmp(p, "sm", 2))
        p += 2;
    int a = 0, k = parse_digits(&p, &a);
    if (k == 0)
        goto bad;
    if (*p == '.') { /* compute capability form: 12.0 */
        p++;
        int b = 0;
        if (parse_digits(&p, &b) != 1 || a < 1 || a > 99)
            goto bad;
        out->major = a;
        out->minor = b;
    } else {
        if (k < 2 || a < 10)
            goto bad;
        out->major = a / 10;
        out->minor = a % 10;
    }
    if (*p == 'a' || *p == 'f')
        out->variant = *p++;
    if (!strncmp(p, "+PTX", 4)) {
        out->ptx = 1;
        p += 4;
    }
    while (*p == ' ')
        p++;
    if (*p)
        goto bad;
    return 0;
bad:
    memset(out, 0, sizeof *out);
    return -1;
}

int arch_number(const struct gpu_arch *a)
{
    return a->major * 10 + a->minor;
}

int arch_same_base(const struct gpu_arch *a, const struct gpu_arch *b)
{
    return a->major == b->major && a->minor == b->minor;
}

static const char *variant_str(const struct gpu_arch *a)
{
    return a->variant == 'a' ? "a" : a->variant == 'f' ? "f" : "";
}

const char *arch_sm_name(const struct gpu_arch *a, char *buf, size_t len)
{
    snprintf(buf, len, "sm_%d%s", arch_number(a), variant_str(a));
    return buf;
}

/* The table's row for exactly this target (variant included); NULL when there is none. */
static const struct sa_arch *find_row(const struct gpu_arch *a)
{
    char name[32];
    return sa_arch_at(sa_arch_index(arch_sm_name(a, name, sizeof name)));
}

/* Whether the table knows this compute capability under any variant. */
static int base_known(const struct gpu_arch *a)
{
    for (int i = 0; i < sa_arch_count(); i++)
        if (sa_arch_at(i)->major == a->major && sa_arch_at(i)->minor == a->minor)
            return 1;
    return 0;
}

/* *out = the table's version string s, when s is one; else -1. */
static int table_version(const char *s, struct version *out)
{
    return s && *s && version_parse_strict(s, out) == 0 ? 0 : -1;
}

int arch_variant_valid(const struct gpu_arch *a)
{
    return find_row(a) != NULL;
}

int arch_min_nvcc(const struct gpu_arch *a, struct version *out)
{
    const struct sa_arch *r = find_row(a);
    return r ? table_version(r->nvcc_since, out) : -1;
}

int arch_dropped_in(const struct gpu_arch *a, struct version *out)
{
    const struct sa_arch *r = find_row(a);
    return r ? table_version(r->nvcc_dropped, out) : -1;
}

/* *floor = max(*floor, s) for a table version s; counts in *have. */
static void raise_floor(const char *s, struct version *floor, int *have)
{
    struct version v;
    if (table_version(s, &v) < 0)
        return;
    if (!*have || version_cmp(&v, floor) > 0)
        *floor = v;
    *have = 1;
}

int arch_min_nvcc_for_kernels(const struct gpu_arch *a, struct version *out)
{
    /* The gates of this compute capability, whichever variant carries them: upstream
     * SageAttention's (setup.py) and sagebuild's own kernels', so a toolkit that passes builds
     * both; then never below what nvcc itself needs for this exact target. */
    struct version gate = {{0}, 0};
    int have = 0;
    for (int i = 0; i < sa_arch_count(); i++) {
        const struct sa_arch *r = sa_arch_at(i);
        if (r->major != a->major || r->minor != a->minor)
            continue;
        raise_floor(r->sage_nvcc, &gate, &have);
        raise_floor(r->kernels_nvcc, &gate, &have);
    }
    if (!have)
        return -1;
    const struct sa_arch *exact = find_row(a);
    if (exact)
        raise_floor(exact->nvcc_since, &gate, &have);
    *out = gate;
    return 0;
}

static int listed_has_base(const struct gpu_arch *a, const char *const *listed, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct gpu_arch l;
        if (listed[i] && arch_parse(listed[i], &l) == 0 && arch_same_base(a, &l))
            return 1;
    }
    return 0;
}

char *arch_nvcc_refusal(const struct gpu_arch *a, const struct version *nvcc_release,
                        const char *const *listed, size_t nlisted)
{
    char name[32], vb[32], nb[32];
    arch_sm_name(a, name, sizeof name);
    if (!base_known(a))
        return xasprintf("%s is not a GPU architecture sagebuild knows", name);
    if (!arch_variant_valid(a))
        return xasprintf("%s does not exist (no '%c' variant for this architecture)", name,
                         a->variant);
    struct version need, dropped;
    int have_release = nvcc_release && nvcc_release->nparts > 0;
    if (have_release && arch_min_nvcc(a, &need) == 0 && version_cmp_n(nvcc_release, &need, 2) < 0)
        return xasprintf("%s needs nvcc >= %s; this nvcc is %s", name,
                         version_str(&need, vb, sizeof vb),
                         version_str(nvcc_release, nb, sizeof nb));
    if (have_release && arch_dropped_in(a, &dropped) == 0 &&
        version_cmp_n(nvcc_release, &dropped, 2) >= 0)
        return xasprintf("nvcc %s no longer builds %s (dropped in %s)",
                         version_str(nvcc_release, nb, sizeof nb), name,
                         version_str(&dropped, vb, sizeof vb));
    if (listed && nlisted > 0 && !listed_has_base(a, listed, nlisted))
        return xasprintf("%s is not in this nvcc's --list-gpu-arch", name);
    return NULL;
}

struct gpu_arch arch_for_kernels(int cc_major, int cc_minor)
{
    struct gpu_arch a = {cc_major, cc_minor, '\0', 0};
    for (int i = 0; i < sa_arch_count(); i++) {
        const struct sa_arch *r = sa_arch_at(i);
        if (r->sage_code && r->major == cc_major && r->minor == cc_minor)
            a.variant = r->variant;
    }
    return a;
}

int arch_runs_on(const struct gpu_arch *built, int cc_major, int cc_minor)
{
    return sa_arch_runs_on(built->major, built->minor, built->variant, cc_major, cc_minor);
}
