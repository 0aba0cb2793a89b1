/* Prints archs/archs.def as the C code reads it.
 *   dump_arch_table          the kernels' rows, one per line: "name kernels_nvcc families code"
 *                            ("sm_90a 12.4 mma,wgmma sass"); arch-table-check.sh compares it
 *                            with what cmake/SageattnArchs.cmake reads from the same file
 *   dump_arch_table --auto   each named GPU the kernels run on, by compute capability, and the
 *                            mode auto runs there in a library that holds every mode
 *                            ("sm_89 int8-fp8-f16acc"); test_arch_table_docs.sh checks the
 *                            docs that list them */
#include <stdio.h>
#include <string.h>

#include "../archs/sa_archs.h"

static void print_kernel_rows(void)
{
    for (int i = 0; i < sa_arch_count(); i++) {
        const struct sa_arch *r = sa_arch_at(i);
        if (!sa_arch_has_kernels(r))
            continue;
        const int mma = (r->families & SA_FAMILY_MMA) != 0;
        const int wgmma = (r->families & SA_FAMILY_WGMMA) != 0;
        printf("%s %s %s%s%s %s\n", r->name, r->kernels_nvcc, mma ? "mma" : "",
               mma && wgmma ? "," : "", wgmma ? "wgmma" : "",
               r->code == SA_CODE_PTX ? "ptx" : "sass");
    }
}

static void print_auto_modes(void)
{
    for (int i = 0; i < sa_arch_count(); i++) {
        const struct sa_arch *r = sa_arch_at(i), *p = sa_arch_at(i - 1);
        if (p && p->major == r->major && p->minor == r->minor)
            continue; /* one line per compute capability */
        if (!*r->products || sa_arch_kernels_for_cc(r->major, r->minor) < 0)
            continue;
        const char *modes = sa_cc_auto_modes(r->major, r->minor);
        printf("sm_%d%d %.*s\n", r->major, r->minor, (int)strcspn(modes, ","), modes);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--auto") == 0)
        print_auto_modes();
    else
        print_kernel_rows();
    return 0;
}
