#include "sa_archs.h"

#include <stdio.h>
#include <string.h>

static const struct sa_arch rows[] = {
#define SA_ARCH(name, major, minor, variant, nvcc_since, nvcc_dropped, kernels_nvcc, kernels_why,  \
                families, code, in_all, sage_nvcc, sage_code, fp8, auto_modes, products)           \
    {name,     major, minor,  variant,   nvcc_since, nvcc_dropped, kernels_nvcc, kernels_why,      \
     families, code,  in_all, sage_nvcc, sage_code,  fp8,          auto_modes,   products},
#include "archs.def"
#undef SA_ARCH
};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

int sa_arch_count(void)
{
    return NROWS;
}

const struct sa_arch *sa_arch_at(int i)
{
    return i >= 0 && i < NROWS ? &rows[i] : NULL;
}

int sa_arch_index(const char *name)
{
    for (int i = 0; name && i < NROWS; i++)
        if (!strcmp(rows[i].name, name))
            return i;
    return -1;
}

int sa_arch_has_kernels(const struct sa_arch *r)
{
    return r && r->families != 0;
}

int sa_arch_runs_on(int major, int minor, char variant, int cc_major, int cc_minor)
{
    if (major != cc_major)
        return 0;
    if (variant == 'a')
        return minor == cc_minor;
    return minor <= cc_minor;
}

int sa_arch_kernels_for_cc(int major, int minor)
{
    int exact_plain = -1, exact_any = -1, below = -1;
    for (int i = 0; i < NROWS; i++) {
        const struct sa_arch *r = &rows[i];
        if (!sa_arch_has_kernels(r))
            continue;
        if (r->major == major && r->minor == minor) {
            if (r->variant == '\0' && exact_plain < 0)
                exact_plain = i;
            if (exact_any < 0)
                exact_any = i;
        } else if (r->variant == '\0' && sa_arch_runs_on(r->major, r->minor, '\0', major, minor)) {
            below = i; /* rows are in ascending order: the last one is the newest */
        }
    }
    if (exact_plain >= 0)
        return exact_plain;
    return exact_any >= 0 ? exact_any : below;
}

/* The row of exactly this compute capability (the first; the per-compute-capability columns are
 * the same on all of them), else the newest row below it; NULL when there is none. */
static const struct sa_arch *cc_row(int major, int minor, int *exact)
{
    const int cc = major * 10 + minor;
    const struct sa_arch *below = NULL;
    for (int i = 0; i < NROWS; i++) {
        const int rc = rows[i].major * 10 + rows[i].minor;
        if (rc == cc) {
            *exact = 1;
            return &rows[i];
        }
        if (rc < cc)
            below = &rows[i]; /* ascending: the last one is the newest */
    }
    *exact = 0;
    return below;
}

int sa_cc_has_fp8(int major, int minor)
{
    int exact;
    const struct sa_arch *r = cc_row(major, minor, &exact);
    return r ? r->fp8 : 0;
}

const char *sa_cc_auto_modes(int major, int minor)
{
    int exact;
    const struct sa_arch *r = cc_row(major, minor, &exact);
    if (r && exact)
        return r->auto_modes;
    /* A GPU newer than the table, or between its rows: the plain mode of its arithmetic. The
     * tuned choices (int8-fp8-f16acc for GeForce's half-rate FP32 accumulation, int8-fp16 for
     * Hopper's emulated FP8 mma.sync) are facts of known GPUs only. */
    return sa_cc_has_fp8(major, minor) ? "int8-fp8" : "int8-fp16";
}

const struct sa_arch *sa_arch_oldest_fp8(void)
{
    for (int i = 0; i < NROWS; i++)
        if (rows[i].fp8)
            return &rows[i];
    return NULL;
}

const struct sa_arch *sa_arch_with_family(unsigned family)
{
    for (int i = 0; i < NROWS; i++)
        if (rows[i].families & family)
            return &rows[i];
    return NULL;
}

int sa_family_runs_on(unsigned family, int major, int minor)
{
    for (int i = 0; i < NROWS; i++)
        if ((rows[i].families & family) &&
            sa_arch_runs_on(rows[i].major, rows[i].minor, rows[i].variant, major, minor))
            return 1;
    return 0;
}

void sa_arch_short_products(const struct sa_arch *r, char *out, size_t n)
{
    size_t len = strcspn(r->products, ",");
    snprintf(out, n, "%.*s", (int)len, r->products);
}
