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

int all_read_doctor(const char *json, int gpus_present, struct doctor_summary *out, char **error)
{
    memset(out, 0, sizeof *out);
    *error = NULL;
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(root, "checks");
    if (!cJSON_IsObject(root) || !cJSON_IsArray(checks)) {
        *error = xstrdup("doctor's output is not its JSON (no \"checks\" array)");
        cJSON_Delete(root);
        return -1;
    }
    cJSON *c;
    cJSON_ArrayForEach(c, checks)
    {
        cJSON *status = cJSON_GetObjectItemCaseSensitive(c, "status");
        const char *s = cJSON_IsString(status) ? status->valuestring : "";
        if (!strcmp(s, "ok"))
            out->ok++;
        else if (!strcmp(s, "warn"))
            out->warn++;
        else if (!strcmp(s, "skip"))
            out->skip++;
        else if (!strcmp(s, "error"))
            out->error++;
        if (!strcmp(s, "warn") && out->nwarnings < ALL_MAX_FINDINGS) {
            struct finding *w = &out->warnings[out->nwarnings++];
            w->id = str_dup_or_null(c, "id");
            w->summary = str_dup_or_null(c, "summary");
            w->fix = str_dup_or_null(c, "fix");
            w->action = FINDING_IGNORE; /* warnings never block */
        }
        if (strcmp(s, "error") || out->nfindings >= ALL_MAX_FINDINGS)
            continue;
        struct finding *f = &out->findings[out->nfindings++];
        f->id = str_dup_or_null(c, "id");
        f->summary = str_dup_or_null(c, "summary");
        f->fix = str_dup_or_null(c, "fix");
        f->action = all_doctor_action(f->id, gpus_present);
        if (f->action == FINDING_FETCH)
            out->needs_fetch = 1;
    }
    /* Prefer the doctor's own totals when it gives them. */
    cJSON *counts = cJSON_GetObjectItemCaseSensitive(root, "counts");
    if (cJSON_IsObject(counts)) {
        out->ok = count_of(counts, "ok");
        out->warn = count_of(counts, "warn");
        out->error = count_of(counts, "error");
        out->skip = count_of(counts, "skip");
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

void all_doctor_summary_free(struct doctor_summary *d)
{
    for (int i = 0; i < d->nfindings; i++) {
        free(d->findings[i].id);
        free(d->findings[i].summary);
        free(d->findings[i].fix);
    }
    for (int i = 0; i < d->nwarnings; i++) {
        free(d->warnings[i].id);
        free(d->warnings[i].summary);
        free(d->warnings[i].fix);
    }
    memset(d, 0, sizeof *d);
}

/* "a.b.c" inside nested objects. */
static cJSON *path(const cJSON *root, const char *dotted)
{
    char *copy = xstrdup(dotted);
    const cJSON *cur = root;
    for (char *save = NULL, *k = strtok_r(copy, ".", &save); k && cur;
         k = strtok_r(NULL, ".", &save))
        cur = cJSON_GetObjectItemCaseSensitive(cur, k);
    free(copy);
    return (cJSON *)cur;
}

static char *first_string(const cJSON *root, const char *const *paths)
{
    for (; *paths; paths++) {
        cJSON *v = path(root, *paths);
        if (cJSON_IsString(v) && v->valuestring && *v->valuestring)
            return xstrdup(v->valuestring);
    }
    return NULL;
}

/* "int8-fp16, fp16" from the modes whose "safe" is want. */
static void mode_names(const cJSON *modes, int want, struct strbuf *sb)
{
    int n = 0;
    cJSON *m;
    cJSON_ArrayForEach(m, modes)
    {
        cJSON *safe = cJSON_GetObjectItemCaseSensitive(m, "safe");
        cJSON *supported = cJSON_GetObjectItemCaseSensitive(m, "supported");
        cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "mode");
        if (cJSON_IsBool(safe) && !cJSON_IsFalse(supported) && cJSON_IsTrue(safe) == want &&
            cJSON_IsString(name))
            sb_addf(sb, "%s%s", n++ ? ", " : "", name->valuestring);
    }
}

/* One line per GPU: the recommended mode and its speed-up, the safe modes, the unsafe ones. */
static void read_devices(const cJSON *devices, struct stage_result *out)
{
    struct strbuf sb = STRBUF_INIT;
    cJSON *d;
    cJSON_ArrayForEach(d, devices)
    {
        cJSON *idx = cJSON_GetObjectItemCaseSensitive(d, "index");
        char *name = str_dup_or_null(d, "name");
        char *verdict = str_dup_or_null(d, "verdict");
        char *rec = str_dup_or_null(d, "recommended_mode");
        char *hint = str_dup_or_null(d, "build_hint");
        cJSON *has_code = cJSON_GetObjectItemCaseSensitive(d, "has_code");
        cJSON *modes = cJSON_GetObjectItemCaseSensitive(d, "modes");
        sb_addf(&sb, "GPU %d %s: ", cJSON_IsNumber(idx) ? idx->valueint : 0, name ? name : "?");
        if (cJSON_IsFalse(has_code)) {
            sb_addf(&sb, "no code for it%s%s", hint ? "; run: " : "", hint ? hint : "");
        } else {
            sb_addf(&sb, "%s%s", rec ? "recommended mode " : "no mode is safe to recommend",
                    rec ? rec : "");
            cJSON *m;
            cJSON_ArrayForEach(m, modes)
            {
                cJSON *mode = cJSON_GetObjectItemCaseSensitive(m, "mode");
                cJSON *tops = cJSON_GetObjectItemCaseSensitive(m, "tops");
                if (rec && cJSON_IsString(mode) && !strcmp(mode->valuestring, rec) &&
                    cJSON_IsNumber(tops))
                    sb_addf(&sb, " (%.0f TOPS)", tops->valuedouble);
            }
            struct strbuf safe = STRBUF_INIT, unsafe = STRBUF_INIT;
            mode_names(modes, 1, &safe);
            mode_names(modes, 0, &unsafe);
            if (safe.len)
                sb_addf(&sb, "; safe: %s", safe.buf);
            if (unsafe.len)
                sb_addf(&sb, "; not safe: %s", unsafe.buf);
            if (!safe.len && !unsafe.len) /* an older sagebuild's JSON: only verdicts */
                sb_addf(&sb, "; %s", verdict ? verdict : "?");
            sb_free(&safe);
            sb_free(&unsafe);
        }
        sb_adds(&sb, "\n");
        free(name);
        free(verdict);
        free(rec);
        free(hint);
    }
    out->verdicts = sb.len ? sb_detach(&sb) : NULL;
}

int all_read_stage(const char *json, struct stage_result *out, char **error)
{
    memset(out, 0, sizeof *out);
    *error = NULL;
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    if (!cJSON_IsObject(root)) {
        *error = xstrdup("its output is not a JSON object");
        cJSON_Delete(root);
        return -1;
    }
    out->status = str_dup_or_null(root, "status");
    cJSON *code = cJSON_GetObjectItemCaseSensitive(root, "exit_code");
    out->exit_code = cJSON_IsNumber(code) ? code->valueint : -1;
    cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
    if (cJSON_IsString(err)) {
        out->error = xstrdup(err->valuestring);
    } else if (cJSON_IsObject(err)) {
        static const char *const summary_keys[] = {"summary", "message", NULL};
        out->error = first_string(err, summary_keys);
        out->fix = str_dup_or_null(err, "fix");
        out->log = str_dup_or_null(err, "log");
        out->log_tail = str_dup_or_null(err, "log_tail");
        if (!out->log_tail)
            out->log_tail = str_dup_or_null(err, "output_tail");
    }
    if (!out->fix)
        out->fix = str_dup_or_null(root, "fix");
    static const char *const prefix_keys[] = {"prefix",         "result.prefix", "install.prefix",
                                              "toolkit.prefix", "cuda_home",     NULL};
    out->prefix = first_string(root, prefix_keys);
    static const char *const out_keys[] = {"out", NULL};
    out->out = first_string(root, out_keys);
    static const char *const arch_keys[] = {"record.archs", NULL};
    out->archs = first_string(root, arch_keys);
    cJSON *utd = cJSON_GetObjectItemCaseSensitive(root, "up_to_date");
    out->up_to_date = cJSON_IsTrue(utd);
    cJSON *cpu = path(root, "record.time.cpu_seconds");
    out->cpu_seconds = cJSON_IsNumber(cpu) ? cpu->valuedouble : 0;
    out->skipped = str_dup_or_null(root, "skipped");
    out->record = str_dup_or_null(root, "recommendation_record");
    cJSON *devices = cJSON_GetObjectItemCaseSensitive(root, "devices");
    if (cJSON_IsArray(devices))
        read_devices(devices, out);
    if (out->verdicts && out->record) {
        char *with = xasprintf("%srecorded in %s\n", out->verdicts, out->record);
        free(out->verdicts);
        out->verdicts = with;
    }
    cJSON_Delete(root);
    if (!out->status) {
        *error = xstrdup("its JSON has no \"status\"");
        all_stage_result_free(out);
        return -1;
    }
    return 0;
}

void all_stage_result_free(struct stage_result *r)
{
    free(r->status);
    free(r->error);
    free(r->fix);
    free(r->prefix);
    free(r->out);
    free(r->archs);
    free(r->log);
    free(r->log_tail);
    free(r->skipped);
    free(r->verdicts);
    free(r->record);
    memset(r, 0, sizeof *r);
}
