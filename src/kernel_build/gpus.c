#include "gpus.h"
#include "probe/gpu.h"
#include "util/strbuf.h"

int build_gpus_present(struct gpu_cc *gpus, int max, char **why)
{
    struct gpu_info gi;
    probe_gpu(0, &gi);
    int n = 0;
    for (int i = 0; i < gi.count && n < max; i++)
        gpus[n++] = (struct gpu_cc){gi.devices[i].cc_major, gi.devices[i].cc_minor};
    if (why)
        *why = !n && gi.error ? xstrdup(gi.error) : NULL;
    gpu_info_free(&gi);
    return n;
}
