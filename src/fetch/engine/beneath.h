/* Folders reached beneath one root directory by descriptor, never by path string, and never
 * through a symlink: the unpacker creates every file, folder and link relative to the folder
 * descriptor this returns, so nothing an archive does can make a later entry land outside the
 * root, whatever names or links came before it.
 *
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) resolves a whole path in one call where the
 * kernel has it (Linux 5.6+); otherwise, and to create missing folders, the path is walked one
 * component at a time with openat(O_DIRECTORY | O_NOFOLLOW). */
#ifndef SB_FETCH_BENEATH_H
#define SB_FETCH_BENEATH_H

#include <stddef.h>

struct beneath {
    int root;        /* descriptor of the root folder */
    int use_openat2; /* cleared when the kernel lacks openat2 (or by a test) */
    char *last_rel;  /* the folder last resolved, cached: archives list a folder's files together */
    int last_fd;
};

/* Opens dir (which must exist and must not be a symlink) as the root. walk_only forces the
 * component-by-component walk. 0, or -1 with errno. */
int beneath_open(struct beneath *b, const char *dir, int walk_only);
void beneath_close(struct beneath *b);

/* A descriptor of the folder rel (a checked relative path, "" for the root), creating missing
 * folders (0755) when create is set. The descriptor belongs to b and stays valid until the
 * next call. -1 with errno when it cannot be reached: ELOOP when a component is a symlink,
 * ENOTDIR when it is some other non-folder, ENOENT when missing and create is 0, EXDEV for a
 * ".." component (never followed, even where it would stay inside); *bad_len (when
 * not NULL) then gets the length of the leading part of rel that ends at the culprit. */
int beneath_dir(struct beneath *b, const char *rel, int create, size_t *bad_len);

/* Splits rel at its last slash: *dir (heap, "" when rel has no slash) and the returned leaf,
 * which points into rel. */
const char *beneath_split(const char *rel, char **dir);

#endif
