#include "pipeline.h"
#include "install.h"
#include "layout.h"
#include "lockfile.h"
#include "postcheck.h"
#include "toolchain/host.h"
#include "unpack.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The one piece of process-wide state: a signal handler can only reach a global. It points at
 * the caller's flag, which the handler sets and everything else only reads. */
static volatile sig_atomic_t *signal_flag;

static void on_signal(int sig)
{
    (void)sig;
    if (signal_flag)
        *signal_flag = 1;
}

void pipeline_install_signals(volatile sig_atomic_t *flag)
{
    signal_flag = flag;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The per-archive state of one run: its download job, the file it lands in, the folder it
 * unpacks into and how that went. */
struct archives {
    int n;
    struct dl_job *jobs;
    char **paths;
    char **dests;
    struct unpack_result *unpacked;
    int *rcs;
};

/* Unpack workers take archives largest first, so the longest decompression starts at once. */
struct work {
    struct archives *a;
    const struct fetch_source *source;
    int *order;
    int next;
    volatile sig_atomic_t *cancel;
    pthread_mutex_t mu;
};

static const char *archive_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void *unpack_worker(void *arg)
{
    struct work *w = arg;
    struct archives *a = w->a;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        int k = w->next < a->n ? w->order[w->next++] : -1;
        pthread_mutex_unlock(&w->mu);
        if (k < 0)
            return NULL;
        struct unpack_opts o = {.strip = w->source->strip,
                                .map = w->source->map_entry,
                                .cancel = w->cancel,
                                .archive_size = a->jobs[k].size,
                                .archive_name = archive_name(a->jobs[k].path)};
        a->rcs[k] = unpack_download(&a->jobs[k], a->dests[k], &o, &a->unpacked[k]);
    }
}

static int by_size_desc(const void *x, const void *y, void *jobs)
{
    const struct dl_job *j = jobs;
    long long sx = j[*(const int *)x].size, sy = j[*(const int *)y].size;
    return sx < sy ? 1 : sx > sy ? -1 : 0;
}

static char *from_path(const char *dir, const char *rel)
{
    char *p = fs_join(dir, rel);
    if (fs_is_file(p))
        return p;
    free(p);
    const char *base = strrchr(rel, '/');
    p = fs_join(dir, base ? base + 1 : rel);
    if (fs_is_file(p))
        return p;
    free(p);
    return NULL;
}

static void lock_info_for(const struct pipeline_request *rq, struct lock_component *comps,
                          struct lock_info *li, const struct pipeline_result *res)
{
    const struct fetch_plan *plan = rq->plan;
    for (int i = 0; i < plan->nitems; i++) {
        const struct fetch_item *it = &plan->items[i];
        comps[i] = (struct lock_component){it->component,     it->version,
                                           it->relative_path, it->sha256,
                                           it->size,          res ? res->components[i].url : NULL};
    }
    *li = (struct lock_info){
        rq->source->name,      plan->release, plan->release_date, plan->platform, plan->manifest,
        plan->manifest_sha256, comps,         plan->nitems};
}

static int already_installed(const struct pipeline_request *rq)
{
    char *lock = fs_join(rq->prefix, LOCKFILE_NAME);
    char *text = fs_read_file(lock, 1 << 20, NULL);
    free(lock);
    struct lock_component *comps = xcalloc((size_t)rq->plan->nitems + 1, sizeof *comps);
    struct lock_info li;
    lock_info_for(rq, comps, &li, NULL);
    struct strbuf missing = STRBUF_INIT;
    int same = text && lockfile_matches(text, &li) && layout_check(rq->prefix, &missing) == 0;
    sb_free(&missing);
    free(comps);
    free(text);
    return same;
}

/* A prefix that holds something sagebuild did not make (a system toolkit, the user's files):
 * never swapped away without --force. An empty folder is fine. */
static int foreign_prefix(const char *prefix)
{
    if (!fs_exists(prefix))
        return 0;
    char *lock = fs_join(prefix, LOCKFILE_NAME);
    int ours = fs_exists(lock);
    free(lock);
    if (ours)
        return 0;
    DIR *d = opendir(prefix);
    if (!d)
        return 1; /* a file, or unreadable */
    int entries = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        entries += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
    closedir(d);
    return entries > 0;
}

static int write_text(const char *dir, const char *name, const char *text, struct fetch_error *err)
{
    char *p = fs_join(dir, name);
    int rc = fs_write_file(p, text, strlen(text));
    if (rc < 0)
        fetch_fail_errno(err, errno, "cannot write %s", p);
    free(p);
    return rc;
}

/* Post-check, lock file and env.sh, in the staging tree. */
static int finish_tree(const struct pipeline_request *rq, struct install_ctx *ic,
                       struct pipeline_result *res)
{
    const char *root = ic->staging;
    struct hostcc_choice hc;
    hostcc_choose(root, &hc);
    if (rq->no_check) {
        res->postcheck = POSTCHECK_NOT_RUN;
    } else if (!hc.cxx) {
        res->postcheck = POSTCHECK_SKIPPED;
        res->postcheck_note = xstrdup(hc.note);
    } else {
        struct strbuf log = STRBUF_INIT;
        if (rq->dl->progress)
            fprintf(stderr, "  compiling and linking a test program with the new nvcc...\n");
        enum fetch_error_kind failed = postcheck_compile(root, hc.cxx, &log);
        if (failed == FETCH_ERR_NONE) {
            res->postcheck = POSTCHECK_OK;
            res->postcheck_note = xasprintf("nvcc -ccbin %s compiled and linked a program "
                                            "using cuda_fp16.h, cuda_bf16.h, cuda_fp8.h",
                                            hc.cxx);
        } else {
            res->postcheck = POSTCHECK_FAILED;
            fetch_fail(&res->error, failed,
                       "the fetched toolkit failed its compile-and-link check (host compiler %s; "
                       "%s):\n%s",
                       hc.cxx, hc.note ? hc.note : "", sb_str(&log));
        }
        sb_free(&log);
    }
    int rc = res->postcheck == POSTCHECK_FAILED ? -1 : 0;
    if (rc == 0) {
        struct lock_component *comps = xcalloc((size_t)rq->plan->nitems + 1, sizeof *comps);
        struct lock_info li;
        lock_info_for(rq, comps, &li, res);
        char *text = lockfile_format(&li);
        rc = write_text(root, LOCKFILE_NAME, text, &res->error);
        free(text);
        free(comps);
        /* env.sh names the final prefix: the tree is about to be renamed there. */
        char *cccl = fs_join(root, "include/cccl"),
             *final_cccl = fs_join(ic->prefix, "include/cccl");
        struct env_values ev = {ic->prefix, hc.cc, hc.cxx, 0, fs_is_dir(cccl) ? final_cccl : NULL};
        char *env = env_format(&ev, ENV_SH);
        char *envsh = xasprintf("# Generated by sagebuild fetch-cuda: . %s/%s\n%s", ic->prefix,
                                ENVSH_NAME, env);
        if (rc == 0)
            rc = write_text(root, ENVSH_NAME, envsh, &res->error);
        free(env);
        free(envsh);
        free(cccl);
        free(final_cccl);
    }
    hostcc_free(&hc);
    return rc;
}

static int merge_and_fix(const struct pipeline_request *rq, const char *root, char **dests,
                         struct pipeline_result *res)
{
    const struct fetch_plan *plan = rq->plan;
    for (int i = 0; i < plan->nitems; i++)
        if (fs_is_dir(dests[i]) && layout_merge(dests[i], root, &res->error) < 0)
            return -1;
    char *parts = fs_join(root, ".parts");
    fs_remove_tree(parts);
    free(parts);
    const char **names = xcalloc((size_t)plan->nitems + 1, sizeof *names);
    const char **versions = xcalloc((size_t)plan->nitems + 1, sizeof *versions);
    for (int i = 0; i < plan->nitems; i++) {
        names[i] = plan->items[i].component;
        versions[i] = plan->items[i].version;
    }
    struct strbuf log = STRBUF_INIT;
    int rc = 0;
    if (rq->source->fixup)
        rc = rq->source->fixup(root, &log, &res->error);
    if (rc == 0)
        rc = layout_fixup(root, plan->release, names, versions, plan->nitems, &log, &res->error);
    free(names);
    free(versions);
    sb_free(&log); /* the fix-ups need no mention: the tree is checked below */
    if (rc < 0)
        return -1;
    struct strbuf missing = STRBUF_INIT;
    if (layout_check(root, &missing) > 0) {
        fetch_fail(&res->error, FETCH_ERR_OTHER,
                   "the unpacked components do not make a toolkit; missing: %s (add the "
                   "components that hold them with --with)",
                   sb_str(&missing));
        sb_free(&missing);
        return -1;
    }
    sb_free(&missing);
    return 0;
}

/* Takes the prefix's lock and makes the staging folder beside it. 1 when the prefix already
 * holds exactly this plan (nothing to do), 0 when ready, -1 with res->error. */
static int prepare_prefix(const struct pipeline_request *rq, struct install_ctx *ic,
                          struct pipeline_result *res)
{
    if (install_lock(rq->prefix, rq->cancel, ic, &res->error) < 0)
        return -1;
    if (!rq->force && already_installed(rq)) {
        res->unchanged = 1;
        return 1;
    }
    if (!rq->force && foreign_prefix(ic->prefix)) {
        /* Say what is there: a dangling symlink or a device is no one's old toolkit. */
        char *what = fs_why_not_dir(ic->prefix);
        if (what)
            fetch_fail(&res->error, FETCH_ERR_OTHER,
                       "--prefix %s %s; refusing to replace it: choose another --prefix, or add "
                       "--force",
                       ic->prefix, what);
        else
            fetch_fail(&res->error, FETCH_ERR_OTHER,
                       "%s exists and was not made by sagebuild (no %s); refusing to replace it: "
                       "choose another --prefix, or add --force",
                       ic->prefix, LOCKFILE_NAME);
        free(what);
        return -1;
    }
    if (install_staging(ic, &res->error) < 0)
        return -1;
    return 0;
}

/* One download job per plan item: from --from when the file is there, else into the cache
 * from the item's URLs; each unpacks into staging/.parts/<component>. */
static void archives_init(struct archives *a, const struct pipeline_request *rq,
                          const char *staging)
{
    const struct fetch_plan *plan = rq->plan;
    int n = plan->nitems;
    a->n = n;
    a->jobs = xcalloc((size_t)n + 1, sizeof *a->jobs);
    a->paths = xcalloc((size_t)n + 1, sizeof *a->paths);
    a->dests = xcalloc((size_t)n + 1, sizeof *a->dests);
    a->unpacked = xcalloc((size_t)n + 1, sizeof *a->unpacked);
    a->rcs = xcalloc((size_t)n + 1, sizeof *a->rcs);
    for (int i = 0; i < n; i++) {
        const struct fetch_item *it = &plan->items[i];
        struct dl_job *j = &a->jobs[i];
        dl_job_init(j);
        j->label = it->component;
        j->size = it->size;
        j->sha256 = it->sha256;
        a->paths[i] = rq->from_dir ? from_path(rq->from_dir, it->relative_path) : NULL;
        if (a->paths[i]) {
            j->user_file = 1;
        } else {
            a->paths[i] = fs_join(rq->cache_dir, it->relative_path);
            j->urls = it->urls;
            while (it->urls && it->urls[j->nurls])
                j->nurls++;
        }
        j->path = a->paths[i];
        a->dests[i] = xasprintf("%s/.parts/%s", staging, it->component);
    }
}

static void archives_free(struct archives *a)
{
    for (int i = 0; i < a->n; i++) {
        dl_job_free(&a->jobs[i]);
        free(a->paths[i]);
        free(a->dests[i]);
        unpack_result_free(&a->unpacked[i]);
    }
    free(a->jobs);
    free(a->paths);
    free(a->dests);
    free(a->unpacked);
    free(a->rcs);
    memset(a, 0, sizeof *a);
}

/* Downloads every archive while up to rq->jobs threads unpack each one as it arrives. */
static void download_and_unpack(const struct pipeline_request *rq, struct archives *a)
{
    int n = a->n;
    int *order = xcalloc((size_t)n + 1, sizeof *order);
    for (int i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, (size_t)n, sizeof *order, by_size_desc, a->jobs);
    struct work w = {a, rq->source, order, 0, rq->cancel, PTHREAD_MUTEX_INITIALIZER};
    int nworkers = rq->jobs < 1 ? 1 : (rq->jobs > n ? n : rq->jobs);
    pthread_t *tids = xcalloc((size_t)nworkers + 1, sizeof *tids);
    /* Workers must not take SIGINT/SIGTERM: the main thread's handler sets the flag. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int started = 0;
    for (int i = 0; i < nworkers; i++)
        started += pthread_create(&tids[i], NULL, unpack_worker, &w) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    dl_run(a->jobs, n, rq->dl); /* each job says how it went */
    if (rq->dl->progress && !(rq->cancel && *rq->cancel))
        fputs("  unpacking (decompression overlaps the downloads)...\n", stderr);
    if (started == 0)
        unpack_worker(&w); /* no threads available: unpack here, after the downloads */
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(tids);
    free(order);
}

/* What the downloads brought, per component and in all. 0, or -1 with res->error naming every
 * archive that could not be had (not just the first), else the first that did not unpack. */
static int archives_verdict(const struct pipeline_request *rq, const struct archives *a,
                            struct pipeline_result *res)
{
    for (int i = 0; i < a->n; i++) {
        const struct dl_job *j = &a->jobs[i];
        res->components[i].net_bytes = j->net_bytes;
        res->components[i].from_cache = j->from_cache;
        res->components[i].url = j->url_used ? xstrdup(j->url_used) : NULL;
        res->net_bytes += j->net_bytes;
    }
    if (rq->cancel && *rq->cancel)
        return fetch_fail(&res->error, FETCH_ERR_INTERRUPTED,
                          "interrupted; the prefix was left as it was");
    struct strbuf failed = STRBUF_INIT;
    enum fetch_error_kind kind = FETCH_ERR_NONE;
    for (int i = 0; i < a->n; i++) {
        const struct fetch_error *e = &a->jobs[i].error;
        if (a->jobs[i].ok)
            continue;
        sb_addf(&failed, "%s%s", failed.len ? "\n" : "",
                e->message ? e->message : "download failed");
        kind = fetch_error_kind_leading(kind, e->message ? e->kind : FETCH_ERR_OTHER);
    }
    if (failed.len)
        return fetch_fail_with(&res->error, kind, sb_detach(&failed));
    sb_free(&failed);
    for (int i = 0; i < a->n; i++) {
        const struct fetch_error *e = &a->unpacked[i].error;
        if (a->rcs[i] < 0)
            return fetch_fail(&res->error, e->message ? e->kind : FETCH_ERR_OTHER, "%s: %s",
                              rq->plan->items[i].component,
                              e->message ? e->message : "unpacking failed");
    }
    return 0;
}

/* The archives of the plan, unpacked and fixed up into one toolkit that replaces the prefix.
 * res->seconds counts from t0 once the downloads could start. */
static int build_tree(const struct pipeline_request *rq, struct install_ctx *ic, double t0,
                      struct pipeline_result *res)
{
    /* Runs on other prefixes share the cache: their downloads must not interleave. */
    int cache_lock = install_lock_dir(rq->cache_dir, rq->cancel, &res->error);
    if (cache_lock < 0)
        return -1;
    struct archives a;
    archives_init(&a, rq, ic->staging);
    download_and_unpack(rq, &a);
    close(cache_lock);
    int rc = archives_verdict(rq, &a, res);
    if (rc == 0)
        rc = merge_and_fix(rq, ic->staging, a.dests, res);
    archives_free(&a);
    if (rc == 0)
        rc = finish_tree(rq, ic, res);
    if (rc == 0 && rq->cancel && *rq->cancel)
        rc = fetch_fail(&res->error, FETCH_ERR_INTERRUPTED,
                        "interrupted; the prefix was left as it was");
    if (rc == 0 && install_commit(ic, &res->error) < 0)
        rc = -1;
    res->seconds = now_s() - t0;
    return rc;
}

int pipeline_run(const struct pipeline_request *rq, struct pipeline_result *res)
{
    memset(res, 0, sizeof *res);
    res->components = xcalloc((size_t)rq->plan->nitems + 1, sizeof *res->components);
    res->postcheck = POSTCHECK_NOT_RUN;
    double t0 = now_s();
    struct install_ctx ic;
    int rc = prepare_prefix(rq, &ic, res);
    if (rc == 0)
        rc = build_tree(rq, &ic, t0, res);
    install_release(&ic); /* unlocks, and removes the staging folder whatever happened */
    if (res->unchanged)
        res->seconds = now_s() - t0;
    if (rc < 0)
        return -1;
    return rc == 0 && res->postcheck == POSTCHECK_SKIPPED ? 1 : 0;
}

void pipeline_result_free(struct pipeline_result *res, int n)
{
    for (int i = 0; res->components && i < n; i++)
        free(res->components[i].url);
    free(res->components);
    free(res->postcheck_note);
    fetch_error_free(&res->error);
    memset(res, 0, sizeof *res);
}
