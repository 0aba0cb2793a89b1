/* Rules that keep archive contents inside the folder they are unpacked into. Pure functions:
 * they judge names, never touch the disk. */
#ifndef SB_FETCH_PATHSAFE_H
#define SB_FETCH_PATHSAFE_H

/* NULL when rel is a safe relative path: not empty, not absolute, no "..", no NUL-like oddities
 * (control characters, backslashes), no component over 255 bytes. Otherwise a static reason. "."
 * components and doubled slashes are allowed; path_normalize removes them. */
const char *path_rel_check(const char *rel);

/* Whether a name a manifest or index controls may become a file under the download cache: a
 * safe relative path (path_rel_check) with no component starting with '.' (no ".", "..", and
 * never the cache's own hidden files such as .lock), not ending in ".part" (a download in
 * progress), no component over 255 bytes and at most 1024 bytes in all. NULL or a reason. */
const char *path_cache_name_check(const char *rel);

/* Drops `strip` leading components from an archive entry name and normalizes the rest
 * ("a/./b//c/" → "b/c" with strip 1). Heap string; "" when nothing is left (the top folder
 * itself); NULL with *why set when the name is unsafe (absolute, "..", control characters, a
 * component over 255 bytes, more than 4095 bytes in all). */
char *path_strip(const char *name, int strip, const char **why);

/* Whether a symlink at rel (already stripped and safe) pointing at target stays inside the
 * tree: target must be relative, and walking it from rel's directory must never climb above
 * the tree's root. NULL if it stays inside, else a static reason. */
const char *path_link_check(const char *rel, const char *target);

#endif
