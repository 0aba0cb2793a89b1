/* Fuzz target: every other text the probes and the doctor read from the outside world —
 * SAGEBUILD_FAKE_GPUS, the driver child's lines, /proc files, arch names and lists, wheel
 * versions and METADATA — must parse or be refused, never crash. */
#include "doctor/rules.h"
#include "probe/arch.h"
#include "probe/gpu.h"
#include "probe/resources.h"
#include "probe/torch.h"
#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = xstrndup((const char *)data, size);
    struct gpu_info g;
    if (gpu_parse_fake(text, &g) == 0) {
        for (int i = 0; i < g.count; i++)
            if (!g.devices[i].name)
                __builtin_trap();
        gpu_info_free(&g);
    }
    memset(&g, 0, sizeof g);
    gpu_parse_child_output(text, &g);
    gpu_info_free(&g);
    free(gpu_parse_kernel_module_version(text));
    gpu_driver_max_cuda(text);

    long long avail, total;
    resources_parse_meminfo(text, &avail, &total);

    struct gpu_arch a;
    if (arch_parse(text, &a) == 0) {
        char buf[32];
        struct version v = {{13, 0, 0, 0}, 2};
        arch_sm_name(&a, buf, sizeof buf);
        free(arch_nvcc_refusal(&a, &v, NULL, 0));
    }
    struct arch_entries l;
    rule_parse_arch_list(text, text, &l);
    rule_arch_entries_free(&l);

    char *cuda, *torch;
    rule_parse_wheel_local_tag(text, &cuda, &torch);
    free(cuda);
    free(torch);
    free(rule_torch_triton_pin(text));

    const char *names[] = {"torch", "python"};
    char *dirs[2] = {NULL, NULL};
    char *pyver = NULL;
    python_parse_find_output(text, names, 2, dirs, &pyver);
    free(dirs[0]);
    free(dirs[1]);
    free(pyver);
    free(text);
    return 0;
}
