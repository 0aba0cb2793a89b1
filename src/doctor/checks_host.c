/* host.compiler (the host compiler against the newest one nvcc's crt/host_config.h accepts) and
 * the build resources: build.ninja, build.jobs (parallel nvcc jobs against memory), build.disk. */
#include "doctor/doctor.h"
#include "doctor/fixes.h"
#include "doctor/rules.h"
#include "toolchain/jobs.h"
#include "util/fs.h"
#include "util/plural.h"
#include "util/shquote.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

void check_host_compiler(struct doctor_ctx *ctx, struct check_result *r)
{
    ctx_host(ctx);
    const struct compiler_info *c = &ctx->host.asked;
    const struct host_limits *l = &ctx->limits;
    result_ev(r, "compiler", "%s%s", c->command, ctx->env.cc ? " (from $CC)" : "");
    if (ctx->env.cxx)
        result_ev(r, "cxx", "%s", ctx->env.cxx);
    if (ctx->host_config_path)
        result_ev(r, "host_config", "%s", ctx->host_config_path);
    if (l->gcc_max >= 0)
        result_ev(r, "gcc_max", "%d", l->gcc_max);
    if (l->clang_max >= 0)
        result_ev(r, "clang_max", "%d", l->clang_max);
    if (!c->found) {
        result_set(r, CHECK_ERROR, "no host compiler: %s", c->error ? c->error : "not found");
        if (ctx->env.cc)
            result_fix(r, "unset CC CXX");
        else
            result_fix(r, "sudo apt-get install build-essential");
        return;
    }
    char vb[32];
    version_str(&c->version, vb, sizeof vb);
    result_ev(r, "path", "%s", c->path);
    result_ev(r, "version", "%s", vb);
    int limit = toolchain_host_limit(l, c->is_clang);
    const char *kind = c->is_clang ? "clang" : "gcc";
    if (limit < 0) {
        result_set(r, CHECK_SKIP,
                   "%s %s; no limit to compare with (no readable "
                   "crt/host_config.h in CUDA_HOME)",
                   kind, vb);
        return;
    }
    if (ctx->host.asked_fits) {
        result_set(r, CHECK_OK, "%s %s is accepted by this nvcc (%s <= %d, from host_config.h)",
                   kind, vb, kind, limit);
        return;
    }
    result_set(r, CHECK_ERROR,
               "%s %s is newer than this nvcc accepts (%s <= %d): 'unsupported %s version!'", kind,
               vb, kind, limit, c->is_clang ? "clang" : "GNU");
    /* torch hands $CC to nvcc as -ccbin, so an older gcc beside the default one is enough. */
    int gcc_limit = l->gcc_max >= 0 ? l->gcc_max : limit;
    if (ctx->host.fit_cc)
        result_fix(r, "export CC=%s CXX=%s", ctx->host.fit_cc, ctx->host.fit_cxx);
    else
        result_fix(r, "sudo apt-get install gcc-%d g++-%d && export CC=gcc-%d CXX=g++-%d",
                   gcc_limit, gcc_limit, gcc_limit, gcc_limit);
}

void check_build_ninja(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct resources *res = ctx_resources(ctx);
    char *py = shell_quote(ctx_python(ctx));
    if (!res->ninja_path) {
        result_set(r, CHECK_WARN,
                   "ninja not found: torch falls back to the slow distutils "
                   "backend, and JIT load() fails");
        result_fix(r, "%s -m pip install ninja", py);
    } else if (!res->ninja_version) {
        result_ev(r, "path", "%s", res->ninja_path);
        result_set(r, CHECK_WARN, "ninja is broken: %s", res->ninja_error);
        result_fix(r, "%s -m pip install --force-reinstall ninja", py);
    } else {
        result_ev(r, "path", "%s", res->ninja_path);
        result_ev(r, "version", "%s", res->ninja_version);
        result_set(r, CHECK_OK, "ninja %s", res->ninja_version);
    }
    free(py);
}

void check_build_jobs(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct resources *res = ctx_resources(ctx);
    result_ev(r, "cores", "%d", res->cores);
    if (res->mem_avail_kb <= 0) {
        result_set(r, CHECK_SKIP, "MemAvailable unknown (no /proc/meminfo)");
        return;
    }
    double gb = res->mem_avail_kb / 1048576.0;
    int jobs = toolchain_jobs(res->cores, res->mem_avail_kb);
    result_ev(r, "mem_available_gib", "%.1f", gb);
    result_ev(r, "gib_per_job", "%.0f", TOOLCHAIN_GIB_PER_JOB);
    result_ev(r, "suggested_max_jobs", "%d", jobs);
    result_ev(r, "sageattention_env", "MAX_JOBS=%d EXT_PARALLEL=1 NVCC_APPEND_FLAGS='--threads 2'",
              jobs);
    /* Without MAX_JOBS torch runs ninja with #CPU+2 jobs (SageAttention even sets 32). */
    int effective = res->cores + 2;
    const char *source = "torch's default, cores + 2";
    if (ctx->env.max_jobs && *ctx->env.max_jobs) {
        effective = atoi(ctx->env.max_jobs);
        source = "$MAX_JOBS";
        result_ev(r, "MAX_JOBS", "%s", ctx->env.max_jobs);
    }
    if (effective > 0 && effective * TOOLCHAIN_GIB_PER_JOB > gb && effective > jobs) {
        result_set(r, CHECK_WARN,
                   "%d parallel nvcc jobs (%s) need about %.0f GiB, %.1f GiB is available: the "
                   "build may be killed for memory",
                   effective, source, effective * TOOLCHAIN_GIB_PER_JOB, gb);
        result_fix(r, "export MAX_JOBS=%d", jobs);
        return;
    }
    result_set(r, CHECK_OK, "MAX_JOBS=%d fits %.1f GiB available on %d %s", jobs, gb, res->cores,
               plural(res->cores, "core", "cores"));
}

void check_build_disk(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct disk_free *disk = ctx_disk(ctx);
    const struct disk_free *worst = NULL;
    char hb[32];
    for (int i = 0; i < 3; i++) {
        if (disk[i].free_bytes < 0)
            continue;
        result_ev(r, disk[i].role, "%s: %s free", disk[i].dir,
                  rule_format_bytes(disk[i].free_bytes, hb, sizeof hb));
        if (!worst || disk[i].free_bytes < worst->free_bytes)
            worst = &disk[i];
    }
    if (!worst) {
        result_set(r, CHECK_SKIP, "free space unknown");
        return;
    }
    /* A toolkit (about 0.5 GiB unpacked) plus a kernel build's objects (1–2 GiB). */
    const long long gib = 1024LL * 1024 * 1024;
    rule_format_bytes(worst->free_bytes, hb, sizeof hb);
    char *q = shell_quote(worst->dir);
    if (worst->free_bytes < 1 * gib) {
        result_set(r, CHECK_ERROR, "only %s free in %s: a build needs about 3 GiB", hb, worst->dir);
        result_fix(r, "du -xsh %s/* 2>/dev/null | sort -h | tail  # the largest items to remove",
                   q);
    } else if (worst->free_bytes < 3 * gib) {
        result_set(r, CHECK_WARN, "%s free in %s: a build needs about 3 GiB", hb, worst->dir);
        result_fix(r, "du -xsh %s/* 2>/dev/null | sort -h | tail  # the largest items to remove",
                   q);
    } else {
        result_set(r, CHECK_OK, "at least %s free for the toolkit, the build and temporary files",
                   hb);
    }
    free(q);
}
