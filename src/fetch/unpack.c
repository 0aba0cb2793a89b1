#include "fetch/unpack.h"
#include "fetch/pathsafe.h"
#include "fetch/writer.h"
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

void unpack_result_free(struct unpack_result *r)
{
    free(r->error);
    r->error = NULL;
}

/* The symlinks this archive made so far: nothing may be written beneath them. */
struct linkset {
    char **paths;
    int n, cap;
};

static void linkset_add(struct linkset *ls, const char *rel)
{
    if (ls->n == ls->cap) {
        ls->cap = ls->cap ? 2 * ls->cap : 16;
        ls->paths = xrealloc(ls->paths, (size_t)ls->cap * sizeof *ls->paths);
    }
    ls->paths[ls->n++] = xstrdup(rel);
}

static const char *linkset_parent_of(const struct linkset *ls, const char *rel)
{
    for (int i = 0; i < ls->n; i++)
        if (path_is_under(rel, ls->paths[i]) && strcmp(rel, ls->paths[i]))
            return ls->paths[i];
    return NULL;
}

static void linkset_free(struct linkset *ls)
{
    for (int i = 0; i < ls->n; i++)
        free(ls->paths[i]);
    free(ls->paths);
}

struct extract {
    const char *dest;
    const struct unpack_opts *o;
    struct unpack_result *r;
    struct linkset links;
    struct writer *w; /* write-behind thread, NULL: write here */
};

static int fail(struct extract *x, char *msg)
{
    if (!x->r->error)
        x->r->error = msg;
    else
        free(msg);
    return -1;
}

static int make_parent(const char *full)
{
    char *dir = fs_dirname(full);
    int rc = fs_mkdir_p(dir, 0755);
    free(dir);
    return rc;
}

/* Removes whatever is at full unless it is a directory (a later entry replaces an earlier). */
static void clear_path(const char *full)
{
    struct stat st;
    if (lstat(full, &st) == 0 && !S_ISDIR(st.st_mode))
        unlink(full);
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
            return fail(x, xasprintf("reading %s: %s", name, archive_error_string(a)));
        if (x->o->cancel && *x->o->cancel)
            return fail(x, xstrdup("interrupted"));
        if (x->w) {
            /* A failure is the writer's to report, from writer_finish. */
            if (writer_data(x->w, fd, off, buf, len, name) < 0)
                return -1;
            x->r->bytes += (long long)len;
            if (off + (la_int64_t)len > end)
                end = off + (la_int64_t)len;
            continue;
        }
        const char *p = buf;
        while (len) {
            ssize_t w = pwrite(fd, p, len, off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return fail(x, xasprintf("writing %s: %s", name, strerror(errno)));
            p += w;
            off += w;
            len -= (size_t)w;
            x->r->bytes += w;
        }
        if (off > end)
            end = off;
    }
    *size = end;
    return 0;
}

static int extract_entry(struct extract *x, struct archive *a, struct archive_entry *e)
{
    const char *name = archive_entry_pathname(e);
    const char *why = NULL;
    char *rel = path_strip(name ? name : "", x->o->strip, &why);
    if (!rel)
        return fail(x, xasprintf("refusing archive entry '%s': it %s", name ? name : "", why));
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
            int rc = fail(x, xasprintf("refusing mapped entry '%s': it %s", rel, why));
            free(rel);
            return rc;
        }
    }
    const char *under = linkset_parent_of(&x->links, rel);
    if (under) {
        int rc = fail(x, xasprintf("refusing archive entry '%s': it lies beneath the "
                                   "symlink '%s' from the same archive",
                                   name, under));
        free(rel);
        return rc;
    }
    char *full = fs_join(x->dest, rel);
    int rc = 0;
    mode_t perm = archive_entry_perm(e) & 0777;
    const char *hardlink = archive_entry_hardlink(e);
    if (hardlink) {
        char *trel = path_strip(hardlink, x->o->strip, &why);
        if (trel && x->o->map && *trel) {
            char *m = x->o->map(x->o->map_ud, trel);
            free(trel);
            trel = m;
            why = trel ? path_rel_check(trel) : "is left out of the extraction";
        }
        if (!trel || !*trel || why || linkset_parent_of(&x->links, trel)) {
            rc = fail(x, xasprintf("refusing hard link '%s' -> '%s': the target %s", name, hardlink,
                                   why ? why : "is outside the extracted tree"));
        } else {
            char *tfull = fs_join(x->dest, trel);
            clear_path(full);
            if (make_parent(full) < 0 || link(tfull, full) < 0)
                rc = fail(x, xasprintf("hard link %s -> %s: %s", rel, trel, strerror(errno)));
            free(tfull);
        }
        free(trel);
        goto out;
    }
    switch (archive_entry_filetype(e)) {
    case AE_IFDIR:
        if (fs_mkdir_p(full, 0755) < 0)
            rc = fail(x, xasprintf("mkdir %s: %s", full, strerror(errno)));
        else
            chmod(full, perm | 0700);
        break;
    case AE_IFREG: {
        clear_path(full);
        int fd = make_parent(full) < 0
                     ? -1
                     : open(full, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            rc = fail(x, xasprintf("creating %s: %s", full, strerror(errno)));
            break;
        }
        long long size = 0;
        rc = write_data(x, a, fd, rel, &size);
        /* Owner may always write (so the tree can be removed); set-id bits are dropped. A
         * sparse tail leaves the size short: truncating makes it what the archive says. */
        int has_mtime = archive_entry_mtime_is_set(e);
        time_t mtime = has_mtime ? archive_entry_mtime(e) : 0;
        if (x->w) {
            if (writer_close(x->w, fd, size, perm | 0600, mtime, has_mtime, rel) < 0)
                rc = -1;
            break;
        }
        if (rc == 0 && (ftruncate(fd, size) < 0 || fchmod(fd, perm | 0600) < 0))
            rc = fail(x, xasprintf("writing %s: %s", full, strerror(errno)));
        if (rc == 0 && has_mtime) {
            struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};
            futimens(fd, ts);
        }
        if (close(fd) < 0 && rc == 0)
            rc = fail(x, xasprintf("writing %s: %s", full, strerror(errno)));
        break;
    }
    case AE_IFLNK: {
        const char *target = archive_entry_symlink(e);
        const char *lwhy = path_link_check(rel, target ? target : "");
        if (lwhy) {
            rc = fail(x, xasprintf("refusing symlink '%s' -> '%s': it %s", name,
                                   target ? target : "", lwhy));
            break;
        }
        clear_path(full);
        if (make_parent(full) < 0 || symlink(target, full) < 0)
            rc = fail(x, xasprintf("symlink %s: %s", full, strerror(errno)));
        else
            linkset_add(&x->links, rel);
        break;
    }
    default:
        rc = fail(x, xasprintf("refusing archive entry '%s': not a file, folder or link", name));
    }
out:
    if (rc == 0)
        x->r->entries++;
    free(full);
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
    struct extract x = {dest, o, r, {0}, NULL};
    if (fs_mkdir_p(dest, 0755) < 0) {
        linkset_free(&x.links);
        return fail(&x, xasprintf("mkdir %s: %s", dest, strerror(errno)));
    }
    x.w = writer_start();
    int rc = 0;
    struct archive_entry *e;
    for (;;) {
        if (o->cancel && *o->cancel) {
            rc = fail(&x, xstrdup("interrupted"));
            break;
        }
        int h = archive_read_next_header(a, &e);
        if (h == ARCHIVE_EOF)
            break;
        if (h < ARCHIVE_WARN) {
            rc = fail(&x, xasprintf("not a readable archive: %s", archive_error_string(a)));
            break;
        }
        if ((rc = extract_entry(&x, a, e)) < 0)
            break;
    }
    char *werr = NULL;
    if (x.w && writer_finish(x.w, &werr) < 0) {
        /* The writer's failure (a full disk) is the cause of anything that followed it. */
        free(r->error);
        r->error = werr;
        rc = -1;
    }
    if (rc < 0 && !r->error)
        r->error = xstrdup("extraction failed");
    linkset_free(&x.links);
    return rc;
}

int unpack_file(const char *archive, const char *dest, const struct unpack_opts *o,
                struct unpack_result *r)
{
    memset(r, 0, sizeof *r);
    struct archive *a = new_reader();
    int rc;
    if (archive_read_open_filename(a, archive, READ_CHUNK) != ARCHIVE_OK) {
        r->error = xasprintf("%s: %s", archive, archive_error_string(a));
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
            r->error = xstrdup("the download failed");
            rc = -1;
        }
        break;
    }
    free(sr.buf);
    if (rc < 0)
        fs_remove_tree(dest);
    return rc;
}
