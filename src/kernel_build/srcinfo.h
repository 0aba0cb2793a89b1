/* What the kernels were built from: a content hash of the source tree (so a second build with
 * nothing changed can be recognised without running CMake) and the git revision when the
 * sources are a checkout. */
#ifndef SB_BUILD_SRCINFO_H
#define SB_BUILD_SRCINFO_H

/* Pure: whether a top-level entry of the kernels folder is build input. Output folders
 * (build*, cmake-build*), bench results and hidden files are not. */
int srcinfo_is_input(const char *top_level_name);

/* SHA-256 (hex) over every input file's relative path and content, in sorted order; symlinks
 * are hashed by their target text. NULL with *error (heap) when the tree cannot be read. */
char *srcinfo_hash_tree(const char *dir, char **error);

/* `git rev-parse HEAD` in dir, with "-dirty" when `git status --porcelain -- .` lists
 * changes; NULL when dir is not in a checkout or git is missing. Both calls have a timeout. */
char *srcinfo_git_revision(const char *dir);

#endif
