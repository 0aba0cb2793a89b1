/* A program outside the kernels project that uses the installed library the two documented
 * ways (pkg-config and find_package): prints the ABI version and the archs, which the build
 * check compares with what it asked for, and checks the params struct's versioning through the
 * library's own validation (which runs before any device call). Needs no GPU. */
#include <stdio.h>
#include <string.h>

#include <sageattn.h>

/* The status sageattn_workspace_size gives for p: validation fails on the NULL q before any
 * CUDA call, unless struct_size is refused first. */
static sageattn_status status_of(const sageattn_params *p)
{
    size_t bytes = 0;
    return sageattn_workspace_size(p, 0, &bytes);
}

static int check_struct_versions(void)
{
    sageattn_params p;
    memset(&p, 0xab, sizeof p);
    sageattn_params_init(&p, 1, 2, 2, 16, 16, 64);
    const unsigned char *tail = (const unsigned char *)&p + SAGEATTN_PARAMS_V1_SIZE;
    for (size_t i = 0; i < sizeof p - SAGEATTN_PARAMS_V1_SIZE; i++)
        if (tail[i] != 0xab) {
            fprintf(stderr, "sageattn_params_init wrote past the ABI 1.0 fields\n");
            return 1;
        }
    if (p.struct_size != SAGEATTN_PARAMS_V1_SIZE || status_of(&p) != SAGEATTN_ERR_NULL_POINTER) {
        fprintf(stderr, "a 1.0 struct (%u bytes) was refused: %s\n", p.struct_size,
                sageattn_last_error());
        return 1;
    }
    sageattn_params_set_nonfinite_flag(&p, NULL);
    if (p.struct_size != sizeof p || status_of(&p) != SAGEATTN_ERR_NULL_POINTER) {
        fprintf(stderr, "a 1.1 struct was refused: %s\n", sageattn_last_error());
        return 1;
    }
    sageattn_params_set_context(&p, NULL);
    p.struct_size = SAGEATTN_PARAMS_V11_SIZE;
    if (status_of(&p) != SAGEATTN_ERR_NULL_POINTER) {
        fprintf(stderr, "a 1.1 struct (%u bytes) was refused: %s\n", p.struct_size,
                sageattn_last_error());
        return 1;
    }
    sageattn_params_set_recompute_nonfinite(&p, NULL);
    if (p.struct_size != sizeof p || status_of(&p) != SAGEATTN_ERR_NULL_POINTER) {
        fprintf(stderr, "a 1.2 struct was refused: %s\n", sageattn_last_error());
        return 1;
    }
    if (sageattn_context_create(0, NULL) != SAGEATTN_ERR_NULL_POINTER) {
        fprintf(stderr, "sageattn_context_create accepted a NULL out\n");
        return 1;
    }
    sageattn_context_destroy(NULL);
    p.struct_size = SAGEATTN_PARAMS_V1_SIZE - 4;
    if (status_of(&p) != SAGEATTN_ERR_ABI || !strstr(sageattn_last_error(), "struct_size")) {
        fprintf(stderr, "a struct_size of %u was not refused as an ABI mismatch\n", p.struct_size);
        return 1;
    }
    return 0;
}

int main(void)
{
    if (sageattn_abi_version() != SAGEATTN_ABI_VERSION) {
        fprintf(stderr, "ABI %d, header %d\n", sageattn_abi_version(), SAGEATTN_ABI_VERSION);
        return 1;
    }
    if (check_struct_versions() != 0)
        return 1;
    /* ABI 1.3: the arch table's FP8 fact, without a GPU */
    if (sageattn_cc_has_fp8(8, 9) != 1 || sageattn_cc_has_fp8(8, 6) != 0) {
        fprintf(stderr, "sageattn_cc_has_fp8: 8.9 -> %d, 8.6 -> %d\n", sageattn_cc_has_fp8(8, 9),
                sageattn_cc_has_fp8(8, 6));
        return 1;
    }
    printf("abi=%d archs=%s mode=%s\n", sageattn_abi_version(), sageattn_built_archs(),
           sageattn_mode_name(SAGEATTN_MODE_INT8_FP8));
    return 0;
}
