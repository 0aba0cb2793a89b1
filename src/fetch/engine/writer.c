#include "writer.h"
#include "util/strbuf.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct op {
    int fd;
    int closing;   /* 0: write buf at off; 1: truncate to off, chmod, set mtime, close */
    long long off; /* write offset, or the final size when closing */
    char *buf;
    size_t len;
    mode_t mode;
    time_t mtime;
    int has_mtime;
    char *name;
};

struct writer {
    pthread_mutex_t mu;
    pthread_cond_t can_take, can_put;
    struct op ring[WRITER_DEPTH];
    int head, count;
    int stopping;
    struct fetch_error error; /* the first failure; what follows it is only cleaned up */
    pthread_t thread;
};

/* 0, or -1 with *err. */
static int do_write(const struct op *op, struct fetch_error *err)
{
    const char *p = op->buf;
    size_t left = op->len;
    long long off = op->off;
    while (left) {
        ssize_t w = pwrite(op->fd, p, left, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return fetch_fail_errno(err, errno, "writing %s", op->name);
        p += w;
        off += w;
        left -= (size_t)w;
    }
    return 0;
}

/* 0, or -1 with *err. */
static int do_close(const struct op *op, struct fetch_error *err)
{
    int rc = 0;
    if (ftruncate(op->fd, op->off) < 0 || fchmod(op->fd, op->mode) < 0)
        rc = fetch_fail_errno(err, errno, "finishing %s", op->name);
    if (rc == 0 && op->has_mtime) {
        struct timespec ts[2] = {{op->mtime, 0}, {op->mtime, 0}};
        futimens(op->fd, ts);
    }
    if (close(op->fd) < 0 && rc == 0)
        rc = fetch_fail_errno(err, errno, "writing %s", op->name);
    return rc;
}

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        while (w->count == 0 && !w->stopping)
            pthread_cond_wait(&w->can_take, &w->mu);
        if (w->count == 0) {
            pthread_mutex_unlock(&w->mu);
            return NULL;
        }
        struct op op = w->ring[w->head];
        int failed = w->error.message != NULL;
        pthread_mutex_unlock(&w->mu);
        struct fetch_error err = {0};
        if (op.closing && failed)
            close(op.fd);
        else if (op.closing)
            do_close(&op, &err);
        else if (!failed)
            do_write(&op, &err);
        free(op.buf);
        free(op.name);
        pthread_mutex_lock(&w->mu);
        if (err.message && !w->error.message)
            w->error = err;
        else
            fetch_error_free(&err);
        w->head = (w->head + 1) % WRITER_DEPTH;
        w->count--;
        pthread_cond_signal(&w->can_put);
        pthread_mutex_unlock(&w->mu);
    }
}

struct writer *writer_start(void)
{
    struct writer *w = xcalloc(1, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->can_take, NULL);
    pthread_cond_init(&w->can_put, NULL);
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->can_take);
        pthread_cond_destroy(&w->can_put);
        free(w);
        return NULL;
    }
    return w;
}

static int put(struct writer *w, const struct op *op)
{
    pthread_mutex_lock(&w->mu);
    while (w->count == WRITER_DEPTH)
        pthread_cond_wait(&w->can_put, &w->mu);
    int failed = w->error.message != NULL;
    w->ring[(w->head + w->count) % WRITER_DEPTH] = *op;
    w->count++;
    pthread_cond_signal(&w->can_take);
    pthread_mutex_unlock(&w->mu);
    return failed ? -1 : 0;
}

int writer_data(struct writer *w, int fd, long long off, const void *buf, size_t len,
                const char *name)
{
    struct op op = {fd, 0, off, xmalloc(len ? len : 1), len, 0, 0, 0, xstrdup(name)};
    memcpy(op.buf, buf, len);
    return put(w, &op);
}

int writer_close(struct writer *w, int fd, long long size, mode_t mode, time_t mtime, int has_mtime,
                 const char *name)
{
    struct op op = {fd, 1, size, NULL, 0, mode, mtime, has_mtime, xstrdup(name)};
    return put(w, &op);
}

int writer_finish(struct writer *w, struct fetch_error *err)
{
    pthread_mutex_lock(&w->mu);
    w->stopping = 1;
    pthread_cond_signal(&w->can_take);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    int rc = 0;
    if (w->error.message) {
        *err = w->error;
        rc = -1;
    }
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->can_take);
    pthread_cond_destroy(&w->can_put);
    free(w);
    return rc;
}
