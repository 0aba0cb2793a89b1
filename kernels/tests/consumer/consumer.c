/* A program outside the kernels project that uses the installed library the two documented
 * ways (pkg-config and find_package): prints the ABI version and the archs, which the build
 * check compares with what it asked for. Needs no GPU. */
#include <stdio.h>

#include <sageattn.h>

int main(void)
{
    if (sageattn_abi_version() != SAGEATTN_ABI_VERSION) {
        fprintf(stderr, "ABI %d, header %d\n", sageattn_abi_version(), SAGEATTN_ABI_VERSION);
        return 1;
    }
    printf("abi=%d archs=%s mode=%s\n", sageattn_abi_version(), sageattn_built_archs(),
           sageattn_mode_name(SAGEATTN_MODE_INT8_FP8));
    return 0;
}
