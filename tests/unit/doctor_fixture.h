/* Fixture contexts for doctor's checks. fx_init marks every lazy probe done (have_* = 1) with the
 * facts of a healthy machine, so no check touches the real one and each test changes only the
 * fact it is about:
 *   torch 2.11.0+cu130 (CUDA 13.0) for /venv/bin/python, site-packages under the fixture folder;
 *   driver 580.65.06 (CUDA 13.0) with one NVIDIA GeForce RTX 5090 (12.0);
 *   CUDA_HOME=<root>/cuda from $CUDA_HOME, a complete toolkit tree, nvcc 13.0 (V13.0.88);
 *   gcc 13.3.0 under host_config.h's gcc <= 14; ninja 1.11.1; 8 cores, 64 GiB available;
 *   100 GiB free in the build, cache and temporary folders.
 * Files a check reads (the toolkit tree, site-packages) live under a fresh temporary folder. */
#ifndef SB_TEST_DOCTOR_FIXTURE_H
#define SB_TEST_DOCTOR_FIXTURE_H

#include "doctor/doctor.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FX_GIB (1024LL * 1024 * 1024)

struct fx {
    struct doctor_opts opts;
    struct doctor_ctx ctx;
    struct check_result r;
    char *root; /* the temporary folder, removed by fx_free */
};

/* root/rel (heap). */
static inline char *fx_path(const struct fx *f, const char *rel)
{
    return fs_join(f->root, rel);
}

/* Writes root/rel with text, creating its folders; mode 0755 makes it executable. */
static inline void fx_file(const struct fx *f, const char *rel, const char *text, unsigned mode)
{
    char *p = fx_path(f, rel);
    char *dir = fs_dirname(p);
    if (fs_mkdir_p(dir, 0755) < 0 || fs_write_file(p, text, strlen(text)) < 0 ||
        chmod(p, mode) < 0) {
        fprintf(stderr, "fixture: cannot write %s\n", p);
        abort();
    }
    free(dir);
    free(p);
}

static inline void fx_dir(const struct fx *f, const char *rel)
{
    char *p = fx_path(f, rel);
    if (fs_mkdir_p(p, 0755) < 0)
        abort();
    free(p);
}

static inline void fx_remove(const struct fx *f, const char *rel)
{
    char *p = fx_path(f, rel);
    fs_remove_tree(p);
    free(p);
}

/* Replaces the GPUs: n triples of (name, cc_major, cc_minor). */
static inline void fx_gpus(struct fx *f, int n, ...)
{
    struct gpu_info *g = &f->ctx.gpu;
    for (int i = 0; i < g->count; i++)
        free(g->devices[i].name);
    free(g->devices);
    g->devices = n ? xcalloc((size_t)n, sizeof *g->devices) : NULL;
    g->count = n;
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        g->devices[i].name = xstrdup(va_arg(ap, const char *));
        g->devices[i].cc_major = va_arg(ap, int);
        g->devices[i].cc_minor = va_arg(ap, int);
    }
    va_end(ap);
}

/* Sets a heap string field of the context (NULL clears it). */
static inline void fx_set(char **field, const char *value)
{
    free(*field);
    *field = value ? xstrdup(value) : NULL;
}

static inline void fx_nvcc_release(struct fx *f, const char *release)
{
    version_parse(release, &f->ctx.nvcc.version.release);
}

/* The complete toolkit tree toolkit.components looks for, under root/cuda. */
static inline void fx_toolkit_tree(const struct fx *f)
{
    static const char *const exec[] = {"cuda/bin/nvcc", "cuda/bin/ptxas", "cuda/nvvm/bin/cicc"};
    static const char *const files[] = {"cuda/nvvm/libdevice/libdevice.10.bc",
                                        "cuda/include/crt/host_config.h",
                                        "cuda/include/cuda_runtime.h",
                                        "cuda/include/nv/target",
                                        "cuda/lib64/libcudart.so",
                                        "cuda/lib64/stubs/libcuda.so"};
    for (size_t i = 0; i < sizeof exec / sizeof exec[0]; i++)
        fx_file(f, exec[i], "#!/bin/sh\nexit 0\n", 0755);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        fx_file(f, files[i], "", 0644);
}

static inline void fx_init(struct fx *f)
{
    memset(f, 0, sizeof *f);
    char tmpl[] = "/tmp/sb-doctor-fx.XXXXXX";
    if (!mkdtemp(tmpl))
        abort();
    f->root = xstrdup(tmpl);
    struct doctor_ctx *c = &f->ctx;
    c->opts = &f->opts;
    c->env.cache_dir = fx_path(f, "cache"); /* ctx_free frees it */
    c->env.tmp_dir = "/tmp";
    c->env.system_include = "/nonexistent/usr/include";

    c->have_torch = 1;
    c->torch.found = 1;
    c->torch.site = fx_path(f, "site");
    c->torch.dir = fx_path(f, "site/torch");
    c->torch.version = xstrdup("2.11.0+cu130");
    c->torch.cuda = xstrdup("13.0");
    c->torch.python = xstrdup("/venv/bin/python");
    c->torch.python_version = xstrdup("3.12.3");
    fx_dir(f, "site/torch");

    c->have_gpu = 1;
    c->gpu.libcuda_loaded = 1;
    c->gpu.cuda_driver_version = 13000;
    c->gpu.driver_version = xstrdup("580.65.06");
    fx_gpus(f, 1, "NVIDIA GeForce RTX 5090", 12, 0);

    c->have_home = 1;
    c->home.path = fx_path(f, "cuda");
    c->home.rule = CUDA_HOME_FROM_CUDA_HOME;
    fx_toolkit_tree(f);

    c->have_nvcc = 1;
    c->nvcc.found = c->nvcc.ran = 1;
    c->nvcc.path = fx_path(f, "cuda/bin/nvcc");
    fx_nvcc_release(f, "13.0");
    version_parse("13.0.88", &c->nvcc.version.full);

    c->have_host = 1;
    c->host_config_path = fx_path(f, "cuda/include/crt/host_config.h");
    c->limits.gcc_max = 14;
    c->limits.clang_max = 20;
    c->host.asked.found = 1;
    c->host.asked.command = xstrdup("gcc");
    c->host.asked.path = xstrdup("/usr/bin/gcc");
    version_parse("13.3.0", &c->host.asked.version);
    c->host.asked_fits = 1;

    c->have_resources = 1;
    c->res.cores = 8;
    c->res.mem_total_kb = c->res.mem_avail_kb = 64LL * 1024 * 1024;
    c->res.disk_free_bytes = -1;
    c->res.ninja_path = xstrdup("/usr/bin/ninja");
    c->res.ninja_version = xstrdup("1.11.1");

    c->have_nvcc_on_path = 1; /* nvcc on PATH is CUDA_HOME's (nvcc_on_path.path NULL) */

    c->have_disk = 1;
    static const char *const roles[] = {"build_dir", "cache_dir", "tmp_dir"};
    static const char *const dirs[] = {"/work/build", "/home/u/.cache", "/tmp"};
    for (int i = 0; i < 3; i++) {
        c->disk[i].role = roles[i];
        c->disk[i].dir = xstrdup(dirs[i]);
        c->disk[i].free_bytes = 100 * FX_GIB;
    }
}

static inline void fx_free(struct fx *f)
{
    result_free(&f->r);
    ctx_free(&f->ctx);
    fs_remove_tree(f->root);
    free(f->root);
    free((char *)f->opts.python); /* tests set --python to a heap path or leave it NULL */
}

static inline void fx_run(struct fx *f, void (*check)(struct doctor_ctx *, struct check_result *))
{
    result_free(&f->r);
    check(&f->ctx, &f->r);
}

/* The evidence value under key, NULL when absent. */
static inline const char *fx_ev(const struct fx *f, const char *key)
{
    for (int i = 0; i < f->r.nevidence; i++)
        if (!strcmp(f->r.evidence[i].key, key))
            return f->r.evidence[i].value;
    return NULL;
}

/* Asserts the verdict: its status, a piece of its summary, and its fix exactly (NULL: no fix).
 * A fix must also be a command sh can parse, since users paste it. */
#define fx_expect(f, status, summary_has, fix)                                                     \
    fx_expect_at(__FILE__, __LINE__, f, status, summary_has, fix)
#define fx_fail(...) (print_error(__VA_ARGS__), _fail(file, line))
static inline void fx_expect_at(const char *file, int line, const struct fx *f,
                                enum check_status status, const char *summary_has, const char *fix)
{
    const struct check_result *r = &f->r;
    if (r->status != status || !r->summary || !strstr(r->summary, summary_has))
        fx_fail("got %s '%s', wanted %s with '%s'\n", check_status_name(r->status),
                r->summary ? r->summary : "(none)", check_status_name(status), summary_has);
    if (!fix) {
        if (r->fix)
            fx_fail("unexpected fix '%s' (summary '%s')\n", r->fix, r->summary);
        return;
    }
    if (!r->fix || strcmp(r->fix, fix))
        fx_fail("fix '%s', wanted '%s'\n", r->fix ? r->fix : "(none)", fix);
    const char *argv[] = {"sh", "-n", "-c", r->fix, NULL};
    struct proc_opts po = {.timeout_ms = 5000, .max_output = 4096};
    struct proc_result pr;
    proc_run(argv, &po, &pr);
    int parsed = !pr.timed_out && pr.exited && pr.exit_code == 0;
    proc_result_free(&pr);
    if (!parsed)
        fx_fail("sh cannot parse the fix '%s'\n", r->fix);
}

/* fx_expect with the fixture folder written as ROOT in the summary and the fix. */
#define fx_expect_rooted(f, status, summary_has, fix)                                              \
    fx_expect_rooted_at(__FILE__, __LINE__, f, status, summary_has, fix)
static inline char *fx_rooted(const struct fx *f, const char *text)
{
    struct strbuf sb = STRBUF_INIT;
    for (const char *p = text; *p;)
        if (!strncmp(p, "ROOT", 4)) {
            sb_adds(&sb, f->root);
            p += 4;
        } else {
            sb_addf(&sb, "%c", *p++);
        }
    return sb_detach(&sb);
}
static inline void fx_expect_rooted_at(const char *file, int line, const struct fx *f,
                                       enum check_status status, const char *summary_has,
                                       const char *fix)
{
    char *sum = fx_rooted(f, summary_has), *fixed = fix ? fx_rooted(f, fix) : NULL;
    fx_expect_at(file, line, f, status, sum, fixed);
    free(sum);
    free(fixed);
}

#endif
