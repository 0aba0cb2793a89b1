/* Fuzz target: torch/version.py text must never crash the parser, whatever bytes it holds. */
#include "probe/torch.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct torch_version_py v;
    int rc = torch_parse_version_py((const char *)data, size, &v);
    /* A success must hold a version with no control bytes in it. */
    if (rc == 0 && (!v.version || strchr(v.version, '\n')))
        __builtin_trap();
    torch_version_py_free(&v);
    return 0;
}
