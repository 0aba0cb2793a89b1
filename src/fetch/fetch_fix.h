/* The one command that most often gets fetch-cuda past an error: printed as "fix:" and carried
 * in --json for readers such as `all`. */
#ifndef SB_FETCH_FIX_H
#define SB_FETCH_FIX_H

/* Pure: the fix for error (fetch-cuda's own wording), given the release being fetched (NULL
 * when not known yet) and the source that failed ("redist", "pypi"; "auto" when both were
 * tried). When NVIDIA's archives could not be downloaded and the release is CUDA 13 or newer,
 * NVIDIA's wheels from PyPI come first: they are one flag away and usually reachable where
 * NVIDIA's site is not. NULL when there is no general fix. */
const char *fetch_fix_for(const char *error, const char *release, const char *source);

#endif
