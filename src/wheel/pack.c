#include "wheel/pack.h"
#include "fetch/engine/verify.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* 2000-01-01T00:00:00Z on every entry: a zip cannot say "no time", and a fixed one keeps the
 * bytes the same from run to run. */
#define WHEEL_FIXED_MTIME 946684800
#define WHEEL_MAX_FILE (2ull << 30)
#define WHEEL_MAX_DEPTH 16

void wheel_files_add_buffer(struct wheel_files *f, const char *path, char *data, size_t len,
                            int executable)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 16;
        f->v = xrealloc(f->v, f->cap * sizeof *f->v);
    }
    struct wheel_file *w = &f->v[f->n++];
    memset(w, 0, sizeof *w);
    w->path = xstrdup(path);
    w->data = data;
    w->len = len;
    w->executable = executable;
    struct sha256_ctx c = {0};
    sha256_init(&c);
    sha256_update(&c, data, len);
    sha256_final(&c, w->sha256);
    sha256_free(&c);
}

int wheel_files_add_file(struct wheel_files *f, const char *path, const char *src, int executable,
                         char **error)
{
    struct stat st;
    if (stat(src, &st) < 0 || !S_ISREG(st.st_mode)) {
        *error = xasprintf("cannot read %s: %s", src, errno ? strerror(errno) : "not a file");
        return -1;
    }
    if ((unsigned long long)st.st_size > WHEEL_MAX_FILE) {
        *error = xasprintf("%s is larger than a wheel should carry (%lld bytes)", src,
                           (long long)st.st_size);
        return -1;
    }
    size_t len = 0;
    errno = 0;
    char *data = fs_read_file(src, (size_t)st.st_size + 1, &len);
    if (!data || len != (size_t)st.st_size) {
        *error = xasprintf("cannot read %s: %s", src,
                           errno ? strerror(errno) : "it changed while being read");
        free(data);
        return -1;
    }
    wheel_files_add_buffer(f, path, data, len, executable);
    return 0;
}

static int skipped_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] == '.' || !strcmp(name, "__pycache__") ||
           (n > 4 && (!strcmp(name + n - 4, ".pyc") || !strcmp(name + n - 4, ".pyo")));
}

static int add_tree(struct wheel_files *f, const char *prefix, const char *dir, int depth,
                    char **error)
{
    if (depth > WHEEL_MAX_DEPTH) {
        *error = xasprintf("%s is nested too deep (a symlink loop?)", dir);
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        *error = xasprintf("cannot list %s: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d))) {
        if (skipped_name(de->d_name))
            continue;
        char *src = fs_join(dir, de->d_name);
        char *path = xasprintf("%s/%s", prefix, de->d_name);
        struct stat st;
        if (stat(src, &st) < 0) {
            *error = xasprintf("cannot read %s: %s", src, strerror(errno));
            rc = -1;
        } else if (!wheel_path_ok(path)) {
            *error = xasprintf("%s has a name a wheel cannot carry", src);
            rc = -1;
        } else if (S_ISDIR(st.st_mode)) {
            rc = add_tree(f, path, src, depth + 1, error);
        } else if (S_ISREG(st.st_mode)) {
            rc = wheel_files_add_file(f, path, src, (st.st_mode & 0111) != 0, error);
        } /* sockets, fifos: not package content */
        free(src);
        free(path);
    }
    closedir(d);
    return rc;
}

int wheel_files_add_tree(struct wheel_files *f, const char *prefix, const char *dir, char **error)
{
    size_t before = f->n;
    if (add_tree(f, prefix, dir, 0, error) < 0)
        return -1;
    if (f->n == before) {
        *error = xasprintf("%s holds no files", dir);
        return -1;
    }
    return 0;
}

const struct wheel_file *wheel_files_find(const struct wheel_files *f, const char *path)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->v[i].path, path))
            return &f->v[i];
    return NULL;
}

void wheel_files_free(struct wheel_files *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].path);
        free(f->v[i].data);
    }
    free(f->v);
    memset(f, 0, sizeof *f);
}

void wheel_written_free(struct wheel_written *w)
{
    free(w->path);
    free(w->name);
    free(w->tag);
    memset(w, 0, sizeof *w);
}

static const char *sort_dist_info;
static int by_entry_order(const void *a, const void *b)
{
    const struct wheel_file *x = a, *y = b;
    return wheel_entry_order(x->path, y->path, sort_dist_info);
}

/* libarchive turns times into a zip's DOS fields in local time: write in UTC so the bytes do
 * not depend on the machine's time zone. Restored afterwards. */
struct tz_saved {
    char *value;
    int had;
};
static void tz_utc(struct tz_saved *s)
{
    const char *tz = getenv("TZ");
    s->had = tz != NULL;
    s->value = tz ? xstrdup(tz) : NULL;
    setenv("TZ", "UTC0", 1);
    tzset();
}
static void tz_restore(struct tz_saved *s)
{
    if (s->had)
        setenv("TZ", s->value, 1);
    else
        unsetenv("TZ");
    tzset();
    free(s->value);
}

static int write_zip(int fd, const struct wheel_files *f, char **error)
{
    struct archive *a = archive_write_new();
    struct tz_saved tz;
    tz_utc(&tz);
    int rc = 0;
    if (archive_write_set_format_zip(a) != ARCHIVE_OK ||
        archive_write_set_options(a, "zip:compression=deflate") != ARCHIVE_OK ||
        archive_write_open_fd(a, fd) != ARCHIVE_OK) {
        *error = xasprintf("cannot start the zip: %s", archive_error_string(a));
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < f->n; i++) {
        const struct wheel_file *w = &f->v[i];
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, w->path);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, w->executable ? 0755 : 0644);
        archive_entry_set_size(e, (la_int64_t)w->len);
        archive_entry_set_mtime(e, WHEEL_FIXED_MTIME, 0);
        archive_entry_set_uid(e, 0);
        archive_entry_set_gid(e, 0);
        if (archive_write_header(a, e) != ARCHIVE_OK) {
            *error = xasprintf("cannot add %s to the zip: %s", w->path, archive_error_string(a));
            rc = -1;
        }
        for (size_t done = 0; rc == 0 && done < w->len;) {
            la_ssize_t n = archive_write_data(a, w->data + done, w->len - done);
            if (n <= 0) {
                *error =
                    xasprintf("cannot write %s into the zip: %s", w->path, archive_error_string(a));
                rc = -1;
            } else {
                done += (size_t)n;
            }
        }
        if (rc == 0 && archive_write_finish_entry(a) != ARCHIVE_OK) {
            *error = xasprintf("cannot finish %s in the zip: %s", w->path, archive_error_string(a));
            rc = -1;
        }
        archive_entry_free(e);
    }
    if (archive_write_close(a) != ARCHIVE_OK && rc == 0) {
        *error = xasprintf("cannot finish the zip: %s", archive_error_string(a));
        rc = -1;
    }
    archive_write_free(a);
    tz_restore(&tz);
    return rc;
}

/* The dist-info files and RECORD, added to f. NULL on success, else the error (heap). */
static char *add_dist_info(struct wheel_files *f, const struct wheel_meta *meta, const char *tag,
                           const char *dist_info)
{
    char *p;
    char *text = wheel_metadata_text(meta);
    wheel_files_add_buffer(f, (p = xasprintf("%s/METADATA", dist_info)), text, strlen(text), 0);
    free(p);
    text = wheel_wheel_text(tag, meta->cli_version);
    wheel_files_add_buffer(f, (p = xasprintf("%s/WHEEL", dist_info)), text, strlen(text), 0);
    free(p);
    text = wheel_top_level_text();
    wheel_files_add_buffer(f, (p = xasprintf("%s/top_level.txt", dist_info)), text, strlen(text),
                           0);
    free(p);

    char *record_path = xasprintf("%s/RECORD", dist_info);
    sort_dist_info = dist_info;
    qsort(f->v, f->n, sizeof *f->v, by_entry_order);
    struct wheel_record_row *rows = xcalloc(f->n + 1, sizeof *rows);
    for (size_t i = 0; i < f->n; i++) {
        if (!strcmp(f->v[i].path, record_path) || (i && !strcmp(f->v[i].path, f->v[i - 1].path))) {
            free(rows);
            char *err = xasprintf("%s is in the wheel twice", f->v[i].path);
            free(record_path);
            return err;
        }
        rows[i] = (struct wheel_record_row){f->v[i].path, f->v[i].sha256, (long long)f->v[i].len};
    }
    rows[f->n] = (struct wheel_record_row){record_path, NULL, 0};
    text = wheel_record_text(rows, f->n + 1);
    free(rows);
    wheel_files_add_buffer(f, record_path, text, strlen(text), 0);
    free(record_path);
    return NULL;
}

int wheel_write(struct wheel_files *f, const struct wheel_meta *meta, const char *machine,
                const char *out_dir, struct wheel_written *out, char **error)
{
    memset(out, 0, sizeof *out);
    out->name = wheel_file_name(meta->version, machine);
    out->tag = wheel_tag(machine);
    if (!out->name || !out->tag) {
        *error = xasprintf("'%s' cannot be part of a wheel's platform tag", machine);
        wheel_written_free(out);
        return -1;
    }
    for (size_t i = 0; i < f->n; i++)
        if (!wheel_path_ok(f->v[i].path)) {
            *error = xasprintf("'%s' is not a path a wheel may hold", f->v[i].path);
            wheel_written_free(out);
            return -1;
        }
    char *dist_info = wheel_dist_info_dir(meta->version);
    *error = add_dist_info(f, meta, out->tag, dist_info);
    free(dist_info);
    if (*error) {
        wheel_written_free(out);
        return -1;
    }
    if (fs_mkdir_p(out_dir, 0755) < 0) {
        *error = xasprintf("cannot create %s: %s", out_dir, strerror(errno));
        wheel_written_free(out);
        return -1;
    }
    out->path = fs_join(out_dir, out->name);
    char *tmp = xasprintf("%s/.%s.XXXXXX", out_dir, out->name);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        *error = xasprintf("cannot write into %s: %s", out_dir, strerror(errno));
        free(tmp);
        wheel_written_free(out);
        return -1;
    }
    int rc = write_zip(fd, f, error);
    if (rc == 0 && (fchmod(fd, 0644) < 0 || fsync(fd) < 0)) {
        *error = xasprintf("cannot write %s: %s", tmp, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && sha256_file(tmp, out->sha256, &out->size) < 0) {
        *error = xasprintf("cannot read back %s: %s", tmp, strerror(errno));
        rc = -1;
    }
    close(fd);
    if (rc == 0 && rename(tmp, out->path) < 0) {
        *error = xasprintf("cannot rename %s to %s: %s", tmp, out->path, strerror(errno));
        rc = -1;
    }
    if (rc < 0) {
        unlink(tmp);
        wheel_written_free(out);
    } else {
        out->nfiles = (int)f->n;
    }
    free(tmp);
    return rc;
}
