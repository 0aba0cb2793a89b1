/* Lazy probes for the checks, and the result builders. */
#include "doctor/doctor.h"
#include "toolchain/toolkit.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/xdg.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

void ctx_init(struct doctor_ctx *ctx, const struct doctor_opts *opts)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->opts = opts;
    ctx->env.path = getenv("PATH");
    ctx->env.cc = getenv("CC");
    ctx->env.cxx = getenv("CXX");
    ctx->env.torch_arch_list = getenv("TORCH_CUDA_ARCH_LIST");
    ctx->env.max_jobs = getenv("MAX_JOBS");
    ctx->env.cache_dir = xdg_cache_dir();
    const char *tmp = getenv("TMPDIR");
    ctx->env.tmp_dir = tmp && *tmp ? tmp : "/tmp";
    ctx->env.cuda_visible_devices = getenv("CUDA_VISIBLE_DEVICES");
    ctx->env.system_include = "/usr/include";
}

void ctx_free(struct doctor_ctx *ctx)
{
    if (ctx->have_torch)
        torch_info_free(&ctx->torch);
    free(ctx->sage_dir);
    free(ctx->triton_dir);
    free(ctx->nvidia_dir);
    if (ctx->have_gpu)
        gpu_info_free(&ctx->gpu);
    if (ctx->have_home)
        cuda_home_free(&ctx->home);
    if (ctx->have_nvcc)
        nvcc_info_free(&ctx->nvcc);
    if (ctx->have_host) {
        free(ctx->host_config_path);
        host_choice_free(&ctx->host);
    }
    if (ctx->have_resources)
        resources_free(&ctx->res);
    if (ctx->have_nvcc_on_path)
        nvcc_info_free(&ctx->nvcc_on_path);
    if (ctx->have_disk)
        for (int i = 0; i < 3; i++)
            free(ctx->disk[i].dir);
    free((char *)ctx->env.cache_dir);
    memset(ctx, 0, sizeof *ctx);
}

/* With --torch-dir the packages beside torch are found in its folder; otherwise one python run
 * answers for torch and its neighbours at once (each python start costs tens of ms). */
const struct torch_info *ctx_torch(struct doctor_ctx *ctx)
{
    if (ctx->have_torch)
        return &ctx->torch;
    ctx->have_torch = 1;
    struct torch_info *t = &ctx->torch;
    if (ctx->opts->torch_dir) {
        probe_torch(NULL, ctx->opts->torch_dir, t);
        if (ctx->opts->python)
            t->python = xstrdup(ctx->opts->python);
        const char *names[] = {"sageattention", "triton", "nvidia"};
        char **slots[] = {&ctx->sage_dir, &ctx->triton_dir, &ctx->nvidia_dir};
        for (int i = 0; i < 3; i++) {
            char *p = t->site ? fs_join(t->site, names[i]) : NULL;
            if (p && fs_is_dir(p))
                *slots[i] = p;
            else
                free(p);
        }
        return t;
    }
    const char *python = toolkit_python(ctx->opts->python);
    const char *names[] = {"torch", "sageattention", "triton", "nvidia"};
    char *dirs[4] = {NULL, NULL, NULL, NULL};
    char *pyver = NULL, *error = NULL;
    int rc = python_find_packages(python, names, 4, dirs, &pyver, &error, TORCH_PROBE_TIMEOUT_MS);
    if (rc == 0 && dirs[0]) {
        probe_torch(NULL, dirs[0], t);
    } else {
        memset(t, 0, sizeof *t);
        t->error = rc == 0 ? xasprintf("torch is not installed for %s", python) : error;
        error = NULL;
    }
    t->python = xstrdup(python);
    t->python_version = pyver;
    ctx->sage_dir = dirs[1];
    ctx->triton_dir = dirs[2];
    ctx->nvidia_dir = dirs[3];
    free(dirs[0]);
    free(error);
    return t;
}

struct version ctx_torch_cuda(struct doctor_ctx *ctx)
{
    struct version v = {{0, 0, 0, 0}, 0};
    const struct torch_info *t = ctx_torch(ctx);
    if (t->found && t->cuda)
        version_parse(t->cuda, &v);
    return v;
}

const char *ctx_python(struct doctor_ctx *ctx)
{
    if (ctx->opts->python)
        return ctx->opts->python;
    if (ctx->have_torch && ctx->torch.python)
        return ctx->torch.python;
    return toolkit_python(NULL);
}

const struct gpu_info *ctx_gpu(struct doctor_ctx *ctx)
{
    if (!ctx->have_gpu) {
        ctx->have_gpu = 1;
        probe_gpu(GPU_PROBE_TIMEOUT_MS, &ctx->gpu);
    }
    return &ctx->gpu;
}

static int path_exists(const char *path, void *unused)
{
    (void)unused;
    return fs_exists(path);
}

const struct cuda_home *ctx_home(struct doctor_ctx *ctx)
{
    if (!ctx->have_home) {
        ctx->have_home = 1;
        char *nvcc = fs_which_in("nvcc", ctx->env.path);
        cuda_home_resolve(ctx->opts->cuda_home, getenv("CUDA_HOME"), getenv("CUDA_PATH"), nvcc,
                          path_exists, NULL, &ctx->home);
        free(nvcc);
    }
    return &ctx->home;
}

const struct nvcc_info *ctx_nvcc(struct doctor_ctx *ctx)
{
    const struct cuda_home *h = ctx_home(ctx);
    if (!h->path)
        return NULL;
    if (!ctx->have_nvcc) {
        ctx->have_nvcc = 1;
        char *p = nvcc_path_in(h->path);
        probe_nvcc(p, NVCC_PROBE_TIMEOUT_MS, &ctx->nvcc);
        free(p);
    }
    return &ctx->nvcc;
}

void ctx_host(struct doctor_ctx *ctx)
{
    if (ctx->have_host)
        return;
    ctx->have_host = 1;
    ctx->host_config_path = toolchain_read_limits(ctx_home(ctx)->path, &ctx->limits);
    toolchain_host_choose(&ctx->limits, toolchain_torch_host_default(ctx->env.cc), ctx->env.path,
                          &ctx->host);
}

const struct resources *ctx_resources(struct doctor_ctx *ctx)
{
    if (!ctx->have_resources) {
        ctx->have_resources = 1;
        probe_resources(".", &ctx->res);
    }
    return &ctx->res;
}

const struct nvcc_info *ctx_nvcc_on_path(struct doctor_ctx *ctx)
{
    if (!ctx->have_nvcc_on_path) {
        ctx->have_nvcc_on_path = 1;
        const struct cuda_home *h = ctx_home(ctx);
        const struct nvcc_info *n = ctx_nvcc(ctx);
        char *home_real = n ? fs_realpath(n->path) : NULL;
        char *path_real = h->nvcc_on_path ? fs_realpath(h->nvcc_on_path) : NULL;
        if (home_real && path_real && strcmp(home_real, path_real))
            probe_nvcc(h->nvcc_on_path, NVCC_PROBE_TIMEOUT_MS, &ctx->nvcc_on_path);
        free(home_real);
        free(path_real);
    }
    return ctx->nvcc_on_path.path ? &ctx->nvcc_on_path : NULL;
}

/* The nearest existing folder at or above path (the cache may not exist yet). */
static char *existing_parent(const char *path)
{
    char *p = xstrdup(path);
    while (!fs_is_dir(p) && strcmp(p, "/") && strcmp(p, ".")) {
        char *up = fs_dirname(p);
        free(p);
        p = up;
    }
    return p;
}

const struct disk_free *ctx_disk(struct doctor_ctx *ctx)
{
    if (ctx->have_disk)
        return ctx->disk;
    ctx->have_disk = 1;
    const char *paths[3] = {".", ctx->env.cache_dir, ctx->env.tmp_dir};
    const char *roles[3] = {"build_dir", "cache_dir", "tmp_dir"};
    for (int i = 0; i < 3; i++) {
        struct disk_free *d = &ctx->disk[i];
        d->role = roles[i];
        d->free_bytes = -1;
        if (!paths[i])
            continue;
        d->dir = existing_parent(paths[i]);
        struct statvfs vfs;
        if (statvfs(d->dir, &vfs) == 0)
            d->free_bytes = (long long)vfs.f_bavail * (long long)vfs.f_frsize;
    }
    return ctx->disk;
}

/* Length of the valid UTF-8 sequence at s, 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n = s[0] < 0x80             ? 1
               : (s[0] & 0xe0) == 0xc0 ? 2
               : (s[0] & 0xf0) == 0xe0 ? 3
               : (s[0] & 0xf8) == 0xf0 ? 4
                                       : 0;
    if (n == 2 && s[0] < 0xc2)
        return 0; /* overlong */
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* Summaries and evidence carry text from other programs (python's stderr, GPU names, paths):
 * one line of valid UTF-8, so the human rows stay rows and the JSON stays JSON. */
static void make_printable(char *s)
{
    for (unsigned char *p = (unsigned char *)s; *p;) {
        size_t n = utf8_len(p);
        if (n == 0) {
            *p++ = '?';
            continue;
        }
        if (n == 1 && (*p < 0x20 || *p == 0x7f))
            *p = ' ';
        p += n;
    }
}

/* Replaces *slot with the formatted text. */
static void set_formatted(char **slot, const char *fmt, va_list ap)
{
    struct strbuf sb = STRBUF_INIT;
    sb_vaddf(&sb, fmt, ap);
    free(*slot);
    *slot = sb_detach(&sb);
    make_printable(*slot);
}

void result_set(struct check_result *r, enum check_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_formatted(&r->summary, fmt, ap);
    va_end(ap);
    r->status = s;
}

void result_fix(struct check_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_formatted(&r->fix, fmt, ap);
    va_end(ap);
}

void result_ev(struct check_result *r, const char *key, const char *fmt, ...)
{
    int i = 0;
    while (i < r->nevidence && strcmp(r->evidence[i].key, key))
        i++;
    if (i == r->nevidence) {
        r->evidence = xrealloc(r->evidence, (size_t)(r->nevidence + 1) * sizeof *r->evidence);
        r->evidence[i].key = xstrdup(key);
        r->evidence[i].value = NULL;
        r->nevidence++;
    }
    va_list ap;
    va_start(ap, fmt);
    set_formatted(&r->evidence[i].value, fmt, ap);
    va_end(ap);
}

void result_free(struct check_result *r)
{
    free(r->summary);
    free(r->fix);
    for (int i = 0; i < r->nevidence; i++) {
        free(r->evidence[i].key);
        free(r->evidence[i].value);
    }
    free(r->evidence);
    memset(r, 0, sizeof *r);
}

const char *check_status_name(enum check_status s)
{
    static const char *const names[] = {"ok", "warn", "error", "skip"};
    return (unsigned)s < 4 ? names[s] : "error";
}
