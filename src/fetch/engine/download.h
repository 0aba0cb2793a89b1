/* Parallel, verified, resumable downloads with libcurl's multi interface.
 *
 * Each job names the final file, its expected size and sha256, and the URLs to try in order.
 * A verified file already at `path` is used as it is. Otherwise bytes go to `path.part`, hashed
 * as they arrive; a dropped connection resumes with a Range request, transient failures are
 * retried with back-off, and a 404, a failed redirect target or a wrong hash moves on to the
 * next URL. Only a file whose size and sha256 match is renamed to `path`.
 *
 * A consumer thread may read the file while it downloads through the job's dl_stream (used to
 * unpack while downloading). Everything it reads before the verdict is unverified: the consumer
 * must wait for DL_VERIFIED before trusting what it made from the bytes, and start over when
 * the generation changes (the file restarted from byte 0). Reusable by any source of archives
 * (redist tarballs, PyPI wheels): nothing here knows about CUDA. */
#ifndef SB_FETCH_DOWNLOAD_H
#define SB_FETCH_DOWNLOAD_H

#include "fetch_error.h"

#include <pthread.h>
#include <signal.h>

enum dl_state { DL_RUNNING, DL_VERIFIED, DL_FAILED };

struct dl_stream {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int fd;          /* the file being written, -1 until opened; read it with pread */
    long long avail; /* bytes of the current generation present in the file */
    int gen;         /* bumped each time the file restarts from byte 0 */
    enum dl_state state;
};

struct dl_job {
    /* Inputs. */
    const char *label; /* for messages: the component or package name */
    char *const *urls; /* tried in order; may be empty when the file must exist */
    int nurls;
    const char *path;   /* the final file */
    long long size;     /* expected bytes, < 0 when unknown */
    const char *sha256; /* expected lowercase hex, NULL to skip the check */
    int user_file;      /* path belongs to the user (--from): never written or deleted */
    /* Outputs. */
    struct dl_stream stream;
    int ok;
    int from_cache;           /* a verified file was already there */
    long long net_bytes;      /* bytes received from the network for this job */
    char *url_used;           /* the URL that delivered the verified file */
    struct fetch_error error; /* why the job failed (every URL tried and what happened) */
};

struct dl_opts {
    int retries;          /* attempts per URL for transient failures (>= 1) */
    long connect_timeout; /* seconds */
    long stall_timeout;   /* the window over which min_rate is judged, seconds */
    long min_rate;        /* bytes/s: a transfer slower than this for stall_timeout is abandoned */
    long deadline;        /* seconds one transfer (one request) may take in all; 0: none */
    int offline;          /* never touch the network: only verified files at `path` count */
    int progress;         /* draw a progress line on stderr */
    volatile sig_atomic_t *cancel; /* checked often; non-zero aborts every job */
};

/* A transfer slower than this over the stall window is abandoned (bytes/s): far below any real
 * mirror, far above a server that drips bytes to hold the transfer open. */
#define DL_DEFAULT_MIN_RATE 1024L
/* One request may take this long in all (s); a retry resumes where it stopped, so a slow but
 * honest mirror still finishes. */
#define DL_DEFAULT_DEADLINE 3600L

void dl_opts_defaults(struct dl_opts *o);
void dl_job_init(struct dl_job *j);
void dl_job_free(struct dl_job *j);

/* Runs every job to completion. Returns 0 when all are verified, -1 otherwise (each job says
 * why). Thread-safe towards the consumers of the jobs' streams; call from one thread. */
int dl_run(struct dl_job *jobs, int n, const struct dl_opts *o);

/* Consumer side: waits until more than `off` bytes of generation `gen` exist, the verdict is in,
 * or the generation changed. Returns the state; *avail and *cur_gen get the current values. */
enum dl_state dl_stream_wait(struct dl_stream *s, long long off, int gen, long long *avail,
                             int *cur_gen);
/* Waits for the verdict on generation gen: DL_VERIFIED, DL_FAILED, or DL_RUNNING when the
 * generation changed meanwhile (start over). */
enum dl_state dl_stream_verdict(struct dl_stream *s, int gen);

/* Global libcurl set-up; call once before dl_run (idempotent). */
void dl_global_init(void);

/* The settings every transfer shares (libcurl easy handle given as void * so this header stays
 * free of curl.h): redirects, timeouts (connect, minimum rate, deadline), the cancel flag
 * (checked at least once a second, also while nothing arrives), protocols, user agent, and the
 * CA bundle from
 * CURL_CA_BUNDLE, else SSL_CERT_FILE, and a CA folder from SSL_CERT_DIR, as the curl tool reads
 * them (libcurl itself reads only the proxy variables). Verification always stays on. */
void dl_setup_easy(void *curl, const struct dl_opts *o);

/* Small synchronous GET (manifests, directory indexes) with the same timeouts and TLS rules.
 * 0 with *body (heap, NUL-terminated, at most max bytes) or -1 with *err. */
int dl_get_text(const char *url, size_t max, const struct dl_opts *o, char **body, size_t *len,
                char **err);

/* What a failed transfer did, in words: "HTTP 404", "took longer than the 3600 s deadline",
 * "too slow: under 1024 bytes/s for 30 s", "interrupted", or libcurl's own message. curl is the
 * easy handle, rc its CURLcode. */
void dl_describe_failure(void *curl, int rc, const struct dl_opts *o, const char *errbuf, char *out,
                         size_t n);

/* The same GET, with an optional Accept header (NULL: none), also telling the content type the
 * server sent and the URL it ended at after redirects (index pages resolve links against it).
 * URLs in *err have their passwords hidden. */
struct dl_page {
    char *body; /* NUL-terminated */
    size_t len;
    char *content_type; /* NULL when the server sent none */
    char *final_url;
};
int dl_get_page(const char *url, size_t max, const char *accept, const struct dl_opts *o,
                struct dl_page *page, char **err);
void dl_page_free(struct dl_page *page);
#endif
