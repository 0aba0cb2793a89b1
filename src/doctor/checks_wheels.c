#include "doctor/checks_wheels.h"
#include "doctor/fixes.h"
#include "util/fs.h"
#include "util/shquote.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *wheels_site_dir(const char *path)
{
    static const char *const sites[] = {"/site-packages/nvidia", "/dist-packages/nvidia"};
    for (size_t i = 0; path && i < 2; i++) {
        const char *hit = strstr(path, sites[i]);
        size_t after = hit ? (size_t)(hit - path) + strlen(sites[i]) : 0;
        if (hit && (path[after] == '\0' || path[after] == '/'))
            return xstrndup(path, (size_t)(hit - path) + strlen(sites[i]) - strlen("/nvidia"));
    }
    return NULL;
}

enum wheel_tree wheels_classify(const char *path, int has_nvcc, const char *lock_source,
                                int has_distinfo)
{
    if (lock_source && !strcmp(lock_source, "pypi"))
        return WHEEL_TREE_PREFIX;
    char *site = wheels_site_dir(path);
    if (site) {
        free(site);
        return has_nvcc ? WHEEL_TREE_SITE_COMPILER : WHEEL_TREE_SITE_RUNTIME;
    }
    if (!lock_source && has_distinfo && has_nvcc)
        return WHEEL_TREE_PREFIX;
    return WHEEL_TREE_NONE;
}

char *wheels_distinfo_label(const char *dirname)
{
    size_t n = strlen(dirname);
    const char *suffix = ".dist-info";
    size_t sl = strlen(suffix);
    if (n <= sl || strcmp(dirname + n - sl, suffix) || strncmp(dirname, "nvidia_", 7))
        return NULL;
    const char *dash = memchr(dirname, '-', n - sl);
    if (!dash)
        return NULL;
    char *project = xstrndup(dirname, (size_t)(dash - dirname));
    for (char *p = project; *p; p++)
        if (*p == '_')
            *p = '-';
    char *out =
        xasprintf("%s %.*s", project, (int)(n - sl - (size_t)(dash + 1 - dirname)), dash + 1);
    free(project);
    return out;
}

/* "nvidia-cuda-nvcc 13.0.88, nvidia-nvvm 13.0.88" for the nvidia dist-info folders in dir. */
static char *distinfo_list(const char *dir, int *count)
{
    struct strbuf b = STRBUF_INIT;
    *count = 0;
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char *label = wheels_distinfo_label(de->d_name);
        if (!label)
            continue;
        sb_addf(&b, "%s%s", (*count)++ ? ", " : "", label);
        free(label);
    }
    if (d)
        closedir(d);
    return sb_detach(&b);
}

static char *lock_source_of(const char *home)
{
    char *lock = fs_join(home, "sagebuild-lock.json");
    char *text = fs_read_file(lock, 1 << 20, NULL);
    free(lock);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "source");
    char *out = cJSON_IsString(s) ? xstrdup(s->valuestring) : NULL;
    cJSON_Delete(doc);
    free(text);
    return out;
}

/* The CUDA release to fetch: torch's, else this nvcc's, else the wheels' major (13). */
static char *fetch_fix(struct doctor_ctx *ctx, const char *prefix)
{
    struct version v = ctx_torch_cuda(ctx);
    const struct nvcc_info *n = ctx_nvcc(ctx);
    if (v.nparts == 0 && n && n->ran)
        v = n->version.release;
    char *qp = prefix ? shell_quote(prefix) : NULL;
    char *where = qp ? xasprintf(" --prefix %s", qp) : xstrdup("");
    char *env = qp ? xasprintf("sagebuild env --prefix %s", qp) : xstrdup("sagebuild env");
    char *fix;
    if (v.nparts && v.part[0] < 13)
        fix = xasprintf("unset CUDA_HOME CUDA_PATH && sagebuild fetch-cuda --cuda %d.%d%s && "
                        "eval \"$(%s)\"",
                        v.part[0], v.part[1], where, env);
    else if (v.nparts)
        fix = xasprintf("unset CUDA_HOME CUDA_PATH && sagebuild fetch-cuda --source auto --cuda "
                        "%d.%d%s%s && eval \"$(%s)\"",
                        v.part[0], v.part[1], where, prefix ? " --force" : "", env);
    else
        fix = xasprintf("unset CUDA_HOME CUDA_PATH && sagebuild fetch-cuda --source auto "
                        "--match-torch%s && eval \"$(%s)\"",
                        where, env);
    free(qp);
    free(where);
    free(env);
    return fix;
}

/* What a wheel-made prefix needs beyond the files toolkit.components checks. */
static void prefix_gaps(const char *home, struct strbuf *gaps)
{
    static const char *const needed[][2] = {
        {"lib64", "lib64 (torch links -L$CUDA_HOME/lib64)"},
        {"lib64/libcudart.so", "libcudart.so (torch links -lcudart; wheels ship libcudart.so.13)"},
        {"include/crt/host_config.h", "include/crt (the nvidia-cuda-crt wheel)"},
        {"nvvm/bin/cicc", "nvvm/bin/cicc (the nvidia-nvvm wheel)"},
    };
    for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++) {
        char *p = fs_join(home, needed[i][0]);
        if (!fs_exists(p))
            sb_addf(gaps, "%s%s", gaps->len ? "; " : "", needed[i][1]);
        free(p);
    }
    static const char *const programs[] = {"bin/nvcc", "bin/ptxas", "nvvm/bin/cicc"};
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++) {
        char *p = fs_join(home, programs[i]);
        if (fs_exists(p) && !fs_is_executable(p))
            sb_addf(gaps, "%s%s is not executable (a zip unpacked without its modes)",
                    gaps->len ? "; " : "", programs[i]);
        free(p);
    }
}

void check_toolkit_wheels(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct cuda_home *h = ctx_home(ctx);
    ctx_torch(ctx); /* fills ctx->nvidia_dir: pip's wheels beside torch */
    if (ctx->nvidia_dir)
        result_ev(r, "pip_nvidia_dir", "%s", ctx->nvidia_dir);
    if (!h->path || !fs_is_dir(h->path)) {
        result_set(r, CHECK_SKIP, "no CUDA_HOME to look at");
        return;
    }
    char *nvcc = fs_join(h->path, "bin/nvcc");
    int has_nvcc = fs_exists(nvcc);
    free(nvcc);
    char *lock_source = lock_source_of(h->path);
    char *distinfo = fs_join(h->path, "dist-info");
    enum wheel_tree kind = wheels_classify(h->path, has_nvcc, lock_source, fs_is_dir(distinfo));
    char *site = wheels_site_dir(h->path);
    int nwheels = 0;
    char *wheels = distinfo_list(kind == WHEEL_TREE_PREFIX ? distinfo : site, &nwheels);
    if (nwheels)
        result_ev(r, "wheels", "%s", wheels);
    if (lock_source)
        result_ev(r, "lock_source", "%s", lock_source);
    result_ev(r, "cuda_home", "%s", h->path);
    struct strbuf gaps = STRBUF_INIT;
    switch (kind) {
    case WHEEL_TREE_NONE:
        result_set(r, CHECK_SKIP, "CUDA_HOME=%s is not made from PyPI wheels", h->path);
        break;
    case WHEEL_TREE_PREFIX:
        prefix_gaps(h->path, &gaps);
        if (gaps.len) {
            result_set(r, CHECK_ERROR,
                       "CUDA_HOME=%s was made from NVIDIA's PyPI wheels but lacks: %s", h->path,
                       sb_str(&gaps));
            r->fix = fetch_fix(ctx, h->path);
        } else {
            result_set(r, CHECK_OK,
                       "CUDA_HOME=%s was made from NVIDIA's PyPI wheels (%s) and has what torch "
                       "and nvcc need",
                       h->path, nwheels ? wheels : "no dist-info kept");
        }
        break;
    case WHEEL_TREE_SITE_RUNTIME:
        result_set(r, CHECK_ERROR,
                   "CUDA_HOME=%s is pip's nvidia-* packages%s%s%s: the runtime libraries torch "
                   "loads, not a compiler toolkit (no nvcc, cicc or crt headers); extensions "
                   "cannot be built with it",
                   h->path, nwheels ? " (" : "", nwheels ? wheels : "", nwheels ? ")" : "");
        r->fix = fetch_fix(ctx, NULL);
        break;
    case WHEEL_TREE_SITE_COMPILER:
        prefix_gaps(h->path, &gaps);
        result_set(r, gaps.len ? CHECK_ERROR : CHECK_WARN,
                   "CUDA_HOME=%s is NVIDIA's compiler wheels as pip installed them in "
                   "site-packages%s%s; pip may change or remove it with any install, and torch "
                   "expects a toolkit's layout",
                   h->path, gaps.len ? ", which lacks: " : "", sb_str(&gaps));
        r->fix = fetch_fix(ctx, NULL);
        break;
    }
    sb_free(&gaps);
    free(wheels);
    free(site);
    free(distinfo);
    free(lock_source);
}
