#include "probe/arch.h"
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

const char *arch_compute_name(const struct gpu_arch *a, char *buf, size_t len)
{
    snprintf(buf, len, "compute_%d%s", arch_number(a), variant_str(a));
    return buf;
}

const char *arch_cc_name(const struct gpu_arch *a, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d%s", a->major, a->minor, variant_str(a));
    return buf;
}

/* One row per arch: when nvcc first accepted it, when its 'a' variant appeared (0: none), and
 * the nvcc release that dropped it (0: still built). */
struct arch_row {
    int number;
    int since_major, since_minor;
    int a_major, a_minor;
    int dropped_major, dropped_minor;
};

static const struct arch_row arch_rows[] = {
    {50, 6, 0, 0, 0, 13, 0},   {52, 6, 5, 0, 0, 13, 0},    {53, 7, 0, 0, 0, 13, 0},
    {60, 8, 0, 0, 0, 13, 0},   {61, 8, 0, 0, 0, 13, 0},    {62, 8, 0, 0, 0, 13, 0},
    {70, 9, 0, 0, 0, 13, 0},   {72, 10, 0, 0, 0, 13, 0},   {75, 10, 0, 0, 0, 0, 0},
    {80, 11, 0, 0, 0, 0, 0},   {86, 11, 1, 0, 0, 0, 0},    {87, 11, 4, 0, 0, 0, 0},
    {88, 13, 0, 0, 0, 0, 0},   {89, 11, 8, 0, 0, 0, 0},    {90, 11, 8, 12, 0, 0, 0},
    {100, 12, 8, 12, 8, 0, 0}, {101, 12, 8, 12, 8, 13, 0}, {103, 12, 9, 12, 9, 0, 0},
    {110, 13, 0, 13, 0, 0, 0}, {120, 12, 8, 12, 8, 0, 0},  {121, 12, 9, 12, 9, 0, 0},
};

static const struct arch_row *find_row(const struct gpu_arch *a)
{
    for (size_t i = 0; i < sizeof arch_rows / sizeof arch_rows[0]; i++)
        if (arch_rows[i].number == arch_number(a))
            return &arch_rows[i];
    return NULL;
}

static struct version ver2(int major, int minor)
{
    struct version v = {{major, minor, 0, 0}, 2};
    return v;
}

int arch_variant_valid(const struct gpu_arch *a)
{
    const struct arch_row *r = find_row(a);
    if (!r)
        return 0;
    if (a->variant == 'a')
        return r->a_major != 0;
    if (a->variant == 'f') /* family targets exist from Blackwell on */
        return a->major >= 10;
    return 1;
}

int arch_min_nvcc(const struct gpu_arch *a, struct version *out)
{
    const struct arch_row *r = find_row(a);
    if (!r || !arch_variant_valid(a))
        return -1;
    *out = ver2(r->since_major, r->since_minor);
    if (a->variant == 'a')
        *out = ver2(r->a_major, r->a_minor);
    if (a->variant == 'f') { /* 'f' targets arrived with nvcc 12.9 */
        struct version f = ver2(12, 9);
        if (version_cmp(out, &f) < 0)
            *out = f;
    }
    return 0;
}

int arch_dropped_in(const struct gpu_arch *a, struct version *out)
{
    const struct arch_row *r = find_row(a);
    if (!r || !r->dropped_major)
        return -1;
    *out = ver2(r->dropped_major, r->dropped_minor);
    return 0;
}

int arch_min_nvcc_for_kernels(const struct gpu_arch *a, struct version *out)
{
    /* SageAttention's setup.py: nvcc ≥ 12.0 at all, 12.3 for 9.0, 12.4 for 8.9 (FP8 mma),
     * 12.8 for 10.0 and 12.0; DESIGN.md §4: sm_121a ≥ 12.9. */
    struct version gate;
    switch (arch_number(a)) {
    case 80:
    case 86:
    case 87:
        gate = ver2(12, 0);
        break;
    case 89:
        gate = ver2(12, 4);
        break;
    case 90:
        gate = ver2(12, 3);
        break;
    case 100:
    case 120:
        gate = ver2(12, 8);
        break;
    case 121:
        gate = ver2(12, 9);
        break;
    default:
        return -1;
    }
    struct version base;
    if (arch_min_nvcc(a, &base) == 0 && version_cmp(&base, &gate) > 0)
        gate = base;
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
    if (!find_row(a))
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
    int n = arch_number(&a);
    if (n == 90 || n == 100 || n == 120 || n == 121)
        a.variant = 'a';
    return a;
}

int arch_runs_on(const struct gpu_arch *built, int cc_major, int cc_minor)
{
    if (built->major != cc_major)
        return 0;
    if (built->variant == 'a')
        return built->minor == cc_minor;
    return built->minor <= cc_minor;
}
