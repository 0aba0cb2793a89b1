/* sagebuild fetch-cuda: the minimal CUDA toolkit matching torch, from any mirror, verified and
 * installed atomically. Option handling and output here; the work is in engine/pipeline.c. */
#include "cmd.h"
#include "fetch/sources/catalog.h"
#include "fetch_common.h"
#include "fetch_fix.h"
#include "fetch/sources/manifest.h"
#include "fetch/engine/pipeline.h"
#include "fetch/sources/pypi_index.h"
#include "fetch/sources/pypi_source.h"
#include "fetch/sources/pypi_wheel.h"
#include "fetch/sources/resolve.h"
#include "util/datadir.h"
#include "util/fs.h"
#include "util/out.h"
#include "util/plural.h"
#include "util/strbuf.h"
#include "util/url.h"
#include "util/version.h"

#include <cJSON.h>
#include <getopt.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fetch_args {
    const char *cuda;
    int match_torch;
    const char *prefix;
    char **mirrors;
    int nmirrors;
    const char *manifest;
    const char *from;
    int offline;
    const char *platform;
    char **extras;
    int nextras;
    int jobs;
    int dry_run;
    int json;
    int force;
    int no_check;
    int no_default_mirror;
    const char *source; /* "redist", "pypi", "auto" */
    char **indexes;
    int nindexes;
    long min_rate; /* 0: the default (or SAGEBUILD_MIN_RATE) */
    long deadline; /* -1: the default (or SAGEBUILD_DEADLINE) */
};

#define INTERRUPTED "interrupted; nothing was changed (the prefix is as it was)"

/* How one attempt ends when `auto` may still try PyPI: its error is kept, not printed. */
struct attempt {
    const char *source;
    int may_fall_back;
    char *deferred; /* the error of a redist attempt that PyPI may still cure */
};

static void usage(FILE *f)
{
    fputs("usage: sagebuild fetch-cuda [--cuda X.Y[.Z] | --match-torch] [--prefix DIR]\n"
          "                            [--mirror URL]... [--manifest FILE|URL] [--from DIR]\n"
          "                            [--offline] [--platform linux-x86_64|linux-sbsa]\n"
          "                            [--with COMPONENT,...] [--jobs N] [--dry-run] [--json]\n"
          "                            [--force] [--no-check] [--no-default-mirror]\n"
          "                            [--source redist|pypi|auto] [--index-url URL]...\n"
          "                            [--min-rate BYTES] [--deadline SECONDS]\n\n"
          "Downloads the CUDA compiler components (cuda_nvcc, cuda_cudart, cuda_cccl, and\n"
          "cuda_crt and libnvvm where the release has them) from NVIDIA's redist tree or a\n"
          "mirror, checks size and sha256, unpacks them and installs them atomically as one\n"
          "prefix that works as CUDA_HOME. The same request again does nothing.\n\n"
          "  --cuda X.Y[.Z]       release; X.Y means its newest patch release known\n"
          "  --match-torch        the CUDA version of the installed torch (the default when\n"
          "                       torch is found; else the newest bundled release)\n"
          "  --prefix DIR         where to install (default ~/.local/share/sagebuild/cuda-X.Y.Z)\n"
          "  --mirror URL         base of a redist tree; repeatable, tried in order per file,\n"
          "                       then $SAGEBUILD_MIRRORS, then NVIDIA's site\n"
          "  --no-default-mirror  do not fall back to NVIDIA's site\n"
          "  --manifest FILE|URL  use this redistrib_X.Y.Z.json\n"
          "  --from DIR           take archives from DIR (downloaded elsewhere)\n"
          "  --offline            never use the network (cache, --from, bundled manifests)\n"
          "  --platform NAME      linux-x86_64, linux-sbsa or linux-aarch64 (default: this "
          "machine)\n"
          "  --with LIST          extra components, e.g. nvdisasm,cuobjdump,nvrtc\n"
          "  --jobs N             archives unpacked at once (default: CPU count)\n"
          "  --dry-run            print the plan (URLs, sizes, sha256) and stop\n"
          "  --json               machine-readable output on stdout\n"
          "  --force              install again even when the prefix already matches\n"
          "  --no-check           skip the compile-and-link check of the new toolkit\n"
          "  --source S           redist (NVIDIA's archives, the default), pypi (NVIDIA's\n"
          "                       wheels from a PyPI index; CUDA 13 and newer) or auto\n"
          "                       (redist, then PyPI when that fails)\n"
          "  --index-url URL      PyPI simple index; repeatable, tried in order, then\n"
          "                       $SAGEBUILD_INDEX_URLS, then $PIP_INDEX_URL (default\n"
          "                       " PYPI_DEFAULT_INDEX ")\n"
          "  --min-rate BYTES     abandon a transfer slower than this per second over\n"
          "                       $SAGEBUILD_TIMEOUT seconds (default 1k; k and M suffixes)\n"
          "  --deadline SECONDS   the most one request may take (default 3600, 0: none); a\n"
          "                       retry resumes where it stopped\n",
          f);
}

static void split_list(const char *s, char ***list, int *n)
{
    while (s && *s) {
        size_t len = strcspn(s, ",");
        if (len) {
            *list = xrealloc(*list, (size_t)(*n + 2) * sizeof **list);
            (*list)[(*n)++] = xstrndup(s, len);
            (*list)[*n] = NULL;
        }
        s += len;
        s += *s == ',';
    }
}

static int parse_args(int argc, char **argv, struct fetch_args *a)
{
    enum {
        O_CUDA = 256,
        O_TORCH,
        O_PREFIX,
        O_MIRROR,
        O_MANIFEST,
        O_FROM,
        O_OFFLINE,
        O_PLATFORM,
        O_WITH,
        O_JOBS,
        O_DRY,
        O_JSON,
        O_FORCE,
        O_NOCHECK,
        O_NODEF,
        O_SOURCE,
        O_INDEX,
        O_MIN_RATE,
        O_DEADLINE
    };
    static const struct option opts[] = {
        {"cuda", required_argument, NULL, O_CUDA},
        {"match-torch", no_argument, NULL, O_TORCH},
        {"prefix", required_argument, NULL, O_PREFIX},
        {"mirror", required_argument, NULL, O_MIRROR},
        {"manifest", required_argument, NULL, O_MANIFEST},
        {"from", required_argument, NULL, O_FROM},
        {"offline", no_argument, NULL, O_OFFLINE},
        {"platform", required_argument, NULL, O_PLATFORM},
        {"with", required_argument, NULL, O_WITH},
        {"jobs", required_argument, NULL, O_JOBS},
        {"dry-run", no_argument, NULL, O_DRY},
        {"json", no_argument, NULL, O_JSON},
        {"force", no_argument, NULL, O_FORCE},
        {"no-check", no_argument, NULL, O_NOCHECK},
        {"no-default-mirror", no_argument, NULL, O_NODEF},
        {"source", required_argument, NULL, O_SOURCE},
        {"index-url", required_argument, NULL, O_INDEX},
        {"min-rate", required_argument, NULL, O_MIN_RATE},
        {"deadline", required_argument, NULL, O_DEADLINE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "hj:", opts, NULL)) != -1) {
        switch (c) {
        case O_CUDA:
            a->cuda = optarg;
            break;
        case O_TORCH:
            a->match_torch = 1;
            break;
        case O_PREFIX:
            a->prefix = optarg;
            break;
        case O_MIRROR:
            split_list(optarg, &a->mirrors, &a->nmirrors);
            break;
        case O_MANIFEST:
            a->manifest = optarg;
            break;
        case O_FROM:
            a->from = optarg;
            break;
        case O_OFFLINE:
            a->offline = 1;
            break;
        case O_PLATFORM:
            a->platform = optarg;
            break;
        case O_WITH:
            split_list(optarg, &a->extras, &a->nextras);
            break;
        case 'j':
        case O_JOBS:
            a->jobs = atoi(optarg);
            if (a->jobs < 1 || a->jobs > 256) {
                fprintf(stderr, "sagebuild fetch-cuda: --jobs wants a number from 1 to 256\n");
                return -1;
            }
            break;
        case O_DRY:
            a->dry_run = 1;
            break;
        case O_JSON:
            a->json = 1;
            break;
        case O_FORCE:
            a->force = 1;
            break;
        case O_NOCHECK:
            a->no_check = 1;
            break;
        case O_NODEF:
            a->no_default_mirror = 1;
            break;
        case O_SOURCE:
            a->source = optarg;
            break;
        case O_INDEX:
            a->indexes = xrealloc(a->indexes, (size_t)(a->nindexes + 2) * sizeof *a->indexes);
            a->indexes[a->nindexes++] = xstrdup(optarg);
            a->indexes[a->nindexes] = NULL;
            break;
        case O_MIN_RATE:
            if (fetch_parse_rate(optarg, &a->min_rate) < 0) {
                fprintf(stderr,
                        "sagebuild fetch-cuda: --min-rate wants bytes per second (e.g. "
                        "1024, 64k, 2M), not '%s'\n",
                        optarg);
                return -1;
            }
            break;
        case O_DEADLINE:
            if (fetch_parse_seconds(optarg, &a->deadline) < 0) {
                fprintf(stderr,
                        "sagebuild fetch-cuda: --deadline wants whole seconds from 0 (none) "
                        "to 604800, not '%s'\n",
                        optarg);
                return -1;
            }
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "sagebuild fetch-cuda: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (a->cuda && a->match_torch) {
        fprintf(stderr, "sagebuild fetch-cuda: --cuda and --match-torch exclude each other\n");
        return -1;
    }
    if (a->cuda) {
        struct version v;
        if (version_parse_strict(a->cuda, &v) < 0 || v.nparts > 3) {
            fprintf(stderr, "sagebuild fetch-cuda: --cuda wants X.Y or X.Y.Z, not '%s'\n", a->cuda);
            return -1;
        }
    }
    if (!a->source)
        a->source = "redist";
    if (strcmp(a->source, "redist") && strcmp(a->source, "pypi") && strcmp(a->source, "auto")) {
        fprintf(stderr, "sagebuild fetch-cuda: --source wants redist, pypi or auto, not '%s'\n",
                a->source);
        return -1;
    }
    /* A mirror or index that is not a URL would only fail later, after the plan was printed
     * with it; say what is wrong with it now. */
    for (int pass = 0; pass < 2; pass++) {
        char **urls = pass ? a->indexes : a->mirrors;
        int n = pass ? a->nindexes : a->nmirrors;
        for (int i = 0; i < n; i++) {
            char *why = NULL;
            if (url_check(urls[i], &why) < 0) {
                char *shown = url_redact(urls[i]);
                fprintf(stderr, "sagebuild fetch-cuda: %s '%s': %s\n",
                        pass ? "--index-url" : "--mirror", shown, why);
                free(shown);
                free(why);
                return -1;
            }
        }
    }
    if (a->platform && strncmp(a->platform, "linux-", 6)) {
        fprintf(stderr, "sagebuild fetch-cuda: --platform wants linux-x86_64, linux-sbsa or "
                        "linux-aarch64\n");
        return -1;
    }
    return 0;
}

/* The URLs of plan item i: the source's own (PyPI wheels) or each mirror + relative_path. */
static char **item_urls(const struct fetch_plan *plan, int i, char *const *mirrors, int nmirrors,
                        const struct pipeline_source *src, int *n)
{
    char **out = xcalloc((size_t)nmirrors + 2, sizeof *out);
    *n = 0;
    if (src && src->item_urls) {
        for (char **u = src->item_urls[i]; u && *u && *n < 1; u++)
            out[(*n)++] = url_redact(*u);
    } else {
        for (int m = 0; m < nmirrors; m++) {
            char *u = url_join(mirrors[m], plan->items[i].relative_path);
            out[(*n)++] = url_redact(u);
            free(u);
        }
    }
    return out;
}

static void print_plan_human(const struct fetch_plan *plan, const char *prefix,
                             const struct manifest_text *mt, char *const *mirrors, int nmirrors,
                             const struct pipeline_source *src)
{
    long long total = 0;
    printf("CUDA %s for %s (manifest: %s)\nprefix: %s\n\n", plan->release, plan->platform,
           mt->origin, prefix);
    for (int i = 0; i < plan->nitems; i++) {
        const struct fetch_item *it = &plan->items[i];
        total += it->size > 0 ? it->size : 0;
        printf("%-14s %-10s %10lld bytes  sha256 %s\n", it->component, it->version, it->size,
               it->sha256);
        int nu = 0;
        char **urls = item_urls(plan, i, mirrors, nmirrors, src, &nu);
        for (int m = 0; m < nu; m++)
            printf("    %s\n", urls[m]);
        resolve_free_list(urls, nu);
    }
    if (src)
        printf("\nsource: %s\n", src->name);
    printf("\ntotal %.1f MB in %d %s\n", (double)total / 1e6, plan->nitems,
           plural(plan->nitems, "archive", "archives"));
}

static cJSON *plan_json(const struct fetch_plan *plan, const char *prefix,
                        const struct manifest_text *mt, char *const *mirrors, int nmirrors,
                        const struct pipeline_source *src, const struct pipeline_result *res)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "schema", 1);
    cJSON_AddStringToObject(doc, "source", src ? src->name : "redist");
    cJSON_AddStringToObject(doc, "release", plan->release);
    cJSON_AddStringToObject(doc, "platform", plan->platform);
    cJSON_AddStringToObject(doc, "prefix", prefix);
    cJSON_AddStringToObject(doc, "manifest", mt->origin);
    cJSON_AddStringToObject(doc, "manifest_sha256", mt->sha256);
    cJSON *arr = cJSON_AddArrayToObject(doc, "components");
    long long total = 0;
    for (int i = 0; i < plan->nitems; i++) {
        const struct fetch_item *it = &plan->items[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", it->component);
        cJSON_AddStringToObject(o, "version", it->version);
        cJSON_AddStringToObject(o, "relative_path", it->relative_path);
        cJSON_AddNumberToObject(o, "size", (double)it->size);
        cJSON_AddStringToObject(o, "sha256", it->sha256);
        cJSON *urls = cJSON_AddArrayToObject(o, "urls");
        int nu = 0;
        char **list = item_urls(plan, i, mirrors, nmirrors, src, &nu);
        for (int m = 0; m < nu; m++)
            cJSON_AddItemToArray(urls, cJSON_CreateString(list[m]));
        resolve_free_list(list, nu);
        if (res && res->components) {
            cJSON_AddBoolToObject(o, "from_cache", res->components[i].from_cache);
            cJSON_AddNumberToObject(o, "bytes_downloaded", (double)res->components[i].net_bytes);
            if (res->components[i].url)
                cJSON_AddStringToObject(o, "url", res->components[i].url);
        }
        cJSON_AddItemToArray(arr, o);
        total += it->size > 0 ? it->size : 0;
    }
    cJSON_AddNumberToObject(doc, "total_size", (double)total);
    return doc;
}

static void emit_json(cJSON *doc)
{
    char *text = cJSON_Print(doc);
    printf("%s\n", text);
    cJSON_free(text);
    cJSON_Delete(doc);
}

static void emit_error_json(const char *error, const char *fix)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "schema", 1);
    cJSON_AddStringToObject(doc, "status", "error");
    cJSON_AddStringToObject(doc, "error", error);
    if (fix)
        cJSON_AddStringToObject(doc, "fix", fix);
    emit_json(doc);
}

static const char *postcheck_name(enum postcheck_status s)
{
    switch (s) {
    case POSTCHECK_OK:
        return "ok";
    case POSTCHECK_SKIPPED:
        return "skipped";
    case POSTCHECK_FAILED:
        return "failed";
    default:
        return "not-run";
    }
}

/* The release to fetch when none is named: torch's CUDA, else the newest bundled. */
static char *default_request(const struct fetch_args *a, const char *bundled, char **note)
{
    char *torch_cuda = fetch_torch_cuda(note);
    if (torch_cuda)
        return torch_cuda;
    if (a->match_torch)
        return NULL;
    int n = 0;
    char **labels = catalog_dir_labels(bundled, &n);
    char *best = resolve_newest(labels, n);
    resolve_free_list(labels, n);
    return best;
}

/* In auto mode a failed redist attempt keeps its error for later while PyPI may still serve
 * the release (CUDA 13 and newer); an interruption is never cured by another source. */
static int defer_error(struct attempt *at, const char *release, const char *err,
                       volatile sig_atomic_t *cancel)
{
    if (!at->may_fall_back || *cancel || !err)
        return 0;
    char *refusal = release ? pypi_release_refusal(release) : NULL;
    if (refusal) {
        free(refusal);
        return 0;
    }
    at->deferred = xstrdup(err);
    return 1;
}

static void append_manifest_hint(char **err)
{
    size_t n = strlen(*err);
    while (n && (*err)[n - 1] == '\n')
        n--;
    char *e = xasprintf("%.*s\n(with --source pypi the component versions still come from the "
                        "release's redist manifest, and NVIDIA's site is not asked for it: add "
                        "--manifest FILE|URL, or --mirror " REDIST_DEFAULT_MIRROR ")",
                        (int)n, *err);
    free(*err);
    *err = e;
}

/* The releases whose manifests are bundled or cached: what --cuda can name without a mirror. */
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
    /* oldest first, as a person reads a list of versions */
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

/* "--cuda 99.9": say which releases would have worked. */
static void append_known_releases(const struct catalog *cat, char **err)
{
    int n = 0;
    char **all = known_releases(cat, &n);
    struct strbuf sb = STRBUF_INIT;
    size_t len = strlen(*err);
    while (len && (*err)[len - 1] == '\n')
        len--;
    sb_addf(&sb, "%.*s\nreleases known here (bundled or cached):", (int)len, *err);
    for (int i = 0; i < n; i++)
        sb_addf(&sb, "%s%s", i ? ", " : " ", all[i]);
    if (!n)
        sb_adds(&sb, " none");
    sb_adds(&sb, "; a mirror may offer newer ones (--cuda X.Y.Z asks it for that one)");
    free(*err);
    *err = sb_detach(&sb);
    resolve_free_list(all, n);
}

/* Rewrites a redist plan into NVIDIA's wheels from the PyPI indexes. */
static int plan_wheels(const struct fetch_args *a, struct fetch_plan *plan, const char *cache,
                       const struct dl_opts *dl, struct pypi_plan *pp, char **err)
{
    const char *arch = pypi_arch_for_platform(plan->platform);
    if (!arch) {
        *err = xasprintf("NVIDIA publishes no Linux wheels for %s; use --source redist",
                         plan->platform);
        return -1;
    }
    int nindexes = 0;
    char **indexes = pypi_index_urls(a->indexes, a->nindexes, getenv("SAGEBUILD_INDEX_URLS"),
                                     getenv("PIP_INDEX_URL"), &nindexes);
    /* manylinux tags are judged against this machine's glibc only when the toolkit is for it. */
    int gmaj = 0, gmin = 0;
    const char *mine = fetch_machine_platform();
    if (mine && !strcmp(mine, plan->platform))
        sscanf(gnu_get_libc_version(), "%d.%d", &gmaj, &gmin);
    char *cached = fs_join(cache, "pypi");
    const char *local[] = {a->from ? a->from : cached, cached, NULL};
    struct pypi_request prq = {indexes, nindexes, arch, gmaj, gmin, dl, local};
    int rc = pypi_resolve_plan(plan, &prq, pp, err);
    if (rc == 0)
        rc = resolve_plan_check(plan, err); /* the wheels' file names come from the index */
    for (int i = 0; rc == 0 && i < pp->n; i++)
        if (pp->notes[i])
            fprintf(stderr, "sagebuild fetch-cuda: warning: %s\n", pp->notes[i]);
    free(cached);
    resolve_free_list(indexes, nindexes);
    return rc;
}

static int fetch_once(const struct fetch_args *args, struct attempt *at)
{
    struct fetch_args a = *args;
    int pypi = !strcmp(at->source, "pypi");
    struct pypi_plan pp = {0};
    struct pipeline_source psrc;
    int rc = SB_EXIT_ERROR;
    char *err = NULL, *note = NULL, *request = NULL, *label = NULL, *prefix = NULL;
    struct manifest_text mt = {0};
    struct redist_manifest m = {0};
    struct fetch_plan plan = {0};
    struct dl_opts dl;
    fetch_dl_opts(&dl, a.offline, !a.json && isatty(2));
    if (a.min_rate > 0)
        dl.min_rate = a.min_rate;
    if (a.deadline >= 0)
        dl.deadline = a.deadline;
    volatile sig_atomic_t cancel = 0;
    dl.cancel = &cancel;
    pipeline_install_signals(&cancel);

    int nmirrors = 0;
    /* With PyPI the redist mirrors only serve manifests, and NVIDIA's own site is left out:
     * where it is blocked, the bundled manifests give the component versions. */
    char **mirrors = resolve_mirrors(a.mirrors, a.nmirrors, getenv("SAGEBUILD_MIRRORS"),
                                     a.no_default_mirror || pypi, &nmirrors);
    char *bundled = datadir_find("manifests");
    char *cache = catalog_cache_dir();
    struct catalog cat = {bundled, cache, mirrors, nmirrors, &dl};
    const char *platform = a.platform ? a.platform : fetch_machine_platform();
    if (!platform) {
        err = xstrdup("this machine's architecture has no CUDA redist platform; name one with "
                      "--platform");
        goto out;
    }
    if (!cache) {
        err = xstrdup("no cache folder: set HOME or SAGEBUILD_CACHE");
        goto out;
    }
    if (pypi && a.cuda && (err = pypi_release_refusal(a.cuda)))
        goto out;
    if (a.manifest) {
        if (catalog_load_named(&cat, a.manifest, a.cuda, &mt, &err) < 0)
            goto out;
    } else {
        request = a.cuda ? xstrdup(a.cuda) : default_request(&a, bundled, &note);
        if (!request) {
            err = xasprintf("no CUDA version to fetch: %s; name one with --cuda X.Y",
                            note ? note : "torch was not found");
            goto out;
        }
        if (!(label = catalog_resolve(&cat, request, &err)) ||
            catalog_load(&cat, label, &mt, &err) < 0) {
            if (!label || !release_known(&cat, label))
                append_known_releases(&cat, &err);
            if (pypi) /* the manifest still names the versions; say where it may come from */
                append_manifest_hint(&err);
            goto out;
        }
    }
    if (manifest_parse(mt.text, mt.len, &m, &err) < 0) {
        char *e = xasprintf("manifest %s: %s", mt.origin, err);
        free(err);
        err = e;
        goto out;
    }
    if (resolve_plan(&m, mt.label, platform, a.extras, a.nextras, &plan, &err) < 0)
        goto out;
    if (pypi) {
        if (plan_wheels(&a, &plan, cache, &dl, &pp, &err) < 0)
            goto out;
        pypi_pipeline_source(&pp, &psrc);
    }
    prefix = a.prefix ? fetch_absolute(a.prefix) : fetch_default_prefix(plan.release);
    if (!prefix) {
        err = xstrdup("no default prefix: set HOME or pass --prefix");
        goto out;
    }
    /* The install locks and stages beside the prefix: a parent that refuses new files would
     * only show after the downloads (and never in a dry run). */
    char *parent = fs_dirname(prefix);
    char *why = fs_why_not_creatable(parent);
    free(parent);
    if (why) {
        err = xasprintf("cannot install into %s: %s; choose another --prefix DIR", prefix, why);
        free(why);
        goto out;
    }
    if (a.dry_run) {
        if (a.json) {
            cJSON *doc =
                plan_json(&plan, prefix, &mt, mirrors, nmirrors, pypi ? &psrc : NULL, NULL);
            cJSON_AddStringToObject(doc, "status", "planned");
            emit_json(doc);
        } else {
            print_plan_human(&plan, prefix, &mt, mirrors, nmirrors, pypi ? &psrc : NULL);
        }
        rc = SB_EXIT_OK;
        goto out;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct pipeline_request rq = {
        .plan = &plan,
        .source = pypi ? &psrc : NULL,
        .release_date = m.release_date,
        .manifest_origin = mt.origin,
        .manifest_sha256 = mt.sha256,
        .prefix = prefix,
        .cache_dir = cache,
        .from_dir = a.from,
        .mirrors = mirrors,
        .nmirrors = nmirrors,
        .jobs = a.jobs > 0 ? a.jobs : (cpus > 0 ? (int)cpus : 2),
        .force = a.force,
        .no_check = a.no_check,
        .dl = &dl,
        .cancel = &cancel,
    };
    if (!a.json)
        fprintf(stderr, "sagebuild: CUDA %s (%d %s%s) into %s\n", plan.release, plan.nitems,
                plural(plan.nitems, "component", "components"), pypi ? " as PyPI wheels" : "",
                prefix);
    struct pipeline_result res;
    memset(&res, 0, sizeof res);
    int r = cancel ? -1 : pipeline_run(&rq, &res);
    if (cancel) {
        free(res.error);
        res.error = xstrdup(INTERRUPTED);
        r = -1;
    }
    if (r < 0 && defer_error(at, plan.release, res.error, &cancel)) {
        /* kept for the caller, which tries PyPI next */
    } else if (a.json) {
        cJSON *doc = plan_json(&plan, prefix, &mt, mirrors, nmirrors, pypi ? &psrc : NULL, &res);
        cJSON_AddStringToObject(doc, "status",
                                r < 0           ? "error"
                                : res.unchanged ? "unchanged"
                                                : "installed");
        cJSON_AddNumberToObject(doc, "bytes_downloaded", (double)res.net_bytes);
        cJSON_AddNumberToObject(doc, "seconds", res.seconds);
        cJSON_AddStringToObject(doc, "postcheck", postcheck_name(res.postcheck));
        if (res.postcheck_note)
            cJSON_AddStringToObject(doc, "postcheck_note", res.postcheck_note);
        if (res.error)
            cJSON_AddStringToObject(doc, "error", res.error);
        const char *fix = fetch_fix_for(res.error, plan.release, at->source);
        if (fix)
            cJSON_AddStringToObject(doc, "fix", fix);
        emit_json(doc);
    } else if (r < 0) {
        fprintf(stderr, "sagebuild fetch-cuda: %s\n", res.error);
        const char *fix = fetch_fix_for(res.error, plan.release, at->source);
        if (fix)
            fprintf(stderr, "  fix: %s\n", fix);
    } else if (res.unchanged) {
        printf("CUDA %s is already installed in %s (nothing to do; --force redoes it)\n",
               plan.release, prefix);
    } else {
        printf("CUDA %s installed in %s (%.1f MB downloaded, %.1f s)\n", plan.release, prefix,
               (double)res.net_bytes / 1e6, res.seconds);
        if (res.postcheck == POSTCHECK_OK)
            printf("check: %s\n", res.postcheck_note);
        else if (res.postcheck == POSTCHECK_SKIPPED)
            printf("warning: compile check skipped: %s\n", res.postcheck_note);
        printf("use it:  eval \"$(sagebuild env --prefix %s)\"   (or: . %s/env.sh)\n", prefix,
               prefix);
    }
    rc = r < 0 ? SB_EXIT_ERROR : r > 0 ? SB_EXIT_WARN : SB_EXIT_OK;
    pipeline_result_free(&res, plan.nitems);
    err = NULL;
    if (0) {
    out:
        if (cancel) {
            /* Whatever the step was doing when the signal came, this is what happened. */
            free(err);
            err = xstrdup(INTERRUPTED);
            rc = SB_EXIT_ERROR;
        }
        if (err && defer_error(at,
                               plan.release ? plan.release
                               : label      ? label
                                            : a.cuda,
                               err, &cancel)) {
            /* kept for the caller, which tries PyPI next */
        } else if (err) {
            const char *fix = fetch_fix_for(err,
                                            plan.release ? plan.release
                                            : label      ? label
                                                         : a.cuda,
                                            at->source);
            if (a.json)
                emit_error_json(err, fix);
            else
                fprintf(stderr, "sagebuild fetch-cuda: %s\n", err);
            if (!a.json && fix)
                fprintf(stderr, "  fix: %s\n", fix);
        }
    }
    free(err);
    free(note);
    free(request);
    free(label);
    free(prefix);
    free(bundled);
    free(cache);
    fetch_plan_free(&plan);
    manifest_free(&m);
    manifest_text_free(&mt);
    resolve_free_list(mirrors, nmirrors);
    pypi_plan_free(&pp);
    return rc;
}

int cmd_fetch_cuda(int argc, char **argv, const struct global_opts *g)
{
    (void)g;
    struct fetch_args a = {0};
    a.deadline = -1;
    int rc = parse_args(argc, argv, &a);
    if (rc != 0) {
        rc = rc > 0 ? SB_EXIT_OK : SB_EXIT_USAGE;
    } else if (!strcmp(a.source, "auto")) {
        struct attempt redist = {"redist", 1, NULL};
        rc = fetch_once(&a, &redist);
        if (redist.deferred) {
            fprintf(stderr,
                    "sagebuild fetch-cuda: the redist source failed (%s); trying NVIDIA's "
                    "wheels from PyPI\n",
                    redist.deferred);
            struct attempt wheels = {"pypi", 0, NULL};
            rc = fetch_once(&a, &wheels);
            free(redist.deferred);
        }
    } else {
        struct attempt only = {a.source, 0, NULL};
        rc = fetch_once(&a, &only);
    }
    resolve_free_list(a.mirrors, a.nmirrors);
    resolve_free_list(a.extras, a.nextras);
    resolve_free_list(a.indexes, a.nindexes);
    return rc;
}
