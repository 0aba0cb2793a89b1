/* The toolkit torch would use: toolkit.cuda_home (found as torch finds it; pip's runtime wheels
 * are not a toolkit), toolkit.nvcc (it runs), toolkit.version_match (against torch's CUDA) and
 * toolkit.components (nvcc, cicc, libdevice, crt, cudart, cccl, the libcuda stub). Consistency,
 * archs and the driver's PTX limit are in checks_toolkit_fit.c. */
#include "doctor/doctor.h"
#include "doctor/fixes.h"
#include "doctor/rules.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

/* The CUDA version to fetch: torch's when known, else the toolkit's own. */
static struct version wanted_cuda(struct doctor_ctx *ctx)
{
    struct version v = ctx_torch_cuda(ctx);
    const struct nvcc_info *n = ctx_nvcc(ctx);
    if (v.nparts == 0 && n && n->ran)
        v = n->version.release;
    return v;
}

void check_toolkit_cuda_home(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct cuda_home *h = ctx_home(ctx);
    struct version want = wanted_cuda(ctx);
    result_ev(r, "rule", "%s", cuda_home_rule_name(h->rule));
    if (h->nvcc_on_path)
        result_ev(r, "nvcc_on_path", "%s", h->nvcc_on_path);
    if (ctx->nvidia_dir)
        result_ev(r, "pip_nvidia_wheels", "%s (runtime libraries only)", ctx->nvidia_dir);
    if (!h->path) {
        result_set(r, CHECK_ERROR,
                   "no CUDA toolkit: CUDA_HOME and CUDA_PATH unset, no nvcc on PATH, no %s "
                   "('CUDA was not found on the system')",
                   CUDA_HOME_DEFAULT_PATH);
        r->fix = fix_fetch_cuda(want.nparts ? &want : NULL);
        return;
    }
    result_ev(r, "cuda_home", "%s", h->path);
    char *nvcc = nvcc_path_in(h->path);
    int has_nvcc = fs_exists(nvcc);
    free(nvcc);
    if (rule_is_pip_runtime_dir(h->path, has_nvcc)) {
        result_set(r, CHECK_ERROR,
                   "CUDA_HOME=%s (%s) is pip's nvidia-* runtime wheels: libraries only, no nvcc, "
                   "cicc or headers%s",
                   h->path, cuda_home_rule_name(h->rule),
                   strstr(h->path, "cuda_nvcc") ? " (CUDA 12's nvcc wheel ships only ptxas)" : "");
        char *fetch = fix_fetch_cuda(want.nparts ? &want : NULL);
        result_fix(r, "unset CUDA_HOME CUDA_PATH && %s", fetch);
        free(fetch);
        return;
    }
    char *not_dir = fs_why_not_dir(h->path);
    if (not_dir) {
        /* /dev/zero or a FIFO is there, not missing: say what it is. */
        result_set(r, CHECK_ERROR, "CUDA_HOME=%s (%s) %s", h->path, cuda_home_rule_name(h->rule),
                   not_dir);
        free(not_dir);
        char *fetch = fix_fetch_cuda(want.nparts ? &want : NULL);
        if (h->rule == CUDA_HOME_FROM_CUDA_HOME || h->rule == CUDA_HOME_FROM_CUDA_PATH)
            result_fix(r, "unset CUDA_HOME CUDA_PATH && %s", fetch);
        else
            result_fix(r, "%s", fetch);
        free(fetch);
        return;
    }
    /* A toolkit laid out from NVIDIA's PyPI wheels keeps their dist-info (issue 5). */
    char *distinfo = fs_join(h->path, "dist-info");
    if (fs_is_dir(distinfo))
        result_ev(r, "layout", "made from NVIDIA's PyPI wheels (%s)", distinfo);
    free(distinfo);
    result_set(r, CHECK_OK, "CUDA_HOME=%s (from %s)", h->path, cuda_home_rule_name(h->rule));
}

void check_toolkit_nvcc(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct nvcc_info *n = ctx_nvcc(ctx);
    if (!n || !fs_is_dir(ctx_home(ctx)->path)) {
        result_set(r, CHECK_SKIP, "no CUDA_HOME to look in");
        return;
    }
    struct version want = wanted_cuda(ctx);
    result_ev(r, "path", "%s", n->path);
    result_ev(r, "nvcc_ms", "%ld", n->elapsed_ms);
    if (!n->ran) {
        result_set(r, CHECK_ERROR, "%s", n->error ? n->error : "nvcc did not run");
        if (n->error)
            result_ev(r, "error", "%s", n->error);
        r->fix = fix_fetch_cuda(want.nparts ? &want : NULL);
        return;
    }
    char vb[32], fb[32];
    result_ev(r, "release", "%s", version_str(&n->version.release, vb, sizeof vb));
    if (n->version.full.nparts)
        result_ev(r, "version", "%s", version_str(&n->version.full, fb, sizeof fb));
    if (n->archs) {
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < n->narchs; i++)
            sb_addf(&sb, "%s%s", i ? " " : "", n->archs[i]);
        result_ev(r, "gpu_archs", "%s", sb_str(&sb));
        sb_free(&sb);
    }
    result_set(r, CHECK_OK, "nvcc %s%s%s", version_str(&n->version.release, vb, sizeof vb),
               n->version.full.nparts ? ", V" : "",
               n->version.full.nparts ? version_str(&n->version.full, fb, sizeof fb) : "");
}

void check_toolkit_version_match(struct doctor_ctx *ctx, struct check_result *r)
{
    struct version cuda = ctx_torch_cuda(ctx);
    const struct nvcc_info *n = ctx_nvcc(ctx);
    if (cuda.nparts == 0 || !n || !n->ran) {
        result_set(r, CHECK_SKIP, cuda.nparts ? "no working nvcc" : "no CUDA build of torch");
        return;
    }
    char tb[32], nb[32];
    version_str(&cuda, tb, sizeof tb);
    version_str(&n->version.release, nb, sizeof nb);
    result_ev(r, "torch_cuda", "%s", tb);
    result_ev(r, "nvcc", "%s", nb);
    switch (rule_cuda_mismatch(&cuda, &n->version.release)) {
    case 2:
        result_set(r, CHECK_ERROR,
                   "nvcc %s and torch's CUDA %s differ in major version: torch raises 'The "
                   "detected CUDA version (%s) mismatches the version that was used to compile "
                   "PyTorch (%s)'",
                   nb, tb, nb, tb);
        r->fix = fix_fetch_cuda(&cuda);
        return;
    case 1:
        result_set(r, CHECK_WARN,
                   "nvcc %s and torch's CUDA %s differ in minor version: torch only warns, but "
                   "the extension then links a CUDA %s runtime into a CUDA %s torch",
                   nb, tb, nb, tb);
        r->fix = fix_fetch_cuda(&cuda);
        return;
    default:
        result_set(r, CHECK_OK, "nvcc %s matches torch's CUDA %s", nb, tb);
    }
}

struct component {
    const char *name;
    const char *why; /* the redist component that ships it */
    const char *rel[3];
    int executable;
    int optional; /* missing is a warning, not an error */
};

static const struct component components[] = {
    {"nvcc", "cuda_nvcc", {"bin/nvcc"}, 1, 0},
    /* CUDA 13's PyPI wheels keep cicc in bin/ and only libdevice under nvvm/. */
    {"cicc", "libnvvm (cuda_nvcc before 13.0)", {"nvvm/bin/cicc", "bin/cicc"}, 1, 0},
    {"libdevice", "libnvvm", {"nvvm/libdevice/libdevice.10.bc"}, 0, 0},
    {"crt/host_config.h", "cuda_crt (cuda_nvcc before 13.0)", {"include/crt/host_config.h"}, 0, 0},
    {"cuda_runtime.h", "cuda_cudart", {"include/cuda_runtime.h"}, 0, 0},
    {"nv/target", "cuda_cccl", {"include/nv/target", "include/cccl/nv/target"}, 0, 0},
    {"libcudart", "cuda_cudart", {"lib64/libcudart.so", "lib/libcudart.so"}, 0, 0},
    {"libcuda stub",
     "cuda_cudart (lib/stubs/libcuda.so, for -lcuda)",
     {"lib64/stubs/libcuda.so", "lib/stubs/libcuda.so"},
     0,
     1},
};

void check_toolkit_components(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct cuda_home *h = ctx_home(ctx);
    if (!h->path || !fs_is_dir(h->path)) {
        result_set(r, CHECK_SKIP, "no CUDA_HOME to look in");
        return;
    }
    struct strbuf missing = STRBUF_INIT, optional = STRBUF_INIT;
    int nmissing = 0;
    for (size_t i = 0; i < sizeof components / sizeof components[0]; i++) {
        const struct component *c = &components[i];
        int nrel = 0;
        while (nrel < 3 && c->rel[nrel])
            nrel++;
        char *p = cuda_home_find_file(h->path, c->rel, nrel);
        int ok = p && (!c->executable || fs_is_executable(p));
        result_ev(r, c->name, "%s", ok ? p : p ? "not executable" : "missing");
        if (!ok) {
            struct strbuf *sb = c->optional ? &optional : &missing;
            sb_addf(sb, "%s%s (%s)", sb->len ? ", " : "", c->name, c->why);
            nmissing += !c->optional;
        }
        free(p);
    }
    struct version want = wanted_cuda(ctx);
    if (nmissing) {
        result_set(r, CHECK_ERROR, "%s lacks %s", h->path, sb_str(&missing));
        r->fix = fix_fetch_cuda(want.nparts ? &want : NULL);
    } else if (optional.len) {
        result_set(r, CHECK_WARN, "%s lacks %s: linking -lcuda ('cannot find -lcuda') fails",
                   h->path, sb_str(&optional));
        r->fix = fix_fetch_cuda(want.nparts ? &want : NULL);
    } else {
        result_set(r, CHECK_OK, "nvcc, cicc, libdevice, crt, cudart, cccl all present");
    }
    sb_free(&missing);
    sb_free(&optional);
}
