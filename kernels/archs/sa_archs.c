#include "sa_archs.h"

#include <stdio.h>
#include <string.h>

static const struct sa_arch rows[] = {
#define SA_ARCH(name, major, minor, variant, nvcc_since, nvcc_dropped, kernels_nvcc, kernels_why,  \
                families, code, in_all, sage_nvcc, sage_code, products)                            \
    {name,        major,    minor, variant, nvcc_since, nvcc_dropped, kernels_nvcc,                \
     kernels_why, families, code,  in_all,  sage_nvcc,  sage_code,    products},
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

void sa_arch_short_products(const struct sa_arch *r, char *out, size_t n)
{
    size_t len = strcspn(r->products, ",");
    snprintf(out, n, "%.*s", (int)len, r->products);
}
