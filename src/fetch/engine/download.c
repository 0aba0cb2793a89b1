#include "download.h"
#include "cmd.h"
#include "verify.h"
#include "util/fs.h"
#include "util/out.h"
#include "util/strbuf.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Per-job transfer state, private to dl_run. */
struct transfer {
    struct dl_job *job;
    int stale_fd; /* a cached file that failed verification, -1 when none */
    char *part;   /* path.part */
    int fd;
    int url_index;
    int attempt;           /* attempts made on the current URL */
    long long written;     /* bytes of the current generation in the file */
    long long resume_from; /* offset asked for with Range on the running request */
    int checked_response;  /* the first body bytes of this request were seen */
    /* Bytes of this generation came from before the running request (a .part left in the cache,
     * or a resume after a drop): a wrong hash may be the old bytes' fault, not the mirror's. */
    int resumed;
    int fresh_retry_done; /* this URL already had its one retry from byte 0 */
    int too_big;
    int io_errno;
    double retry_at; /* monotonic seconds; 0 = start now */
    int done;
    struct sha256_ctx sha;
    CURL *easy;
    char errbuf[CURL_ERROR_SIZE];
    struct strbuf tried; /* one line per failed attempt, for the final error */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void dl_opts_defaults(struct dl_opts *o)
{
    memset(o, 0, sizeof *o);
    o->retries = 3;
    o->connect_timeout = 15;
    o->stall_timeout = 30;
    o->min_rate = DL_DEFAULT_MIN_RATE;
    o->deadline = DL_DEFAULT_DEADLINE;
}

void dl_job_init(struct dl_job *j)
{
    memset(j, 0, sizeof *j);
    pthread_mutex_init(&j->stream.mu, NULL);
    pthread_cond_init(&j->stream.cv, NULL);
    j->stream.fd = -1;
    j->size = -1;
}

void dl_job_free(struct dl_job *j)
{
    if (j->stream.fd >= 0)
        close(j->stream.fd);
    pthread_mutex_destroy(&j->stream.mu);
    pthread_cond_destroy(&j->stream.cv);
    free(j->url_used);
    fetch_error_free(&j->error);
}

static void global_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void dl_global_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, global_init_once);
}

/* ---- consumer side ---- */

enum dl_state dl_stream_wait(struct dl_stream *s, long long off, int gen, long long *avail,
                             int *cur_gen)
{
    pthread_mutex_lock(&s->mu);
    while (s->state == DL_RUNNING && s->gen == gen && s->avail <= off)
        pthread_cond_wait(&s->cv, &s->mu);
    enum dl_state st = s->state;
    *avail = s->avail;
    *cur_gen = s->gen;
    pthread_mutex_unlock(&s->mu);
    return st;
}

enum dl_state dl_stream_verdict(struct dl_stream *s, int gen)
{
    pthread_mutex_lock(&s->mu);
    while (s->state == DL_RUNNING && s->gen == gen)
        pthread_cond_wait(&s->cv, &s->mu);
    enum dl_state st = s->gen == gen ? s->state : DL_RUNNING;
    pthread_mutex_unlock(&s->mu);
    return st;
}

/* ---- producer side ---- */

static void stream_publish(struct dl_stream *s, int fd, long long avail, int new_gen,
                           enum dl_state st)
{
    pthread_mutex_lock(&s->mu);
    if (fd >= 0)
        s->fd = fd;
    s->avail = avail;
    if (new_gen)
        s->gen++;
    s->state = st;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void fail_job(struct transfer *t, enum fetch_error_kind kind, char *msg)
{
    struct dl_job *j = t->job;
    fetch_fail_with(&j->error, kind, msg);
    j->ok = 0;
    t->done = 1;
    stream_publish(&j->stream, -1, t->written, 0, DL_FAILED);
}

static void succeed_job(struct transfer *t, const char *url)
{
    struct dl_job *j = t->job;
    j->ok = 1;
    j->url_used = url ? xstrdup(url) : NULL;
    t->done = 1;
    stream_publish(&j->stream, -1, t->written, 0, DL_VERIFIED);
}

/* Starts the file over from byte 0: a new generation for the consumer. */
static int restart_file(struct transfer *t)
{
    t->written = 0;
    t->resumed = 0;
    sha256_init(&t->sha);
    int rc = ftruncate(t->fd, 0);
    stream_publish(&t->job->stream, -1, 0, 1, DL_RUNNING);
    return rc;
}

static const char *hash_state(struct transfer *t, char got[65])
{
    sha256_final(&t->sha, got);
    return got;
}

/* A complete file of the expected size: compare hashes; on success publish it under path. */
static int finish_if_matching(struct transfer *t, const char *url, char got[65])
{
    struct dl_job *j = t->job;
    if (j->size >= 0 && t->written != j->size)
        return 0;
    hash_state(t, got);
    if (j->sha256 && strcmp(got, j->sha256))
        return 0;
    if (rename(t->part, j->path) < 0) {
        int e = errno;
        fail_job(t, fetch_error_kind_of_errno(e),
                 xasprintf("%s: cannot rename %s into place: %s", j->label, t->part, strerror(e)));
        return -1;
    }
    succeed_job(t, url);
    return 1;
}

/* A verified file already in the cache, or the user's own (--from). */
static int try_existing(struct transfer *t)
{
    struct dl_job *j = t->job;
    int fd = open(j->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    /* The consumer may start on the file while it is hashed: what it makes counts only once
     * the verdict is in, like bytes that are still downloading. */
    struct stat st;
    if (fstat(fd, &st) == 0 && (j->size < 0 || st.st_size == j->size))
        stream_publish(&j->stream, fd, st.st_size, 0, DL_RUNNING);
    else
        st.st_size = -1;
    struct sha256_ctx c = {0};
    sha256_init(&c);
    long long n = sha256_fd_update(&c, fd, -1);
    char got[65];
    sha256_final(&c, got);
    sha256_free(&c);
    if (st.st_size >= 0 && n == st.st_size && (!j->sha256 || !strcmp(got, j->sha256))) {
        j->from_cache = 1;
        t->written = n;
        succeed_job(t, NULL);
        return 1;
    }
    if (st.st_size >= 0) {
        t->stale_fd = fd; /* the consumer may still hold it: closed when dl_run ends */
        stream_publish(&j->stream, -1, 0, 1, DL_RUNNING);
    } else {
        close(fd);
    }
    if (j->user_file) {
        fail_job(t, FETCH_ERR_MISMATCH,
                 xasprintf("%s: %s does not match the manifest: size %lld (expected %lld), "
                           "sha256 %s (expected %s)",
                           j->label, j->path, n, j->size, got, j->sha256 ? j->sha256 : "-"));
        return -1;
    }
    unlink(j->path); /* a corrupt cache entry: fetch it again */
    return 0;
}

/* Opens path.part, keeping what an earlier run downloaded so it resumes. */
static int open_part(struct transfer *t)
{
    struct dl_job *j = t->job;
    char *dir = fs_dirname(j->path);
    int rc = fs_mkdir_p(dir, 0755);
    free(dir);
    if (rc < 0)
        return -1;
    t->fd = open(t->part, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (t->fd < 0)
        return -1;
    sha256_init(&t->sha);
    struct stat st;
    if (fstat(t->fd, &st) < 0)
        return -1;
    t->written = st.st_size;
    if (j->size >= 0 && t->written > j->size) {
        if (ftruncate(t->fd, 0) < 0)
            return -1;
        t->written = 0;
    }
    if (t->written > 0 && sha256_fd_update(&t->sha, t->fd, t->written) != t->written)
        return -1;
    stream_publish(&j->stream, t->fd, t->written, 0, DL_RUNNING);
    t->fd = dup(t->fd); /* the stream keeps its own descriptor; ours is closed when done */
    return t->fd < 0 ? -1 : 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct transfer *t = ud;
    size_t n = size * nmemb;
    if (!t->checked_response) {
        t->checked_response = 1;
        long code = 0;
        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
        /* A server that ignores Range sends the whole file again. */
        if (t->resume_from > 0 && code == 200 && restart_file(t) < 0) {
            t->io_errno = errno;
            return 0;
        }
        if (t->resume_from > 0 && code == 206)
            t->resumed = 1;
    }
    if (t->job->size >= 0 && t->written + (long long)n > t->job->size) {
        t->too_big = 1;
        return 0;
    }
    const char *p = data;
    size_t left = n;
    long long off = t->written;
    while (left) {
        ssize_t w = pwrite(t->fd, p, left, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            t->io_errno = errno;
            return 0;
        }
        p += w;
        off += w;
        left -= (size_t)w;
    }
    sha256_update(&t->sha, data, n);
    t->written += (long long)n;
    t->job->net_bytes += (long long)n;
    stream_publish(&t->job->stream, -1, t->written, 0, DL_RUNNING);
    return n;
}

/* libcurl calls this at least once a second, also while no byte arrives: a non-zero return
 * ends the transfer (CURLE_ABORTED_BY_CALLBACK), so SIGINT/SIGTERM end any wait in time. */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const volatile sig_atomic_t *cancel = ud;
    return cancel && *cancel;
}

void dl_setup_easy(void *curl, const struct dl_opts *o)
{
    CURL *e = curl;
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, o->connect_timeout);
    /* A server that drips bytes keeps a 1 byte/s rule happy for ever: the rate must be real,
     * and the whole request has a deadline. */
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, o->min_rate > 0 ? o->min_rate : 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, o->stall_timeout);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, o->deadline > 0 ? o->deadline : 0L);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, (void *)o->cancel);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "sagebuild/" SAGEBUILD_VERSION);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https,file");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    const char *bundle = getenv("CURL_CA_BUNDLE");
    if (!bundle || !*bundle)
        bundle = getenv("SSL_CERT_FILE");
    if (bundle && *bundle)
        curl_easy_setopt(e, CURLOPT_CAINFO, bundle);
    const char *dir = getenv("SSL_CERT_DIR");
    if (dir && *dir)
        curl_easy_setopt(e, CURLOPT_CAPATH, dir);
}

static CURL *make_easy(struct transfer *t, const struct dl_opts *o)
{
    CURL *e = curl_easy_init();
    if (!e)
        return NULL;
    const char *url = t->job->urls[t->url_index];
    dl_setup_easy(e, o);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, t);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 256L * 1024);
    t->resume_from = t->written;
    t->checked_response = 0;
    t->too_big = 0;
    t->io_errno = 0;
    t->errbuf[0] = '\0';
    if (t->written > 0)
        curl_easy_setopt(e, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)t->written);
    return e;
}

static int transient(CURLcode rc, long http)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return 1;
    case CURLE_HTTP_RETURNED_ERROR:
        return http >= 500 || http == 429 || http == 408;
    default:
        return 0;
    }
}

void dl_describe_failure(void *curl, int code, const struct dl_opts *o, const char *errbuf,
                         char *out, size_t n)
{
    CURLcode rc = (CURLcode)code;
    const char *lib = errbuf && errbuf[0] ? errbuf : curl_easy_strerror(rc);
    long http = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http);
    curl_off_t total = 0, connected = 0;
    curl_easy_getinfo(curl, CURLINFO_TOTAL_TIME_T, &total);
    curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connected);
    if (rc == CURLE_HTTP_RETURNED_ERROR)
        snprintf(out, n, "HTTP %ld", http);
    else if (rc == CURLE_ABORTED_BY_CALLBACK)
        snprintf(out, n, "interrupted");
    else if (rc == CURLE_OPERATION_TIMEDOUT && connected == 0)
        snprintf(out, n, "could not connect within %ld s (%s)", o->connect_timeout, lib);
    else if (rc == CURLE_OPERATION_TIMEDOUT && o->deadline > 0 &&
             total >= (curl_off_t)o->deadline * 1000000 - 500000)
        snprintf(out, n, "took longer than the %ld s deadline per transfer (--deadline) (%s)",
                 o->deadline, lib);
    else if (rc == CURLE_OPERATION_TIMEDOUT)
        snprintf(out, n, "stalled: less than %ld bytes/s for %ld s (--min-rate) (%s)",
                 o->min_rate > 0 ? o->min_rate : 1L, o->stall_timeout, lib);
    else
        snprintf(out, n, "%s", lib);
}

/* Describes a failed attempt, naming the redirect target when the failure happened there. */
static void note_failure(struct transfer *t, CURLcode rc, long http, const struct dl_opts *o)
{
    (void)http;
    const char *url = t->job->urls[t->url_index];
    char *eff = NULL;
    long redirects = 0;
    curl_easy_getinfo(t->easy, CURLINFO_EFFECTIVE_URL, &eff);
    curl_easy_getinfo(t->easy, CURLINFO_REDIRECT_COUNT, &redirects);
    char what[CURL_ERROR_SIZE + 160];
    dl_describe_failure(t->easy, rc, o, t->errbuf, what, sizeof what);
    if (redirects > 0 && eff && strcmp(eff, url))
        sb_addf(&t->tried, "  %s: redirected to %s, which failed: %s\n", url, eff, what);
    else
        sb_addf(&t->tried, "  %s: %s\n", url, what);
}

static void next_url(struct transfer *t)
{
    t->url_index++;
    t->attempt = 0;
    t->retry_at = 0;
    t->fresh_retry_done = 0;
}

static void give_up(struct transfer *t)
{
    struct dl_job *j = t->job;
    close(t->fd);
    t->fd = -1;
    fail_job(t, FETCH_ERR_UNDELIVERED,
             xasprintf("%s: no mirror delivered %s:\n%s", j->label,
                       strrchr(j->path, '/') ? strrchr(j->path, '/') + 1 : j->path,
                       sb_str(&t->tried)));
}

/* Decides what follows a finished request. */
static void on_done(struct transfer *t, CURLcode rc, const struct dl_opts *o)
{
    struct dl_job *j = t->job;
    const char *url = j->urls[t->url_index];
    long http = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &http);
    if (t->io_errno) {
        /* Disk full or a file-size limit: no mirror can fix that. */
        fail_job(t, fetch_error_kind_of_errno(t->io_errno),
                 xasprintf("%s: cannot write %s: %s", j->label, t->part, strerror(t->io_errno)));
        return;
    }
    if (rc == CURLE_OK || t->too_big) {
        char got[65] = "";
        int m = t->too_big ? 0 : finish_if_matching(t, url, got);
        if (m != 0)
            return;
        /* Resumed bytes (a foreign or stale .part) can make a good mirror fail: once per URL,
         * the whole file again from byte 0 before the mirror is blamed. */
        int retry_fresh = t->resumed && !t->fresh_retry_done;
        if (retry_fresh)
            sb_addf(&t->tried,
                    "  %s: %s after resuming a partial download; fetched again from "
                    "byte 0\n",
                    url, t->too_big ? "too many bytes" : "no match");
        else if (t->too_big)
            sb_addf(&t->tried, "  %s: more than the %lld bytes the manifest gives\n", url, j->size);
        else if (j->size >= 0 && t->written != j->size)
            sb_addf(&t->tried, "  %s: %lld bytes, the manifest says %lld\n", url, t->written,
                    j->size);
        else
            sb_addf(&t->tried, "  %s: sha256 mismatch: expected %s, got %s\n", url, j->sha256, got);
        /* A wrong file: never resume from it, never keep it. */
        if (restart_file(t) < 0) {
            t->io_errno = errno;
            fail_job(
                t, fetch_error_kind_of_errno(t->io_errno),
                xasprintf("%s: cannot truncate %s: %s", j->label, t->part, strerror(t->io_errno)));
            return;
        }
        if (retry_fresh) {
            t->fresh_retry_done = 1;
            return;
        }
        next_url(t);
        return;
    }
    note_failure(t, rc, http, o);
    if (rc == CURLE_HTTP_RETURNED_ERROR && http == 416) {
        restart_file(t); /* our partial file does not fit this server's copy */
        t->attempt++;
        if (t->attempt >= o->retries)
            next_url(t);
        return;
    }
    if (transient(rc, http) && ++t->attempt < o->retries) {
        double backoff = 0.5 * (double)(1 << (t->attempt - 1));
        t->retry_at = now_s() + (backoff > 8 ? 8 : backoff);
        return;
    }
    next_url(t);
}

static void draw_progress(struct transfer *ts, int n, double started)
{
    long long got = 0, total = 0;
    int active = 0;
    for (int i = 0; i < n; i++) {
        got += ts[i].written;
        total += ts[i].job->size > 0 ? ts[i].job->size : ts[i].written;
        active += !ts[i].done;
    }
    double secs = now_s() - started;
    out_clear_line(stderr);
    fprintf(stderr, "  downloading: %d of %d files left, %.1f / %.1f MB, %.1f MB/s", active, n,
            (double)got / 1e6, (double)total / 1e6, secs > 0 ? (double)got / 1e6 / secs : 0.0);
    fflush(stderr);
}

/* Sets up each job's transfer: a verified file already there (cache or --from) ends it at
 * once, as does one that cannot be downloaded (offline, no URL); the others open their .part.
 * Returns how many still need the network. */
static int start_transfers(struct transfer *ts, struct dl_job *jobs, int n, const struct dl_opts *o)
{
    int running = 0;
    for (int i = 0; i < n; i++) {
        struct transfer *t = &ts[i];
        t->job = &jobs[i];
        t->fd = -1;
        t->stale_fd = -1;
        t->part = xasprintf("%s.part", jobs[i].path);
        if (try_existing(t) != 0)
            continue;
        if (jobs[i].user_file || o->offline || jobs[i].nurls == 0) {
            fail_job(t, o->offline ? FETCH_ERR_OFFLINE : FETCH_ERR_OTHER,
                     xasprintf("%s: %s is not in the cache%s", jobs[i].label, jobs[i].path,
                               o->offline ? " and --offline forbids downloading it" : ""));
            continue;
        }
        if (open_part(t) < 0) {
            int e = errno;
            fail_job(t, fetch_error_kind_of_errno(e),
                     xasprintf("%s: cannot open %s: %s", jobs[i].label, t->part, strerror(e)));
            continue;
        }
        char got[65];
        /* An earlier run may have left a complete .part. */
        if (t->written > 0 && t->written == jobs[i].size) {
            if (finish_if_matching(t, NULL, got) != 0) {
                jobs[i].from_cache = jobs[i].ok;
                continue;
            }
            restart_file(t);
        }
        running++;
    }
    return running;
}

static void drop_handle(CURLM *multi, struct transfer *t)
{
    if (t->easy) {
        curl_multi_remove_handle(multi, t->easy);
        curl_easy_cleanup(t->easy);
        t->easy = NULL;
    }
}

/* Starts a request for each transfer that is due (a retry waits for its back-off) and gives
 * up on those that ran out of URLs. Returns how many ended; *next_wake gets the earliest
 * back-off still waiting. */
static int launch_due(struct transfer *ts, int n, CURLM *multi, const struct dl_opts *o, double now,
                      double *next_wake)
{
    int ended = 0;
    for (int i = 0; i < n; i++) {
        struct transfer *t = &ts[i];
        if (t->done || t->easy)
            continue;
        if (t->url_index >= t->job->nurls) {
            give_up(t);
            ended++;
            continue;
        }
        if (t->retry_at > now) {
            if (t->retry_at < *next_wake)
                *next_wake = t->retry_at;
            continue;
        }
        t->easy = make_easy(t, o);
        if (!t->easy || curl_multi_add_handle(multi, t->easy) != CURLM_OK) {
            fail_job(t, FETCH_ERR_OTHER,
                     xasprintf("%s: libcurl could not start a transfer", t->job->label));
            ended++;
        }
    }
    return ended;
}

/* Judges every request libcurl finished. Returns how many transfers ended. */
static int collect_finished(CURLM *multi, const struct dl_opts *o)
{
    int ended = 0, left;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        struct transfer *t = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
        on_done(t, msg->data.result, o);
        drop_handle(multi, t);
        if (t->done) {
            ended++;
            if (t->fd >= 0) {
                close(t->fd);
                t->fd = -1;
            }
        }
    }
    return ended;
}

/* An interrupted run ends every transfer still going. */
static void cancel_all(struct transfer *ts, int n, CURLM *multi)
{
    for (int i = 0; i < n; i++)
        if (!ts[i].done) {
            drop_handle(multi, &ts[i]);
            fail_job(&ts[i], FETCH_ERR_INTERRUPTED, xasprintf("%s: interrupted", ts[i].job->label));
        }
}

/* Drives the transfers until none is left: polls at least every 250 ms, so retries start on
 * time and the cancel flag is seen. */
static void run_transfers(struct transfer *ts, int n, int running, CURLM *multi,
                          const struct dl_opts *o)
{
    double started = now_s(), last_draw = 0;
    while (running > 0) {
        if (o->cancel && *o->cancel) {
            cancel_all(ts, n, multi);
            break;
        }
        double now = now_s();
        double next_wake = now + 0.25;
        running -= launch_due(ts, n, multi, o, now, &next_wake);
        if (running == 0)
            break;
        int still = 0;
        curl_multi_perform(multi, &still);
        running -= collect_finished(multi, o);
        if (running == 0)
            break; /* no reason to sit in the poll below */
        if (o->progress && now - last_draw > 0.2) {
            draw_progress(ts, n, started);
            last_draw = now;
        }
        int wait_ms = (int)((next_wake - now_s()) * 1000);
        curl_multi_poll(multi, NULL, 0, wait_ms < 1 ? 1 : (wait_ms > 250 ? 250 : wait_ms), NULL);
    }
    if (o->progress) {
        draw_progress(ts, n, started);
        fputc('\n', stderr);
    }
}

int dl_run(struct dl_job *jobs, int n, const struct dl_opts *o)
{
    dl_global_init();
    struct transfer *ts = xcalloc((size_t)(n > 0 ? n : 1), sizeof *ts);
    CURLM *multi = curl_multi_init();
    int running = start_transfers(ts, jobs, n, o);
    run_transfers(ts, n, running, multi, o);
    int all_ok = 1;
    for (int i = 0; i < n; i++) {
        struct transfer *t = &ts[i];
        drop_handle(multi, t);
        if (t->fd >= 0)
            close(t->fd);
        if (t->stale_fd >= 0)
            close(t->stale_fd);
        sha256_free(&t->sha);
        sb_free(&t->tried);
        free(t->part);
        all_ok &= jobs[i].ok;
    }
    curl_multi_cleanup(multi);
    free(ts);
    return all_ok ? 0 : -1;
}
