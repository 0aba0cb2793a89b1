#include "util/fs.h"
#include "util/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *fs_read_file(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EISDIR;
        return NULL;
    }
    struct strbuf sb = STRBUF_INIT;
    char chunk[16384];
    while (sb.len < max) {
        size_t want = max - sb.len < sizeof chunk ? max - sb.len : sizeof chunk;
        ssize_t n = read(fd, chunk, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            sb_free(&sb);
            errno = e;
            return NULL;
        }
        if (n == 0)
            break;
        sb_add(&sb, chunk, (size_t)n);
    }
    close(fd);
    if (len)
        *len = sb.len;
    return sb_detach(&sb);
}

int fs_write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return close(fd);
}

int fs_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

int fs_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int fs_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int fs_is_executable(const char *path)
{
    return fs_is_file(path) && access(path, X_OK) == 0;
}

char *fs_join(const char *a, const char *b)
{
    size_t la = strlen(a);
    while (la > 1 && a[la - 1] == '/')
        la--;
    while (*b == '/')
        b++;
    if (la == 0)
        return xstrdup(b);
    if (la == 1 && a[0] == '/')
        return xasprintf("/%s", b);
    return xasprintf("%.*s/%s", (int)la, a, b);
}

char *fs_dirname(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    while (n > 0 && path[n - 1] != '/')
        n--;
    if (n == 0)
        return xstrdup(".");
    while (n > 1 && path[n - 1] == '/')
        n--;
    return xstrndup(path, n);
}

int fs_mkdir_p(const char *path, unsigned mode)
{
    char *p = xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, mode) < 0 && errno != EEXIST) {
            int e = errno;
            free(p);
            errno = e;
            return -1;
        }
        *s = '/';
    }
    int r = mkdir(p, mode);
    int e = errno;
    free(p);
    if (r < 0 && e == EEXIST && fs_is_dir(path))
        return 0;
    errno = e;
    return r;
}

char *fs_why_not_creatable(const char *dir, int *errnum)
{
    int unused;
    if (!errnum)
        errnum = &unused;
    *errnum = 0;
    char *at = xstrdup(dir);
    struct stat st;
    while (lstat(at, &st) < 0) {
        if (errno != ENOENT && errno != ENOTDIR) {
            *errnum = errno;
            char *why = xasprintf("%s cannot be looked at: %s", at, strerror(*errnum));
            free(at);
            return why;
        }
        char *up = fs_dirname(at);
        free(at);
        at = up;
    }
    if (!fs_is_dir(at)) {
        char *why = xasprintf("%s is a file, not a folder", at);
        free(at);
        return why;
    }
    char *probe = fs_join(at, ".sagebuild-write-probe.XXXXXX");
    int fd = mkstemp(probe);
    char *why = NULL;
    if (fd < 0) {
        *errnum = errno;
        why = xasprintf("%s refuses new files: %s", at, strerror(*errnum));
    } else {
        close(fd);
        unlink(probe);
    }
    free(probe);
    free(at);
    return why;
}

int fs_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return unlink(path);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char *child = fs_join(path, de->d_name);
        if (fs_remove_tree(child) < 0)
            rc = -1;
        free(child);
    }
    closedir(d);
    if (rmdir(path) < 0)
        rc = -1;
    return rc;
}

char *fs_which_in(const char *name, const char *path_env)
{
    if (!name || !*name)
        return NULL;
    if (strchr(name, '/'))
        return fs_is_executable(name) ? xstrdup(name) : NULL;
    if (!path_env)
        return NULL;
    const char *p = path_env;
    while (1) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        char *dir = n ? xstrndup(p, n) : xstrdup(".");
        char *cand = fs_join(dir, name);
        free(dir);
        if (fs_is_executable(cand))
            return cand;
        free(cand);
        if (!colon)
            return NULL;
        p = colon + 1;
    }
}

char *fs_which(const char *name)
{
    return fs_which_in(name, getenv("PATH"));
}

char *fs_realpath(const char *path)
{
    char buf[PATH_MAX];
    if (!realpath(path, buf))
        return NULL;
    return xstrdup(buf);
}

static const char *kind_of(mode_t m)
{
    if (S_ISREG(m))
        return "a file";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISFIFO(m))
        return "a FIFO (named pipe)";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a folder";
}

char *fs_why_not_dir(const char *path)
{
    struct stat ls, st;
    if (lstat(path, &ls) < 0)
        return errno == ENOENT || errno == ENOTDIR
                   ? xstrdup("does not exist")
                   : xasprintf("cannot be read: %s", strerror(errno));
    if (S_ISDIR(ls.st_mode))
        return NULL;
    if (!S_ISLNK(ls.st_mode))
        return xasprintf("is %s, not a folder", kind_of(ls.st_mode));
    char target[4096];
    ssize_t n = readlink(path, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    if (stat(path, &st) < 0)
        return xasprintf("is a symlink to '%s', which does not exist", target);
    if (S_ISDIR(st.st_mode))
        return NULL;
    return xasprintf("is a symlink to '%s', which is %s, not a folder", target,
                     kind_of(st.st_mode));
}
