#include "install.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int install_is_debris(const char *base, const char *name)
{
    size_t n = strlen(base);
    if (name[0] != '.' || strncmp(name + 1, base, n))
        return 0;
    const char *rest = name + 1 + n;
    return !strncmp(rest, ".staging-", 9) || !strncmp(rest, ".old-", 5);
}

static void sweep_debris(struct install_ctx *c)
{
    DIR *d = opendir(c->parent);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!install_is_debris(c->base, de->d_name))
            continue;
        char *p = fs_join(c->parent, de->d_name);
        fs_remove_tree(p);
        free(p);
    }
    closedir(d);
}

/* Polls rather than blocking in flock: a signal that lands just before a blocking call would
 * be missed, and the wait must end within a second of Ctrl-C or TERM. */
static int lock_wait(int fd, const char *path, const char *what, volatile sig_atomic_t *cancel,
                     struct fetch_error *err)
{
    int said = 0;
    for (;;) {
        if (cancel && *cancel)
            return fetch_fail(err, FETCH_ERR_INTERRUPTED,
                              "interrupted while waiting for the lock %s", path);
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return 0;
        if (errno != EWOULDBLOCK && errno != EINTR)
            return fetch_fail_errno(err, errno, "could not lock %s", path);
        if (!said++)
            fprintf(stderr, "sagebuild: waiting for another sagebuild using %s\n", what);
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int install_lock_dir(const char *dir, volatile sig_atomic_t *cancel, struct fetch_error *err)
{
    if (fs_mkdir_p(dir, 0755) < 0)
        return fetch_fail_errno(err, errno, "cannot create %s", dir);
    char *path = fs_join(dir, ".lock");
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        fetch_fail_errno(err, errno, "cannot open the lock file %s", path);
    } else if (lock_wait(fd, path, dir, cancel, err) < 0) {
        close(fd);
        fd = -1;
    }
    free(path);
    return fd;
}

int install_lock(const char *prefix, volatile sig_atomic_t *cancel, struct install_ctx *c,
                 struct fetch_error *err)
{
    memset(c, 0, sizeof *c);
    c->lock_fd = -1;
    char *abs = NULL;
    if (prefix[0] == '/') {
        abs = xstrdup(prefix);
    } else {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd))
            return fetch_fail_errno(err, errno, "getcwd");
        abs = fs_join(cwd, prefix);
    }
    size_t n = strlen(abs);
    while (n > 1 && abs[n - 1] == '/')
        abs[--n] = '\0';
    /* A prefix that is a symlink: the swap happens where it points, and the link stays. */
    struct stat st;
    if (lstat(abs, &st) == 0 && S_ISLNK(st.st_mode)) {
        char *real = fs_realpath(abs);
        if (real) {
            free(abs);
            abs = real;
        }
    }
    c->prefix = abs;
    c->parent = fs_dirname(abs);
    const char *slash = strrchr(abs, '/');
    c->base = xstrdup(slash ? slash + 1 : abs);
    if (!*c->base || !strcmp(c->base, ".") || !strcmp(c->base, ".."))
        return fetch_fail(err, FETCH_ERR_OTHER, "%s cannot be a prefix", prefix);
    if (fs_mkdir_p(c->parent, 0755) < 0)
        return fetch_fail_errno(err, errno, "cannot create %s", c->parent);
    char *lock = xasprintf("%s/.%s.lock", c->parent, c->base);
    c->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (c->lock_fd < 0) {
        fetch_fail_errno(err, errno, "cannot open the lock file %s", lock);
        free(lock);
        return -1;
    }
    int rc = lock_wait(c->lock_fd, lock, c->prefix, cancel, err);
    free(lock);
    if (rc < 0)
        return -1;
    sweep_debris(c);
    return 0;
}

int install_staging(struct install_ctx *c, struct fetch_error *err)
{
    char *tmpl = xasprintf("%s/.%s.staging-XXXXXX", c->parent, c->base);
    if (!mkdtemp(tmpl)) {
        fetch_fail_errno(err, errno, "cannot create a staging folder in %s", c->parent);
        free(tmpl);
        return -1;
    }
    chmod(tmpl, 0755);
    c->staging = tmpl;
    return 0;
}

int install_commit(struct install_ctx *c, struct fetch_error *err)
{
    if (!fs_exists(c->prefix)) {
        if (rename(c->staging, c->prefix) < 0)
            return fetch_fail_errno(err, errno, "cannot move %s to %s", c->staging, c->prefix);
        free(c->staging);
        c->staging = NULL;
        return 0;
    }
    if (renameat2(AT_FDCWD, c->staging, AT_FDCWD, c->prefix, RENAME_EXCHANGE) == 0) {
        /* The staging path now holds the old tree. */
        fs_remove_tree(c->staging);
        free(c->staging);
        c->staging = NULL;
        return 0;
    }
    /* No atomic exchange on this file system: move the old tree aside, the new one in. */
    char *old = xasprintf("%s/.%s.old-%ld", c->parent, c->base, (long)getpid());
    if (rename(c->prefix, old) < 0) {
        fetch_fail_errno(err, errno, "cannot move the old %s aside", c->prefix);
        free(old);
        return -1;
    }
    if (rename(c->staging, c->prefix) < 0) {
        int e = errno;
        rename(old, c->prefix);
        fetch_fail_errno(err, e, "cannot move %s to %s", c->staging, c->prefix);
        free(old);
        return -1;
    }
    fs_remove_tree(old);
    free(old);
    free(c->staging);
    c->staging = NULL;
    return 0;
}

void install_release(struct install_ctx *c)
{
    if (c->staging)
        fs_remove_tree(c->staging);
    free(c->staging);
    if (c->lock_fd >= 0)
        close(c->lock_fd); /* the lock file stays: removing it would race a waiting run */
    free(c->prefix);
    free(c->parent);
    free(c->base);
    memset(c, 0, sizeof *c);
    c->lock_fd = -1;
}
