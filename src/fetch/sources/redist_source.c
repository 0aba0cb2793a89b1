#include "redist_source.h"
#include "catalog.h"
#include "manifest.h"
#include "resolve.h"
#include "util/datadir.h"
#include "util/strbuf.h"
#include "util/version.h"

#include <stdlib.h>
#include <string.h>

/* The releases whose manifests are bundled or cached: what --cuda can name without a mirror.
 * Oldest first, as a person reads a list of versions. */
static char **known_releases(const struct catalog *cat, int *n)
{
    char **all = NULL;
    *n = 0;
    const char *dirs[] = {cat->bundled_dir, cat->cache_dir};
    for (int d = 0; d < 2; d++) {
        int k = 0;
        char **found = catalog_dir_labels(dirs[d], &k);
        for (int i = 0; i < k; i++) {
            int dup = 0;
            for (int j = 0; j < *n && !dup; j++)
                dup = !strcmp(all[j], found[i]);
            if (dup) {
                free(found[i]);
                continue;
            }
            all = xrealloc(all, (size_t)(*n + 2) * sizeof *all);
            all[(*n)++] = found[i];
            all[*n] = NULL;
        }
        free(found);
    }
    for (int i = 1; i < *n; i++)
        for (int k = i; k > 0; k--) {
            struct version va, vb;
            if (version_parse(all[k - 1], &va) < 0 || version_parse(all[k], &vb) < 0 ||
                version_cmp(&va, &vb) <= 0)
                break;
            char *t = all[k];
            all[k] = all[k - 1];
            all[k - 1] = t;
        }
    return all;
}

static int release_known(const struct catalog *cat, const char *label)
{
    int n = 0, hit = 0;
    char **all = known_releases(cat, &n);
    for (int i = 0; i < n; i++)
        hit |= !strcmp(all[i], label);
    resolve_free_list(all, n);
    return hit;
}

/* err's message without its trailing newlines, and line below it; the kind stays. */
static void append_line(struct fetch_error *err, const char *line)
{
    size_t len = strlen(err->message);
    while (len && err->message[len - 1] == '\n')
        len--;
    fetch_fail(err, err->kind, "%.*s\n%s", (int)len, err->message, line);
}

/* "--cuda 99.9": say which releases would have worked. */
static void append_known_releases(const struct catalog *cat, struct fetch_error *err)
{
    int n = 0;
    char **all = known_releases(cat, &n);
    struct strbuf sb = STRBUF_INIT;
    sb_adds(&sb, "releases known here (bundled or cached):");
    for (int i = 0; i < n; i++)
        sb_addf(&sb, "%s%s", i ? ", " : " ", all[i]);
    if (!n)
        sb_adds(&sb, " none");
    sb_adds(&sb, "; a mirror may offer newer ones (--cuda X.Y.Z asks it for that one)");
    append_line(err, sb_str(&sb));
    sb_free(&sb);
    resolve_free_list(all, n);
}

/* The release asked for: --cuda, else torch's CUDA, else (unless --match-torch) the newest
 * bundled one. Heap, or NULL. */
static char *requested_release(const struct source_request *rq, const char *bundled)
{
    if (rq->cuda)
        return xstrdup(rq->cuda);
    if (rq->default_release)
        return xstrdup(rq->default_release);
    if (rq->default_required)
        return NULL;
    int n = 0;
    char **labels = catalog_dir_labels(bundled, &n);
    char *best = resolve_newest(labels, n);
    resolve_free_list(labels, n);
    return best;
}

/* The manifest text for the request; *label (heap) gets the release it resolved to, also when
 * loading then failed. 0, or -1 with *err. */
static int load_manifest(const struct catalog *cat, const struct source_request *rq,
                         const char *hint, struct manifest_text *mt, char **label,
                         struct fetch_error *err)
{
    *label = NULL;
    if (rq->manifest)
        return catalog_load_named(cat, rq->manifest, rq->cuda, mt, err);
    char *request = requested_release(rq, cat->bundled_dir);
    if (!request)
        return fetch_fail(err, FETCH_ERR_OTHER,
                          "no CUDA version to fetch: %s; name one with --cuda X.Y",
                          rq->no_default_why ? rq->no_default_why : "torch was not found");
    *label = catalog_resolve(cat, request, err);
    int rc = *label ? catalog_load(cat, *label, mt, err) : -1;
    if (rc < 0) {
        if (!*label || !release_known(cat, *label))
            append_known_releases(cat, err);
        if (hint)
            append_line(err, hint);
    }
    free(request);
    return rc;
}

/* Every mirror's URL for each archive, and where the plan came from. */
static void complete_plan(struct fetch_plan *plan, const struct redist_manifest *m,
                          const struct manifest_text *mt, char *const *mirrors, int nmirrors)
{
    for (int i = 0; i < plan->nitems; i++) {
        struct fetch_item *it = &plan->items[i];
        it->urls = xcalloc((size_t)nmirrors + 1, sizeof *it->urls);
        for (int k = 0; k < nmirrors; k++)
            it->urls[k] = url_join(mirrors[k], it->relative_path);
    }
    plan->release_date = m->release_date ? xstrdup(m->release_date) : NULL;
    plan->manifest = xstrdup(mt->origin);
    memcpy(plan->manifest_sha256, mt->sha256, sizeof plan->manifest_sha256);
}

int redist_plan_with(const struct source_request *rq, int no_default_mirror, const char *hint,
                     struct fetch_plan *plan, struct fetch_error *err)
{
    memset(plan, 0, sizeof *plan);
    int nmirrors = 0;
    char **mirrors = resolve_mirrors(rq->mirrors, rq->nmirrors, getenv("SAGEBUILD_MIRRORS"),
                                     rq->no_default_mirror || no_default_mirror, &nmirrors);
    char *bundled = datadir_find("manifests");
    struct catalog cat = {bundled, rq->cache_dir, mirrors, nmirrors, rq->dl};
    struct manifest_text mt = {0};
    struct redist_manifest m = {0};
    char *label = NULL;
    int rc = load_manifest(&cat, rq, hint, &mt, &label, err);
    char *why = NULL;
    if (rc == 0 && manifest_parse(mt.text, mt.len, &m, &why) < 0) {
        rc = fetch_fail(err, FETCH_ERR_OTHER, "manifest %s: %s", mt.origin, why);
        free(why);
    } else if (rc == 0 &&
               resolve_plan(&m, mt.label, rq->platform, rq->extras, rq->nextras, plan, &why) < 0) {
        rc = fetch_fail_with(err, FETCH_ERR_OTHER, why);
    }
    if (rc == 0)
        complete_plan(plan, &m, &mt, mirrors, nmirrors);
    if (rc < 0 && !plan->release) { /* the release the errors are about */
        plan->release = label;
        label = NULL;
    }
    free(label);
    manifest_free(&m);
    manifest_text_free(&mt);
    free(bundled);
    resolve_free_list(mirrors, nmirrors);
    return rc;
}

static char *serves_every_release(const char *release)
{
    (void)release;
    return NULL;
}

static int redist_plan(const struct source_request *rq, struct fetch_plan *plan,
                       struct fetch_error *err)
{
    return redist_plan_with(rq, 0, NULL, plan, err);
}

const struct fetch_source redist_source = {
    .name = "redist",
    .title = "NVIDIA's redist archives",
    .fetched_as = NULL,
    .refusal = serves_every_release,
    .plan = redist_plan,
    .strip = 1, /* every redist archive holds one folder named after itself */
    .map_entry = NULL,
    .fixup = NULL,
};
