/* torch itself and the driver: torch.found, torch.cuda, torch.triton, driver.present,
 * driver.gpus, driver.torch (a driver too old for torch's CUDA) and torch.gpu_arch (a torch
 * wheel with no code for a GPU here). */
#include "doctor/doctor.h"
#include "doctor/fixes.h"
#include "doctor/rules.h"
#include "util/shquote.h"
#include "util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void check_torch_found(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct torch_info *t = ctx_torch(ctx);
    if (t->python)
        result_ev(r, "python", "%s", t->python);
    if (t->python_version)
        result_ev(r, "python_version", "%s", t->python_version);
    if (t->dir)
        result_ev(r, "dir", "%s", t->dir);
    if (t->found) {
        result_set(r, CHECK_OK, "torch %s", t->version);
        result_ev(r, "version", "%s", t->version);
        if (t->git_version)
            result_ev(r, "git_version", "%s", t->git_version);
        return;
    }
    if (t->error)
        result_ev(r, "error", "%s", t->error);
    if (t->dir) { /* the package is there but version.py is not torch's */
        result_set(r, CHECK_ERROR, "torch at %s is damaged: %s", t->dir, t->error);
        r->fix = fix_install_torch(ctx, 0, 1);
        return;
    }
    if (t->python_version) { /* python ran: torch is simply not installed */
        result_set(r, CHECK_WARN, "torch is not installed for %s: CUDA extensions need it",
                   t->python);
        r->fix = fix_install_torch(ctx, 0, 0);
        return;
    }
    result_set(r, CHECK_WARN, "could not ask python where torch is: %s",
               t->error ? t->error : "unknown error");
    result_fix(r, "sagebuild doctor --python /path/to/venv/bin/python");
}

void check_torch_cuda(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct torch_info *t = ctx_torch(ctx);
    if (!t->found) {
        result_set(r, CHECK_SKIP, "no torch to check");
        return;
    }
    if (t->cuda) {
        result_set(r, CHECK_OK, "torch %s is built for CUDA %s", t->version, t->cuda);
        result_ev(r, "cuda", "%s", t->cuda);
        return;
    }
    if (t->hip) {
        result_set(r, CHECK_ERROR,
                   "torch %s is a ROCm build (hip %s): it cannot build CUDA "
                   "extensions",
                   t->version, t->hip);
        result_ev(r, "hip", "%s", t->hip);
    } else {
        result_set(r, CHECK_ERROR,
                   "torch %s is a CPU-only build (torch.version.cuda is None): no CUDA "
                   "extension can be built against it",
                   t->version);
    }
    result_ev(r, "cuda", "None");
    r->fix = fix_install_torch(ctx, 1, 1);
}

void check_driver_present(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct gpu_info *g = ctx_gpu(ctx);
    if (g->fake)
        result_ev(r, "source", "SAGEBUILD_FAKE_GPUS");
    if (g->kernel_module_version)
        result_ev(r, "kernel_module", "%s", g->kernel_module_version);
    if (g->timed_out || g->crashed) {
        result_set(r, CHECK_ERROR, "%s: the driver is installed but broken", g->error);
        result_fix(r, "nvidia-smi  # shows the driver's own error; reinstall the driver if it "
                      "fails too");
        return;
    }
    if (!g->libcuda_loaded) {
        result_set(r, CHECK_WARN, "no NVIDIA driver (%s): kernels can be built here but not run",
                   g->error ? g->error : "libcuda.so.1 not found");
        result_fix(r, "nvidia-smi  # after installing the NVIDIA driver: >= 580 for CUDA 13.x, "
                      ">= 525 for 12.x");
        return;
    }
    char vb[32];
    struct version dv = version_from_cuda_int(g->cuda_driver_version);
    const char *driver = g->driver_version ? g->driver_version : "(version unknown)";
    result_ev(r, "driver_version", "%s", driver);
    if (g->cuda_driver_version)
        result_ev(r, "max_cuda", "%s", version_str(&dv, vb, sizeof vb));
    /* cuInit's CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, or NVML's string against the loaded kernel
     * module: after a driver update without a reboot the two differ. */
    int module_differs = g->kernel_module_version && g->driver_version &&
                         strcmp(g->kernel_module_version, g->driver_version);
    if (g->init_result == 803 || module_differs) {
        result_set(r, CHECK_ERROR,
                   "driver %s does not match the loaded kernel module%s%s (cuInit 803)", driver,
                   g->kernel_module_version ? " " : "",
                   g->kernel_module_version ? g->kernel_module_version : "");
        result_fix(r, "sudo reboot  # loads the kernel module that matches the installed driver");
        return;
    }
    if (g->init_result != 0 && g->init_result != 100) {
        result_ev(r, "cuInit", "%d", g->init_result);
        result_set(r, CHECK_ERROR, "driver %s is loaded but cuInit failed with %d", driver,
                   g->init_result);
        result_fix(r, "nvidia-smi  # shows the driver's own error");
        return;
    }
    result_set(r, CHECK_OK, "NVIDIA driver %s, supports CUDA <= %s", driver,
               g->cuda_driver_version ? version_str(&dv, vb, sizeof vb) : "?");
}

void check_driver_gpus(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct gpu_info *g = ctx_gpu(ctx);
    if (!g->libcuda_loaded || g->crashed || g->timed_out ||
        (g->init_result != 0 && g->init_result != 100)) {
        result_set(r, CHECK_SKIP, "no working driver to list GPUs");
        return;
    }
    if (g->count == 0) {
        const char *cvd = ctx->env.cuda_visible_devices;
        result_set(r, CHECK_WARN, "the driver sees no GPU%s%s%s",
                   cvd ? " (CUDA_VISIBLE_DEVICES='" : "", cvd ? cvd : "", cvd ? "')" : "");
        if (cvd)
            result_fix(r, "unset CUDA_VISIBLE_DEVICES");
        else
            result_fix(r, "nvidia-smi -L  # lists the GPUs the driver sees");
        return;
    }
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < g->count; i++) {
        char key[16];
        snprintf(key, sizeof key, "gpu%d", i);
        result_ev(r, key, "%s, compute capability %d.%d", g->devices[i].name,
                  g->devices[i].cc_major, g->devices[i].cc_minor);
        sb_addf(&sb, "%s%s (sm_%d%d)", i ? ", " : "", g->devices[i].name, g->devices[i].cc_major,
                g->devices[i].cc_minor);
    }
    result_set(r, CHECK_OK, "%d GPU%s: %s", g->count, g->count == 1 ? "" : "s", sb_str(&sb));
    sb_free(&sb);
}

void check_driver_torch(struct doctor_ctx *ctx, struct check_result *r)
{
    struct version cuda = ctx_torch_cuda(ctx);
    const struct gpu_info *g = ctx_gpu(ctx);
    if (cuda.nparts == 0) {
        result_set(r, CHECK_SKIP, "no CUDA build of torch to check");
        return;
    }
    if (!g->libcuda_loaded) {
        result_set(r, CHECK_SKIP, "no driver to check");
        return;
    }
    char vb[32];
    struct version dv = version_from_cuda_int(g->cuda_driver_version);
    int ok = rule_driver_runs_cuda(g->cuda_driver_version, g->driver_version, &cuda);
    result_ev(r, "torch_cuda", "%d.%d", cuda.part[0], cuda.part[1]);
    result_ev(r, "driver_max_cuda", "%s",
              g->cuda_driver_version ? version_str(&dv, vb, sizeof vb) : "unknown");
    result_ev(r, "min_driver", "%d", gpu_min_driver_for_cuda_major(cuda.part[0]));
    if (ok < 0) {
        result_set(r, CHECK_SKIP, "the driver's version is unknown");
        return;
    }
    if (ok == 0) {
        result_set(r, CHECK_ERROR,
                   "driver %s (CUDA <= %s) is too old for torch's CUDA %d.%d (needs driver >= %d): "
                   "torch.cuda.is_available() is False",
                   g->driver_version ? g->driver_version : "?",
                   g->cuda_driver_version ? version_str(&dv, vb, sizeof vb) : "?", cuda.part[0],
                   cuda.part[1], gpu_min_driver_for_cuda_major(cuda.part[0]));
        r->fix = fix_install_torch(ctx, 1, 1);
        return;
    }
    result_set(r, CHECK_OK, "driver runs torch's CUDA %d.%d", cuda.part[0], cuda.part[1]);
}

void check_torch_gpu_arch(struct doctor_ctx *ctx, struct check_result *r)
{
    struct version cuda = ctx_torch_cuda(ctx);
    const struct gpu_info *g = ctx_gpu(ctx);
    if (cuda.nparts == 0 || g->count == 0) {
        result_set(r, CHECK_SKIP, cuda.nparts ? "no GPU to check" : "no CUDA build of torch");
        return;
    }
    for (int i = 0; i < g->count; i++) {
        const struct gpu_device *d = &g->devices[i];
        if (rule_torch_covers_cc(&cuda, d->cc_major, d->cc_minor) == 0) {
            result_ev(r, "gpu", "%s (sm_%d%d)", d->name, d->cc_major, d->cc_minor);
            result_set(r, CHECK_ERROR,
                       "torch %s (CUDA %d.%d) has no code for %s (sm_%d%d): 'no kernel image is "
                       "available for execution on the device'",
                       ctx->torch.version, cuda.part[0], cuda.part[1], d->name, d->cc_major,
                       d->cc_minor);
            r->fix = fix_install_torch(ctx, 0, 1);
            return;
        }
    }
    result_set(r, CHECK_OK, "torch's CUDA %d.%d wheels carry code for every GPU here", cuda.part[0],
               cuda.part[1]);
}

void check_torch_triton(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct torch_info *t = ctx_torch(ctx);
    if (!t->found || !t->site) {
        result_set(r, CHECK_SKIP, "no torch to check");
        return;
    }
    char *meta = site_dist_metadata_text(t->site, "torch");
    char *pin = rule_torch_triton_pin(meta);
    free(meta);
    if (!pin) {
        result_set(r, CHECK_SKIP,
                   "torch pins no triton version (no METADATA, or not a Linux "
                   "wheel)");
        return;
    }
    result_ev(r, "torch_pins", "%s", pin);
    char *have = site_dist_metadata(t->site, "triton", "Version");
    if (have)
        result_ev(r, "installed", "%s", have);
    char *py = shell_quote(ctx_python(ctx));
    if (!have && !ctx->triton_dir) {
        result_set(r, CHECK_WARN,
                   "triton is not installed; torch %s wants triton %s "
                   "(SageAttention's Triton kernels need it)",
                   t->version, pin);
        result_fix(r, "%s -m pip install triton==%s", py, pin);
    } else if (have && strcmp(have, pin)) {
        result_set(r, CHECK_WARN,
                   "triton %s is installed, torch %s pins %s: SageAttention's Triton path fails "
                   "('Triton only support CUDA 10.0 or higher')",
                   have, t->version, pin);
        result_fix(r, "%s -m pip install triton==%s", py, pin);
    } else {
        result_set(r, CHECK_OK, "triton %s, as torch pins", have ? have : pin);
    }
    free(py);
    free(have);
    free(pin);
}
