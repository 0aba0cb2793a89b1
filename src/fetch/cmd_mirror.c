/* sagebuild mirror: a redist-shaped tree (manifests + archives) from the download cache, for any
 * static web server to serve a whole fleet. */
#include "cmd.h"
#include "fetch/sources/catalog.h"
#include "fetch/sources/manifest.h"
#include "fetch/engine/pathsafe.h"
#include "fetch/sources/resolve.h"
#include "fetch/engine/verify.h"
#include "util/fs.h"
#include "util/opt.h"
#include "util/plural.h"
#include "util/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char about[] =
    "Writes a redist-shaped tree from the download cache: redistrib_X.Y.Z.json and every\n"
    "archive of it that the cache holds (verified again on the way), plus an index.html.\n"
    "Serve DIR with any static web server and point fetch-cuda --mirror (or\n"
    "SAGEBUILD_MIRRORS) at it.\n";

/* Hard link when on one file system, copy otherwise; the target is replaced atomically. */
static int place_file(const char *src, const char *dst)
{
    char *dir = fs_dirname(dst);
    int rc = fs_mkdir_p(dir, 0755);
    free(dir);
    if (rc < 0)
        return -1;
    char *tmp = xasprintf("%s.tmp.%ld", dst, (long)getpid());
    unlink(tmp);
    if (link(src, tmp) < 0) {
        int in = open(src, O_RDONLY | O_CLOEXEC);
        int out = in < 0 ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        char buf[1 << 16];
        ssize_t n = 0;
        while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n) {
                n = -1;
                break;
            }
        if (in >= 0)
            close(in);
        if (out < 0 || n < 0 || close(out) < 0) {
            unlink(tmp);
            free(tmp);
            return -1;
        }
    }
    rc = rename(tmp, dst);
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* The cache's manifest of a release, parsed; *path (heap) names its file. 0, or -1 with *err
 * (heap) saying why it cannot be read. */
static int read_manifest(const char *cache, const char *label, struct redist_manifest *m,
                         char **path, char **err)
{
    char *name = xasprintf("redistrib_%s.json", label);
    *path = fs_join(cache, name);
    free(name);
    size_t len = 0;
    char *text = fs_read_file(*path, 16u << 20, &len);
    if (!text) {
        *err = xstrdup(strerror(errno));
        return -1;
    }
    int rc = manifest_parse(text, len, m, err);
    free(text);
    return rc;
}

/* An archive a manifest names and the cache holds a file for (by name only). */
struct cached_archive {
    const struct redist_entry *entry;
    char *path;
};

/* Every archive of manifest m, of any platform, whose safe relative_path is a file in the
 * cache. Heap array of *n. */
static struct cached_archive *cached_archives(const char *cache, const struct redist_manifest *m,
                                              int *n)
{
    struct cached_archive *out = NULL;
    int cap = 0;
    *n = 0;
    for (int i = 0; i < m->ncomponents; i++) {
        const struct redist_component *c = &m->components[i];
        for (int j = 0; j < c->nplatforms; j++)
            for (int k = 0; k < c->platforms[j].nentries; k++) {
                const struct redist_entry *e = &c->platforms[j].entries[k];
                if (!e->relative_path || path_rel_check(e->relative_path))
                    continue;
                char *have = fs_join(cache, e->relative_path);
                if (!fs_is_file(have)) {
                    free(have);
                    continue;
                }
                out = xgrow(out, &cap, *n + 1, sizeof *out);
                out[(*n)++] = (struct cached_archive){e, have};
            }
    }
    return out;
}

static void cached_archives_free(struct cached_archive *list, int n)
{
    for (int i = 0; i < n; i++)
        free(list[i].path);
    free(list);
}

/* Puts one cached archive into the tree when it still matches its manifest entry. 1 placed,
 * 0 skipped (saying why), -1 failed. */
static int place_verified(const struct cached_archive *a, const char *out)
{
    const struct redist_entry *e = a->entry;
    char got[65] = "";
    long long size = -1;
    if (sha256_file(a->path, got, &size) < 0 || strcmp(got, e->sha256) ||
        (e->size >= 0 && size != e->size)) {
        fprintf(stderr,
                "sagebuild mirror: skipping %s: it does not match the manifest (sha256 %s, "
                "expected %s)\n",
                a->path, got, e->sha256);
        return 0;
    }
    char *dst = fs_join(out, e->relative_path);
    int rc = place_file(a->path, dst) < 0 ? -1 : 1;
    if (rc < 0)
        fprintf(stderr, "sagebuild mirror: cannot write %s: %s\n", dst, strerror(errno));
    free(dst);
    return rc;
}

/* One release into the tree: its verified archives, then its manifest, then its line of the
 * index. 0, or -1 (said why). */
static int mirror_release(const char *cache, const char *label, const char *out, int *archives,
                          struct strbuf *index)
{
    struct redist_manifest m;
    char *src = NULL, *err = NULL;
    if (read_manifest(cache, label, &m, &src, &err) < 0) {
        fprintf(stderr, "sagebuild mirror: %s: %s\n", src, err);
        free(err);
        free(src);
        return -1;
    }
    int rc = 0, n = 0, ncached = 0;
    struct cached_archive *have = cached_archives(cache, &m, &ncached);
    for (int i = 0; i < ncached; i++) {
        int placed = place_verified(&have[i], out);
        rc = placed < 0 ? -1 : rc;
        n += placed > 0;
    }
    cached_archives_free(have, ncached);
    char *name = xasprintf("redistrib_%s.json", label);
    char *dst = fs_join(out, name);
    if (rc == 0 && place_file(src, dst) < 0) {
        fprintf(stderr, "sagebuild mirror: cannot write %s: %s\n", dst, strerror(errno));
        rc = -1;
    }
    if (rc == 0) {
        sb_addf(index, "<a href=\"%s\">%s</a><br>\n", name, name);
        printf("CUDA %s: manifest and %d archive%s\n", label, n, n == 1 ? "" : "s");
    }
    *archives += n;
    free(dst);
    free(name);
    manifest_free(&m);
    free(src);
    return rc;
}

/* Whether the cache holds any archive file named by the manifests of these releases (checked
 * by name only: mirror_release verifies each one on the way). */
static int any_cached_archive(const char *cache, char *const *labels, int n)
{
    int found = 0;
    for (int i = 0; i < n && !found; i++) {
        struct redist_manifest m;
        char *path = NULL, *err = NULL;
        if (read_manifest(cache, labels[i], &m, &path, &err) == 0) {
            int k = 0;
            struct cached_archive *have = cached_archives(cache, &m, &k);
            found = k > 0;
            cached_archives_free(have, k);
            manifest_free(&m);
        } else {
            found = 1; /* unreadable: let mirror_release say what is wrong with it */
        }
        free(err);
        free(path);
    }
    return found;
}

/* The releases --cuda names, each the newest cached one it matches, else every cached one.
 * NULL after naming each release the cache lacks. */
static char **pick_releases(const char *cache, const struct opt_list *wanted, int *npick)
{
    int n = 0, missing = 0;
    char **labels = catalog_dir_labels(cache, &n);
    char **pick = xcalloc((size_t)n + 1, sizeof *pick);
    *npick = 0;
    for (int w = 0; w < wanted->n; w++) {
        const char *req = wanted->v[w];
        char *label = resolve_label(req, labels, n);
        if (!label) {
            fprintf(stderr,
                    "sagebuild mirror: no CUDA %s in the cache (%s); fetch it "
                    "first with 'sagebuild fetch-cuda --cuda %s'\n",
                    req, cache ? cache : "no cache", req);
            missing = 1;
        } else {
            pick = xrealloc(pick, (size_t)(*npick + 2) * sizeof *pick);
            pick[(*npick)++] = label;
        }
    }
    for (int i = 0; !wanted->n && i < n; i++)
        pick[(*npick)++] = xstrdup(labels[i]);
    resolve_free_list(labels, n);
    if (missing) {
        resolve_free_list(pick, *npick);
        *npick = 0;
        return NULL;
    }
    return pick;
}

/* Whether the picked releases can make a mirror that serves a fetch; says why not. */
static int worth_mirroring(const char *cache, char *const *pick, int npick)
{
    if (npick == 0) {
        fprintf(stderr,
                "sagebuild mirror: the cache (%s) holds no manifests yet; run "
                "'sagebuild fetch-cuda' first\n",
                cache ? cache : "none");
        return 0;
    }
    if (!any_cached_archive(cache, pick, npick)) {
        /* manifests alone (a dry run caches them) make a mirror that cannot serve a fetch */
        fprintf(stderr,
                "sagebuild mirror: nothing to mirror: the cache (%s) holds no archive of %s%s; "
                "fetch first with 'sagebuild fetch-cuda --cuda %s'\n",
                cache, npick == 1 ? "CUDA " : "the cached releases", npick == 1 ? pick[0] : "",
                pick[0]);
        return 0;
    }
    return 1;
}

/* Every picked release, then index.html. The exit status. */
static int write_mirror(const char *cache, char *const *pick, int npick, const char *out)
{
    int archives = 0, rc = SB_EXIT_OK;
    struct strbuf index = STRBUF_INIT;
    sb_adds(&index, "<html><body>\n");
    for (int i = 0; rc == SB_EXIT_OK && i < npick; i++)
        if (mirror_release(cache, pick[i], out, &archives, &index) < 0)
            rc = SB_EXIT_ERROR;
    sb_adds(&index, "</body></html>\n");
    if (rc == SB_EXIT_OK && archives == 0) {
        fprintf(stderr,
                "sagebuild mirror: nothing to mirror: no cached archive matched its manifest "
                "(see above); fetch again with 'sagebuild fetch-cuda --force'\n");
        rc = SB_EXIT_ERROR;
    }
    if (rc == SB_EXIT_OK) {
        char *ix = fs_join(out, "index.html");
        if (fs_write_file(ix, index.buf, index.len) < 0) {
            fprintf(stderr, "sagebuild mirror: cannot write %s: %s\n", ix, strerror(errno));
            rc = SB_EXIT_ERROR;
        } else {
            printf("mirror ready in %s (%d %s); serve it and use --mirror URL\n", out, archives,
                   plural(archives, "archive", "archives"));
        }
        free(ix);
    }
    sb_free(&index);
    return rc;
}

/* --out into *out, the releases of --cuda into wanted (freed by the caller either way). */
static enum opt_result parse_args(int argc, char **argv, const char **out, struct opt_list *wanted)
{
    const struct opt table[] = {
        {.kind = OPT_STRING,
         .name = "out",
         .arg = "DIR",
         .help = "where to write the tree",
         .dest = out,
         .flags = OPT_REQUIRED},
        {.kind = OPT_LIST,
         .name = "cuda",
         .arg = "X.Y[.Z]",
         .help = "releases to include, repeatable or comma-separated (X.Y picks the newest "
                 "cached X.Y.Z; default: all cached releases)",
         .dest = wanted,
         .flags = OPT_SPLIT_COMMAS},
        {0},
    };
    const struct opt_command spec = {"mirror", about, NULL, table, 0};
    return opt_parse(&spec, argc, argv);
}

int cmd_mirror(int argc, char **argv, const struct global_opts *g)
{
    (void)g;
    const char *out = NULL;
    struct opt_list wanted = {0};
    enum opt_result parsed = parse_args(argc, argv, &out, &wanted);
    if (parsed != OPT_OK) {
        opt_list_free(&wanted);
        return opt_exit_status(parsed);
    }
    char *cache = catalog_cache_dir();
    int npick = 0;
    char **pick = pick_releases(cache, &wanted, &npick);
    int rc = pick && worth_mirroring(cache, pick, npick) ? write_mirror(cache, pick, npick, out)
                                                         : SB_EXIT_ERROR;
    resolve_free_list(pick, npick);
    free(cache);
    opt_list_free(&wanted);
    return rc;
}
