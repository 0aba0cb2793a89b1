/* Fuzz target: an installed package's .so files are read by the doctor; no bytes in them, as an
 * ELF file or as a .nv_fatbin section, may crash the parser or yield an impossible image. */
#include "probe/fatbin.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct fatbin_list *l)
{
    for (int i = 0; i < l->n; i++) {
        const struct fatbin_image *im = &l->v[i];
        if ((im->kind != FATBIN_PTX && im->kind != FATBIN_SASS) || im->major < 1 || im->minor < 0 ||
            im->minor > 9)
            __builtin_trap();
    }
    free(fatbin_archs(l, FATBIN_SASS));
    free(fatbin_archs(l, FATBIN_PTX));
    fatbin_fit(l, 12, 0, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fatbin_list l;
    char *error = NULL;
    fatbin_from_elf(data, size, &l, &error);
    check(&l);
    fatbin_list_free(&l);
    free(error);
    fatbin_parse(data, size, &l, &error);
    check(&l);
    fatbin_list_free(&l);
    free(error);
    return 0;
}
