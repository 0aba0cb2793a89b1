#include "util/xdg.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

char *xdg_dir_from(const char *xdg_value, const char *home, const char *fallback_rel)
{
    /* The XDG spec says relative values are invalid and must be ignored. */
    if (xdg_value && xdg_value[0] == '/')
        return fs_join(xdg_value, "sagebuild");
    if (!home || !*home)
        return NULL;
    char *base = fs_join(home, fallback_rel);
    char *dir = fs_join(base, "sagebuild");
    free(base);
    return dir;
}

static const char *home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && *h)
        return h;
    struct passwd *pw = getpwuid(getuid());
    return pw ? pw->pw_dir : NULL;
}

char *xdg_cache_dir(void)
{
    const char *own = getenv("SAGEBUILD_CACHE");
    if (own && *own)
        return xstrdup(own);
    return xdg_dir_from(getenv("XDG_CACHE_HOME"), home_dir(), ".cache");
}

char *xdg_data_dir(void)
{
    return xdg_dir_from(getenv("XDG_DATA_HOME"), home_dir(), ".local/share");
}
