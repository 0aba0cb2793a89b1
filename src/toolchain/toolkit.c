#include "toolchain/toolkit.h"
#include "probe/nvcc.h"
#include "probe/torch.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/version.h"
#include "util/xdg.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static int fetched_release(const char *name, struct version *v)
{
    size_t pl = strlen(TOOLKIT_FETCHED_PREFIX);
    return !strncmp(name, TOOLKIT_FETCHED_PREFIX, pl) && version_parse_strict(name + pl, v) == 0 &&
           v->nparts >= 2;
}

int toolkit_pick_fetched(const char *const *names, int n, const char *torch_cuda,
                         enum toolkit_pick_rule *rule)
{
    struct version want;
    int know_torch = torch_cuda && version_parse_strict(torch_cuda, &want) == 0;
    int best = -1, best_matches = 0, candidates = 0;
    struct version best_v = {{0}, 0};
    for (int i = 0; i < n; i++) {
        struct version v;
        if (!fetched_release(names[i], &v))
            continue;
        candidates++;
        int matches =
            know_torch && v.nparts >= want.nparts && version_cmp_n(&v, &want, want.nparts) == 0;
        if (best < 0 || matches > best_matches ||
            (matches == best_matches && version_cmp(&v, &best_v) > 0)) {
            best = i;
            best_v = v;
            best_matches = matches;
        }
    }
    if (rule)
        *rule = best < 0          ? TOOLKIT_PICK_NONE
                : candidates == 1 ? TOOLKIT_PICK_ONLY
                : best_matches    ? TOOLKIT_PICK_TORCH
                : know_torch      ? TOOLKIT_PICK_NEWEST
                                  : TOOLKIT_PICK_NO_TORCH;
    return best;
}

const char *toolkit_pick_rule_text(enum toolkit_pick_rule rule)
{
    switch (rule) {
    case TOOLKIT_PICK_ONLY:
        return "the only fetched toolkit";
    case TOOLKIT_PICK_TORCH:
        return "the fetched toolkit matching torch's CUDA";
    case TOOLKIT_PICK_NEWEST:
        return "the newest fetched toolkit (none matches torch's CUDA)";
    case TOOLKIT_PICK_NO_TORCH:
        return "the newest fetched toolkit (torch's CUDA unknown)";
    default:
        return "no fetched toolkit";
    }
}

char *toolkit_fetched_prefix(const char *release)
{
    char *data = xdg_data_dir();
    if (!data)
        return NULL;
    char *name = xasprintf("%s%s", TOOLKIT_FETCHED_PREFIX, release);
    char *p = fs_join(data, name);
    free(name);
    free(data);
    return p;
}

/* The names under dir of the fetched toolkits that hold an executable nvcc. */
static char **list_fetched(const char *dir, int *n)
{
    *n = 0;
    char **names = NULL;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        struct version v;
        if (!fetched_release(de->d_name, &v))
            continue;
        char *prefix = fs_join(dir, de->d_name);
        char *nvcc = nvcc_path_in(prefix);
        if (fs_is_executable(nvcc)) {
            names = xrealloc(names, (size_t)(*n + 1) * sizeof *names);
            names[(*n)++] = xstrdup(de->d_name);
        }
        free(nvcc);
        free(prefix);
    }
    if (d)
        closedir(d);
    return names;
}

char *toolkit_find_fetched(const char *data_dir, const char *python, enum toolkit_pick_rule *rule)
{
    char *own = data_dir ? NULL : xdg_data_dir();
    const char *dir = data_dir ? data_dir : own;
    int n = 0;
    char **names = dir ? list_fetched(dir, &n) : NULL;
    char *torch = n > 1 ? toolkit_torch_cuda(python, NULL) : NULL;
    int best = toolkit_pick_fetched((const char *const *)names, n, torch, rule);
    char *found = best >= 0 ? fs_join(dir, names[best]) : NULL;
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(torch);
    free(own);
    return found;
}

const char *toolkit_python_pick(const char *flag_python, const char *env_python)
{
    if (flag_python)
        return flag_python;
    /* SAGEBUILD_PYTHON= (set but empty) is how a shell clears it for one command */
    return env_python && *env_python ? env_python : "python3";
}

const char *toolkit_python(const char *flag_python)
{
    return toolkit_python_pick(flag_python, getenv("SAGEBUILD_PYTHON"));
}

char *toolkit_torch_cuda(const char *python, char **note)
{
    struct torch_info ti;
    memset(&ti, 0, sizeof ti);
    char *out = NULL;
    if (probe_torch(toolkit_python(python), NULL, &ti) == 0 && ti.cuda) {
        out = xstrdup(ti.cuda);
    } else if (note) {
        *note = ti.found ? xasprintf("torch %s at %s is not a CUDA build",
                                     ti.version ? ti.version : "?", ti.dir ? ti.dir : "?")
                         : xasprintf("torch was not found (%s)", ti.error ? ti.error : "no python");
    }
    torch_info_free(&ti);
    return out;
}
