#include "unpack.h"
#include "beneath.h"
#include "pathsafe.h"
#include "unpack_budget.h"
#include "writer.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK (1 << 20)
#define SHOWN_NAME_MAX 160 /* bytes of an entry name that messages show */

void unpack_result_free(struct unpack_result *r)
{
    fetch_error_free(&r->error);
}

struct extract {
    const struct unpack_opts *o;
    struct unpack_result *r;
    struct beneath root; /* every entry is made relative to it, never by path string */
    struct unpack_budget budget;
    long long entries_seen; /* every header, kept or skipped */
    long long unpacked;     /* bytes of the files finished so far (their full size) */
    struct writer *w;       /* write-behind thread, NULL: write here */
};

/* The first failure is the one reported: what follows it is its consequence. */
static int fail(struct extract *x, enum fetch_error_kind kind, char *msg)
{
    if (!x->r->error.message)
        fetch_fail_with(&x->r->error, kind, msg);
    else
        free(msg);
    return -1;
}

/* An archive name as messages show it: a hostile one can be kilobytes long. */
static char *shown(const char *name)
{
    size_t n = strlen(name);
    if (n <= SHOWN_NAME_MAX)
        return xstrdup(name);
    return xasprintf("%.*s... (%zu bytes)", SHOWN_NAME_MAX, name, n);
}

static int fail_at(struct extract *x, const char *what, const char *rel, int err)
{
    char *n = shown(rel);
    int rc =
        fail(x, fetch_error_kind_of_errno(err), xasprintf("%s %s: %s", what, n, strerror(err)));
    free(n);
    return rc;
}

static int over_budget(struct extract *x, int entries)
{
    return fail(x, FETCH_ERR_UNSAFE_ARCHIVE,
                unpack_budget_refusal(&x->budget, x->o->archive_size,
                                      x->o->archive_name ? x->o->archive_name : "the archive",
                                      entries));
}

/* The folder that holds rel, as a descriptor beneath the root (created as needed); *leaf points
 * at rel's last component. A component that is a symlink (one this archive made: the tree starts
 * empty) or a file is refused with a message naming it. */
static int parent_of(struct extract *x, const char *rel, const char *name, const char **leaf)
{
    char *dir = NULL;
    *leaf = beneath_split(rel, &dir);
    size_t bad = 0;
    int fd = beneath_dir(&x->root, dir, 1, &bad);
    if (fd < 0) {
        int e = errno;
        char *n = shown(name);
        if (e == ELOOP)
            fail(x, FETCH_ERR_UNSAFE_ARCHIVE,
                 xasprintf("refusing archive entry '%s': it lies beneath the symlink '%.*s' "
                           "from the same archive",
                           n, (int)(bad < SHOWN_NAME_MAX ? bad : SHOWN_NAME_MAX), dir));
        else
            fail(x, fetch_error_kind_of_errno(e),
                 xasprintf("creating %s: %.*s: %s", n,
                           (int)(bad < SHOWN_NAME_MAX ? bad : SHOWN_NAME_MAX), dir, strerror(e)));
        free(n);
    }
    free(dir);
    return fd;
}

/* Removes whatever a previous entry put at leaf unless it is a folder: a later entry replaces an
 * earlier one, and is never written through it. */
static void clear_leaf(int dirfd, const char *leaf)
{
    struct stat st;
    if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
        unlinkat(dirfd, leaf, 0);
}

static int write_data(struct extract *x, struct archive *a, int fd, const char *name,
                      long long *size)
{
    const void *buf;
    size_t len;
    la_int64_t off;
    long long end = 0;
    for (;;) {
        int rc = archive_read_data_block(a, &buf, &len, &off);
        if (rc == ARCHIVE_EOF)
            break;
        if (rc < ARCHIVE_WARN)
            return fail(x, FETCH_ERR_OTHER,
                        xasprintf("reading %s: %s", name, archive_error_string(a)));
        if (x->o->cancel && *x->o->cancel)
            return fail(x, FETCH_ERR_INTERRUPTED, xstrdup("interrupted"));
        /* The logical size counts, holes included: a copy of the tree would fill them in. */
        if (off + (la_int64_t)len > end)
            end = off + (la_int64_t)len;
        if (x->unpacked + end > x->budget.bytes)
            return over_budget(x, 0);
        if (x->w) {
            /* A failure is the writer's to report, from writer_finish. */
            if (writer_data(x->w, fd, off, buf, len, name) < 0)
                return -1;
            x->r->bytes += (long long)len;
            continue;
        }
        const char *p = buf;
        while (len) {
            ssize_t w = pwrite(fd, p, len, off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                int e = errno;
                return fail(x, fetch_error_kind_of_errno(e),
                            xasprintf("writing %s: %s", name, strerror(e)));
            }
            p += w;
            off += w;
            len -= (size_t)w;
            x->r->bytes += w;
        }
    }
    *size = end;
    return 0;
}

static int extract_file(struct extract *x, struct archive *a, struct archive_entry *e,
                        const char *rel, const char *name)
{
    if (archive_entry_size_is_set(e) &&
        x->unpacked + (long long)archive_entry_size(e) > x->budget.bytes)
        return over_budget(x, 0);
    const char *leaf;
    int dirfd = parent_of(x, rel, name, &leaf);
    if (dirfd < 0)
        return -1;
    clear_leaf(dirfd, leaf);
    /* O_EXCL on a name just cleared: the file is always a new one, never something followed. */
    int fd = openat(dirfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return fail_at(x, "creating", rel, errno);
    long long size = 0;
    int rc = write_data(x, a, fd, rel, &size);
    x->unpacked += size;
    /* Owner may always write (so the tree can be removed); set-id bits are dropped. A sparse
     * tail leaves the size short: truncating makes it what the archive says. */
    mode_t perm = archive_entry_perm(e) & 0777;
    int has_mtime = archive_entry_mtime_is_set(e);
    time_t mtime = has_mtime ? archive_entry_mtime(e) : 0;
    if (x->w)
        return writer_close(x->w, fd, size, perm | 0600, mtime, has_mtime, rel) < 0 ? -1 : rc;
    if (rc == 0 && (ftruncate(fd, size) < 0 || fchmod(fd, perm | 0600) < 0))
        rc = fail_at(x, "writing", rel, errno);
    if (rc == 0 && has_mtime) {
        struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};
        futimens(fd, ts);
    }
    if (close(fd) < 0 && rc == 0)
        rc = fail_at(x, "writing", rel, errno);
    return rc;
}

static int extract_dir(struct extract *x, const char *rel, const char *name, mode_t perm)
{
    const char *leaf;
    int dirfd = parent_of(x, rel, name, &leaf);
    if (dirfd < 0)
        return -1;
    clear_leaf(dirfd, leaf); /* a folder replaces a file or link of the same name */
    if (mkdirat(dirfd, leaf, 0755) < 0 && errno != EEXIST)
        return fail_at(x, "creating", rel, errno);
    int fd = openat(dirfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return fail_at(x, "creating", rel, errno);
    fchmod(fd, perm | 0700); /* the owner can always look inside and clean up */
    close(fd);
    return 0;
}

static int extract_symlink(struct extract *x, struct archive_entry *e, const char *rel,
                           const char *name)
{
    const char *target = archive_entry_symlink(e);
    const char *why = path_link_check(rel, target ? target : "");
    if (why) {
        char *n = shown(name), *t = shown(target ? target : "");
        int rc = fail(x, FETCH_ERR_UNSAFE_ARCHIVE,
                      xasprintf("refusing symlink '%s' -> '%s': it %s", n, t, why));
        free(n);
        free(t);
        return rc;
    }
    const char *leaf;
    int dirfd = parent_of(x, rel, name, &leaf);
    if (dirfd < 0)
        return -1;
    clear_leaf(dirfd, leaf);
    if (symlinkat(target, dirfd, leaf) < 0)
        return fail_at(x, "creating the symlink", rel, errno);
    return 0;
}

/* A hard link names an earlier entry of this archive. A hard link to a symlink is refused: it
 * copies the link to another folder, where its target text, checked only where the link was
 * made, can point above the tree (NVIDIA's archives have none). */
static int extract_hardlink(struct extract *x, const char *rel, const char *name,
                            const char *hardlink)
{
    const char *why = NULL;
    char *trel = path_strip(hardlink, x->o->strip, &why);
    if (trel && x->o->map && *trel) {
        char *m = x->o->map(x->o->map_ud, trel);
        free(trel);
        trel = m;
        why = trel ? path_rel_check(trel) : "is left out of the extraction";
    }
    char *n = shown(name), *h = shown(hardlink);
    int rc = 0;
    if (!trel || !*trel || why) {
        rc = fail(x, FETCH_ERR_UNSAFE_ARCHIVE,
                  xasprintf("refusing hard link '%s' -> '%s': the target %s", n, h,
                            why ? why : "is outside the extracted tree"));
        goto out;
    }
    char *tdir = NULL;
    const char *tleaf = beneath_split(trel, &tdir);
    size_t bad = 0;
    int tfd = beneath_dir(&x->root, tdir, 0, &bad);
    /* Our own copy: the next beneath_dir call may close the cached one. */
    tfd = tfd < 0 ? -1 : fcntl(tfd, F_DUPFD_CLOEXEC, 0);
    free(tdir);
    struct stat st;
    if (tfd < 0 || fstatat(tfd, tleaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        rc = fail(x, FETCH_ERR_UNSAFE_ARCHIVE,
                  xasprintf("refusing hard link '%s' -> '%s': the target %s", n, h,
                            errno == ELOOP ? "lies beneath a symlink"
                                           : "is not an earlier entry of the archive"));
    } else if (S_ISLNK(st.st_mode)) {
        rc = fail(x, FETCH_ERR_UNSAFE_ARCHIVE,
                  xasprintf("refusing hard link '%s' -> '%s': the target is a symlink (a "
                            "hard link would move it where its target points elsewhere)",
                            n, h));
    } else if (!S_ISREG(st.st_mode)) {
        rc = fail(x, FETCH_ERR_UNSAFE_ARCHIVE,
                  xasprintf("refusing hard link '%s' -> '%s': the target is not a file", n, h));
    } else {
        const char *leaf;
        int dirfd = parent_of(x, rel, name, &leaf);
        if (dirfd < 0) {
            rc = -1;
        } else {
            clear_leaf(dirfd, leaf);
            /* No AT_SYMLINK_FOLLOW: the name itself is linked, never what it points at. */
            if (linkat(tfd, tleaf, dirfd, leaf, 0) < 0) {
                int e = errno;
                rc = fail(x, fetch_error_kind_of_errno(e),
                          xasprintf("hard link %s -> %s: %s", n, h, strerror(e)));
            }
        }
    }
    if (tfd >= 0)
        close(tfd);
out:
    free(n);
    free(h);
    free(trel);
    return rc;
}

static int extract_entry(struct extract *x, struct archive *a, struct archive_entry *e)
{
    const char *name = archive_entry_pathname(e);
    if (!name)
        name = "";
    if (++x->entries_seen > x->budget.entries)
        return over_budget(x, 1);
    const char *why = NULL;
    char *rel = path_strip(name, x->o->strip, &why);
    if (!rel) {
        char *n = shown(name);
        int rc = fail(x, FETCH_ERR_UNSAFE_ARCHIVE,
                      xasprintf("refusing archive entry '%s': it %s", n, why));
        free(n);
        return rc;
    }
    if (!*rel) {
        free(rel);
        return 0; /* the top-level folder itself */
    }
    if (x->o->map) {
        char *mapped = x->o->map(x->o->map_ud, rel);
        free(rel);
        if (!mapped)
            return 0;
        rel = mapped;
        if ((why = path_rel_check(rel))) {
            char *n = shown(rel);
            int rc = fail(x, FETCH_ERR_UNSAFE_ARCHIVE,
                          xasprintf("refusing mapped entry '%s': it %s", n, why));
            free(n);
            free(rel);
            return rc;
        }
    }
    int rc;
    const char *hardlink = archive_entry_hardlink(e);
    if (hardlink) {
        rc = extract_hardlink(x, rel, name, hardlink);
    } else {
        switch (archive_entry_filetype(e)) {
        case AE_IFDIR:
            rc = extract_dir(x, rel, name, archive_entry_perm(e) & 0777);
            break;
        case AE_IFREG:
            rc = extract_file(x, a, e, rel, name);
            break;
        case AE_IFLNK:
            rc = extract_symlink(x, e, rel, name);
            break;
        default: {
            char *n = shown(name);
            rc = fail(x, FETCH_ERR_UNSAFE_ARCHIVE,
                      xasprintf("refusing archive entry '%s': not a file, folder or link", n));
            free(n);
        }
        }
    }
    if (rc == 0)
        x->r->entries++;
    free(rel);
    return rc;
}

static struct archive *new_reader(void)
{
    struct archive *a = archive_read_new();
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    archive_read_support_format_gnutar(a);
    archive_read_support_format_zip(a);
    return a;
}

static int extract_all(struct archive *a, const char *dest, const struct unpack_opts *o,
                       struct unpack_result *r)
{
    struct extract x;
    memset(&x, 0, sizeof x);
    x.o = o;
    x.r = r;
    unpack_budget_for(o->archive_size, &x.budget);
    if (fs_mkdir_p(dest, 0755) < 0) {
        int e = errno;
        return fail(&x, fetch_error_kind_of_errno(e), xasprintf("mkdir %s: %s", dest, strerror(e)));
    }
    if (beneath_open(&x.root, dest, o->walk_only) < 0) {
        int e = errno;
        return fail(&x, fetch_error_kind_of_errno(e),
                    xasprintf("opening %s: %s", dest, strerror(e)));
    }
    x.w = writer_start();
    int rc = 0;
    struct archive_entry *e;
    for (;;) {
        if (o->cancel && *o->cancel) {
            rc = fail(&x, FETCH_ERR_INTERRUPTED, xstrdup("interrupted"));
            break;
        }
        int h = archive_read_next_header(a, &e);
        if (h == ARCHIVE_EOF)
            break;
        if (h < ARCHIVE_WARN) {
            rc = fail(&x, FETCH_ERR_OTHER,
                      xasprintf("not a readable archive: %s", archive_error_string(a)));
            break;
        }
        if ((rc = extract_entry(&x, a, e)) < 0)
            break;
    }
    struct fetch_error werr = {0};
    if (x.w && writer_finish(x.w, &werr) < 0) {
        /* The writer's failure (a full disk) is the cause of anything that followed it. */
        fetch_error_free(&r->error);
        r->error = werr;
        rc = -1;
    }
    if (rc < 0 && !r->error.message)
        fetch_fail(&r->error, FETCH_ERR_OTHER, "extraction failed");
    beneath_close(&x.root);
    return rc;
}

int unpack_file(const char *archive, const char *dest, const struct unpack_opts *o,
                struct unpack_result *r)
{
    memset(r, 0, sizeof *r);
    struct archive *a = new_reader();
    int rc;
    if (archive_read_open_filename(a, archive, READ_CHUNK) != ARCHIVE_OK) {
        fetch_fail(&r->error, FETCH_ERR_OTHER, "%s: %s", archive, archive_error_string(a));
        rc = -1;
    } else {
        rc = extract_all(a, dest, o, r);
    }
    archive_read_free(a);
    return rc;
}

/* ---- reading a file that is still being written ---- */

struct stream_reader {
    struct dl_stream *s;
    int gen;
    long long off;
    int restarted; /* the generation changed under us */
    int failed;    /* the download failed for good */
    char *buf;
};

static la_ssize_t stream_read(struct archive *a, void *ud, const void **out)
{
    struct stream_reader *sr = ud;
    for (;;) {
        long long avail;
        int gen;
        enum dl_state st = dl_stream_wait(sr->s, sr->off, sr->gen, &avail, &gen);
        if (gen != sr->gen) {
            sr->restarted = 1;
            archive_set_error(a, EAGAIN, "the download started over");
            return ARCHIVE_FATAL;
        }
        if (avail > sr->off) {
            size_t want = avail - sr->off > READ_CHUNK ? READ_CHUNK : (size_t)(avail - sr->off);
            ssize_t n = pread(sr->s->fd, sr->buf, want, sr->off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                archive_set_error(a, errno, "reading the download: %s", strerror(errno));
                return ARCHIVE_FATAL;
            }
            if (n == 0)
                continue; /* truncated meanwhile: the generation check will tell */
            sr->off += n;
            *out = sr->buf;
            return n;
        }
        if (st == DL_VERIFIED)
            return 0;
        if (st == DL_FAILED) {
            sr->failed = 1;
            archive_set_error(a, EIO, "the download failed");
            return ARCHIVE_FATAL;
        }
    }
}

int unpack_download(struct dl_job *job, const char *dest, const struct unpack_opts *o,
                    struct unpack_result *r)
{
    memset(r, 0, sizeof *r);
    struct stream_reader sr = {&job->stream, 0, 0, 0, 0, xmalloc(READ_CHUNK)};
    pthread_mutex_lock(&job->stream.mu);
    sr.gen = job->stream.gen;
    pthread_mutex_unlock(&job->stream.mu);
    int rc;
    for (;;) {
        unpack_result_free(r);
        memset(r, 0, sizeof *r);
        fs_remove_tree(dest);
        sr.off = 0;
        sr.restarted = sr.failed = 0;
        struct archive *a = new_reader();
        archive_read_open(a, &sr, NULL, stream_read, NULL);
        rc = extract_all(a, dest, o, r);
        archive_read_free(a);
        if (sr.restarted) {
            pthread_mutex_lock(&job->stream.mu);
            sr.gen = job->stream.gen;
            pthread_mutex_unlock(&job->stream.mu);
            continue;
        }
        /* Whatever was made (or refused) came from unverified bytes until the verdict. */
        enum dl_state v = dl_stream_verdict(&job->stream, sr.gen);
        if (v == DL_RUNNING) {
            pthread_mutex_lock(&job->stream.mu);
            sr.gen = job->stream.gen;
            pthread_mutex_unlock(&job->stream.mu);
            continue;
        }
        if (v == DL_FAILED) {
            unpack_result_free(r);
            fetch_fail(&r->error, FETCH_ERR_OTHER, "the download failed");
            rc = -1;
        }
        break;
    }
    free(sr.buf);
    if (rc < 0)
        fs_remove_tree(dest);
    return rc;
}
