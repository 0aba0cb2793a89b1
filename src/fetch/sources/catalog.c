#include "catalog.h"
#include "manifest.h"
#include "resolve.h"
#include "fetch/engine/verify.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/xdg.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MANIFEST_MAX (16u << 20)

char *catalog_cache_dir(void)
{
    char *base = xdg_cache_dir();
    if (!base)
        return NULL;
    char *d = fs_join(base, "cuda");
    free(base);
    return d;
}

char **catalog_dir_labels(const char *dir, int *n)
{
    *n = 0;
    int cap = 1;
    char **out = xcalloc(1, sizeof *out);
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d)
        return out;
    struct dirent *de;
    while ((de = readdir(d))) {
        char *label = manifest_label_from_name(de->d_name);
        if (!label)
            continue;
        out = xgrow(out, &cap, *n + 2, sizeof *out);
        out[(*n)++] = label;
        out[*n] = NULL;
    }
    closedir(d);
    return out;
}

void manifest_text_free(struct manifest_text *m)
{
    free(m->text);
    free(m->label);
    free(m->origin);
    memset(m, 0, sizeof *m);
}

static void append_labels(char ***all, int *n, char **more, int nmore)
{
    *all = xrealloc(*all, (size_t)(*n + nmore + 1) * sizeof **all);
    for (int i = 0; i < nmore; i++)
        (*all)[(*n)++] = more[i];
    free(more);
}

static int has_patch(const char *request)
{
    int dots = 0;
    for (const char *p = request; *p; p++)
        dots += *p == '.';
    return dots >= 2;
}

char *catalog_resolve(const struct catalog *c, const char *request, struct fetch_error *err)
{
    char **all = NULL;
    int n = 0, k = 0;
    char **found = catalog_dir_labels(c->bundled_dir, &k);
    append_labels(&all, &n, found, k);
    found = catalog_dir_labels(c->cache_dir, &k);
    append_labels(&all, &n, found, k);
    if (!c->dl->offline && !has_patch(request)) {
        /* A mirror may know a newer patch release than anything bundled. */
        for (int i = 0; i < c->nmirrors; i++) {
            char *url = url_join(c->mirrors[i], ""), *body = NULL, *e = NULL;
            if (dl_get_text(url, 4u << 20, c->dl, &body, NULL, &e) == 0) {
                found = resolve_index_labels(body, &k);
                append_labels(&all, &n, found, k);
            }
            free(e);
            free(body);
            free(url);
        }
    }
    char *label = resolve_label(request, all, n);
    if (!label && has_patch(request)) {
        label = xstrdup(request); /* not known yet: the mirrors may still have it */
    }
    if (!label)
        fetch_fail(err, FETCH_ERR_NOT_FOUND,
                   "no CUDA release matching %s is known (bundled, cached or on the mirrors); "
                   "name one with --cuda X.Y.Z or --manifest",
                   request);
    resolve_free_list(all, n);
    return label;
}

static void fill_hash(struct manifest_text *m)
{
    struct sha256_ctx c = {0};
    sha256_init(&c);
    sha256_update(&c, m->text, m->len);
    sha256_final(&c, m->sha256);
    sha256_free(&c);
}

static char *label_in_text(const char *text, size_t len)
{
    cJSON *doc = cJSON_ParseWithLength(text, len);
    const cJSON *v = doc ? cJSON_GetObjectItemCaseSensitive(doc, "release_label") : NULL;
    char *out = cJSON_IsString(v) ? xstrdup(v->valuestring) : NULL;
    cJSON_Delete(doc);
    return out;
}

static int load_file(const char *path, struct manifest_text *out, const char *origin_kind)
{
    size_t len = 0;
    char *text = fs_read_file(path, MANIFEST_MAX, &len);
    if (!text)
        return -1;
    out->text = text;
    out->len = len;
    out->origin = origin_kind ? xasprintf("%s %s", origin_kind, path) : xstrdup(path);
    fill_hash(out);
    return 0;
}

/* Keeps a copy under the cache so `mirror` can serve it and --offline can use it. */
static void cache_manifest(const struct catalog *c, const char *label,
                           const struct manifest_text *m)
{
    if (!c->cache_dir || fs_mkdir_p(c->cache_dir, 0755) < 0)
        return;
    char *name = xasprintf("%s/redistrib_%s.json", c->cache_dir, label);
    char *tmp = xasprintf("%s.tmp.%ld", name, (long)getpid());
    if (fs_write_file(tmp, m->text, m->len) == 0)
        rename(tmp, name);
    unlink(tmp);
    free(tmp);
    free(name);
}

int catalog_load(const struct catalog *c, const char *label, struct manifest_text *out,
                 struct fetch_error *err)
{
    memset(out, 0, sizeof *out);
    const char *why = resolve_label_check(label);
    if (why)
        return fetch_fail(err, FETCH_ERR_OTHER, "the release '%.64s' %s", label, why);
    char *file = xasprintf("redistrib_%s.json", label);
    const char *dirs[2] = {c->bundled_dir, c->cache_dir};
    const char *kinds[2] = {"bundled", "cache"};
    for (int i = 0; i < 2; i++) {
        if (!dirs[i])
            continue;
        char *p = fs_join(dirs[i], file);
        int rc = load_file(p, out, kinds[i]);
        free(p);
        if (rc == 0) {
            out->label = xstrdup(label);
            if (i == 0)
                cache_manifest(c, label, out);
            free(file);
            return 0;
        }
    }
    free(file);
    if (c->dl->offline) /* the way out is the file itself, offline too (--manifest) */
        return fetch_fail(err, FETCH_ERR_NO_MANIFEST,
                          "no manifest for CUDA %s is bundled or cached, and --offline forbids "
                          "downloading it",
                          label);
    struct strbuf tried = STRBUF_INIT;
    for (int i = 0; i < c->nmirrors; i++) {
        char *url = url_manifest(c->mirrors[i], label), *e = NULL;
        if (dl_get_text(url, MANIFEST_MAX, c->dl, &out->text, &out->len, &e) == 0) {
            out->origin = url;
            out->label = xstrdup(label);
            fill_hash(out);
            cache_manifest(c, label, out);
            sb_free(&tried);
            return 0;
        }
        sb_addf(&tried, "  %s\n", e);
        free(e);
        free(url);
    }
    fetch_fail(err, FETCH_ERR_NO_MANIFEST, "no mirror has the manifest for CUDA %s:\n%s", label,
               sb_str(&tried));
    sb_free(&tried);
    return -1;
}

int catalog_load_named(const struct catalog *c, const char *file_or_url, const char *fallback_label,
                       struct manifest_text *out, struct fetch_error *err)
{
    memset(out, 0, sizeof *out);
    if (strstr(file_or_url, "://")) {
        if (c->dl->offline && strncmp(file_or_url, "file://", 7))
            return fetch_fail(err, FETCH_ERR_OFFLINE, "--offline forbids downloading %s",
                              file_or_url);
        char *why_not = NULL;
        if (dl_get_text(file_or_url, MANIFEST_MAX, c->dl, &out->text, &out->len, &why_not) < 0)
            return fetch_fail_with(err, FETCH_ERR_OTHER, why_not);
        out->origin = xstrdup(file_or_url);
        fill_hash(out);
    } else if (load_file(file_or_url, out, NULL) < 0) {
        return fetch_fail_errno(err, errno, "cannot read %s", file_or_url);
    }
    out->label = label_in_text(out->text, out->len);
    if (!out->label)
        out->label = manifest_label_from_name(file_or_url);
    if (!out->label && fallback_label)
        out->label = xstrdup(fallback_label);
    if (!out->label) {
        manifest_text_free(out);
        return fetch_fail(err, FETCH_ERR_OTHER,
                          "%s has no release_label and its name says none; add --cuda X.Y.Z",
                          file_or_url);
    }
    /* The label names the cached copy and the default prefix: "9.9.9/../../.." must not. */
    const char *why = resolve_label_check(out->label);
    if (why) {
        fetch_fail(err, FETCH_ERR_OTHER, "%s: its release_label '%.64s' %s; refusing it",
                   file_or_url, out->label, why);
        manifest_text_free(out);
        return -1;
    }
    cache_manifest(c, out->label, out);
    return 0;
}
