#include "util/datadir.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <unistd.h>

char **datadir_candidates(const char *env_value, const char *exe_path)
{
    char **list = xcalloc(4, sizeof *list);
    int n = 0;
    if (env_value && *env_value)
        list[n++] = xstrdup(env_value);
    if (exe_path && *exe_path) {
        char *bindir = fs_dirname(exe_path);
        char *top = fs_dirname(bindir);
        list[n++] = fs_join(top, "share/sagebuild");
        list[n++] = top; /* the source tree: bin/sagebuild beside kernels/ */
        free(bindir);
    }
    list[n] = NULL;
    return list;
}

void datadir_free_list(char **list)
{
    if (!list)
        return;
    for (char **p = list; *p; p++)
        free(*p);
    free(list);
}

char *datadir_find(const char *what)
{
    char *exe = fs_realpath("/proc/self/exe");
    char **cands = datadir_candidates(getenv("SAGEBUILD_DATADIR"), exe);
    free(exe);
    char *found = NULL;
    for (char **p = cands; *p && !found; p++) {
        char *dir = fs_join(*p, what);
        if (fs_is_dir(dir))
            found = dir;
        else
            free(dir);
    }
    datadir_free_list(cands);
    return found;
}
