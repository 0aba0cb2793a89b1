#include "probe/cuda_home.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

void cuda_home_resolve(const char *flag, const char *env_cuda_home, const char *env_cuda_path,
                       const char *which_nvcc, cuda_home_exists_fn exists, void *ctx,
                       struct cuda_home *out)
{
    memset(out, 0, sizeof *out);
    out->nvcc_on_path = which_nvcc ? xstrdup(which_nvcc) : NULL;
    if (flag && *flag) {
        out->path = xstrdup(flag);
        out->rule = CUDA_HOME_FROM_FLAG;
        return;
    }
    /* os.environ.get('CUDA_HOME') or os.environ.get('CUDA_PATH') */
    const char *env = NULL;
    enum cuda_home_rule env_rule = CUDA_HOME_NOT_FOUND;
    if (env_cuda_home && *env_cuda_home) {
        env = env_cuda_home;
        env_rule = CUDA_HOME_FROM_CUDA_HOME;
    } else if (env_cuda_path) {
        env = env_cuda_path;
        env_rule = CUDA_HOME_FROM_CUDA_PATH;
    }
    if (env) {
        /* torch keeps "" here (it is not None) and then treats it as no toolkit. */
        if (*env) {
            out->path = xstrdup(env);
            out->rule = env_rule;
        }
        return;
    }
    if (which_nvcc && *which_nvcc) {
        char *bin = fs_dirname(which_nvcc);
        out->path = fs_dirname(bin);
        out->rule = CUDA_HOME_FROM_NVCC;
        free(bin);
        return;
    }
    if (exists && exists(CUDA_HOME_DEFAULT_PATH, ctx)) {
        out->path = xstrdup(CUDA_HOME_DEFAULT_PATH);
        out->rule = CUDA_HOME_FROM_DEFAULT;
    }
}

static int real_exists(const char *path, void *ctx)
{
    (void)ctx;
    return fs_exists(path);
}

void probe_cuda_home(const char *flag, struct cuda_home *out)
{
    char *nvcc = fs_which("nvcc");
    cuda_home_resolve(flag, getenv("CUDA_HOME"), getenv("CUDA_PATH"), nvcc, real_exists, NULL, out);
    free(nvcc);
}

void cuda_home_free(struct cuda_home *h)
{
    free(h->path);
    free(h->nvcc_on_path);
    memset(h, 0, sizeof *h);
}

const char *cuda_home_rule_name(enum cuda_home_rule r)
{
    switch (r) {
    case CUDA_HOME_FROM_FLAG:
        return "--cuda-home";
    case CUDA_HOME_FROM_CUDA_HOME:
        return "$CUDA_HOME";
    case CUDA_HOME_FROM_CUDA_PATH:
        return "$CUDA_PATH";
    case CUDA_HOME_FROM_NVCC:
        return "nvcc on PATH";
    case CUDA_HOME_FROM_DEFAULT:
        return "/usr/local/cuda";
    default:
        return "not found";
    }
}

char *cuda_home_find_file(const char *home, const char *const *rel, int nrel)
{
    for (int i = 0; i < nrel; i++) {
        char *p = fs_join(home, rel[i]);
        if (fs_exists(p))
            return p;
        free(p);
    }
    char *targets = fs_join(home, "targets");
    DIR *d = opendir(targets);
    struct dirent *de;
    char *found = NULL;
    while (d && !found && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        for (int i = 0; i < nrel && !found; i++) {
            char *p = xasprintf("%s/%s/%s", targets, de->d_name, rel[i]);
            if (fs_exists(p))
                found = p;
            else
                free(p);
        }
    }
    if (d)
        closedir(d);
    free(targets);
    return found;
}
