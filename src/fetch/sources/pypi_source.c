#include "pypi_source.h"
#include "fetch/engine/verify.h"
#include "pypi_index.h"
#include "pypi_stub.h"
#include "pypi_wheel.h"
#include "redist_source.h"
#include "resolve.h"
#include "toolchain/host.h"
#include "util/fs.h"
#include "util/url.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE_MAX (32u << 20)

/* ---- pure rules ---- */

char *pypi_project_for(const char *component)
{
    /* The names that do not follow the rule below (pypi.tsv, 2026-11). */
    static const char *const special[][2] = {
        {"cuda_cudart", "nvidia-cuda-runtime"},
        {"cuda_nvtx", "nvidia-nvtx"},
    };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        if (!strcmp(component, special[i][0]))
            return xstrdup(special[i][1]);
    /* cuda_X → nvidia-cuda-X, libX → nvidia-X (libnvvm, libnvjitlink, libcublas, ...). */
    const char *rest = NULL, *prefix = NULL;
    if (!strncmp(component, "cuda_", 5)) {
        rest = component + 5;
        prefix = "nvidia-cuda-";
    } else if (!strncmp(component, "lib", 3)) {
        rest = component + 3;
        prefix = "nvidia-";
    }
    if (!rest || !*rest)
        return NULL;
    char *name = xasprintf("%s%s", prefix, rest);
    for (char *p = name; *p; p++)
        if (*p == '_')
            *p = '-';
    return name;
}

char *pypi_release_refusal(const char *release)
{
    int major = release ? atoi(release) : 0;
    if (major >= 13)
        return NULL;
    return xasprintf("CUDA %s cannot come from PyPI: NVIDIA's wheels carry a working nvcc only "
                     "from CUDA 13 on (nvidia-cuda-nvcc-cu12 holds ptxas alone); use "
                     "--source redist (NVIDIA's redist archives, or --mirror URL for a copy of "
                     "them)",
                     release ? release : "?");
}

char *pypi_map_entry(void *unused, const char *rel)
{
    (void)unused;
    size_t first = strcspn(rel, "/");
    if (first > 10 && !strncmp(rel + first - 10, ".dist-info", 10))
        return xasprintf("dist-info/%s", rel);
    if (strncmp(rel, "nvidia/cu", 9))
        return NULL;
    const char *p = rel + 9;
    int major = 0;
    while (isdigit((unsigned char)*p))
        major = major * 10 + (*p++ - '0');
    if (major < 13 || major > 99 || *p != '/' || !p[1])
        return NULL;
    p++;
    if (!strncmp(p, ".metadata", 9) && (p[9] == '/' || !p[9]))
        return NULL;
    if (!strcmp(p, "__init__.py") || !strncmp(p, "__pycache__", 11))
        return NULL;
    return xstrdup(p);
}

char *pypi_dev_link_name(const char *name)
{
    if (strncmp(name, "lib", 3))
        return NULL;
    const char *so = strstr(name, ".so.");
    if (!so || so == name + 3)
        return NULL;
    /* Only digits and dots may follow ".so.": "libcudart.so.13", "libnvvm.so.4.0.0". */
    for (const char *p = so + 4; *p; p++)
        if (!isdigit((unsigned char)*p) && *p != '.')
            return NULL;
    if (!isdigit((unsigned char)so[4]))
        return NULL;
    return xstrndup(name, (size_t)(so - name) + 3);
}

/* ---- layout ---- */

static int link_if_missing(const char *root, const char *rel, const char *target,
                           struct strbuf *log, struct fetch_error *err)
{
    char *p = fs_join(root, rel);
    struct stat st;
    int rc = 0;
    if (lstat(p, &st) < 0) {
        char *dir = fs_dirname(p);
        fs_mkdir_p(dir, 0755);
        free(dir);
        if (symlink(target, p) < 0) {
            rc = fetch_fail_errno(err, errno, "cannot create %s", p);
        } else {
            sb_addf(log, "%s -> %s\n", rel, target);
        }
    }
    free(p);
    return rc;
}

/* For each lib/libX.so.N without lib/libX.so: the shortest versioned name wins
 * (libX.so.4 before libX.so.4.0.0), as ldconfig's development links do. */
static int add_dev_links(const char *root, struct strbuf *log, struct fetch_error *err)
{
    char *lib = fs_join(root, "lib");
    DIR *d = opendir(lib);
    char **names = NULL;
    int n = 0, cap = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char *dev = pypi_dev_link_name(de->d_name);
        if (!dev)
            continue;
        free(dev);
        names = xgrow(names, &cap, n + 1, sizeof *names);
        names[n++] = xstrdup(de->d_name);
    }
    if (d)
        closedir(d);
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        char *dev = pypi_dev_link_name(names[i]);
        int shortest = 1;
        for (int j = 0; j < n; j++) {
            char *other = pypi_dev_link_name(names[j]);
            if (!strcmp(other, dev) && strlen(names[j]) < strlen(names[i]))
                shortest = 0;
            free(other);
        }
        if (shortest) {
            char *rel = xasprintf("lib/%s", dev);
            rc = link_if_missing(root, rel, names[i], log, err);
            free(rel);
        }
        free(dev);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(lib);
    return rc;
}

/* A zip read as a stream shows only local file headers, and the Unix mode lives in the central
 * directory at the end: programs arrive without their execute bits. Every ELF file or script
 * in bin/ and nvvm/bin/ is a program (the wheels mark exactly these 0744). */
static int mark_programs(const char *root, const char *dir_rel, struct strbuf *log,
                         struct fetch_error *err)
{
    char *dir = fs_join(root, dir_rel);
    DIR *d = opendir(dir);
    struct dirent *de;
    int rc = 0, n = 0;
    while (rc == 0 && d && (de = readdir(d))) {
        char *p = fs_join(dir, de->d_name);
        struct stat st;
        char magic[4] = {0};
        FILE *f = lstat(p, &st) == 0 && S_ISREG(st.st_mode) ? fopen(p, "rb") : NULL;
        size_t got = f ? fread(magic, 1, sizeof magic, f) : 0;
        if (f)
            fclose(f);
        int program = (got == 4 && !memcmp(magic,
                                           "\x7f"
                                           "ELF",
                                           4)) ||
                      (got >= 2 && magic[0] == '#' && magic[1] == '!');
        if (program && (st.st_mode & 0111) != 0111) {
            if (chmod(p, (st.st_mode & 07777) | 0755) < 0)
                rc = fetch_fail_errno(err, errno, "chmod %s", p);
            n++;
        }
        free(p);
    }
    if (d)
        closedir(d);
    if (n)
        sb_addf(log, "%s: execute permission on %d programs\n", dir_rel, n);
    free(dir);
    return rc;
}

int pypi_layout_fixup(const char *root, struct strbuf *log, struct fetch_error *err)
{
    if (mark_programs(root, "bin", log, err) < 0 || mark_programs(root, "nvvm/bin", log, err) < 0)
        return -1;
    if (add_dev_links(root, log, err) < 0)
        return -1;
    /* The libnvvm redist archive keeps its library and header under nvvm/; tools that look
     * there (numba, cuda-python, CMake's FindCUDAToolkit) find them through these links. */
    static const char *const nvvm_links[][3] = {
        {"lib/libnvvm.so", "nvvm/lib64/libnvvm.so", "../../lib/libnvvm.so"},
        {"lib/libnvvm.so.4", "nvvm/lib64/libnvvm.so.4", "../../lib/libnvvm.so.4"},
        {"include/nvvm.h", "nvvm/include/nvvm.h", "../../include/nvvm.h"},
    };
    for (size_t i = 0; i < sizeof nvvm_links / sizeof nvvm_links[0]; i++) {
        char *have = fs_join(root, nvvm_links[i][0]);
        int exists = fs_exists(have);
        free(have);
        if (exists && link_if_missing(root, nvvm_links[i][1], nvvm_links[i][2], log, err) < 0)
            return -1;
    }
    /* No wheel has the driver stub; without one, -lcuda fails. Not fatal: nvcc and torch's
     * extensions do not need it, and the doctor names what is missing. */
    struct hostcc_choice hc;
    hostcc_choose(root, &hc);
    char *why = NULL;
    if (stub_make_libcuda(root, hc.cc, log, &why) != 0)
        sb_addf(log, "lib/stubs/libcuda.so not made: %s\n", why);
    free(why);
    hostcc_free(&hc);
    return 0;
}

/* ---- the index over HTTP ---- */

struct pypi_request {
    char *const *indexes; /* tried in order, per project */
    int nindexes;
    const char *arch;             /* "x86_64" / "aarch64" */
    int glibc_major, glibc_minor; /* 0: do not judge manylinux tags by glibc */
    const struct dl_opts *dl;
    /* Offline (dl->offline): wheels are looked for here instead, by file name; their hash is
     * taken from the file (the cache holds only verified files). NULL-terminated. */
    const char *const *local_dirs;
};

/* The listing of one project on one index: JSON when the server answers with it (PEP 691
 * content negotiation), else HTML; links resolve against the page's URL after redirects. */
static int fetch_listing(const char *index, const char *project, const struct dl_opts *o,
                         struct pypi_listing *l, char **err)
{
    char *url = pypi_project_url(index, project);
    struct dl_page page = {0};
    int rc = dl_get_page(url, PAGE_MAX, PYPI_ACCEPT, o, &page, err);
    if (rc == 0) {
        if (pypi_is_json_type(page.content_type)) {
            char *jerr = NULL;
            if (pypi_parse_json(page.body, page.len, page.final_url, l, &jerr) < 0) {
                char *shown = url_redact(page.final_url);
                *err = xasprintf("%s: %s", shown, jerr);
                free(shown);
                free(jerr);
                rc = -1;
            }
        } else {
            pypi_parse_html(page.body, page.len, page.final_url, l);
        }
    }
    free(url);
    dl_page_free(&page);
    return rc;
}

/* Offline: the wheels in the given folders, each hashed from the file itself. */
static void local_listing(const char *const *dirs, struct pypi_listing *l)
{
    memset(l, 0, sizeof *l);
    for (int k = 0; dirs && dirs[k]; k++) {
        DIR *d = opendir(dirs[k]);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            struct wheel_name wn;
            if (wheel_name_parse(de->d_name, &wn) < 0)
                continue;
            wheel_name_free(&wn);
            char *path = fs_join(dirs[k], de->d_name);
            char hex[65];
            long long size = -1;
            if (sha256_file(path, hex, &size) == 0) {
                l->files = xgrow(l->files, &l->cap, l->nfiles + 1, sizeof *l->files);
                struct pypi_file *f = &l->files[l->nfiles++];
                f->filename = xstrdup(de->d_name);
                f->url = xasprintf("file://%s", path);
                memcpy(f->sha256, hex, sizeof hex);
                f->yanked = 0;
                f->size = size;
            }
            free(path);
        }
        if (d)
            closedir(d);
    }
}

/* The item becomes wheel f, found on `where`: its version, its place in the cache, the hash
 * and size the index publishes, and its URL (none offline: the file is already here). */
static void take_wheel(struct fetch_item *it, const struct pypi_file *f, int yanked,
                       const char *where, int offline)
{
    struct wheel_name wn;
    wheel_name_parse(f->filename, &wn);
    free(it->version);
    it->version = xstrdup(wn.version);
    wheel_name_free(&wn);
    free(it->relative_path);
    it->relative_path = xasprintf("pypi/%s", f->filename);
    memcpy(it->sha256, f->sha256, sizeof it->sha256);
    it->size = f->size;
    for (char **u = it->urls; u && *u; u++)
        free(*u);
    free(it->urls);
    it->urls = xcalloc(2, sizeof *it->urls);
    if (!offline)
        it->urls[0] = xstrdup(f->url);
    if (yanked)
        it->note = xasprintf("%s is yanked on %s; used because the manifest pins exactly this "
                             "version",
                             f->filename, where);
}

/* Finds the wheel for one item on the first index that has it (offline: among the local
 * wheels), or fails naming what each index offers instead. */
static int resolve_item(struct fetch_item *it, const struct pypi_request *rq,
                        const struct pypi_listing *local, struct fetch_error *err)
{
    char *project = pypi_project_for(it->component);
    if (!project)
        return fetch_fail(err, FETCH_ERR_NOT_FOUND,
                          "%s: NVIDIA publishes no PyPI wheel for this component; use --source "
                          "redist",
                          it->component);
    struct pypi_want want = {project, it->version, rq->arch, rq->glibc_major, rq->glibc_minor};
    struct strbuf tried = STRBUF_INIT;
    int rc = -1;
    int nlists = rq->dl->offline ? 1 : rq->nindexes;
    for (int k = 0; k < nlists && rc < 0; k++) {
        struct pypi_listing fetched = {0};
        const struct pypi_listing *l = local;
        char *where =
            rq->dl->offline ? xstrdup("the local wheels (--offline)") : url_redact(rq->indexes[k]);
        char *e = NULL;
        if (!rq->dl->offline && fetch_listing(rq->indexes[k], project, rq->dl, &fetched, &e) < 0) {
            sb_addf(&tried, "\n  %s", e);
            free(e);
            free(where);
            continue;
        }
        if (!rq->dl->offline)
            l = &fetched;
        int yanked = 0;
        char *why = NULL;
        int idx = pypi_choose(l, &want, &yanked, &why);
        if (idx < 0) {
            sb_addf(&tried, "\n  %s: %s", where, why);
            free(why);
        } else if (!l->files[idx].sha256[0]) {
            sb_addf(&tried, "\n  %s: %s publishes no sha256, so it cannot be verified", where,
                    l->files[idx].filename);
        } else {
            take_wheel(it, &l->files[idx], yanked, where, rq->dl->offline);
            rc = 0;
        }
        pypi_listing_free(&fetched);
        free(where);
    }
    /* Offline, the wheel may still be fetched where the network allows, and brought here. */
    if (rc < 0)
        fetch_fail(err, rq->dl->offline ? FETCH_ERR_OFFLINE : FETCH_ERR_NOT_FOUND,
                   "no wheel of %s %s (for %s) on any index:%s\n(use --index-url for another "
                   "PyPI mirror, or --source redist)",
                   project, it->version, it->component, sb_str(&tried));
    sb_free(&tried);
    free(project);
    return rc;
}

/* Rewrites every item of plan into its wheel. 0, or -1 with *err. */
static int resolve_wheels(struct fetch_plan *plan, const struct pypi_request *rq,
                          struct fetch_error *err)
{
    char *refusal = pypi_release_refusal(plan->release);
    if (refusal)
        return fetch_fail_with(err, FETCH_ERR_NOT_FOUND, refusal);
    struct pypi_listing local = {0};
    if (rq->dl->offline)
        local_listing(rq->local_dirs, &local);
    int rc = 0;
    for (int i = 0; rc == 0 && i < plan->nitems; i++)
        rc = resolve_item(&plan->items[i], rq, &local, err);
    pypi_listing_free(&local);
    char *why = NULL;
    /* The file names come from the index: checked like any other. */
    if (rc == 0 && resolve_plan_check(plan, &why) < 0)
        rc = fetch_fail_with(err, FETCH_ERR_OTHER, why);
    return rc;
}

/* The redist plan asks for the manifest without NVIDIA's site (where it is blocked, the bundled
 * manifests give the component versions); this says where else it may come from. */
#define MANIFEST_HINT                                                                              \
    "(with --source pypi the component versions still come from the release's redist "             \
    "manifest, and NVIDIA's site is not asked for it: add --manifest FILE|URL, or "                \
    "--mirror " REDIST_DEFAULT_MIRROR ")"

static int pypi_plan(const struct source_request *rq, struct fetch_plan *plan,
                     struct fetch_error *err)
{
    char *refusal = rq->cuda ? pypi_release_refusal(rq->cuda) : NULL;
    if (refusal) {
        memset(plan, 0, sizeof *plan);
        return fetch_fail_with(err, FETCH_ERR_NOT_FOUND, refusal);
    }
    if (redist_plan_with(rq, 1, MANIFEST_HINT, plan, err) < 0)
        return -1;
    const char *arch = pypi_arch_for_platform(plan->platform);
    if (!arch)
        return fetch_fail(err, FETCH_ERR_NOT_FOUND,
                          "NVIDIA publishes no Linux wheels for %s; use --source redist",
                          plan->platform);
    int nindexes = 0;
    char **indexes = pypi_index_urls(rq->indexes, rq->nindexes, getenv("SAGEBUILD_INDEX_URLS"),
                                     getenv("PIP_INDEX_URL"), &nindexes);
    /* manylinux tags are judged against this machine's glibc only when the toolkit is for it. */
    int gmaj = 0, gmin = 0;
    if (rq->host_platform && !strcmp(rq->host_platform, plan->platform))
        sscanf(gnu_get_libc_version(), "%d.%d", &gmaj, &gmin);
    char *cached = fs_join(rq->cache_dir, "pypi");
    const char *local[] = {rq->from_dir ? rq->from_dir : cached, cached, NULL};
    struct pypi_request prq = {indexes, nindexes, arch, gmaj, gmin, rq->dl, local};
    int rc = resolve_wheels(plan, &prq, err);
    free(cached);
    resolve_free_list(indexes, nindexes);
    return rc;
}

const struct fetch_source pypi_source = {
    .name = "pypi",
    .title = "NVIDIA's wheels from PyPI",
    .fetched_as = "PyPI wheels",
    .refusal = pypi_release_refusal,
    .plan = pypi_plan,
    .strip = 0, /* a wheel's entries start at its top */
    .map_entry = pypi_map_entry,
    .fixup = pypi_layout_fixup,
};
