/* Fuzz target: host_config.h text (and `nvcc --version` output) must never crash the parsers. */
#include "probe/host_compiler.h"
#include "probe/nvcc.h"
#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = xstrndup((const char *)data, size);
    struct host_limits l;
    int rc = host_config_parse(text, &l);
    if ((rc == 0) != (l.gcc_max >= 0))
        __builtin_trap();
    struct nvcc_version v;
    if (nvcc_parse_version(text, &v) == 0 && v.release.nparts != 2)
        __builtin_trap();
    size_t n = 0;
    char **archs = nvcc_parse_arch_list(text, &n);
    nvcc_free_arch_list(archs, n);
    free(text);
    return 0;
}
