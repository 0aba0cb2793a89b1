#include "doctor/rules.h"
#include "../../kernels/archs/sa_archs.h"
#include "probe/gpu.h"
#include "util/strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1000*major + 10*minor, or -1 for a version no CUDA release has (garbage from a file). */
static int cuda_code(const struct version *v)
{
    if (!v || v->nparts == 0 || v->part[0] < 0 || v->part[0] > 999 || v->part[1] < 0 ||
        v->part[1] > 99)
        return -1;
    return v->part[0] * 1000 + v->part[1] * 10;
}

int rule_cuda_mismatch(const struct version *torch_cuda, const struct version *nvcc_release)
{
    if (!torch_cuda || !nvcc_release || torch_cuda->nparts == 0 || nvcc_release->nparts == 0)
        return -1;
    if (torch_cuda->part[0] != nvcc_release->part[0])
        return 2;
    return torch_cuda->part[1] != nvcc_release->part[1] ? 1 : 0;
}

/* The CUDA builds download.pytorch.org/whl publishes for current torch releases. */
static const struct {
    int cuda;
    const char *tag;
} torch_indexes[] = {
    {13000, "cu130"}, {12090, "cu129"}, {12080, "cu128"}, {12060, "cu126"}, {11080, "cu118"}};

const char *rule_torch_index_tag(int max_cuda)
{
    for (size_t i = 0; i < sizeof torch_indexes / sizeof torch_indexes[0]; i++)
        if (torch_indexes[i].cuda <= max_cuda)
            return torch_indexes[i].tag;
    return NULL;
}

const char *rule_torch_index_tag_exact(const struct version *cuda)
{
    int v = cuda_code(cuda);
    for (size_t i = 0; i < sizeof torch_indexes / sizeof torch_indexes[0]; i++)
        if (torch_indexes[i].cuda == v)
            return torch_indexes[i].tag;
    return NULL;
}

int rule_driver_runs_cuda(int driver_cuda, const char *driver_version, const struct version *cuda)
{
    if (!cuda || cuda->nparts == 0)
        return -1;
    int known = 0;
    struct version dv;
    int min_branch = gpu_min_driver_for_cuda_major(cuda->part[0]);
    if (driver_version && version_parse(driver_version, &dv) == 0) {
        known = 1;
        if (min_branch > 0 && dv.part[0] < min_branch)
            return 0;
    }
    if (driver_cuda > 0) {
        known = 1;
        if (driver_cuda / 1000 < cuda->part[0])
            return 0;
    }
    return known ? 1 : -1;
}

int rule_torch_covers_cc(const struct version *torch_cuda, int cc_major, int cc_minor)
{
    int cu = cuda_code(torch_cuda);
    if (cu < 0 || cc_major <= 0 || cc_major > 99 || cc_minor < 0 || cc_minor > 9)
        return -1;
    int cc = cc_major * 10 + cc_minor;
    if (cu < 12080) /* cu126 and older wheels: sm_50 … sm_90 */
        return cc >= 50 && cc <= 90 ? 1 : 0;
    return cc >= 75 ? 1 : 0; /* cu128 and newer: sm_75 … sm_120 */
}

/* torch.utils.cpp_extension's named arches, and the TORCH_CUDA_ARCH_LIST entries it accepts
 * (torch_accepts adds those newer torches know). */
static const struct {
    const char *name;
    const char *expands;
} named_arches[] = {
    {"Kepler+Tesla", "3.7"},     {"Kepler", "3.5+PTX"},
    {"Maxwell+Tegra", "5.3"},    {"Maxwell", "5.0;5.2+PTX"},
    {"Pascal", "6.0;6.1+PTX"},   {"Volta+Tegra", "7.2"},
    {"Volta", "7.0+PTX"},        {"Turing", "7.5+PTX"},
    {"Ampere+Tegra", "8.7"},     {"Ampere", "8.0;8.6+PTX"},
    {"Ada", "8.9+PTX"},          {"Hopper", "9.0+PTX"},
    {"Blackwell+Tegra", "10.1"}, {"Blackwell", "10.0;12.0+PTX"},
};

static const char *const torch_valid[] = {
    "3.5", "3.7", "5.0", "5.2", "5.3",  "6.0",  "6.1",   "6.2",  "7.0",   "7.2",  "7.5",  "8.0",
    "8.6", "8.7", "8.9", "9.0", "9.0a", "10.0", "10.0a", "10.1", "10.1a", "12.0", "12.0a"};

static int torch_accepts(const char *entry, const char *torch_version)
{
    char base[32];
    snprintf(base, sizeof base, "%s", entry);
    char *ptx = strstr(base, "+PTX");
    if (ptx && ptx[4] == '\0')
        *ptx = '\0';
    for (size_t i = 0; i < sizeof torch_valid / sizeof torch_valid[0]; i++)
        if (!strcmp(base, torch_valid[i]))
            return 1;
    struct version tv = {{99, 0, 0, 0}, 2}; /* unknown torch: assume a current one */
    if (torch_version)
        version_parse(torch_version, &tv);
    struct version v28 = {{2, 8, 0, 0}, 2}, v29 = {{2, 9, 0, 0}, 2};
    if (version_cmp_n(&tv, &v28, 2) >= 0 && (!strcmp(base, "12.1") || !strcmp(base, "12.1a")))
        return 1;
    /* [inferred] torch 2.9 follows nvcc 13's names for Thor and GB300. */
    if (version_cmp_n(&tv, &v29, 2) >= 0 && (!strcmp(base, "10.3") || !strcmp(base, "10.3a") ||
                                             !strcmp(base, "11.0") || !strcmp(base, "11.0a")))
        return 1;
    return 0;
}

/* SageAttention's reading: strip "sm_"/"compute_", every 'a' (and "+PTX"), then "89" → 8.9. */
static int sage_supports(const char *entry)
{
    char buf[32];
    size_t k = 0;
    const char *p = entry;
    if (!strncmp(p, "sm_", 3))
        p += 3;
    else if (!strncmp(p, "compute_", 8))
        p += 8;
    for (; *p && k + 1 < sizeof buf; p++) {
        if (*p == 'a')
            continue;
        if (*p == '+')
            break;
        buf[k++] = *p;
    }
    buf[k] = '\0';
    int major = 0, minor = 0;
    if (strchr(buf, '.')) {
        if (sscanf(buf, "%3d.%2d", &major, &minor) != 2)
            return 0;
    } else {
        for (const char *q = buf; *q; q++)
            if (!isdigit((unsigned char)*q))
                return 0;
        if (k < 2 || k > 4)
            return 0;
        int n = atoi(buf);
        major = n / 10;
        minor = n % 10;
    }
    /* SUPPORTED_ARCHS: the compute capabilities setup.py compiles code for (archs.def). */
    for (int i = 0; i < sa_arch_count(); i++)
        if (sa_arch_at(i)->sage_code && sa_arch_at(i)->major == major &&
            sa_arch_at(i)->minor == minor)
            return 1;
    return 0;
}

static void add_entry(struct arch_entries *out, const char *text, int torch_rejects,
                      int sage_unsupported)
{
    out->e = xrealloc(out->e, (size_t)(out->n + 1) * sizeof *out->e);
    struct arch_entry *e = &out->e[out->n++];
    memset(e, 0, sizeof *e);
    e->text = xstrdup(text);
    e->parsed = arch_parse(text, &e->arch) == 0;
    e->torch_rejects = torch_rejects;
    e->sage_unsupported = sage_unsupported;
}

void rule_parse_arch_list(const char *text, const char *torch_version, struct arch_entries *out)
{
    memset(out, 0, sizeof *out);
    if (!text)
        return;
    char *copy = xstrdup(text);
    char *save = NULL;
    for (char *chunk = strtok_r(copy, "; \t", &save); chunk;
         chunk = strtok_r(NULL, "; \t", &save)) {
        int named = 0;
        for (size_t i = 0; i < sizeof named_arches / sizeof named_arches[0]; i++) {
            if (strcmp(chunk, named_arches[i].name))
                continue;
            named = 1;
            char *exp = xstrdup(named_arches[i].expands);
            char *s2 = NULL;
            for (char *a = strtok_r(exp, ";", &s2); a; a = strtok_r(NULL, ";", &s2))
                add_entry(out, a, 0, 1); /* SageAttention cannot read names */
            free(exp);
            break;
        }
        if (named)
            continue;
        /* torch splits on ';' only: "8.9,9.0" is one unknown arch to it. */
        int has_comma = strchr(chunk, ',') != NULL;
        char *s3 = NULL;
        for (char *a = strtok_r(chunk, ",", &s3); a; a = strtok_r(NULL, ",", &s3))
            add_entry(out, a, has_comma || !torch_accepts(a, torch_version), !sage_supports(a));
    }
    free(copy);
}

void rule_arch_entries_free(struct arch_entries *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->e[i].text);
    free(l->e);
    memset(l, 0, sizeof *l);
}

const char *rule_sage_module_for_cc(int cc_major, int cc_minor)
{
    switch (cc_major * 10 + cc_minor) {
    case 80:
    case 86:
    case 87:
        return "_qattn_sm80";
    case 89:
    case 120:
    case 121:
        return "_qattn_sm89";
    case 90:
        return "_qattn_sm90";
    default:
        return NULL;
    }
}

void rule_parse_wheel_local_tag(const char *version, char **cuda, char **torch)
{
    *cuda = *torch = NULL;
    const char *plus = version ? strchr(version, '+') : NULL;
    if (!plus)
        return;
    const char *cu = strstr(plus, "cu");
    if (cu) {
        const char *d = cu + 2;
        size_t n = 0;
        while (isdigit((unsigned char)d[n]))
            n++;
        if (n >= 3) /* cu128 → 12.8, cu130 → 13.0 */
            *cuda = xasprintf("%.*s.%c", (int)(n - 1), d, d[n - 1]);
    }
    const char *t = strstr(plus, "torch");
    if (t && isdigit((unsigned char)t[5])) {
        size_t n = 0;
        while (isdigit((unsigned char)t[5 + n]) || t[5 + n] == '.')
            n++;
        while (n && t[5 + n - 1] == '.')
            n--;
        *torch = xstrndup(t + 5, n);
    }
}

int rule_is_pip_runtime_dir(const char *path, int has_nvcc)
{
    if (!path || has_nvcc)
        return 0;
    return strstr(path, "site-packages/nvidia") != NULL ||
           strstr(path, "dist-packages/nvidia") != NULL;
}

const char *rule_format_bytes(long long bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%lld B", bytes);
    else
        snprintf(buf, len, "%.1f %s", v, units[u]);
    return buf;
}

char *rule_torch_triton_pin(const char *metadata)
{
    static const char key[] = "Requires-Dist: triton==";
    for (const char *p = metadata ? strstr(metadata, key) : NULL; p; p = strstr(p + 1, key)) {
        if (p != metadata && p[-1] != '\n')
            continue;
        const char *value = p + sizeof key - 1;
        size_t n = strcspn(value, " ;\r\n");
        if (n > 0)
            return xstrndup(value, n);
    }
    return NULL;
}
