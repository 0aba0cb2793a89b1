#include "resolve.h"
#include "fetch/engine/pathsafe.h"
#include "util/strbuf.h"
#include "util/version.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *resolve_platform_for_machine(const char *machine)
{
    if (!machine)
        return NULL;
    if (!strcmp(machine, "x86_64") || !strcmp(machine, "amd64"))
        return "linux-x86_64";
    if (!strcmp(machine, "aarch64") || !strcmp(machine, "arm64"))
        return "linux-sbsa";
    return NULL;
}

char *resolve_label(const char *request, char *const *labels, int n)
{
    struct version want;
    if (!request || version_parse_strict(request, &want) < 0)
        return NULL;
    int best = -1;
    struct version best_v = {{0}, 0};
    for (int i = 0; i < n; i++) {
        struct version v;
        if (version_parse_strict(labels[i], &v) < 0 || v.nparts < want.nparts)
            continue;
        if (version_cmp_n(&v, &want, want.nparts) != 0)
            continue;
        if (best < 0 || version_cmp(&v, &best_v) > 0) {
            best = i;
            best_v = v;
        }
    }
    return best < 0 ? NULL : xstrdup(labels[best]);
}

char *resolve_newest(char *const *labels, int n)
{
    int best = -1;
    struct version best_v = {{0}, 0};
    for (int i = 0; i < n; i++) {
        struct version v;
        if (version_parse_strict(labels[i], &v) < 0)
            continue;
        if (best < 0 || version_cmp(&v, &best_v) > 0) {
            best = i;
            best_v = v;
        }
    }
    return best < 0 ? NULL : xstrdup(labels[best]);
}

static int list_has(char *const *list, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(list[i], s))
            return 1;
    return 0;
}

/* Orders positions of a list by their string, then by position: the first of equal strings
 * comes first. */
static int by_str_then_pos(const void *a, const void *b, void *list)
{
    char *const *l = list;
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(l[x], l[y]);
    return c ? c : (x > y) - (x < y);
}

/* Drops repeated strings, keeping each first one in its place, in n log n: a listing from a
 * mirror may repeat a name 100 000 times, and a search per name would be quadratic. */
static int drop_repeats(char **list, int n)
{
    int *pos = xcalloc((size_t)n + 1, sizeof *pos);
    for (int i = 0; i < n; i++)
        pos[i] = i;
    qsort_r(pos, (size_t)n, sizeof *pos, by_str_then_pos, list);
    for (int i = 1, kept = pos[0]; i < n; i++) {
        if (!strcmp(list[kept], list[pos[i]])) {
            free(list[pos[i]]);
            list[pos[i]] = NULL;
        } else {
            kept = pos[i];
        }
    }
    free(pos);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (list[i])
            list[k++] = list[i];
    list[k] = NULL;
    return k;
}

char **resolve_index_labels(const char *html, int *n)
{
    *n = 0;
    int cap = 8;
    char **out = xcalloc((size_t)cap, sizeof *out);
    static const char pre[] = "redistrib_";
    for (const char *p = html ? strstr(html, pre) : NULL; p; p = strstr(p + 1, pre)) {
        const char *s = p + strlen(pre);
        size_t len = 0;
        while (isdigit((unsigned char)s[len]) || s[len] == '.')
            len++;
        /* The digits end with ".json": drop the '.' that belongs to the extension. */
        if (len < 2 || strncmp(s + len - 1, ".json", 5) || !isdigit((unsigned char)s[0]))
            continue;
        char *label = xstrndup(s, len - 1);
        if (resolve_label_check(label)) {
            free(label);
            continue;
        }
        out = xgrow(out, &cap, *n + 2, sizeof *out);
        out[(*n)++] = label;
    }
    *n = drop_repeats(out, *n);
    return out;
}

const char *resolve_label_check(const char *label)
{
    if (!label || !*label)
        return "is empty";
    if (strlen(label) > 32)
        return "is longer than 32 bytes";
    struct version v;
    for (const char *p = label; *p; p++)
        if (!isdigit((unsigned char)*p) && *p != '.')
            return "is not a release number (X.Y.Z: digits and dots only)";
    if (version_parse_strict(label, &v) < 0 || strstr(label, "..") ||
        label[strlen(label) - 1] == '.')
        return "is not a release number (X.Y.Z)";
    return NULL;
}

static const char *key_check(const char *key)
{
    if (!key || !*key)
        return "is empty";
    for (const char *p = key; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
            return "has a character other than letters, digits, '_', '-' and '.'";
    if (key[0] == '.' || strlen(key) > 128)
        return "starts with '.' or is too long";
    return NULL;
}

int resolve_plan_check(const struct fetch_plan *plan, char **err)
{
    const char *why = resolve_label_check(plan->release);
    if (why) {
        *err = xasprintf("the release label '%.64s' %s", plan->release ? plan->release : "", why);
        return -1;
    }
    for (int i = 0; i < plan->nitems; i++) {
        const struct fetch_item *it = &plan->items[i];
        if ((why = key_check(it->component))) {
            *err = xasprintf("the component name '%.64s' %s", it->component, why);
            return -1;
        }
        if ((why = path_cache_name_check(it->relative_path))) {
            *err = xasprintf("%s: its relative_path '%.200s' %s; refusing the manifest",
                             it->component, it->relative_path, why);
            return -1;
        }
        for (int k = 0; k < i; k++)
            if (!strcmp(plan->items[k].relative_path, it->relative_path)) {
                *err = xasprintf("%s and %s have the same relative_path '%.200s'; refusing the "
                                 "manifest (each archive needs its own file)",
                                 plan->items[k].component, it->component, it->relative_path);
                return -1;
            }
    }
    return 0;
}

void resolve_free_list(char **list, int n)
{
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

static const struct redist_component *find_extra(const struct redist_manifest *m, const char *name)
{
    const struct redist_component *c = manifest_component(m, name);
    char buf[256];
    if (!c) {
        snprintf(buf, sizeof buf, "cuda_%s", name);
        c = manifest_component(m, buf);
    }
    if (!c) {
        snprintf(buf, sizeof buf, "lib%s", name);
        c = manifest_component(m, buf);
    }
    return c;
}

static int add_item(struct fetch_plan *plan, const struct redist_component *c, const char *release,
                    const char *platform, char **err)
{
    for (int i = 0; i < plan->nitems; i++)
        if (!strcmp(plan->items[i].component, c->key))
            return 0;
    const struct redist_entry *e = manifest_entry_for(c, platform, release);
    if (!e) {
        const struct redist_platform *p = manifest_platform(c, platform);
        *err = p ? xasprintf("%s has no %s entry for CUDA %s", c->key, platform, release)
                 : xasprintf("%s is not published for %s in this manifest", c->key, platform);
        return -1;
    }
    const char *why = NULL, *pwhy = NULL;
    if (!e->relative_path)
        why = "has no relative_path";
    else if ((pwhy = path_cache_name_check(e->relative_path)))
        why = "has an unsafe relative_path";
    else if (!e->sha256[0])
        why = "has no valid sha256";
    else if (e->size < 0)
        why = "has no valid size";
    if (why) {
        *err = pwhy ? xasprintf("manifest entry %s/%s %s '%.200s': it %s", c->key, platform, why,
                                e->relative_path, pwhy)
                    : xasprintf("manifest entry %s/%s %s", c->key, platform, why);
        return -1;
    }
    struct fetch_item *it;
    plan->items = xrealloc(plan->items, (size_t)(plan->nitems + 1) * sizeof *plan->items);
    it = &plan->items[plan->nitems++];
    memset(it, 0, sizeof *it);
    it->component = xstrdup(c->key);
    it->version = xstrdup(c->version ? c->version : "");
    it->relative_path = xstrdup(e->relative_path);
    memcpy(it->sha256, e->sha256, sizeof it->sha256);
    it->size = e->size;
    return 0;
}

int resolve_plan(const struct redist_manifest *m, const char *release, const char *platform,
                 char *const *extras, int nextras, struct fetch_plan *plan, char **err)
{
    memset(plan, 0, sizeof *plan);
    *err = NULL;
    plan->release = xstrdup(release);
    plan->platform = xstrdup(platform);
    /* Needed by every release; the next two exist as components only from CUDA 13.0 on, when
     * cicc/libnvvm and the crt headers left cuda_nvcc. Their presence decides, not a version. */
    static const char *const required[] = {"cuda_nvcc", "cuda_cudart", "cuda_cccl"};
    static const char *const when_present[] = {"cuda_crt", "libnvvm"};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
        const struct redist_component *c = manifest_component(m, required[i]);
        if (!c) {
            *err = xasprintf("the manifest for CUDA %s has no %s component", release, required[i]);
            goto fail;
        }
        if (add_item(plan, c, release, platform, err) < 0)
            goto fail;
    }
    for (size_t i = 0; i < sizeof when_present / sizeof *when_present; i++) {
        const struct redist_component *c = manifest_component(m, when_present[i]);
        if (c && add_item(plan, c, release, platform, err) < 0)
            goto fail;
    }
    for (int i = 0; i < nextras; i++) {
        const struct redist_component *c = find_extra(m, extras[i]);
        if (!c) {
            *err = xasprintf("no component named '%s' in the manifest for CUDA %s", extras[i],
                             release);
            goto fail;
        }
        if (add_item(plan, c, release, platform, err) < 0)
            goto fail;
    }
    if (resolve_plan_check(plan, err) < 0)
        goto fail;
    return 0;
fail:
    fetch_plan_free(plan);
    return -1;
}

char *url_join(const char *base, const char *rel)
{
    size_t n = strlen(base);
    /* A manifest URL: its directory is the base (what parse_redist.py does too). */
    if (n > 5 && !strcmp(base + n - 5, ".json")) {
        const char *slash = strrchr(base, '/');
        n = slash ? (size_t)(slash - base) : 0;
    }
    while (n > 0 && base[n - 1] == '/')
        n--;
    while (*rel == '/')
        rel++;
    return xasprintf("%.*s/%s", (int)n, base, rel);
}

char *url_manifest(const char *base, const char *label)
{
    char *rel = xasprintf("redistrib_%s.json", label);
    char *u = url_join(base, rel);
    free(rel);
    return u;
}

static void add_mirror(char ***list, int *n, const char *s, size_t len)
{
    while (len && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    if (!len)
        return;
    char *m = xstrndup(s, len);
    if (list_has(*list, *n, m)) {
        free(m);
        return;
    }
    *list = xrealloc(*list, (size_t)(*n + 2) * sizeof **list);
    (*list)[(*n)++] = m;
    (*list)[*n] = NULL;
}

char **resolve_mirrors(char *const *cli, int ncli, const char *env, int no_default, int *n)
{
    char **list = xcalloc(1, sizeof *list);
    *n = 0;
    for (int i = 0; i < ncli; i++)
        add_mirror(&list, n, cli[i], strlen(cli[i]));
    for (const char *p = env; p && *p;) {
        size_t len = strcspn(p, " ,\n\t");
        add_mirror(&list, n, p, len);
        p += len;
        p += strspn(p, " ,\n\t");
    }
    if (!no_default)
        add_mirror(&list, n, REDIST_DEFAULT_MIRROR, strlen(REDIST_DEFAULT_MIRROR));
    return list;
}
