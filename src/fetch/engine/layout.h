/* Turning unpacked redist components into one toolkit prefix that nvcc, torch's extension
 * builder and ordinary Makefiles/CMake accept as CUDA_HOME. */
#ifndef SB_FETCH_LAYOUT_H
#define SB_FETCH_LAYOUT_H

#include "fetch_error.h"
#include "util/strbuf.h"

/* Moves every entry of the tree src into dst (renames, so it is cheap on one file system).
 * Folders present in both are merged; a file present in both is replaced (archives share only
 * identical files such as LICENSE). src is removed. 0 or -1 with *err. */
int layout_merge(const char *src, const char *dst, struct fetch_error *err);

/* What a merged redist tree still lacks to work as a toolkit, done in place:
 *  - lib64 -> lib: nvcc.profile links with -L$(TOP)/lib64 and torch with -L$CUDA_HOME/lib64,
 *    while redist archives ship lib/;
 *  - include/nv -> cccl/nv when CCCL lives only under include/cccl (CUDA 13), so host
 *    compilers that include cuda_fp16.h find <nv/target> with -I$CUDA_HOME/include alone;
 *  - version.json naming the release and component versions, as a full install has it.
 * Each change made is appended to log as one line. 0 or -1 with *err. */
int layout_fixup(const char *root, const char *release, const char *const *components,
                 const char *const *versions, int n, struct strbuf *log, struct fetch_error *err);

/* Checks the files a usable toolkit must have under root; returns the number missing and appends
 * their names (comma separated) to missing. */
int layout_check(const char *root, struct strbuf *missing);

#endif
