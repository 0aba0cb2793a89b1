/* The one command that most often gets fetch-cuda past an error: printed as "fix:" and carried
 * in --json for readers such as `all`. */
#ifndef SB_FETCH_FIX_H
#define SB_FETCH_FIX_H

#include "fetch/engine/fetch_error.h"

/* Pure: the fix for a failure of this kind, given the release being fetched (NULL when not
 * known yet) and the source that failed ("redist", "pypi"; "auto" when both were tried). When
 * no mirror delivered NVIDIA's archives and the release is CUDA 13 or newer, NVIDIA's wheels
 * from PyPI come first: they are one flag away and usually reachable where NVIDIA's site is
 * not. NULL when the kind has no general fix (the message itself says what to change). */
const char *fetch_fix_for(enum fetch_error_kind kind, const char *release, const char *source);

#endif
