#include "beneath.h"
#include "util/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2_H 1
#endif
#endif

#ifndef HAVE_OPENAT2_H
/* The kernel's ABI (include/uapi/linux/openat2.h), for build hosts with older headers. */
struct open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#define RESOLVE_BENEATH 0x08
#endif
#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

int beneath_open(struct beneath *b, const char *dir, int walk_only)
{
    memset(b, 0, sizeof *b);
    b->last_fd = -1;
    b->root = open(dir, DIR_FLAGS);
    if (b->root < 0)
        return -1;
    b->use_openat2 = !walk_only;
    return 0;
}

static void forget_last(struct beneath *b)
{
    if (b->last_fd >= 0)
        close(b->last_fd);
    b->last_fd = -1;
    free(b->last_rel);
    b->last_rel = NULL;
}

void beneath_close(struct beneath *b)
{
    forget_last(b);
    if (b->root >= 0)
        close(b->root);
    b->root = -1;
}

/* One call for the whole path; -1 with errno ENOSYS/EAGAIN/ENOENT sends the caller to the walk. */
static int resolve_openat2(struct beneath *b, const char *rel)
{
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = DIR_FLAGS;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, b->root, rel, &how, sizeof how);
    if (fd < 0 && (errno == ENOSYS || errno == EPERM)) /* EPERM: a seccomp filter */
        b->use_openat2 = 0;
    return (int)fd;
}

/* Component by component: each one opened relative to its parent's descriptor, never
 * following a symlink, created when missing. */
static int resolve_walk(struct beneath *b, const char *rel, int create, size_t *bad_len)
{
    int cur = b->root;
    const char *p = rel;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        char *name = xstrndup(p, len);
        int fd = openat(cur, name, DIR_FLAGS);
        if (fd < 0 && errno == ENOENT && create) {
            if (mkdirat(cur, name, 0755) == 0 || errno == EEXIST)
                fd = openat(cur, name, DIR_FLAGS);
        }
        int e = errno;
        struct stat st;
        /* O_DIRECTORY wins over O_NOFOLLOW: a symlink shows up as ENOTDIR (or EMLINK on some
         * file systems). Say which it was. */
        if (fd < 0 && (e == ENOTDIR || e == EMLINK) &&
            fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            e = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
        free(name);
        if (cur != b->root)
            close(cur);
        if (fd < 0) {
            if (bad_len)
                *bad_len = (size_t)(p - rel) + len;
            errno = e;
            return -1;
        }
        cur = fd;
        p += len;
        while (*p == '/')
            p++;
    }
    return cur == b->root ? fcntl(b->root, F_DUPFD_CLOEXEC, 0) : cur;
}

/* The end of the first ".." component of rel, or 0 when it has none. */
static size_t dotdot_end(const char *rel)
{
    for (const char *p = rel; *p;) {
        size_t len = strcspn(p, "/");
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return (size_t)(p - rel) + len;
        p += len;
        p += *p == '/';
    }
    return 0;
}

int beneath_dir(struct beneath *b, const char *rel, int create, size_t *bad_len)
{
    size_t up = dotdot_end(rel);
    if (up) {
        /* Never climbs, not even where it would stay inside. */
        if (bad_len)
            *bad_len = up;
        errno = EXDEV;
        return -1;
    }
    if (b->last_rel && !strcmp(b->last_rel, rel))
        return b->last_fd;
    forget_last(b);
    int fd = -1;
    if (!*rel) {
        fd = fcntl(b->root, F_DUPFD_CLOEXEC, 0);
    } else {
        if (b->use_openat2)
            fd = resolve_openat2(b, rel);
        /* openat2 cannot create, and names no culprit: the walk does both. */
        if (fd < 0)
            fd = resolve_walk(b, rel, create, bad_len);
    }
    if (fd < 0)
        return -1;
    b->last_fd = fd;
    b->last_rel = xstrdup(rel);
    return fd;
}

const char *beneath_split(const char *rel, char **dir)
{
    const char *slash = strrchr(rel, '/');
    *dir = slash ? xstrndup(rel, (size_t)(slash - rel)) : xstrdup("");
    return slash ? slash + 1 : rel;
}
