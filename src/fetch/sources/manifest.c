#include "manifest.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char *dup_string(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) && v->valuestring ? xstrdup(v->valuestring) : NULL;
}

/* `size` is a decimal string in every manifest seen; a number is accepted too. */
static long long parse_size(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return v->valuedouble >= 0 && v->valuedouble < 9e15 ? (long long)v->valuedouble : -1;
    if (!cJSON_IsString(v) || !v->valuestring || !*v->valuestring)
        return -1;
    const char *s = v->valuestring;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    if (strlen(s) > 15)
        return -1;
    return strtoll(s, NULL, 10);
}

static void parse_sha256(const cJSON *v, char out[65])
{
    out[0] = '\0';
    if (!cJSON_IsString(v) || !v->valuestring || strlen(v->valuestring) != 64)
        return;
    for (int i = 0; i < 64; i++) {
        char c = v->valuestring[i];
        if (!isxdigit((unsigned char)c))
            return;
        out[i] = (char)tolower((unsigned char)c);
    }
    out[64] = '\0';
}

static void parse_entry(const cJSON *obj, const char *variant, struct redist_entry *e)
{
    memset(e, 0, sizeof *e);
    e->variant = variant ? xstrdup(variant) : NULL;
    e->relative_path = dup_string(obj, "relative_path");
    parse_sha256(cJSON_GetObjectItemCaseSensitive(obj, "sha256"), e->sha256);
    e->size = parse_size(cJSON_GetObjectItemCaseSensitive(obj, "size"));
}

static void parse_platform(const cJSON *obj, struct redist_platform *p)
{
    memset(p, 0, sizeof *p);
    p->name = xstrdup(obj->string);
    if (cJSON_GetObjectItemCaseSensitive(obj, "relative_path")) {
        p->entries = xcalloc(1, sizeof *p->entries);
        parse_entry(obj, NULL, &p->entries[0]);
        p->nentries = 1;
        return;
    }
    /* Variant form: each member is a tag holding a plain entry. */
    int n = cJSON_GetArraySize(obj);
    p->entries = xcalloc((size_t)(n > 0 ? n : 1), sizeof *p->entries);
    const cJSON *v;
    cJSON_ArrayForEach(v, obj)
    {
        if (cJSON_IsObject(v) && v->string)
            parse_entry(v, v->string, &p->entries[p->nentries++]);
    }
}

static void parse_component(const cJSON *obj, struct redist_component *c)
{
    memset(c, 0, sizeof *c);
    c->key = xstrdup(obj->string);
    c->name = dup_string(obj, "name");
    c->version = dup_string(obj, "version");
    int n = cJSON_GetArraySize(obj);
    c->platforms = xcalloc((size_t)(n > 0 ? n : 1), sizeof *c->platforms);
    const cJSON *v;
    cJSON_ArrayForEach(v, obj)
    {
        /* Platforms are the object members; name/version/license strings and the
         * `cuda_variant` array are not. */
        if (cJSON_IsObject(v) && v->string)
            parse_platform(v, &c->platforms[c->nplatforms++]);
    }
}

int manifest_parse(const char *text, size_t len, struct redist_manifest *m, char **err)
{
    memset(m, 0, sizeof *m);
    *err = NULL;
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : 0;
        *err = xasprintf("not valid JSON (near byte %zu)", off);
        return -1;
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        *err = xstrdup("the top level is not a JSON object");
        return -1;
    }
    m->release_label = dup_string(root, "release_label");
    m->release_date = dup_string(root, "release_date");
    m->release_product = dup_string(root, "release_product");
    int n = cJSON_GetArraySize(root);
    m->components = xcalloc((size_t)(n > 0 ? n : 1), sizeof *m->components);
    const cJSON *v;
    cJSON_ArrayForEach(v, root)
    {
        if (cJSON_IsObject(v) && v->string)
            parse_component(v, &m->components[m->ncomponents++]);
    }
    cJSON_Delete(root);
    return 0;
}

void manifest_free(struct redist_manifest *m)
{
    for (int i = 0; i < m->ncomponents; i++) {
        struct redist_component *c = &m->components[i];
        for (int j = 0; j < c->nplatforms; j++) {
            struct redist_platform *p = &c->platforms[j];
            for (int k = 0; k < p->nentries; k++) {
                free(p->entries[k].variant);
                free(p->entries[k].relative_path);
            }
            free(p->entries);
            free(p->name);
        }
        free(c->platforms);
        free(c->key);
        free(c->name);
        free(c->version);
    }
    free(m->components);
    free(m->release_label);
    free(m->release_date);
    free(m->release_product);
    memset(m, 0, sizeof *m);
}

const struct redist_component *manifest_component(const struct redist_manifest *m, const char *key)
{
    for (int i = 0; i < m->ncomponents; i++)
        if (!strcmp(m->components[i].key, key))
            return &m->components[i];
    return NULL;
}

const struct redist_platform *manifest_platform(const struct redist_component *c,
                                                const char *platform)
{
    for (int i = 0; i < c->nplatforms; i++)
        if (!strcmp(c->platforms[i].name, platform))
            return &c->platforms[i];
    return NULL;
}

const struct redist_entry *manifest_entry_for(const struct redist_component *c,
                                              const char *platform, const char *release)
{
    const struct redist_platform *p = manifest_platform(c, platform);
    if (!p || p->nentries == 0)
        return NULL;
    if (p->nentries == 1 && !p->entries[0].variant)
        return &p->entries[0];
    /* Variant tags spell the CUDA version as "cuda13.1" or "cuda12": prefer the longer match. */
    int major = -1, minor = -1;
    if (release)
        sscanf(release, "%d.%d", &major, &minor);
    char want_mm[32], want_m[32];
    snprintf(want_mm, sizeof want_mm, "cuda%d.%d", major, minor);
    snprintf(want_m, sizeof want_m, "cuda%d", major);
    for (int i = 0; i < p->nentries; i++)
        if (p->entries[i].variant && !strcmp(p->entries[i].variant, want_mm))
            return &p->entries[i];
    for (int i = 0; i < p->nentries; i++)
        if (p->entries[i].variant && !strcmp(p->entries[i].variant, want_m))
            return &p->entries[i];
    return NULL;
}

char *manifest_label_from_name(const char *name)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    static const char pre[] = "redistrib_", suf[] = ".json";
    size_t n = strlen(base);
    if (n <= strlen(pre) + strlen(suf) || strncmp(base, pre, strlen(pre)) ||
        strcmp(base + n - strlen(suf), suf))
        return NULL;
    const char *s = base + strlen(pre);
    size_t len = n - strlen(pre) - strlen(suf);
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)s[i]) && s[i] != '.')
            return NULL;
    if (!isdigit((unsigned char)s[0]))
        return NULL;
    return xstrndup(s, len);
}
