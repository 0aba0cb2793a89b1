#include "record.h"
#include "util/json.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The string fields, by JSON path ("group.key" or "key"), so writing, reading and comparing
 * stay one table. compared: part of the build's identity (a change means rebuild). */
struct field {
    const char *group; /* NULL: top level */
    const char *key;
    size_t offset;
    int compared;
};

#define F(g, k, member, cmp)                                                                       \
    {                                                                                              \
        g, k, offsetof(struct build_record, member), cmp                                           \
    }
static const struct field fields[] = {
    F(NULL, "sagebuild_version", sagebuild_version, 1),
    F(NULL, "archs", archs, 1),
    F(NULL, "head_dims", head_dims, 1),
    F("nvcc", "path", nvcc_path, 1),
    F("nvcc", "version", nvcc_version, 1),
    F("nvcc", "command", nvcc_command, 0),
    F("cuda_home", "path", cuda_home, 0),
    F("cuda_home", "chosen_by", cuda_home_rule, 0),
    F("host_compiler", "path", host_cxx_path, 1),
    F("host_compiler", "version", host_cxx_version, 1),
    F("cmake", "generator", generator, 1),
    F("cmake", "version", cmake_version, 0),
    F("source", "dir", kernels_dir, 1),
    F("source", "sha256", source_hash, 0),
    F("source", "revision", source_revision, 0),
    F(NULL, "finished_at", finished_at, 0),
};
#undef F
#define NFIELDS (sizeof fields / sizeof fields[0])

static char **field_ptr(const struct build_record *r, const struct field *f)
{
    return (char **)((char *)r + f->offset);
}

static cJSON *group_of(cJSON *root, const char *group)
{
    if (!group)
        return root;
    cJSON *g = cJSON_GetObjectItemCaseSensitive(root, group);
    if (!g)
        g = cJSON_AddObjectToObject(root, group);
    return g;
}

char *build_record_to_json(const struct build_record *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema", BUILD_RECORD_SCHEMA);
    for (size_t i = 0; i < NFIELDS; i++) {
        const char *v = *field_ptr(r, &fields[i]);
        cJSON *g = group_of(root, fields[i].group);
        if (v)
            cJSON_AddStringToObject(g, fields[i].key, v);
        else
            cJSON_AddNullToObject(g, fields[i].key);
    }
    cJSON *flags = cJSON_AddArrayToObject(root, "flags");
    for (int i = 0; i < r->nflags; i++)
        cJSON_AddItemToArray(flags, cJSON_CreateString(r->flags[i]));
    cJSON_AddNumberToObject(root, "jobs", r->jobs);
    cJSON *t = cJSON_AddObjectToObject(root, "time");
    /* two decimals are what a person reads; cJSON would print 17 digits. Rounded, not cut, so
     * that a record read and written again (a build that compiled nothing) keeps its values. */
    cJSON_AddNumberToObject(t, "cpu_seconds",
                            (double)(long long)(r->cpu_seconds * 100 + 0.5) / 100);
    cJSON_AddNumberToObject(t, "wall_seconds",
                            (double)(long long)(r->wall_seconds * 100 + 0.5) / 100);
    if (r->have_ptxas) {
        cJSON *p = cJSON_AddObjectToObject(root, "ptxas");
        cJSON_AddNumberToObject(p, "kernels", r->ptxas.kernels);
        cJSON_AddNumberToObject(p, "max_registers", r->ptxas.max_registers);
        cJSON_AddNumberToObject(p, "functions_spilling", r->ptxas.functions_spilling);
        cJSON_AddNumberToObject(p, "spill_stores_bytes", (double)r->ptxas.spill_stores);
        cJSON_AddNumberToObject(p, "spill_loads_bytes", (double)r->ptxas.spill_loads);
        if (r->ptxas.worst[0])
            cJSON_AddStringToObject(p, "worst_spill", r->ptxas.worst);
        else
            cJSON_AddNullToObject(p, "worst_spill");
    } else {
        cJSON_AddNullToObject(root, "ptxas");
    }
    return json_text(root);
}

int build_record_from_json(const char *text, struct build_record *r)
{
    memset(r, 0, sizeof *r);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsObject(root) || !cJSON_IsNumber(schema) ||
        schema->valuedouble != BUILD_RECORD_SCHEMA) {
        cJSON_Delete(root);
        return -1;
    }
    for (size_t i = 0; i < NFIELDS; i++) {
        cJSON *g = fields[i].group ? cJSON_GetObjectItemCaseSensitive(root, fields[i].group) : root;
        cJSON *v = cJSON_GetObjectItemCaseSensitive(g, fields[i].key);
        if (cJSON_IsString(v))
            *field_ptr(r, &fields[i]) = xstrdup(v->valuestring);
    }
    cJSON *flags = cJSON_GetObjectItemCaseSensitive(root, "flags");
    r->flags = json_string_list(flags, &r->nflags);
    cJSON *jobs = cJSON_GetObjectItemCaseSensitive(root, "jobs");
    if (cJSON_IsNumber(jobs))
        r->jobs = jobs->valueint;
    cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "time");
    cJSON *cpu = cJSON_GetObjectItemCaseSensitive(t, "cpu_seconds");
    cJSON *wall = cJSON_GetObjectItemCaseSensitive(t, "wall_seconds");
    r->cpu_seconds = cJSON_IsNumber(cpu) ? cpu->valuedouble : 0;
    r->wall_seconds = cJSON_IsNumber(wall) ? wall->valuedouble : 0;
    cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "ptxas");
    if (cJSON_IsObject(p)) {
        cJSON *v;
        r->have_ptxas = 1;
        if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(p, "kernels")))
            r->ptxas.kernels = v->valueint;
        if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(p, "max_registers")))
            r->ptxas.max_registers = v->valueint;
        if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(p, "functions_spilling")))
            r->ptxas.functions_spilling = v->valueint;
        if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(p, "spill_stores_bytes")))
            r->ptxas.spill_stores = (long long)v->valuedouble;
        if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(p, "spill_loads_bytes")))
            r->ptxas.spill_loads = (long long)v->valuedouble;
        if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(p, "worst_spill")))
            snprintf(r->ptxas.worst, sizeof r->ptxas.worst, "%s", v->valuestring);
    }
    cJSON_Delete(root);
    return 0;
}

void build_record_free(struct build_record *r)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        char **p = field_ptr(r, &fields[i]);
        free(*p);
        *p = NULL;
    }
    for (int i = 0; i < r->nflags; i++)
        free(r->flags[i]);
    free(r->flags);
    r->flags = NULL;
    r->nflags = 0;
}

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static const char *shown(const char *s)
{
    return s ? s : "none";
}

static const char *label(const struct field *f, char *buf, size_t len)
{
    if (f->group)
        snprintf(buf, len, "%s %s", f->group, f->key);
    else
        snprintf(buf, len, "%s", f->key);
    for (char *p = buf; *p; p++)
        if (*p == '_')
            *p = ' ';
    return buf;
}

enum build_freshness build_decide(const struct build_record *prev, const struct build_record *want,
                                  int outputs_present, int force, char **why)
{
    char *reason = NULL;
    enum build_freshness v = BUILD_UP_TO_DATE;
    if (force) {
        v = BUILD_FORCED;
        reason = xstrdup("--force was given");
    } else if (!prev) {
        v = BUILD_NO_RECORD;
        reason = xstrdup("no earlier build here");
    } else {
        for (size_t i = 0; i < NFIELDS && !reason; i++) {
            if (!fields[i].compared)
                continue;
            const char *a = *field_ptr(prev, &fields[i]), *b = *field_ptr(want, &fields[i]);
            if (!same(a, b)) {
                char lb[64];
                v = BUILD_CONFIG_CHANGED;
                reason = xasprintf("%s changed (%s -> %s)", label(&fields[i], lb, sizeof lb),
                                   shown(a), shown(b));
            }
        }
        if (!reason && !same(prev->source_hash, want->source_hash)) {
            v = BUILD_SOURCES_CHANGED;
            reason = xstrdup("the kernel sources changed");
        }
        if (!reason && !outputs_present) {
            v = BUILD_OUTPUTS_MISSING;
            reason = xstrdup("installed files are missing");
        }
    }
    if (why)
        *why = reason ? reason : xstrdup("nothing changed");
    else
        free(reason);
    return v;
}
