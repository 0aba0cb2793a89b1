/* Fuzz target: the unpacker's path logic, on the disk. The input is a list of archive entries,
 * one per line: a type letter (f file, d folder, l symlink, h hard link, c device), the name,
 * and for links a tab and the target. They are written as a real tar archive and unpacked into
 * box/1/2/3/dest; whatever the entries, afterwards
 *   - box holds nothing but the folders down to dest (nothing was written beside or up to four
 *     levels above it),
 *   - every symlink in dest, read where it finally lies, stays inside dest (a link moved or
 *     copied to a shallower folder would not),
 *   - no path in dest is a hard link to a symlink, and nothing is a device or FIFO,
 * and the pure rules agree with themselves: a name path_strip accepts passes path_rel_check. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetch/engine/pathsafe.h"
#include "fetch/engine/unpack.h"
#include "util/fs.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ENTRIES 48
#define MAX_LINE 512

static void add_entry(struct archive *a, char type, const char *name, const char *target)
{
    struct archive_entry *e = archive_entry_new();
    archive_entry_set_pathname(e, name);
    archive_entry_set_perm(e, type == 'd' ? 0755 : 0644);
    switch (type) {
    case 'd':
        archive_entry_set_filetype(e, AE_IFDIR);
        break;
    case 'l':
        archive_entry_set_filetype(e, AE_IFLNK);
        archive_entry_set_symlink(e, target);
        break;
    case 'h':
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_hardlink(e, target);
        break;
    case 'c':
        archive_entry_set_filetype(e, AE_IFCHR);
        break;
    default:
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_size(e, 2);
    }
    archive_write_header(a, e);
    if (type == 'f')
        archive_write_data(a, "x\n", 2);
    archive_entry_free(e);
}

/* Builds the tar in memory; returns its size (0: nothing usable). */
static size_t build_tar(const uint8_t *data, size_t size, char *out, size_t cap)
{
    struct archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    size_t used = 0;
    if (archive_write_open_memory(a, out, cap, &used) != ARCHIVE_OK) {
        archive_write_free(a);
        return 0;
    }
    size_t pos = 0;
    int n = 0;
    while (pos < size && n < MAX_ENTRIES) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        size_t len = nl ? (size_t)(nl - (data + pos)) : size - pos;
        if (len >= 2 && len < MAX_LINE) {
            char line[MAX_LINE];
            memcpy(line, data + pos, len);
            line[len] = '\0';
            char *name = line + 1;
            char *tab = strchr(name, '\t');
            if (tab)
                *tab = '\0';
            /* A NUL inside ends the name early: libarchive sees a C string, and so do we. */
            if (*name) {
                add_entry(a, line[0], name, tab ? tab + 1 : "x");
                (void)path_rel_check(name);
                const char *why;
                char *rel = path_strip(name, 1, &why);
                if (rel && *rel && path_rel_check(rel))
                    abort(); /* path_strip let through a name the rules refuse */
                if (rel && *rel && tab)
                    (void)path_link_check(rel, tab + 1);
                free(rel);
                n++;
            }
        }
        pos += len + 1;
    }
    archive_write_close(a);
    archive_write_free(a);
    return used;
}

/* Whether the symlink at rel (relative to dest) pointing at target stays inside dest, walking
 * the target lexically from rel's folder. */
static int link_stays_inside(const char *rel, const char *target)
{
    if (target[0] == '/')
        return 0;
    int depth = 0;
    for (const char *p = rel; *p; p++)
        depth += *p == '/';
    for (const char *p = target; *p;) {
        size_t len = strcspn(p, "/");
        if (len == 2 && p[0] == '.' && p[1] == '.')
            depth--;
        else if (len && !(len == 1 && p[0] == '.'))
            depth++;
        if (depth < 0)
            return 0;
        p += len;
        p += *p == '/';
    }
    return 1;
}

static void check_tree(const char *dest, const char *rel)
{
    char *dir = *rel ? fs_join(dest, rel) : xstrdup(dest);
    DIR *d = opendir(dir);
    if (!d) {
        free(dir);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char *crel = *rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
        char *full = fs_join(dest, crel);
        struct stat st;
        if (lstat(full, &st) == 0) {
            if (S_ISLNK(st.st_mode)) {
                char target[4096];
                ssize_t n = readlink(full, target, sizeof target - 1);
                if (n < 0)
                    abort();
                target[n] = '\0';
                if (!link_stays_inside(crel, target))
                    abort(); /* a symlink that points out of dest from where it lies */
                if (st.st_nlink > 1)
                    abort(); /* a hard link to a symlink */
            } else if (S_ISDIR(st.st_mode)) {
                check_tree(dest, crel);
            } else if (!S_ISREG(st.st_mode)) {
                abort(); /* a device, FIFO or socket */
            }
        }
        free(full);
        free(crel);
    }
    closedir(d);
    free(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char tar[1 << 20];
    size_t len = build_tar(data, size, tar, sizeof tar);
    if (!len)
        return 0;
    const char *tmp = getenv("TMPDIR");
    char *box = xasprintf("%s/sb-fuzz-unpack-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(box))
        abort();
    char *arc = fs_join(box, "a.tar");
    char *dest = fs_join(box, "1/2/3/dest");
    if (fs_write_file(arc, tar, len) < 0)
        abort();
    struct unpack_opts o = {.strip = 1, .archive_size = (long long)len, .archive_name = "a.tar"};
    struct unpack_result r;
    /* Either mode: the first byte picks, so both stay covered. */
    o.walk_only = size > 0 && (data[0] & 1);
    unpack_file(arc, dest, &o, &r);
    unpack_result_free(&r);
    unlink(arc);
    check_tree(dest, "");
    fs_remove_tree(dest);
    /* Only the folders down to dest were ever there: anything else was written beside them. */
    static const char *const levels[] = {"1/2/3", "1/2", "1", ""};
    for (int i = 0; i < 4; i++) {
        char *p = *levels[i] ? fs_join(box, levels[i]) : xstrdup(box);
        if (rmdir(p) < 0)
            abort();
        free(p);
    }
    free(arc);
    free(dest);
    free(box);
    return 0;
}
