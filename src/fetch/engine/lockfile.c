#include "lockfile.h"
#include "util/json.h"
#include "cmd.h"
#include "util/shquote.h"
#include "util/strbuf.h"
#include "util/url.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *lockfile_format(const struct lock_info *li)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "schema", 1);
    cJSON_AddStringToObject(doc, "tool", "sagebuild " SAGEBUILD_VERSION);
    cJSON_AddStringToObject(doc, "source", li->source);
    cJSON_AddStringToObject(doc, "release_label", li->release);
    if (li->release_date)
        cJSON_AddStringToObject(doc, "release_date", li->release_date);
    cJSON_AddStringToObject(doc, "platform", li->platform);
    cJSON *m = cJSON_AddObjectToObject(doc, "manifest");
    char *origin = url_redact(li->manifest ? li->manifest : "");
    cJSON_AddStringToObject(m, "origin", origin);
    free(origin);
    cJSON_AddStringToObject(m, "sha256", li->manifest_sha256 ? li->manifest_sha256 : "");
    cJSON *arr = cJSON_AddArrayToObject(doc, "components");
    for (int i = 0; i < li->ncomponents; i++) {
        const struct lock_component *c = &li->components[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", c->name);
        cJSON_AddStringToObject(o, "version", c->version ? c->version : "");
        cJSON_AddStringToObject(o, "file", c->file ? c->file : "");
        cJSON_AddStringToObject(o, "sha256", c->sha256 ? c->sha256 : "");
        cJSON_AddNumberToObject(o, "size", (double)c->size);
        if (c->url) {
            char *shown = url_redact(c->url); /* no credentials in a world-readable file */
            cJSON_AddStringToObject(o, "url", shown);
            free(shown);
        } else
            cJSON_AddNullToObject(o, "url");
        cJSON_AddItemToArray(arr, o);
    }
    return json_text(doc);
}

static int same(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

int lockfile_matches(const char *text, const struct lock_info *li)
{
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    if (!doc)
        return 0;
    int ok = same(json_str(doc, "source"), li->source) &&
             same(json_str(doc, "release_label"), li->release) &&
             same(json_str(doc, "platform"), li->platform);
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(doc, "components");
    ok = ok && cJSON_IsArray(arr) && cJSON_GetArraySize(arr) == li->ncomponents;
    for (int i = 0; ok && i < li->ncomponents; i++) {
        int found = 0;
        const cJSON *o;
        cJSON_ArrayForEach(o, arr)
        {
            if (same(json_str(o, "name"), li->components[i].name) &&
                same(json_str(o, "sha256"), li->components[i].sha256))
                found = 1;
        }
        ok = found;
    }
    cJSON_Delete(doc);
    return ok;
}

char *lockfile_release(const char *text)
{
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    const char *r = doc ? json_str(doc, "release_label") : NULL;
    char *out = r ? xstrdup(r) : NULL;
    cJSON_Delete(doc);
    return out;
}

static char *env_quote(const char *s, enum env_shell sh)
{
    return shell_quote_always(s, sh == ENV_FISH ? SHELL_FISH : SHELL_POSIX);
}

static void set_var(struct strbuf *b, enum env_shell sh, const char *name, const char *value)
{
    char *q = env_quote(value, sh);
    if (sh == ENV_FISH)
        sb_addf(b, "set -gx %s %s;\n", name, q);
    else
        sb_addf(b, "export %s=%s;\n", name, q);
    free(q);
}

char *env_format(const struct env_values *v, enum env_shell sh)
{
    struct strbuf b = STRBUF_INIT;
    set_var(&b, sh, "CUDA_HOME", v->cuda_home);
    char *bin = xasprintf("%s/bin", v->cuda_home);
    char *q = env_quote(bin, sh);
    if (sh == ENV_FISH)
        sb_addf(&b, "set -gx PATH %s $PATH;\n", q);
    else
        sb_addf(&b, "export PATH=%s\"${PATH:+:$PATH}\";\n", q);
    free(q);
    free(bin);
    if (v->cccl_include) {
        q = env_quote(v->cccl_include, sh);
        if (sh == ENV_FISH)
            sb_addf(&b, "set -gx CPLUS_INCLUDE_PATH %s $CPLUS_INCLUDE_PATH;\n", q);
        else
            sb_addf(
                &b,
                "export CPLUS_INCLUDE_PATH=%s\"${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}\";\n",
                q);
        free(q);
    }
    if (v->cc && v->cxx) {
        /* torch hands $CC to nvcc as -ccbin; plain nvcc calls read NVCC_CCBIN. */
        set_var(&b, sh, "CC", v->cc);
        set_var(&b, sh, "CXX", v->cxx);
        set_var(&b, sh, "NVCC_CCBIN", v->cxx);
    }
    if (v->max_jobs > 0) {
        char n[16];
        snprintf(n, sizeof n, "%d", v->max_jobs);
        set_var(&b, sh, "MAX_JOBS", n);
    }
    return sb_detach(&b);
}
