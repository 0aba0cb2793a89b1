/* Small file-system helpers. All of them tolerate missing or unreadable files. */
#ifndef SB_FS_H
#define SB_FS_H

#include <stddef.h>

/* Reads at most max bytes of path into a NUL-terminated heap string. NULL (errno set) when the
 * file cannot be opened or is not a regular file. *len (optional) receives the byte count. */
char *fs_read_file(const char *path, size_t max, size_t *len);
int fs_write_file(const char *path, const void *data, size_t len);
int fs_exists(const char *path);
int fs_is_dir(const char *path);
int fs_is_file(const char *path);
int fs_is_executable(const char *path); /* a regular file we may execute */
/* "a" + "/" + "b", collapsing a doubled slash. Heap string. */
char *fs_join(const char *a, const char *b);
/* dirname without modifying the input; heap string ("." for a bare name). */
char *fs_dirname(const char *path);
/* mkdir -p; 0 or -1 with errno. */
int fs_mkdir_p(const char *path, unsigned mode);
/* Why files cannot be created in dir (which mkdir -p would make when missing), as a phrase for
 * a message ("/proc refuses new files: Permission denied"); NULL when they can. Probes by
 * creating and removing a file in the nearest folder that exists; creates no folder. *errnum
 * (may be NULL) gets the failing call's errno, 0 when a file is in the way. */
char *fs_why_not_creatable(const char *dir, int *errnum);
/* rm -rf that does not follow symlinks; 0 or -1. */
int fs_remove_tree(const char *path);
/* Finds name in the PATH-like list path_env (colon-separated). Heap string or NULL. */
char *fs_which_in(const char *name, const char *path_env);
char *fs_which(const char *name);
/* realpath() into a heap string, or NULL. */
char *fs_realpath(const char *path);
/* Why path is not a folder one can use, in words ("does not exist", "is a character device,
 * not a folder", "is a symlink to 'x', which does not exist", ...), or NULL when it is a folder
 * (itself or through a symlink). Heap string. */
char *fs_why_not_dir(const char *path);

#endif
