#include "pipeline.h"
#include "install.h"
#include "layout.h"
#include "lockfile.h"
#include "postcheck.h"
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

/* Unpack workers take components largest first, so the longest decompression starts at once. */
struct work {
    struct dl_job *jobs;
    const struct fetch_plan *plan;
    int *order;
    int next;
    char **dests;
    const struct pipeline_source *source;
    struct unpack_result *results;
    int *rcs;
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
    for (;;) {
        pthread_mutex_lock(&w->mu);
        int k = w->next < w->plan->nitems ? w->order[w->next++] : -1;
        pthread_mutex_unlock(&w->mu);
        if (k < 0)
            return NULL;
        const struct pipeline_source *src = w->source;
        struct unpack_opts o = {.strip = src ? src->strip : 1,
                                .map = src ? src->map : NULL,
                                .map_ud = src ? src->map_ud : NULL,
                                .cancel = w->cancel,
                                .archive_size = w->jobs[k].size,
                                .archive_name = archive_name(w->jobs[k].path)};
        w->rcs[k] = unpack_download(&w->jobs[k], w->dests[k], &o, &w->results[k]);
    }
}

static int by_size_desc(const void *a, const void *b, void *plan)
{
    const struct fetch_plan *p = plan;
    long long sa = p->items[*(const int *)a].size, sb = p->items[*(const int *)b].size;
    return sa < sb ? 1 : sa > sb ? -1 : 0;
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
    *li = (struct lock_info){rq->source ? rq->source->name : "redist",
                             plan->release,
                             rq->release_date,
                             plan->platform,
                             rq->manifest_origin,
                             rq->manifest_sha256,
                             comps,
                             plan->nitems};
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

static int write_text(const char *dir, const char *name, const char *text, char **err)
{
    char *p = fs_join(dir, name);
    int rc = fs_write_file(p, text, strlen(text));
    if (rc < 0)
        *err = xasprintf("cannot write %s: %s", p, strerror(errno));
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
        if (postcheck_compile(root, hc.cxx, &log) == 0) {
            res->postcheck = POSTCHECK_OK;
            res->postcheck_note = xasprintf("nvcc -ccbin %s compiled and linked a program "
                                            "using cuda_fp16.h, cuda_bf16.h, cuda_fp8.h",
                                            hc.cxx);
        } else {
            res->postcheck = POSTCHECK_FAILED;
            res->error = xasprintf("the fetched toolkit failed its compile-and-link check "
                                   "(host compiler %s; %s):\n%s",
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
    for (int i = 0; i < plan->nitems; i++) {
        char *err = NULL;
        if (fs_is_dir(dests[i]) && layout_merge(dests[i], root, &err) < 0) {
            res->error = err;
            return -1;
        }
    }
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
    char *err = NULL;
    int rc = 0;
    if (rq->source && rq->source->layout)
        rc = rq->source->layout(root, &log, &err);
    if (rc == 0)
        rc = layout_fixup(root, plan->release, names, versions, plan->nitems, &log, &err);
    free(names);
    free(versions);
    res->fixups = sb_detach(&log);
    if (rc < 0) {
        res->error = err;
        return -1;
    }
    struct strbuf missing = STRBUF_INIT;
    if (layout_check(root, &missing) > 0) {
        res->error = xasprintf("the unpacked components do not make a toolkit; missing: %s "
                               "(add the components that hold them with --with)",
                               sb_str(&missing));
        sb_free(&missing);
        return -1;
    }
    sb_free(&missing);
    return 0;
}

int pipeline_run(const struct pipeline_request *rq, struct pipeline_result *res)
{
    const struct fetch_plan *plan = rq->plan;
    int n = plan->nitems;
    memset(res, 0, sizeof *res);
    res->components = xcalloc((size_t)n + 1, sizeof *res->components);
    res->postcheck = POSTCHECK_NOT_RUN;
    double t0 = now_s();
    struct install_ctx ic;
    char *err = NULL;
    if (install_lock(rq->prefix, rq->cancel, &ic, &err) < 0) {
        res->error = err;
        install_release(&ic);
        return -1;
    }
    if (!rq->force && already_installed(rq)) {
        res->unchanged = 1;
        install_release(&ic);
        res->seconds = now_s() - t0;
        return 0;
    }
    if (!rq->force && foreign_prefix(ic.prefix)) {
        /* Say what is there: a dangling symlink or a device is no one's old toolkit. */
        char *what = fs_why_not_dir(ic.prefix);
        res->error = what ? xasprintf("--prefix %s %s; refusing to replace it: choose another "
                                      "--prefix, or add --force",
                                      ic.prefix, what)
                          : xasprintf("%s exists and was not made by sagebuild (no %s); refusing "
                                      "to replace it: choose another --prefix, or add --force",
                                      ic.prefix, LOCKFILE_NAME);
        free(what);
        install_release(&ic);
        return -1;
    }
    if (install_staging(&ic, &err) < 0) {
        res->error = err;
        install_release(&ic);
        return -1;
    }
    /* Runs on other prefixes share the cache: their downloads must not interleave. */
    int cache_lock = install_lock_dir(rq->cache_dir, rq->cancel, &err);
    if (cache_lock < 0) {
        res->error = err;
        install_release(&ic);
        return -1;
    }
    struct dl_job *jobs = xcalloc((size_t)n + 1, sizeof *jobs);
    char ***urls = xcalloc((size_t)n + 1, sizeof *urls);
    char **paths = xcalloc((size_t)n + 1, sizeof *paths);
    char **dests = xcalloc((size_t)n + 1, sizeof *dests);
    struct unpack_result *ur = xcalloc((size_t)n + 1, sizeof *ur);
    int *rcs = xcalloc((size_t)n + 1, sizeof *rcs);
    int *order = xcalloc((size_t)n + 1, sizeof *order);
    for (int i = 0; i < n; i++) {
        const struct fetch_item *it = &plan->items[i];
        dl_job_init(&jobs[i]);
        jobs[i].label = it->component;
        jobs[i].size = it->size;
        jobs[i].sha256 = it->sha256;
        char *from = rq->from_dir ? from_path(rq->from_dir, it->relative_path) : NULL;
        if (from) {
            paths[i] = from;
            jobs[i].user_file = 1;
        } else if (rq->source && rq->source->item_urls) {
            paths[i] = fs_join(rq->cache_dir, it->relative_path);
            char **const list = rq->source->item_urls[i];
            jobs[i].urls = list;
            while (list && list[jobs[i].nurls])
                jobs[i].nurls++;
        } else {
            paths[i] = fs_join(rq->cache_dir, it->relative_path);
            urls[i] = xcalloc((size_t)rq->nmirrors + 1, sizeof **urls);
            for (int m = 0; m < rq->nmirrors; m++)
                urls[i][m] = url_join(rq->mirrors[m], it->relative_path);
            jobs[i].urls = urls[i];
            jobs[i].nurls = rq->nmirrors;
        }
        jobs[i].path = paths[i];
        dests[i] = xasprintf("%s/.parts/%s", ic.staging, it->component);
        order[i] = i;
    }
    qsort_r(order, (size_t)n, sizeof *order, by_size_desc, (void *)plan);

    /* Workers must not take SIGINT/SIGTERM: the main thread's handler sets the flag. */
    struct work w = {jobs,       plan, order, 0,          dests,
                     rq->source, ur,   rcs,   rq->cancel, PTHREAD_MUTEX_INITIALIZER};
    int nworkers = rq->jobs < 1 ? 1 : (rq->jobs > n ? n : rq->jobs);
    pthread_t *tids = xcalloc((size_t)nworkers + 1, sizeof *tids);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int started = 0;
    for (int i = 0; i < nworkers; i++)
        started += pthread_create(&tids[i], NULL, unpack_worker, &w) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (started == 0)
        unpack_worker(&w); /* no threads available: do it here, after the downloads */

    int dl_rc = dl_run(jobs, n, rq->dl);
    if (rq->dl->progress && !(rq->cancel && *rq->cancel))
        fputs("  unpacking (decompression overlaps the downloads)...\n", stderr);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(tids);
    close(cache_lock);

    int rc = 0;
    for (int i = 0; i < n; i++) {
        res->components[i].net_bytes = jobs[i].net_bytes;
        res->components[i].from_cache = jobs[i].from_cache;
        res->components[i].url = jobs[i].url_used ? xstrdup(jobs[i].url_used) : NULL;
        res->net_bytes += jobs[i].net_bytes;
    }
    if (rq->cancel && *rq->cancel) {
        res->error = xstrdup("interrupted; the prefix was left as it was");
        rc = -1;
    }
    /* Every archive that could not be had is named, not just the first. */
    struct strbuf failed = STRBUF_INIT;
    for (int i = 0; rc == 0 && i < n; i++)
        if (!jobs[i].ok)
            sb_addf(&failed, "%s%s", failed.len ? "\n" : "",
                    jobs[i].error ? jobs[i].error : "download failed");
    if (failed.len) {
        res->error = sb_detach(&failed);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        if (rcs[i] < 0) {
            res->error = xasprintf("%s: %s", plan->items[i].component,
                                   ur[i].error ? ur[i].error : "unpacking failed");
            rc = -1;
        }
    }
    (void)dl_rc;
    if (rc == 0)
        rc = merge_and_fix(rq, ic.staging, dests, res);
    if (rc == 0)
        rc = finish_tree(rq, &ic, res);
    if (rc == 0 && rq->cancel && *rq->cancel) {
        res->error = xstrdup("interrupted; the prefix was left as it was");
        rc = -1;
    }
    if (rc == 0 && install_commit(&ic, &err) < 0) {
        res->error = err;
        rc = -1;
    }
    install_release(&ic); /* removes the staging folder whatever happened */
    for (int i = 0; i < n; i++) {
        dl_job_free(&jobs[i]);
        if (urls[i])
            for (int m = 0; m < rq->nmirrors; m++)
                free(urls[i][m]);
        free(urls[i]);
        free(paths[i]);
        free(dests[i]);
        unpack_result_free(&ur[i]);
    }
    free(jobs);
    free(urls);
    free(paths);
    free(dests);
    free(ur);
    free(rcs);
    free(order);
    res->seconds = now_s() - t0;
    if (rc < 0)
        return -1;
    return res->postcheck == POSTCHECK_SKIPPED ? 1 : 0;
}

void pipeline_result_free(struct pipeline_result *res, int n)
{
    for (int i = 0; res->components && i < n; i++)
        free(res->components[i].url);
    free(res->components);
    free(res->postcheck_note);
    free(res->fixups);
    free(res->error);
    memset(res, 0, sizeof *res);
}
