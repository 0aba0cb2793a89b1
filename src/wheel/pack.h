/* Writing a wheel: the files are gathered in memory, hashed, given their dist-info (METADATA,
 * WHEEL, top_level.txt, RECORD) and written as a zip through libarchive. The same files give
 * the same bytes (fixed times, owners and modes, sorted entries), and the wheel appears under
 * its final name only once it is complete (temp file, then rename). */
#ifndef SB_WHEEL_PACK_H
#define SB_WHEEL_PACK_H

#include "wheel/wheelfmt.h"

#include <stddef.h>

struct wheel_file {
    char *path; /* archive path */
    char *data;
    size_t len;
    int executable;
    char sha256[65];
};

struct wheel_files {
    struct wheel_file *v;
    size_t n, cap;
};

/* Takes ownership of data. */
void wheel_files_add_buffer(struct wheel_files *f, const char *path, char *data, size_t len,
                            int executable);
/* Reads src whole. 0, or -1 with *error (heap). */
int wheel_files_add_file(struct wheel_files *f, const char *path, const char *src, int executable,
                         char **error);
/* Every regular file under dir as prefix/<relative path>, leaving out what Python writes on its
 * own (__pycache__, *.pyc) and hidden files. 0, or -1 with *error (heap); no file is an error. */
int wheel_files_add_tree(struct wheel_files *f, const char *prefix, const char *dir, char **error);
/* The entry for path, or NULL. */
const struct wheel_file *wheel_files_find(const struct wheel_files *f, const char *path);
void wheel_files_free(struct wheel_files *f);

struct wheel_written {
    char *path; /* out_dir/<wheel file name> */
    char *name; /* the file name */
    char *tag;
    char sha256[65];
    long long size;
    int nfiles; /* entries in the zip, dist-info included */
};

/* Adds the dist-info to f and writes the wheel into out_dir (created when missing). 0, or -1
 * with *error (heap); nothing is left in out_dir on failure. */
int wheel_write(struct wheel_files *f, const struct wheel_meta *meta, const char *machine,
                const char *out_dir, struct wheel_written *out, char **error);
void wheel_written_free(struct wheel_written *w);

#endif
