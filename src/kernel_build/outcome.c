#include "outcome.h"

#include "util/json.h"
#include "util/stage_result.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

void build_outcome_error(struct build_outcome *o, int exit_code, char *error, char *fix)
{
    free(o->error);
    free(o->fix);
    o->exit_code = exit_code;
    o->error = error;
    o->fix = fix;
}

/* The stage result: what `all` shows and hands to the self-test. */
static void add_stage_result(cJSON *root, const struct build_outcome *o)
{
    const char *archs = o->have_rec ? o->rec.archs : NULL;
    double cpu = o->have_rec ? o->rec.cpu_seconds : 0;
    cJSON *payload = cJSON_CreateObject();
    cJSON_AddItemToObject(payload, "out", json_str_or_null(o->out_dir));
    cJSON_AddItemToObject(payload, "archs", json_str_or_null(archs));
    cJSON_AddBoolToObject(payload, "up_to_date", o->up_to_date);
    cJSON_AddBoolToObject(payload, "compiled", !o->error && !o->up_to_date);
    cJSON_AddNumberToObject(payload, "cpu_seconds", cpu);
    cJSON_AddItemToObject(payload, "log", json_str_or_null(o->error ? o->log_path : NULL));
    cJSON_AddItemToObject(payload, "log_tail", json_str_or_null(o->error ? o->log_tail : NULL));
    const char *where = o->out_dir ? o->out_dir : ".", *what = archs ? archs : "?";
    char *summary = o->error        ? xstrdup(o->error)
                    : o->up_to_date ? xasprintf("%s in %s: up to date, no work done", what, where)
                                    : xasprintf("%s in %s (%.0f CPU s)", what, where, cpu);
    stage_result_add(root, "build", o->exit_code, summary, o->error ? o->fix : NULL, payload);
    free(summary);
}

char *build_outcome_json(const struct build_outcome *o)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema", BUILD_JSON_SCHEMA);
    cJSON_AddStringToObject(root, "command", "build");
    cJSON_AddStringToObject(root, "status", o->error ? "error" : "ok");
    cJSON_AddNumberToObject(root, "exit_code", o->exit_code);
    cJSON_AddBoolToObject(root, "up_to_date", o->up_to_date);
    cJSON_AddBoolToObject(root, "compiled", !o->error && !o->up_to_date);
    cJSON_AddItemToObject(root, "reason", json_str_or_null(o->reason));
    cJSON_AddItemToObject(root, "out", json_str_or_null(o->out_dir));
    cJSON *notes = cJSON_AddArrayToObject(root, "notes");
    const char *p = sb_str(&o->notes);
    while (*p) {
        size_t n = strcspn(p, "\n");
        char *line = strndup(p, n);
        cJSON_AddItemToArray(notes, cJSON_CreateString(line));
        free(line);
        p += n + (p[n] == '\n');
    }
    cJSON *rec = NULL;
    if (o->have_rec) {
        char *text = build_record_to_json(&o->rec);
        rec = cJSON_Parse(text);
        free(text);
    }
    cJSON_AddItemToObject(root, "record", rec ? rec : cJSON_CreateNull());
    if (o->error) {
        cJSON *e = cJSON_AddObjectToObject(root, "error");
        cJSON_AddStringToObject(e, "summary", o->error);
        cJSON_AddItemToObject(e, "fix", json_str_or_null(o->fix));
        cJSON_AddItemToObject(e, "log", json_str_or_null(o->log_path));
        cJSON_AddItemToObject(e, "log_tail", json_str_or_null(o->log_tail));
    } else {
        cJSON_AddNullToObject(root, "error");
    }
    add_stage_result(root, o);
    return json_text(root);
}

void build_outcome_print(const struct build_outcome *o, FILE *f, const struct out_style *st)
{
    const char *red = out_color(st, OUT_ERROR), *green = out_color(st, OUT_OK);
    const char *reset = out_reset(st);
    const char *p = sb_str(&o->notes);
    while (*p) {
        size_t n = strcspn(p, "\n");
        fprintf(f, "note: %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
    if (o->error) {
        if (o->log_tail && *o->log_tail)
            fprintf(f, "--- last lines of %s ---\n%s%s--- end ---\n",
                    o->log_path ? o->log_path : "the build output", o->log_tail,
                    o->log_tail[strlen(o->log_tail) - 1] == '\n' ? "" : "\n");
        fprintf(f, "%sbuild failed:%s %s\n", red, reset, o->error);
        if (o->fix)
            fprintf(f, "  fix: %s\n", o->fix);
        if (o->log_path)
            fprintf(f, "  full log: %s\n", o->log_path);
        return;
    }
    const struct build_record *r = &o->rec;
    if (o->compiled_nothing) {
        fprintf(f,
                "%sup to date:%s %s (%s; %s) — %s; nothing needed compiling, files installed "
                "again\n",
                green, reset, o->out_dir, r->archs, r->nvcc_version ? r->nvcc_version : "nvcc",
                o->reason);
        return;
    }
    if (o->up_to_date) {
        fprintf(f, "%sup to date:%s %s (%s; %s) — %s, no work done\n", green, reset, o->out_dir,
                r->archs, r->nvcc_version ? r->nvcc_version : "nvcc", o->reason);
        return;
    }
    fprintf(f, "%sbuilt%s %s for %s (head dims %s) in %.1f s wall, %.1f CPU s\n", green, reset,
            o->out_dir, r->archs, r->head_dims, r->wall_seconds, r->cpu_seconds);
    fprintf(f, "  nvcc %s (%s), host compiler %s %s, %s, -j%d\n",
            r->nvcc_version ? r->nvcc_version : "?", r->nvcc_path, r->host_cxx_path,
            r->host_cxx_version ? r->host_cxx_version : "", r->generator, r->jobs);
    if (r->have_ptxas) {
        fprintf(f, "  ptxas: %d kernels, at most %d registers; ", r->ptxas.kernels,
                r->ptxas.max_registers);
        if (r->ptxas.functions_spilling)
            fprintf(f, "%lld bytes spill stores, %lld loads (most: %s)\n", r->ptxas.spill_stores,
                    r->ptxas.spill_loads, r->ptxas.worst);
        else
            fprintf(f, "no spills\n");
    }
    fprintf(f, "  library %s/lib/libsageattn.so; next: sagebuild selftest --build %s\n", o->out_dir,
            o->out_dir);
}

void build_outcome_free(struct build_outcome *o)
{
    free(o->error);
    free(o->fix);
    free(o->log_path);
    free(o->log_tail);
    sb_free(&o->notes);
    free(o->reason);
    free(o->out_dir);
    if (o->have_rec)
        build_record_free(&o->rec);
    memset(o, 0, sizeof *o);
}
