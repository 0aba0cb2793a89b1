/* arch.list (TORCH_CUDA_ARCH_LIST as torch and SageAttention read it) and an existing
 * SageAttention install: its compiled module per GPU, the torch and CUDA its wheel was built
 * for, and whether its modules import. */
#include "doctor/doctor.h"
#include "doctor/fixes.h"
#include "doctor/rules.h"
#include "kernel_build/record.h"
#include "install/decide.h"
#include "wheel/wheelfmt.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/shquote.h"
#include "util/strbuf.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The list's entries against torch, SageAttention and the GPUs here: what breaks a build into
 * err, what only may into warn ("; "-separated). */
static void judge_arch_entries(const struct arch_entries *l, const struct torch_info *t,
                               const struct gpu_info *g, struct strbuf *err, struct strbuf *warn)
{
    int has_90 = 0, has_other = 0;
    for (int i = 0; i < l->n; i++) {
        const struct arch_entry *e = &l->e[i];
        if (!e->parsed) {
            sb_addf(err, "%s'%s' is not an arch", err->len ? "; " : "", e->text);
            continue;
        }
        if (e->sage_unsupported)
            sb_addf(warn, "%sSageAttention builds nothing for '%s'", warn->len ? "; " : "",
                    e->text);
        if (e->torch_rejects)
            sb_addf(warn,
                    "%storch%s%s raises 'Unknown CUDA arch (%s)' for extensions that use "
                    "its arch flags",
                    warn->len ? "; " : "", t->found ? " " : "", t->found ? t->version : "",
                    e->text);
        if (e->arch.major == 9 && e->arch.minor == 0)
            has_90 = 1;
        else
            has_other = 1;
        int present = 0;
        for (int k = 0; k < g->count; k++)
            present |=
                g->devices[k].cc_major == e->arch.major && g->devices[k].cc_minor == e->arch.minor;
        if (g->count && !present)
            sb_addf(warn, "%sno GPU here is %d.%d", warn->len ? "; " : "", e->arch.major,
                    e->arch.minor);
    }
    /* SageAttention#291: 9.0 next to other archs puts wgmma code through ptxas for them. */
    if (has_90 && has_other)
        sb_addf(warn,
                "%s9.0 with other archs can fail with 'Instruction wgmma.fence not "
                "supported on .target sm_120'",
                warn->len ? "; " : "");
    for (int k = 0; k < g->count; k++) {
        int listed = 0;
        for (int i = 0; i < l->n; i++)
            listed |= l->e[i].parsed && g->devices[k].cc_major == l->e[i].arch.major &&
                      g->devices[k].cc_minor == l->e[i].arch.minor;
        if (!listed)
            sb_addf(err, "%s%s (%d.%d) is not in the list: 'no kernel image is available'",
                    err->len ? "; " : "", g->devices[k].name, g->devices[k].cc_major,
                    g->devices[k].cc_minor);
    }
    if (l->n == 0)
        sb_addf(err, "the list is empty");
}

void check_arch_list(struct doctor_ctx *ctx, struct check_result *r)
{
    const char *list = ctx->env.torch_arch_list;
    const struct gpu_info *g = ctx_gpu(ctx);
    char *local = local_arch_list(ctx);
    if (local)
        result_ev(r, "local_gpus", "%s", local);
    if (!list || !*list) {
        if (local) {
            result_set(r, CHECK_OK, "TORCH_CUDA_ARCH_LIST unset: builds target the GPUs here (%s)",
                       local);
        } else {
            result_set(r, CHECK_WARN,
                       "TORCH_CUDA_ARCH_LIST unset and no GPU: SageAttention stops with 'No "
                       "target compute capabilities'");
            result_fix(r, "export TORCH_CUDA_ARCH_LIST='12.0'  # the compute capability of the "
                          "GPU you build for");
        }
        free(local);
        return;
    }
    result_ev(r, "TORCH_CUDA_ARCH_LIST", "%s", list);
    const struct torch_info *t = ctx_torch(ctx);
    struct arch_entries l;
    rule_parse_arch_list(list, t->found ? t->version : NULL, &l);
    struct strbuf err = STRBUF_INIT, warn = STRBUF_INIT;
    judge_arch_entries(&l, t, g, &err, &warn);
    const char *fix_list = local ? local : "12.0";
    if (err.len) {
        result_set(r, CHECK_ERROR, "TORCH_CUDA_ARCH_LIST='%s': %s", list, sb_str(&err));
        result_fix(r, "export TORCH_CUDA_ARCH_LIST='%s'", fix_list);
    } else if (warn.len) {
        result_set(r, CHECK_WARN, "TORCH_CUDA_ARCH_LIST='%s': %s", list, sb_str(&warn));
        result_fix(r, "export TORCH_CUDA_ARCH_LIST='%s'", fix_list);
    } else {
        result_set(r, CHECK_OK, "TORCH_CUDA_ARCH_LIST='%s' fits the GPUs and SageAttention", list);
    }
    sb_free(&err);
    sb_free(&warn);
    rule_arch_entries_free(&l);
    free(local);
}

/* Compiled modules in the package folder: "_qattn_sm80", "_fused", ... (extension stripped). */
static int list_modules(const char *dir, char mods[][64], int max)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) && n < max) {
        const char *name = de->d_name;
        if (strncmp(name, "_qattn_sm", 9) && strncmp(name, "_fused", 6))
            continue;
        const char *dot = strchr(name, '.');
        if (!dot || !strstr(dot, ".so"))
            continue;
        snprintf(mods[n], 64, "%.*s", (int)(dot - name), name);
        n++;
    }
    if (d)
        closedir(d);
    /* Sorted, so output and evidence are stable. */
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && strcmp(mods[k - 1], mods[k]) > 0; k--) {
            char tmp[64];
            memcpy(tmp, mods[k], 64);
            memcpy(mods[k], mods[k - 1], 64);
            memcpy(mods[k - 1], tmp, 64);
        }
    return n;
}

/* sagebuild's drop-in: pure Python with the library in _lib/ (or our version label). */
static int is_ours(const char *sage_dir)
{
    char *lib = fs_join(sage_dir, "_lib/libsageattn.so");
    int ours = fs_exists(lib);
    free(lib);
    if (!ours) {
        char *site = fs_dirname(sage_dir);
        char *version = site_dist_metadata(site, "sageattention", "Version");
        ours = wheel_version_is_ours(version);
        free(version);
        free(site);
    }
    return ours;
}

/* The drop-in's archs (its _lib/build-record.json) against the GPUs present. */
static void check_ours(struct doctor_ctx *ctx, struct check_result *r)
{
    char *site = fs_dirname(ctx->sage_dir);
    char *version = site_dist_metadata(site, "sageattention", "Version");
    free(site);
    char *lib = fs_join(ctx->sage_dir, "_lib/libsageattn.so");
    char *rec_path = fs_join(ctx->sage_dir, "_lib/" BUILD_RECORD_NAME);
    char *recommend = fs_join(ctx->sage_dir, "_lib/recommendation.json");
    char *text = fs_read_file(rec_path, 1 << 20, NULL);
    struct build_record rec;
    int have_rec = text && build_record_from_json(text, &rec) == 0;
    free(text);
    char *py = shell_quote(ctx_python(ctx));
    const char *v = version ? version : "(no dist-info)";
    result_ev(r, "kind", "sagebuild's drop-in (pure Python over libsageattn)");
    result_ev(r, "version", "%s", v);
    if (have_rec && rec.archs)
        result_ev(r, "archs", "%s", rec.archs);
    result_ev(r, "recommendation", "%s",
              fs_is_file(recommend) ? "from the self-test on the build machine"
                                    : "none: each arch's default mode");
    const struct gpu_info *g = ctx_gpu(ctx);
    if (!fs_is_file(lib)) {
        result_set(r, CHECK_ERROR,
                   "sageattention %s is sagebuild's drop-in without its library "
                   "(_lib/libsageattn.so)",
                   v);
        result_fix(r, "sagebuild install --python %s", py);
    } else if (!have_rec || !rec.archs) {
        result_set(r, CHECK_WARN,
                   "sageattention %s is sagebuild's drop-in, but its _lib/build-record.json does "
                   "not say which archs it was built for",
                   v);
        result_fix(r, "sagebuild install --python %s", py);
    } else if (g->count == 0) {
        result_set(r, CHECK_OK,
                   "sageattention %s (sagebuild's drop-in) with kernels for %s; no GPU "
                   "here to compare with",
                   v, rec.archs);
    } else {
        struct gpu_cc cc[32];
        const char *names[32];
        int n = g->count < 32 ? g->count : 32;
        for (int k = 0; k < n; k++) {
            cc[k] = (struct gpu_cc){g->devices[k].cc_major, g->devices[k].cc_minor};
            names[k] = g->devices[k].name;
        }
        char *missing = NULL;
        if (install_build_covers(rec.archs, cc, names, n, &missing)) {
            result_set(r, CHECK_OK,
                       "sageattention %s (sagebuild's drop-in) with kernels for %s: every GPU here "
                       "is covered",
                       v, rec.archs);
        } else {
            result_set(r, CHECK_ERROR,
                       "sageattention %s (sagebuild's drop-in) has kernels for %s only; none for "
                       "%s",
                       v, rec.archs, missing);
            result_fix(r, "sagebuild install --python %s", py);
        }
        free(missing);
    }
    if (have_rec)
        build_record_free(&rec);
    free(py);
    free(lib);
    free(rec_path);
    free(recommend);
    free(version);
}

void check_sage_install(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct torch_info *t = ctx_torch(ctx);
    if (!ctx->sage_dir) {
        result_set(r, CHECK_SKIP, "sageattention is not installed%s%s", t->python ? " for " : "",
                   t->python ? t->python : "");
        return;
    }
    result_ev(r, "dir", "%s", ctx->sage_dir);
    if (is_ours(ctx->sage_dir)) {
        check_ours(ctx, r);
        return;
    }
    char mods[32][64];
    int n = list_modules(ctx->sage_dir, mods, 32);
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < n; i++)
        sb_addf(&sb, "%s%s", i ? " " : "", mods[i]);
    result_ev(r, "modules", "%s", n ? sb_str(&sb) : "none");
    char *site = fs_dirname(ctx->sage_dir);
    char *version = site_dist_metadata(site, "sageattention", "Version");
    free(site);
    if (version)
        result_ev(r, "version", "%s", version);

    /* A wheel built for another torch or CUDA fails with 'undefined symbol' at import. */
    char *wheel_cuda = NULL, *wheel_torch = NULL;
    rule_parse_wheel_local_tag(version, &wheel_cuda, &wheel_torch);
    struct version tc = ctx_torch_cuda(ctx);
    char tcb[32];
    if (t->found && wheel_torch && strncmp(t->version, wheel_torch, strlen(wheel_torch))) {
        result_set(r, CHECK_ERROR,
                   "sageattention %s was built for torch %s, torch here is %s: imports fail with "
                   "'undefined symbol'",
                   version, wheel_torch, t->version);
        r->fix = fix_rebuild_sage(ctx, NULL);
    } else if (tc.nparts && wheel_cuda && strcmp(wheel_cuda, version_str(&tc, tcb, sizeof tcb))) {
        result_set(r, CHECK_ERROR, "sageattention %s was built for CUDA %s, torch uses CUDA %s",
                   version, wheel_cuda, tcb);
        r->fix = fix_rebuild_sage(ctx, NULL);
    } else if (n == 0) {
        result_set(r, CHECK_WARN, "sageattention%s%s has no compiled CUDA modules (Triton only)",
                   version ? " " : "", version ? version : "");
        r->fix = fix_rebuild_sage(ctx, NULL);
    } else {
        /* Each GPU needs its module (core.py falls back silently when one is missing). */
        const struct gpu_info *g = ctx_gpu(ctx);
        struct strbuf missing = STRBUF_INIT;
        for (int k = 0; k < g->count; k++) {
            const struct gpu_device *d = &g->devices[k];
            const char *need = rule_sage_module_for_cc(d->cc_major, d->cc_minor);
            if (!need) {
                sb_addf(&missing, "%sSageAttention has no kernel for %s (sm_%d%d)",
                        missing.len ? "; " : "", d->name, d->cc_major, d->cc_minor);
                continue;
            }
            int have = 0;
            for (int i = 0; i < n; i++)
                have |= !strcmp(mods[i], need);
            if (!have)
                sb_addf(&missing, "%s%s missing for %s (sm_%d%d)", missing.len ? "; " : "", need,
                        d->name, d->cc_major, d->cc_minor);
        }
        if (missing.len) {
            result_set(r, CHECK_WARN, "sageattention: %s", sb_str(&missing));
            r->fix = fix_rebuild_sage(ctx, NULL);
        } else {
            result_set(r, CHECK_OK, "sageattention%s%s with %s", version ? " " : "",
                       version ? version : "", sb_str(&sb));
        }
        sb_free(&missing);
    }
    free(wheel_cuda);
    free(wheel_torch);
    free(version);
    sb_free(&sb);
}

/* Imports each compiled module on its own: core.py's bare `except` hides the loader's error. */
static const char import_script[] =
    "import importlib, sys\n"
    "for m in sys.argv[1:]:\n"
    "    try:\n"
    "        importlib.import_module('sageattention.' + m)\n"
    "        print(m + '\\tok')\n"
    "    except BaseException as e:\n"
    "        msg = (type(e).__name__ + ': ' + str(e)).replace('\\n', ' ')\n"
    "        print(m + '\\t' + msg[:400])\n"
    "    sys.stdout.flush()\n";

#define IMPORT_TIMEOUT_MS 60000

/* The drop-in has no compiled modules: importing the package itself is the test (it must not
 * need torch or a GPU to import). */
static void import_ours(struct doctor_ctx *ctx, struct check_result *r)
{
    const char *argv[] = {ctx->opts->python, "-c", install_verify_script, NULL};
    struct proc_opts opts = {.timeout_ms = IMPORT_TIMEOUT_MS, .max_output = 1 << 16};
    struct proc_result pr;
    proc_run(argv, &opts, &pr);
    struct import_facts f;
    char *py = shell_quote(ctx->opts->python);
    if (install_parse_verify(pr.out, &f) < 0) {
        char *why = proc_describe(&pr);
        result_set(r, CHECK_ERROR, "importing sagebuild's drop-in with %s %s", ctx->opts->python,
                   why);
        free(why);
        if (pr.err_len)
            result_ev(r, "stderr", "%.*s", 400, pr.err + (pr.err_len > 400 ? pr.err_len - 400 : 0));
        result_fix(r, "sagebuild install --python %s", py);
    } else {
        result_ev(r, "version", "%s", f.version);
        result_ev(r, "file", "%s", f.file);
        if (f.cuda_initialized)
            result_set(r, CHECK_WARN, "sageattention %s imports, but importing it initialised CUDA",
                       f.version);
        else
            result_set(r, CHECK_OK, "sageattention %s (sagebuild's drop-in) imports", f.version);
    }
    import_facts_free(&f);
    free(py);
    proc_result_free(&pr);
}

void check_sage_imports(struct doctor_ctx *ctx, struct check_result *r)
{
    ctx_torch(ctx);
    if (!ctx->sage_dir) {
        result_set(r, CHECK_SKIP, "sageattention is not installed");
        return;
    }
    if (!ctx->opts->python) {
        result_set(r, CHECK_SKIP,
                   "not imported: pass --python PY to import each module (slow: "
                   "it loads torch)");
        return;
    }
    if (is_ours(ctx->sage_dir)) {
        import_ours(ctx, r);
        return;
    }
    char mods[32][64];
    int n = list_modules(ctx->sage_dir, mods, 32);
    if (n == 0) {
        result_set(r, CHECK_SKIP, "no compiled modules to import");
        return;
    }
    const char **argv = xcalloc((size_t)n + 4, sizeof *argv);
    argv[0] = ctx->opts->python;
    argv[1] = "-c";
    argv[2] = import_script;
    for (int i = 0; i < n; i++)
        argv[3 + i] = mods[i];
    struct proc_opts opts = {.timeout_ms = IMPORT_TIMEOUT_MS, .max_output = 1 << 16};
    struct proc_result pr;
    proc_run(argv, &opts, &pr);
    free(argv);
    int failed = 0, seen = 0;
    struct strbuf first = STRBUF_INIT;
    for (const char *line = pr.out; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *tab = memchr(line, '\t', len);
        if (tab) {
            char *mod = xstrndup(line, (size_t)(tab - line));
            char *msg = xstrndup(tab + 1, len - (size_t)(tab - line) - 1);
            result_ev(r, mod, "%s", msg);
            seen++;
            if (strcmp(msg, "ok")) {
                if (!failed)
                    sb_addf(&first, "%s: %s", mod, msg);
                failed++;
            }
            free(mod);
            free(msg);
        }
        line = nl ? nl + 1 : NULL;
    }
    if (pr.timed_out || seen < n) {
        char *why = proc_describe(&pr);
        result_set(r, CHECK_ERROR, "importing sageattention's modules with %s %s",
                   ctx->opts->python, why);
        free(why);
        if (pr.err_len)
            result_ev(r, "stderr", "%.*s", 400, pr.err);
        r->fix = fix_rebuild_sage(ctx, NULL);
    } else if (failed) {
        result_set(r, CHECK_ERROR, "%d of %d %s to import; %s", failed, n,
                   failed == 1 ? "modules fails" : "modules fail", sb_str(&first));
        r->fix = fix_rebuild_sage(ctx, NULL);
    } else {
        result_set(r, CHECK_OK, "%s %d compiled %s", n == 1 ? "the" : "all", n,
                   n == 1 ? "module imports" : "modules import");
    }
    sb_free(&first);
    proc_result_free(&pr);
}
