#include "fetch_result.h"

#include "util/json.h"
#include "util/stage_result.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

static char *summary_of(const struct fetch_result_facts *f)
{
    const char *release = f->release ? f->release : "?", *prefix = f->prefix ? f->prefix : "?";
    if (f->error)
        return xstrdup(f->error);
    if (!strcmp(f->state, "unchanged"))
        return xasprintf("CUDA %s is already installed in %s", release, prefix);
    if (!strcmp(f->state, "planned"))
        return xasprintf("CUDA %s would be installed in %s (dry run)", release, prefix);
    return xasprintf("CUDA %s installed in %s", release, prefix);
}

void fetch_result_add(cJSON *doc, const struct fetch_result_facts *f)
{
    int installed = !f->error && (!strcmp(f->state, "installed") || !strcmp(f->state, "unchanged"));
    cJSON *payload = cJSON_CreateObject();
    cJSON_AddItemToObject(payload, "prefix", json_str_or_null(installed ? f->prefix : NULL));
    cJSON_AddItemToObject(payload, "release", json_str_or_null(f->release));
    cJSON_AddItemToObject(payload, "source", json_str_or_null(f->source));
    cJSON_AddItemToObject(payload, "postcheck", json_str_or_null(f->postcheck));
    char *summary = summary_of(f);
    stage_result_add(doc, "fetch-cuda", f->exit_code, summary, f->fix, payload);
    free(summary);
}
