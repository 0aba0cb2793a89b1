/* Safe archive extraction with libarchive (tar.xz, tar.gz, zip, ...), from a complete file or
 * from a file that is still downloading (dl_stream), so decompression overlaps the download.
 *
 * Nothing can land outside dest by construction: every file, folder and link is made relative
 * to a folder descriptor reached beneath dest without following any symlink (beneath.h), files
 * are created new (O_EXCL | O_NOFOLLOW) and links with symlinkat/linkat. On top of that each
 * entry is judged by the rules in pathsafe.h, so a hostile archive fails with a message naming
 * the entry: absolute names, "..", links whose target leaves the tree, hard links to anything
 * outside it or to a symlink, entries beneath a symlink the archive made, and device files are
 * refused, and the whole extraction fails. The unpacked bytes and the entry count are bounded
 * by a budget derived from the archive's size (unpack_budget.h). Set-id bits are dropped;
 * owners are not restored. */
#ifndef SB_FETCH_UNPACK_H
#define SB_FETCH_UNPACK_H

#include "download.h"

#include <signal.h>

struct unpack_opts {
    int strip; /* leading path components to drop (redist archives: 1) */
    /* Optional: rewrite an entry's stripped, safe path (heap string) or return NULL to skip
     * the entry. Used to pick the part of a wheel that holds the toolkit. */
    char *(*map)(void *ud, const char *rel);
    void *map_ud;
    volatile sig_atomic_t *cancel;
    long long archive_size;   /* bytes of the archive, < 0 unknown: sets the unpack budget */
    const char *archive_name; /* for messages, e.g. the archive's file name */
    int walk_only;            /* resolve folders component by component even with openat2 */
};

struct unpack_result {
    long long entries;
    long long bytes;          /* bytes written */
    struct fetch_error error; /* set when the extraction failed */
};

void unpack_result_free(struct unpack_result *r);

/* Extracts a complete archive file into dest (created if needed). 0 or -1 (r->error: a refused
 * entry or a blown budget is FETCH_ERR_UNSAFE_ARCHIVE). */
int unpack_file(const char *archive, const char *dest, const struct unpack_opts *o,
                struct unpack_result *r);

/* Extracts what a download job delivers while it arrives, starting over whenever the file
 * restarts from byte 0 (dest is emptied each time), and succeeds only once the download is
 * verified: the tree made from unverified bytes is never reported as good. 0 or -1. */
int unpack_download(struct dl_job *job, const char *dest, const struct unpack_opts *o,
                    struct unpack_result *r);

#endif
