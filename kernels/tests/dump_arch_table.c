/* Prints the kernels' rows of archs/archs.def as the C code reads them, one per line:
 * "name kernels_nvcc families code" ("sm_90a 12.4 mma,wgmma sass"); arch-table-check.sh
 * compares it with what cmake/SageattnArchs.cmake reads from the same file. */
#include <stdio.h>

#include "../archs/sa_archs.h"

int main(void)
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
    return 0;
}
