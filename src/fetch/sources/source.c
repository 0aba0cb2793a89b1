#include "source.h"
#include "pypi_source.h"
#include "redist_source.h"

#include <stdlib.h>
#include <string.h>

void fetch_plan_free(struct fetch_plan *p)
{
    for (int i = 0; i < p->nitems; i++) {
        struct fetch_item *it = &p->items[i];
        free(it->component);
        free(it->version);
        free(it->relative_path);
        for (char **u = it->urls; u && *u; u++)
            free(*u);
        free(it->urls);
        free(it->note);
    }
    free(p->items);
    free(p->release);
    free(p->platform);
    free(p->release_date);
    free(p->manifest);
    memset(p, 0, sizeof *p);
}

int source_chain(const char *name, const struct fetch_source **chain, int max)
{
    /* auto: NVIDIA's own archives first (every release, the bundled manifests pin them), the
     * wheels when those cannot be had. */
    static const struct fetch_source *const redist[] = {&redist_source, NULL};
    static const struct fetch_source *const pypi[] = {&pypi_source, NULL};
    static const struct fetch_source *const any[] = {&redist_source, &pypi_source, NULL};
    const struct fetch_source *const *list = !strcmp(name, "redist") ? redist
                                             : !strcmp(name, "pypi") ? pypi
                                             : !strcmp(name, "auto") ? any
                                                                     : NULL;
    int n = 0;
    while (list && list[n] && n < max) {
        chain[n] = list[n];
        n++;
    }
    return n;
}
