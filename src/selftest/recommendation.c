#include "selftest/recommendation.h"
#include "util/json.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Positive figures to `scale` (10: one decimal), without libm, which the CLI does not link. */
static double rounded(double v, double scale)
{
    return (double)(long long)(v * scale + 0.5) / scale;
}

static void add_num_or_null(cJSON *o, const char *key, double v)
{
    if (isfinite(v) && v >= 0)
        cJSON_AddNumberToObject(o, key, rounded(v, 10)); /* TOPS: one decimal */
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *gpu_entry(const struct st_device *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", d->index);
    json_add_str_or_null(o, "name", d->name);
    json_add_str_or_null(o, "cc", d->cc);
    json_add_str_or_null(o, "uuid", d->uuid);
    cJSON_AddStringToObject(o, "mode", d->rec.mode);
    json_add_str_or_null(o, "runner_up", d->rec.runner_up);
    json_add_str_or_null(o, "reason", d->rec.reason);
    cJSON *safe = cJSON_AddArrayToObject(o, "safe_modes");
    cJSON *tops = cJSON_AddObjectToObject(o, "tops");
    for (int k = 0; k < d->nmodes; k++) {
        const struct st_mode *m = &d->modes[k];
        if (!m->supported)
            continue;
        if (m->safe)
            cJSON_AddItemToArray(safe, cJSON_CreateString(m->mode));
        add_num_or_null(tops, m->mode, d->rec.tops[k]);
    }
    int self = st_device_mode_index(d, d->rec.mode), fp16 = st_device_mode_index(d, "fp16");
    double speedup = self >= 0 && fp16 >= 0 && d->rec.tops[fp16] > 0
                         ? d->rec.tops[self] / d->rec.tops[fp16]
                         : NAN;
    if (isfinite(speedup))
        cJSON_AddNumberToObject(o, "speedup_vs_fp16", rounded(speedup, 100));
    else
        cJSON_AddNullToObject(o, "speedup_vs_fp16");
    return o;
}

static int tested_here(const struct selftest_report *r, int index)
{
    for (int i = 0; i < r->ndevices; i++)
        if (r->devices[i].index == index)
            return 1;
    return 0;
}

/* The previous record's entries worth keeping: same library, GPUs not tested this time. */
static void keep_previous(cJSON *gpus, const struct selftest_report *r,
                          const struct recommendation_facts *f)
{
    cJSON *prev = f->previous ? cJSON_Parse(f->previous) : NULL;
    cJSON *sha = cJSON_GetObjectItemCaseSensitive(prev, "library_sha256");
    cJSON *schema = cJSON_GetObjectItemCaseSensitive(prev, "schema");
    cJSON *list = cJSON_GetObjectItemCaseSensitive(prev, "gpus");
    if (cJSON_IsString(sha) && !strcmp(sha->valuestring, f->library_sha256) &&
        cJSON_IsNumber(schema) && schema->valuedouble == RECOMMENDATION_SCHEMA &&
        cJSON_IsArray(list)) {
        cJSON *g;
        cJSON_ArrayForEach(g, list)
        {
            cJSON *idx = cJSON_GetObjectItemCaseSensitive(g, "index");
            cJSON *mode = cJSON_GetObjectItemCaseSensitive(g, "mode");
            if (cJSON_IsNumber(idx) && cJSON_IsString(mode) && !tested_here(r, idx->valueint))
                cJSON_AddItemToArray(gpus, cJSON_Duplicate(g, 1));
        }
    }
    cJSON_Delete(prev);
}

char *recommendation_build(const struct selftest_report *r, const struct recommendation_facts *f,
                           int *ngpus)
{
    *ngpus = 0;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema", RECOMMENDATION_SCHEMA);
    cJSON_AddStringToObject(root, "kind", "sageattn-recommendation");
    cJSON_AddStringToObject(root, "library_sha256", f->library_sha256);
    cJSON_AddStringToObject(root, "written_by", f->written_by);
    cJSON_AddStringToObject(root, "date", f->date);
    cJSON *gpus = cJSON_AddArrayToObject(root, "gpus");
    for (int i = 0; i < r->ndevices; i++)
        if (r->devices[i].has_code && !r->devices[i].error && r->devices[i].rec.mode)
            cJSON_AddItemToArray(gpus, gpu_entry(&r->devices[i]));
    keep_previous(gpus, r, f);
    *ngpus = cJSON_GetArraySize(gpus);
    if (*ngpus > 0)
        return json_text(root);
    cJSON_Delete(root);
    return NULL;
}
