#include "fetch_fix.h"
#include "fetch/sources/pypi_source.h"

#include <stdlib.h>
#include <string.h>

const char *fetch_fix_for(const char *error, const char *release, const char *source)
{
    if (!error)
        return NULL;
    /* download.c: "<component>: no mirror delivered <file>" -- the manifest was there (bundled
     * or fetched), so PyPI has everything it needs to serve the same release. */
    int archives_failed = strstr(error, "no mirror delivered") != NULL;
    char *refusal = release ? pypi_release_refusal(release) : NULL;
    int wheels_serve = release && !refusal;
    free(refusal);
    if (archives_failed && wheels_serve && source && !strcmp(source, "redist"))
        return "sagebuild fetch-cuda --source pypi   (the same release as NVIDIA's wheels from "
               "PyPI; or: --dry-run lists every URL and sha256 to download where the network "
               "allows, then --from DIR --offline; or --mirror URL)";
    if (strstr(error, "no mirror") || strstr(error, "offline"))
        return "sagebuild fetch-cuda --dry-run   (lists every URL and sha256: download them where "
               "the network allows, then sagebuild fetch-cuda --from DIR --offline; or add "
               "--mirror URL)";
    if (strstr(error, "cannot write") || strstr(error, "File too large") ||
        strstr(error, "No space left"))
        return "free disk space (about 300 MB for the prefix and 75 MB of cache), or pass "
               "--prefix DIR on another file system";
    if (strstr(error, "compile-and-link check"))
        return "sagebuild doctor host.compiler   (then: export CC=gcc-N CXX=g++-N, and run "
               "fetch-cuda again)";
    return NULL;
}
