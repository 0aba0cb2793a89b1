#include "fetch_fix.h"
#include "fetch/sources/pypi_source.h"

#include <stdlib.h>
#include <string.h>

#define FIX_FROM_PYPI                                                                              \
    "sagebuild fetch-cuda --source pypi   (the same release as NVIDIA's wheels from PyPI; or: "    \
    "--dry-run lists every URL and sha256 to download where the network allows, then --from "      \
    "DIR --offline; or --mirror URL)"
#define FIX_DOWNLOAD_ELSEWHERE                                                                     \
    "sagebuild fetch-cuda --dry-run   (lists every URL and sha256: download them where the "       \
    "network allows, then sagebuild fetch-cuda --from DIR --offline; or add --mirror URL)"
/* No manifest to plan from: a dry run would stop at the same point, so the way out is the file
 * itself (or a mirror that has it). */
#define FIX_NO_MANIFEST                                                                            \
    "sagebuild fetch-cuda --manifest FILE   (FILE: redistrib_X.Y.Z.json of that release, from "    \
    "NVIDIA's cuda/redist folder where the network allows; or add --mirror URL that has it)"
#define FIX_DISK                                                                                   \
    "free disk space (about 300 MB for the prefix and 75 MB of cache), or pass --prefix DIR on "   \
    "another file system"
#define FIX_HOST_COMPILER                                                                          \
    "sagebuild doctor host.compiler   (then: export CC=gcc-N CXX=g++-N, and run fetch-cuda "       \
    "again)"

/* The manifest was there (bundled or fetched) when archives could not be downloaded, so PyPI
 * has everything it needs to serve the same release, unless PyPI was what just failed. */
static int wheels_would_serve(const char *release, const char *source)
{
    if (!release || !source || strcmp(source, "redist"))
        return 0;
    char *refusal = pypi_release_refusal(release);
    int serves = refusal == NULL;
    free(refusal);
    return serves;
}

const char *fetch_fix_for(enum fetch_error_kind kind, const char *release, const char *source)
{
    switch (kind) {
    case FETCH_ERR_UNDELIVERED:
        return wheels_would_serve(release, source) ? FIX_FROM_PYPI : FIX_DOWNLOAD_ELSEWHERE;
    case FETCH_ERR_NO_MANIFEST: /* the wheels' versions come from it: PyPI cannot help */
        return FIX_NO_MANIFEST;
    case FETCH_ERR_OFFLINE:
        return FIX_DOWNLOAD_ELSEWHERE;
    case FETCH_ERR_DISK:
        return FIX_DISK;
    case FETCH_ERR_POSTCHECK:
        return FIX_HOST_COMPILER;
    case FETCH_ERR_NONE:
    case FETCH_ERR_OTHER:
    case FETCH_ERR_NOT_FOUND:
    case FETCH_ERR_MISMATCH:
    case FETCH_ERR_UNSAFE_ARCHIVE:
    case FETCH_ERR_INTERRUPTED:
        return NULL;
    }
    return NULL;
}
