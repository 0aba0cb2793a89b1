#include "all/stages.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

enum finding_action all_doctor_action(const char *id, int gpus_present)
{
    if (!id)
        return FINDING_IGNORE;
    if (starts(id, "toolkit."))
        return FINDING_FETCH;
    if (starts(id, "host."))
        return FINDING_BUILD; /* build looks for a g++-N within nvcc's limit */
    if (!strcmp(id, "build.disk"))
        return FINDING_BLOCK;
    if (starts(id, "build."))
        return FINDING_BUILD; /* no ninja: Makefiles; jobs: build sizes its own */
    /* driver.torch (driver too old for torch's CUDA) matters to torch, not to this library,
     * which carries its own runtime; the self-test shows whether the kernels run. */
    if (!strcmp(id, "driver.torch"))
        return FINDING_IGNORE;
    if (starts(id, "driver."))
        return gpus_present ? FINDING_BLOCK : FINDING_IGNORE;
    /* torch.*, sageattention.*, arch.* (TORCH_CUDA_ARCH_LIST): about torch extensions, not
     * this standalone library; shown, never blocking. */
    return FINDING_IGNORE;
}

static char *str_dup_or_null(const cJSON *o, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring ? xstrdup(v->valuestring) : NULL;
}

static int count_of(const cJSON *counts, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(counts, key);
    return cJSON_IsNumber(v) ? v->valueint : 0;
}

static void read_finding(const cJSON *f, enum finding_action action, struct finding *out)
{
    out->id = str_dup_or_null(f, "id");
    out->summary = str_dup_or_null(f, "summary");
    out->fix = str_dup_or_null(f, "fix");
    out->action = action;
}

/* Parses json and reads the result of command from it, which must give the process's exit
 * status: the document (to delete), or NULL with *error. */
static cJSON *parse_result(const char *json, const char *command, int process_exit,
                           struct stage_result *sr, char **error)
{
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    if (!cJSON_IsObject(root)) {
        *error = xstrdup("its output is not a JSON object");
        cJSON_Delete(root);
        return NULL;
    }
    if (stage_result_read(root, command, sr, error) < 0) {
        cJSON_Delete(root);
        return NULL;
    }
    if (sr->exit_code != process_exit) {
        *error = xasprintf("it exited with status %d, but its result says %d", process_exit,
                           sr->exit_code);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

int all_read_doctor(const char *json, int process_exit, int gpus_present,
                    struct doctor_summary *out, char **error)
{
    memset(out, 0, sizeof *out);
    *error = NULL;
    struct stage_result sr;
    cJSON *root = parse_result(json, "doctor", process_exit, &sr, error);
    if (!root)
        return -1;
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(sr.payload, "counts");
    const cJSON *findings = cJSON_GetObjectItemCaseSensitive(sr.payload, "findings");
    if (!cJSON_IsObject(counts) || !cJSON_IsArray(findings)) {
        *error = xstrdup("its result has no \"counts\" and \"findings\"");
        cJSON_Delete(root);
        return -1;
    }
    out->ok = count_of(counts, "ok");
    out->warn = count_of(counts, "warn");
    out->error = count_of(counts, "error");
    out->skip = count_of(counts, "skip");
    const cJSON *f;
    cJSON_ArrayForEach(f, findings)
    {
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(f, "status");
        const char *s = cJSON_IsString(status) ? status->valuestring : "";
        if (!strcmp(s, "warn") && out->nwarnings < ALL_MAX_FINDINGS) {
            read_finding(f, FINDING_IGNORE, &out->warnings[out->nwarnings++]); /* never block */
        } else if (!strcmp(s, "error") && out->nfindings < ALL_MAX_FINDINGS) {
            struct finding *e = &out->findings[out->nfindings++];
            read_finding(f, FINDING_IGNORE, e);
            e->action = all_doctor_action(e->id, gpus_present);
            out->needs_fetch |= e->action == FINDING_FETCH;
        }
    }
    cJSON_Delete(root);
    return 0;
}

const struct finding *all_first_block(const struct doctor_summary *d)
{
    for (int i = 0; i < d->nfindings; i++)
        if (d->findings[i].action == FINDING_BLOCK)
            return &d->findings[i];
    return NULL;
}

static void finding_free(struct finding *f)
{
    free(f->id);
    free(f->summary);
    free(f->fix);
}

void all_doctor_summary_free(struct doctor_summary *d)
{
    for (int i = 0; i < d->nfindings; i++)
        finding_free(&d->findings[i]);
    for (int i = 0; i < d->nwarnings; i++)
        finding_free(&d->warnings[i]);
    memset(d, 0, sizeof *d);
}

static char *payload_dup(const struct stage_result *sr, const char *key)
{
    const char *v = stage_payload_str(sr, key);
    return v ? xstrdup(v) : NULL;
}

int all_read_stage(const char *json, const char *command, int process_exit,
                   struct stage_outcome *out, char **error)
{
    memset(out, 0, sizeof *out);
    *error = NULL;
    struct stage_result sr;
    cJSON *root = parse_result(json, command, process_exit, &sr, error);
    if (!root)
        return -1;
    out->status = sr.status;
    out->exit_code = sr.exit_code;
    out->summary = xstrdup(sr.summary);
    out->fix = sr.fix ? xstrdup(sr.fix) : NULL;
    out->prefix = payload_dup(&sr, "prefix");
    out->out = payload_dup(&sr, "out");
    out->log = payload_dup(&sr, "log");
    out->log_tail = payload_dup(&sr, "log_tail");
    if (!out->log_tail)
        out->log_tail = payload_dup(&sr, "output_tail");
    out->skipped = payload_dup(&sr, "skipped");
    out->payload = cJSON_Duplicate(sr.payload, 1);
    cJSON_Delete(root);
    return 0;
}

void all_stage_outcome_free(struct stage_outcome *r)
{
    free(r->summary);
    free(r->fix);
    free(r->prefix);
    free(r->out);
    free(r->log);
    free(r->log_tail);
    free(r->skipped);
    cJSON_Delete(r->payload);
    memset(r, 0, sizeof *r);
}
