/* sagebuild fetch-cuda: the minimal CUDA toolkit matching torch, from any mirror, verified and
 * installed atomically. Option handling and output here; the work is in engine/pipeline.c. */
#include "util/json.h"
#include "cmd.h"
#include "fetch/engine/pipeline.h"
#include "fetch/sources/catalog.h"
#include "fetch/sources/pypi_index.h"
#include "fetch/sources/resolve.h"
#include "fetch/sources/source.h"
#include "fetch_common.h"
#include "fetch_fix.h"
#include "fetch_result.h"
#include "toolchain/toolkit.h"
#include "util/fs.h"
#include "util/opt.h"
#include "util/out.h"
#include "util/plural.h"
#include "util/strbuf.h"
#include "util/url.h"
#include "util/version.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fetch_args {
    const char *cuda;
    int match_torch;
    const char *python; /* whose torch's CUDA is the default release; NULL: toolkit_python */
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

/* One attempt with one source. When a next source may still cure its failure (--source auto),
 * the error is kept for the message that moves on, not printed. */
struct attempt {
    const struct fetch_source *source;
    const struct fetch_source *fallback; /* NULL: this is the last */
    char *deferred;                      /* the error the fallback may still cure */
};

static const char about[] =
    "Downloads the CUDA compiler components (cuda_nvcc, cuda_cudart, cuda_cccl, and\n"
    "cuda_crt and libnvvm where the release has them) from NVIDIA's redist tree or a\n"
    "mirror, checks size and sha256, unpacks them and installs them atomically as one\n"
    "prefix that works as CUDA_HOME. The same request again does nothing.\n";

static const char *const source_choices[] = {"redist", "pypi", "auto", NULL};

/* --cuda: a release number X.Y or X.Y.Z. */
static int release_arg(const char *arg, void *dest)
{
    struct version v;
    if (version_parse_strict(arg, &v) < 0 || v.nparts > 3)
        return -1;
    *(const char **)dest = arg;
    return 0;
}

static int platform_arg(const char *arg, void *dest)
{
    if (strncmp(arg, "linux-", 6))
        return -1;
    *(const char **)dest = arg;
    return 0;
}

static int rate_arg(const char *arg, void *dest)
{
    return fetch_parse_rate(arg, dest);
}

static int seconds_arg(const char *arg, void *dest)
{
    return fetch_parse_seconds(arg, dest);
}

/* A mirror or index that is not a URL would only fail later, after the plan was printed with
 * it; say what is wrong with it now. */
static int check_urls(const struct opt_command *spec, const char *option, char *const *urls, int n)
{
    for (int i = 0; i < n; i++) {
        char *why = NULL;
        if (url_check(urls[i], &why) < 0) {
            char *shown = url_redact(urls[i]);
            opt_fail(spec, "%s '%s': %s", option, shown, why);
            free(shown);
            free(why);
            return -1;
        }
    }
    return 0;
}

/* 0 parsed, 1 help shown, -1 usage error (printed). The lists in a are set either way.
 * Long only for its table, one row of data per option; the logic is the lines after it. */
static int parse_args(int argc, char **argv, struct fetch_args *a)
{
    struct opt_list mirrors = {0}, extras = {0}, indexes = {0};
    a->source = "redist";
    const struct opt table[] = {
        {.kind = OPT_PARSED,
         .name = "cuda",
         .arg = "X.Y[.Z]",
         .help = "release; X.Y means its newest patch release known",
         .dest = &a->cuda,
         .group = 1,
         .parse = release_arg,
         .wants = "a release number X.Y or X.Y.Z"},
        {.kind = OPT_FLAG,
         .name = "match-torch",
         .help = "the CUDA version of the installed torch (the default when torch is found; "
                 "else the newest bundled release)",
         .dest = &a->match_torch,
         .group = 1},
        {.kind = OPT_STRING,
         .name = "python",
         .arg = "PY",
         .help = "the python whose torch's CUDA is fetched when --cuda is not given (default "
                 "$SAGEBUILD_PYTHON, else python3)",
         .dest = &a->python},
        {.kind = OPT_STRING,
         .name = "prefix",
         .arg = "DIR",
         .help = "where to install (default ~/.local/share/sagebuild/cuda-X.Y.Z)",
         .dest = &a->prefix},
        {.kind = OPT_LIST,
         .name = "mirror",
         .arg = "URL",
         .help = "base of a redist tree; repeatable (or comma-separated), tried in order per "
                 "file, then $SAGEBUILD_MIRRORS, then NVIDIA's site",
         .dest = &mirrors,
         .flags = OPT_SPLIT_COMMAS},
        {.kind = OPT_FLAG,
         .name = "no-default-mirror",
         .help = "do not fall back to NVIDIA's site",
         .dest = &a->no_default_mirror},
        {.kind = OPT_STRING,
         .name = "manifest",
         .arg = "FILE|URL",
         .help = "use this redistrib_X.Y.Z.json",
         .dest = &a->manifest},
        {.kind = OPT_STRING,
         .name = "from",
         .arg = "DIR",
         .help = "take archives from DIR (downloaded elsewhere)",
         .dest = &a->from},
        {.kind = OPT_FLAG,
         .name = "offline",
         .help = "never use the network (cache, --from, bundled manifests)",
         .dest = &a->offline},
        {.kind = OPT_PARSED,
         .name = "platform",
         .arg = "NAME",
         .help = "linux-x86_64, linux-sbsa or linux-aarch64 (default: this machine)",
         .dest = &a->platform,
         .parse = platform_arg,
         .wants = "linux-x86_64, linux-sbsa or linux-aarch64"},
        {.kind = OPT_LIST,
         .name = "with",
         .arg = "LIST",
         .help = "extra components, e.g. nvdisasm,cuobjdump,nvrtc",
         .dest = &extras,
         .flags = OPT_SPLIT_COMMAS},
        {.kind = OPT_INT,
         .name = "jobs",
         .letter = 'j',
         .arg = "N",
         .help = "archives unpacked at once (default: CPU count)",
         .dest = &a->jobs,
         .min = 1,
         .max = 256},
        {.kind = OPT_FLAG,
         .name = "dry-run",
         .help = "print the plan (URLs, sizes, sha256) and stop",
         .dest = &a->dry_run},
        {.kind = OPT_FLAG,
         .name = "json",
         .help = "machine-readable output on stdout",
         .dest = &a->json},
        {.kind = OPT_FLAG,
         .name = "force",
         .help = "install again even when the prefix already matches",
         .dest = &a->force},
        {.kind = OPT_FLAG,
         .name = "no-check",
         .help = "skip the compile-and-link check of the new toolkit",
         .dest = &a->no_check},
        {.kind = OPT_ENUM,
         .name = "source",
         .arg = "S",
         .help = "redist (NVIDIA's archives, the default), pypi (NVIDIA's wheels from a PyPI "
                 "index; CUDA 13 and newer) or auto (redist, then PyPI when that fails)",
         .dest = &a->source,
         .choices = source_choices},
        {.kind = OPT_LIST,
         .name = "index-url",
         .arg = "URL",
         .help = "PyPI simple index; repeatable, tried in order, then $SAGEBUILD_INDEX_URLS, "
                 "then $PIP_INDEX_URL (default " PYPI_DEFAULT_INDEX ")",
         .dest = &indexes},
        {.kind = OPT_PARSED,
         .name = "min-rate",
         .arg = "BYTES",
         .help = "abandon a transfer slower than this per second over $SAGEBUILD_TIMEOUT "
                 "seconds (default 1k; k and M suffixes)",
         .dest = &a->min_rate,
         .parse = rate_arg,
         .wants = "bytes per second from 1 to 1G, e.g. 1024, 64k or 2M"},
        {.kind = OPT_PARSED,
         .name = "deadline",
         .arg = "SECONDS",
         .help = "the most one request may take (default 3600, 0: none); a retry resumes where "
                 "it stopped",
         .dest = &a->deadline,
         .parse = seconds_arg,
         .wants = "whole seconds from 0 (none) to 604800"},
        {0},
    };
    const struct opt_command spec = {"fetch-cuda", about, NULL, table, 0};
    enum opt_result r = opt_parse(&spec, argc, argv);
    a->mirrors = mirrors.v;
    a->nmirrors = mirrors.n;
    a->extras = extras.v;
    a->nextras = extras.n;
    a->indexes = indexes.v;
    a->nindexes = indexes.n;
    if (r != OPT_OK)
        return r == OPT_HELP_SHOWN ? 1 : -1;
    if (check_urls(&spec, "--mirror", a->mirrors, a->nmirrors) < 0 ||
        check_urls(&spec, "--index-url", a->indexes, a->nindexes) < 0)
        return -1;
    return 0;
}

/* An item's URLs with any password hidden, for printing. */
static char **shown_urls(const struct fetch_item *it, int *n)
{
    *n = 0;
    while (it->urls && it->urls[*n])
        (*n)++;
    char **out = xcalloc((size_t)*n + 1, sizeof *out);
    for (int i = 0; i < *n; i++)
        out[i] = url_redact(it->urls[i]);
    return out;
}

static void print_plan_human(const struct fetch_plan *plan, const char *prefix,
                             const struct fetch_source *src)
{
    long long total = 0;
    printf("CUDA %s for %s (manifest: %s)\nprefix: %s\n\n", plan->release, plan->platform,
           plan->manifest, prefix);
    for (int i = 0; i < plan->nitems; i++) {
        const struct fetch_item *it = &plan->items[i];
        total += it->size > 0 ? it->size : 0;
        printf("%-14s %-10s %10lld bytes  sha256 %s\n", it->component, it->version, it->size,
               it->sha256);
        int nu = 0;
        char **urls = shown_urls(it, &nu);
        for (int m = 0; m < nu; m++)
            printf("    %s\n", urls[m]);
        resolve_free_list(urls, nu);
    }
    if (src->fetched_as) /* a source other than NVIDIA's archives is named */
        printf("\nsource: %s\n", src->name);
    printf("\ntotal %.1f MB in %d %s\n", (double)total / 1e6, plan->nitems,
           plural(plan->nitems, "archive", "archives"));
}

static cJSON *plan_json(const struct fetch_plan *plan, const char *prefix,
                        const struct fetch_source *src, const struct pipeline_result *res)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "schema", 1);
    cJSON_AddStringToObject(doc, "source", src->name);
    cJSON_AddStringToObject(doc, "release", plan->release);
    cJSON_AddStringToObject(doc, "platform", plan->platform);
    cJSON_AddStringToObject(doc, "prefix", prefix);
    cJSON_AddStringToObject(doc, "manifest", plan->manifest);
    cJSON_AddStringToObject(doc, "manifest_sha256", plan->manifest_sha256);
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
        char **list = shown_urls(it, &nu);
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
    char *text = json_text(doc);
    fputs(text, stdout);
    free(text);
}

static void emit_error_json(const char *error, const char *fix, const char *release,
                            const char *source)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "schema", 1);
    cJSON_AddStringToObject(doc, "status", "error");
    cJSON_AddStringToObject(doc, "error", error);
    if (fix)
        cJSON_AddStringToObject(doc, "fix", fix);
    struct fetch_result_facts f = {.exit_code = SB_EXIT_ERROR,
                                   .state = "error",
                                   .release = release,
                                   .source = source,
                                   .error = error,
                                   .fix = fix};
    fetch_result_add(doc, &f);
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

/* What one attempt holds from start to end, freed in one place (run_free). */
struct fetch_run {
    const struct fetch_args *a;
    struct attempt *at;
    volatile sig_atomic_t *cancel;
    struct dl_opts dl;
    char *cache;
    char *torch_cuda; /* the release to fetch when none is named */
    char *torch_note; /* why there is none */
    struct fetch_plan plan;
    char *prefix;
};

static void run_init(struct fetch_run *r, const struct fetch_args *a, struct attempt *at,
                     volatile sig_atomic_t *cancel)
{
    memset(r, 0, sizeof *r);
    r->a = a;
    r->at = at;
    r->cancel = cancel;
    fetch_dl_opts(&r->dl, a->offline, !a->json && isatty(2));
    if (a->min_rate > 0)
        r->dl.min_rate = a->min_rate;
    if (a->deadline >= 0)
        r->dl.deadline = a->deadline;
    r->dl.cancel = cancel;
    r->cache = catalog_cache_dir();
}

static void run_free(struct fetch_run *r)
{
    free(r->cache);
    free(r->torch_cuda);
    free(r->torch_note);
    fetch_plan_free(&r->plan);
    free(r->prefix);
}

/* The release the errors are about: the plan's (or the one it resolved to), else --cuda. */
static const char *run_release(const struct fetch_run *r)
{
    return r->plan.release ? r->plan.release : r->a->cuda;
}

/* Keeps the error instead of printing it when the next source may still serve the release; an
 * interruption is never cured by another source. */
static int defer_error(struct fetch_run *r, const char *err)
{
    struct attempt *at = r->at;
    const char *release = run_release(r);
    if (!at->fallback || *r->cancel || !err)
        return 0;
    char *refusal = release ? at->fallback->refusal(release) : NULL;
    if (refusal) {
        free(refusal);
        return 0;
    }
    at->deferred = xstrdup(err);
    return 1;
}

/* An error before the pipeline ran: stderr with its fix, or --json. */
static void report_error(struct fetch_run *r, const struct fetch_error *err)
{
    if (defer_error(r, err->message))
        return; /* kept for the caller, which tries the next source */
    const char *fix = fetch_fix_for(err->kind, run_release(r), r->at->source->name);
    if (r->a->json) {
        emit_error_json(err->message, fix, run_release(r), r->at->source->name);
        return;
    }
    fprintf(stderr, "sagebuild fetch-cuda: %s\n", err->message);
    if (fix)
        fprintf(stderr, "  fix: %s\n", fix);
}

/* The request resolved by the source into a plan, and the prefix it goes to. 0, or -1 with
 * *err. */
static int plan_fetch(struct fetch_run *r, struct fetch_error *err)
{
    const struct fetch_args *a = r->a;
    const char *platform = a->platform ? a->platform : fetch_machine_platform();
    if (!platform)
        return fetch_fail(err, FETCH_ERR_OTHER,
                          "this machine's architecture has no CUDA redist platform; name one "
                          "with --platform");
    if (!r->cache)
        return fetch_fail(err, FETCH_ERR_OTHER, "no cache folder: set HOME or SAGEBUILD_CACHE");
    if (!a->cuda && !a->manifest)
        r->torch_cuda = toolkit_torch_cuda(a->python, &r->torch_note);
    struct source_request sr = {
        .cuda = a->cuda,
        .default_release = r->torch_cuda,
        .no_default_why = r->torch_note,
        .default_required = a->match_torch,
        .manifest = a->manifest,
        .platform = platform,
        .host_platform = fetch_machine_platform(),
        .extras = a->extras,
        .nextras = a->nextras,
        .mirrors = a->mirrors,
        .nmirrors = a->nmirrors,
        .no_default_mirror = a->no_default_mirror,
        .indexes = a->indexes,
        .nindexes = a->nindexes,
        .cache_dir = r->cache,
        .from_dir = a->from,
        .dl = &r->dl,
    };
    if (r->at->source->plan(&sr, &r->plan, err) < 0)
        return -1;
    for (int i = 0; i < r->plan.nitems; i++)
        if (r->plan.items[i].note)
            fprintf(stderr, "sagebuild fetch-cuda: warning: %s\n", r->plan.items[i].note);
    r->prefix = a->prefix ? fetch_absolute(a->prefix) : toolkit_fetched_prefix(r->plan.release);
    if (!r->prefix)
        return fetch_fail(err, FETCH_ERR_OTHER, "no default prefix: set HOME or pass --prefix");
    /* The install locks and stages beside the prefix: a parent that refuses new files would
     * only show after the downloads (and never in a dry run). */
    char *parent = fs_dirname(r->prefix);
    int errnum = 0;
    char *why = fs_why_not_creatable(parent, &errnum);
    free(parent);
    if (why) {
        fetch_fail(err, fetch_error_kind_of_errno(errnum),
                   "cannot install into %s: %s; choose another --prefix DIR", r->prefix, why);
        free(why);
        return -1;
    }
    return 0;
}

static int show_plan(const struct fetch_run *r)
{
    if (r->a->json) {
        cJSON *doc = plan_json(&r->plan, r->prefix, r->at->source, NULL);
        cJSON_AddStringToObject(doc, "status", "planned");
        struct fetch_result_facts f = {.exit_code = SB_EXIT_OK,
                                       .state = "planned",
                                       .release = r->plan.release,
                                       .prefix = r->prefix,
                                       .source = r->at->source->name};
        fetch_result_add(doc, &f);
        emit_json(doc);
    } else {
        print_plan_human(&r->plan, r->prefix, r->at->source);
    }
    return SB_EXIT_OK;
}

static void report_json(const struct fetch_run *r, int exit_code, const struct pipeline_result *res)
{
    cJSON *doc = plan_json(&r->plan, r->prefix, r->at->source, res);
    const char *state = exit_code == SB_EXIT_ERROR ? "error"
                        : res->unchanged           ? "unchanged"
                                                   : "installed";
    cJSON_AddStringToObject(doc, "status", state);
    cJSON_AddNumberToObject(doc, "bytes_downloaded", (double)res->net_bytes);
    cJSON_AddNumberToObject(doc, "seconds", res->seconds);
    cJSON_AddStringToObject(doc, "postcheck", postcheck_name(res->postcheck));
    if (res->postcheck_note)
        cJSON_AddStringToObject(doc, "postcheck_note", res->postcheck_note);
    if (res->error.message)
        cJSON_AddStringToObject(doc, "error", res->error.message);
    const char *fix = fetch_fix_for(res->error.kind, r->plan.release, r->at->source->name);
    if (fix)
        cJSON_AddStringToObject(doc, "fix", fix);
    struct fetch_result_facts f = {.exit_code = exit_code,
                                   .state = state,
                                   .release = r->plan.release,
                                   .prefix = r->prefix,
                                   .source = r->at->source->name,
                                   .postcheck = postcheck_name(res->postcheck),
                                   .error = res->error.message,
                                   .fix = fix};
    fetch_result_add(doc, &f);
    emit_json(doc);
}

static void report_human(const struct fetch_run *r, int rc, const struct pipeline_result *res)
{
    const char *release = r->plan.release, *prefix = r->prefix;
    if (rc < 0) {
        fprintf(stderr, "sagebuild fetch-cuda: %s\n", res->error.message);
        const char *fix = fetch_fix_for(res->error.kind, release, r->at->source->name);
        if (fix)
            fprintf(stderr, "  fix: %s\n", fix);
    } else if (res->unchanged) {
        printf("CUDA %s is already installed in %s (nothing to do; --force redoes it)\n", release,
               prefix);
    } else {
        printf("CUDA %s installed in %s (%.1f MB downloaded, %.1f s)\n", release, prefix,
               (double)res->net_bytes / 1e6, res->seconds);
        if (res->postcheck == POSTCHECK_OK)
            printf("check: %s\n", res->postcheck_note);
        else if (res->postcheck == POSTCHECK_SKIPPED)
            printf("warning: compile check skipped: %s\n", res->postcheck_note);
        printf("use it:  eval \"$(sagebuild env --prefix %s)\"   (or: . %s/env.sh)\n", prefix,
               prefix);
    }
}

/* Runs the pipeline on the plan and says how it went (or keeps the error for the next source). */
static int install_plan(struct fetch_run *r)
{
    const struct fetch_args *a = r->a;
    const struct fetch_source *src = r->at->source;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct pipeline_request rq = {
        .plan = &r->plan,
        .source = src,
        .prefix = r->prefix,
        .cache_dir = r->cache,
        .from_dir = a->from,
        .jobs = a->jobs > 0 ? a->jobs : (cpus > 0 ? (int)cpus : 2),
        .force = a->force,
        .no_check = a->no_check,
        .dl = &r->dl,
        .cancel = r->cancel,
    };
    if (!a->json)
        fprintf(stderr, "sagebuild: CUDA %s (%d %s%s%s) into %s\n", r->plan.release, r->plan.nitems,
                plural(r->plan.nitems, "component", "components"), src->fetched_as ? " as " : "",
                src->fetched_as ? src->fetched_as : "", r->prefix);
    struct pipeline_result res;
    memset(&res, 0, sizeof res);
    int rc = *r->cancel ? -1 : pipeline_run(&rq, &res);
    if (*r->cancel)
        rc = fetch_fail(&res.error, FETCH_ERR_INTERRUPTED, INTERRUPTED);
    int exit_code = rc < 0 ? SB_EXIT_ERROR : rc > 0 ? SB_EXIT_WARN : SB_EXIT_OK;
    if (rc < 0 && defer_error(r, res.error.message)) {
        /* kept for the caller, which tries the next source */
    } else if (a->json) {
        report_json(r, exit_code, &res);
    } else {
        report_human(r, rc, &res);
    }
    pipeline_result_free(&res, r->plan.nitems);
    return exit_code;
}

static int fetch_once(const struct fetch_args *a, struct attempt *at, volatile sig_atomic_t *cancel)
{
    struct fetch_run r;
    run_init(&r, a, at, cancel);
    struct fetch_error err = {0};
    int rc;
    int planned = plan_fetch(&r, &err) == 0;
    if (planned && !a->dry_run) {
        rc = install_plan(&r); /* says itself how it went */
    } else {
        rc = planned ? show_plan(&r) : SB_EXIT_ERROR;
        if (*cancel) {
            /* Whatever the step was doing when the signal came, this is what happened. */
            fetch_fail(&err, FETCH_ERR_INTERRUPTED, INTERRUPTED);
            rc = SB_EXIT_ERROR;
        }
        if (err.message)
            report_error(&r, &err);
    }
    fetch_error_free(&err);
    run_free(&r);
    return rc;
}

/* Each source --source names in turn, while the one before failed in a way the next may cure. */
static int fetch_from_sources(const struct fetch_args *a)
{
    const struct fetch_source *chain[4];
    int n = source_chain(a->source, chain, 4);
    /* One flag for every attempt: an interruption ends them all. */
    volatile sig_atomic_t cancel = 0;
    pipeline_install_signals(&cancel);
    int rc = SB_EXIT_ERROR;
    char *deferred = NULL;
    for (int i = 0; i < n; i++) {
        if (deferred)
            fprintf(stderr, "sagebuild fetch-cuda: the %s source failed (%s); trying %s\n",
                    chain[i - 1]->name, deferred, chain[i]->title);
        struct attempt at = {chain[i], i + 1 < n ? chain[i + 1] : NULL, NULL};
        rc = fetch_once(a, &at, &cancel);
        free(deferred);
        deferred = at.deferred;
        if (!deferred)
            break;
    }
    free(deferred);
    return rc;
}

int cmd_fetch_cuda(int argc, char **argv, const struct global_opts *g)
{
    (void)g;
    struct fetch_args a = {0};
    a.deadline = -1;
    int rc = parse_args(argc, argv, &a);
    if (rc != 0)
        rc = rc > 0 ? SB_EXIT_OK : SB_EXIT_USAGE;
    else
        rc = fetch_from_sources(&a);
    resolve_free_list(a.mirrors, a.nmirrors);
    resolve_free_list(a.extras, a.nextras);
    resolve_free_list(a.indexes, a.nindexes);
    return rc;
}
