/* Fuzz target: the redist manifest parser and everything that reads its result (entry choice
 * for a release, the component plan, path rules) must never crash on any input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fetch/sources/manifest.h"
#include "fetch/engine/pathsafe.h"
#include "fetch/sources/resolve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct redist_manifest m;
    char *err = NULL;
    if (manifest_parse((const char *)data, size, &m, &err) < 0) {
        free(err);
        return 0;
    }
    static const char *const platforms[] = {"linux-x86_64", "linux-sbsa", "linux-all", "source"};
    static const char *const releases[] = {"13.0.2", "12.9.1", "13.1.1", "9"};
    for (int i = 0; i < m.ncomponents; i++)
        for (size_t p = 0; p < 4; p++) {
            const struct redist_entry *e =
                manifest_entry_for(&m.components[i], platforms[p], releases[p]);
            if (e && e->relative_path)
                (void)path_rel_check(e->relative_path);
        }
    char *extra[] = {"nvdisasm", "nvrtc"};
    for (size_t p = 0; p < 4; p++) {
        struct fetch_plan plan;
        char *perr = NULL;
        if (resolve_plan(&m, m.release_label ? m.release_label : releases[p], platforms[p], extra,
                         2, &plan, &perr) == 0)
            fetch_plan_free(&plan);
        free(perr);
    }
    manifest_free(&m);
    return 0;
}
