/* toolkit.consistency (one toolkit, not pieces of several), toolkit.archs (the requested archs
 * against this nvcc) and toolkit.driver_ptx (the driver JIT-compiles only PTX from an nvcc no
 * newer than its own CUDA version). */
#include "doctor/doctor.h"
#include "doctor/fixes.h"
#include "doctor/rules.h"
#include "util/fs.h"
#include "util/shquote.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first, most severe finding of toolkit.consistency: it becomes the summary and the fix. */
struct finding {
    enum check_status status; /* CHECK_OK while nothing is wrong */
    char *summary;
    char *fix;
};

static int severity(enum check_status s)
{
    return s == CHECK_ERROR ? 2 : s == CHECK_WARN ? 1 : 0;
}

/* Takes text and fix_text (heap), keeping them only when s is worse than what was found. */
static void worsen(struct finding *w, enum check_status s, char *text, char *fix_text)
{
    if (severity(s) > severity(w->status)) {
        w->status = s;
        free(w->summary);
        w->summary = text;
        free(w->fix);
        w->fix = fix_text;
    } else {
        free(text);
        free(fix_text);
    }
}

/* `#define NAME 13000` in a header of the toolkit; 0 when absent. */
static int header_define(const char *home, const char *header, const char *name)
{
    char *p = fs_join(home, header);
    char *text = fs_read_file(p, 1 << 20, NULL);
    free(p);
    int value = 0;
    size_t nl = strlen(name);
    for (const char *s = text ? strstr(text, "#define ") : NULL; s; s = strstr(s + 1, "#define ")) {
        const char *q = s + 8;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, name, nl) || !isspace((unsigned char)q[nl]))
            continue;
        value = atoi(q + nl);
        break;
    }
    free(text);
    return value;
}

static int same_major_minor(const struct version *a, const struct version *b)
{
    return a->part[0] == b->part[0] && a->part[1] == b->part[1];
}

/* Component versions a toolkit records about itself: dist-info folders (PyPI wheels) or
 * version.json (runfile and distribution packages). Each entry "name version". */
static int recorded_versions(const char *home, char names[][48], struct version *vers, int max)
{
    static const char *const wanted[][2] = {
        {"nvidia_cuda_nvcc-", "cuda_nvcc"},
        {"nvidia_cuda_crt-", "cuda_crt"},
        {"nvidia_nvvm-", "libnvvm"},
        {"nvidia_cuda_runtime-", "cuda_cudart"},
    };
    int n = 0;
    char *dir = fs_join(home, "dist-info");
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) && n < max) {
        for (size_t i = 0; i < 4; i++) {
            size_t pl = strlen(wanted[i][0]);
            if (strncmp(de->d_name, wanted[i][0], pl) ||
                version_parse(de->d_name + pl, &vers[n]) < 0)
                continue;
            snprintf(names[n], 48, "%s", wanted[i][1]);
            n++;
        }
    }
    if (d)
        closedir(d);
    free(dir);
    char *vj = fs_join(home, "version.json");
    char *text = fs_read_file(vj, 1 << 20, NULL);
    free(vj);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    for (size_t i = 0; root && i < 4 && n < max; i++) {
        cJSON *c = cJSON_GetObjectItemCaseSensitive(root, wanted[i][1]);
        cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "version");
        if (cJSON_IsString(v) && version_parse(v->valuestring, &vers[n]) == 0) {
            snprintf(names[n], 48, "%s", wanted[i][1]);
            n++;
        }
    }
    cJSON_Delete(root);
    free(text);
    return n;
}

/* 1. The nvcc on PATH is the one tools outside torch (CMake, Makefiles) call. */
static void nvcc_on_path_matches(struct doctor_ctx *ctx, const struct nvcc_info *n,
                                 struct check_result *r, struct finding *w)
{
    const struct nvcc_info *other = ctx_nvcc_on_path(ctx);
    if (!other)
        return;
    char nb[32], ob[32];
    version_str(&n->version.release, nb, sizeof nb);
    const char *ov = other->ran ? version_str(&other->version.release, ob, sizeof ob) : "?";
    result_ev(r, "nvcc_on_path", "%s (%s)", other->path, ov);
    int differ = !other->ran || !same_major_minor(&other->version.release, &n->version.release);
    char *bin = fs_join(ctx_home(ctx)->path, "bin");
    char *qbin = shell_quote(bin);
    worsen(w, differ ? CHECK_WARN : CHECK_OK,
           xasprintf("the nvcc on PATH (%s, %s) is not CUDA_HOME's (%s, %s)", other->path, ov,
                     n->path, nb),
           xasprintf("export PATH=%s:\"$PATH\"", qbin));
    free(qbin);
    free(bin);
}

/* 2. Headers of the same release as the compiler. */
static void headers_match(const char *home, const struct version *rel, const struct version *want,
                          struct check_result *r, struct finding *w)
{
    static const char *const headers[][2] = {{"include/cuda.h", "CUDA_VERSION"},
                                             {"include/cuda_runtime_api.h", "CUDART_VERSION"}};
    char nb[32], hb[32];
    version_str(rel, nb, sizeof nb);
    for (size_t i = 0; i < 2; i++) {
        int v = header_define(home, headers[i][0], headers[i][1]);
        if (!v)
            continue;
        struct version hv = version_from_cuda_int(v);
        result_ev(r, headers[i][1], "%d (%s)", v, headers[i][0]);
        if (!same_major_minor(&hv, rel))
            worsen(w, CHECK_ERROR,
                   xasprintf("%s says CUDA %s but nvcc is %s: headers from another toolkit",
                             headers[i][0], version_str(&hv, hb, sizeof hb), nb),
                   fix_fetch_cuda(want));
    }
}

/* 3. What the toolkit records about its parts (13.x splits crt and nvvm from nvcc). */
static void records_match(const char *home, const struct version *rel, const struct version *want,
                          struct check_result *r, struct finding *w)
{
    char names[16][48], nb[32], vb[32];
    struct version vers[16];
    version_str(rel, nb, sizeof nb);
    int nrec = recorded_versions(home, names, vers, 16);
    for (int i = 0; i < nrec; i++) {
        result_ev(r, names[i], "%s", version_str(&vers[i], vb, sizeof vb));
        if (!same_major_minor(&vers[i], rel))
            worsen(w, CHECK_ERROR,
                   xasprintf("%s %s is installed with nvcc %s: parts of two toolkits", names[i], vb,
                             nb),
                   fix_fetch_cuda(want));
    }
}

/* 4. cicc must come from this tree, not through a link into another one. */
static void cicc_inside(const char *home, const char *home_real, const struct version *want,
                        struct check_result *r, struct finding *w)
{
    char *cicc = fs_join(home, "nvvm/bin/cicc");
    char *cicc_real = fs_realpath(cicc);
    if (home_real && cicc_real && strncmp(cicc_real, home_real, strlen(home_real)) &&
        !fs_is_dir(cicc_real)) {
        result_ev(r, "cicc", "%s", cicc_real);
        worsen(w, CHECK_WARN,
               xasprintf("cicc resolves to %s, outside CUDA_HOME (%s)", cicc_real, home_real),
               fix_fetch_cuda(want));
    }
    free(cicc);
    free(cicc_real);
}

/* 5. Distribution headers in /usr/include shadow nothing for nvcc, but a -I/usr/include or a
 * CMake FindCUDA may pick them up next to another toolkit's nvcc. */
static void no_system_headers(const struct doctor_ctx *ctx, const char *home, const char *home_real,
                              struct check_result *r, struct finding *w)
{
    char *system_crt = fs_join(ctx->env.system_include, "crt/host_config.h");
    if (home_real && strcmp(home_real, "/usr") && fs_is_file(system_crt)) {
        result_ev(r, "system_crt", "%s", system_crt);
        worsen(w, CHECK_WARN,
               xasprintf("%s/crt holds another toolkit's headers (distribution package) beside "
                         "CUDA_HOME=%s",
                         ctx->env.system_include, home),
               xstrdup("sudo apt-get remove nvidia-cuda-dev nvidia-cuda-toolkit"));
    }
    free(system_crt);
}

void check_toolkit_consistency(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct cuda_home *h = ctx_home(ctx);
    const struct nvcc_info *n = ctx_nvcc(ctx);
    if (!n || !n->ran) {
        result_set(r, CHECK_SKIP, "no working nvcc in CUDA_HOME");
        return;
    }
    const struct version *rel = &n->version.release;
    struct version want = ctx_torch_cuda(ctx); /* the release a fix fetches */
    if (want.nparts == 0)
        want = *rel;
    struct finding w = {CHECK_OK, NULL, NULL};
    nvcc_on_path_matches(ctx, n, r, &w);
    headers_match(h->path, rel, &want, r, &w);
    records_match(h->path, rel, &want, r, &w);
    char *home_real = fs_realpath(h->path);
    cicc_inside(h->path, home_real, &want, r, &w);
    no_system_headers(ctx, h->path, home_real, r, &w);
    free(home_real);
    if (w.status == CHECK_OK) {
        char nb[32];
        result_set(r, CHECK_OK, "nvcc, headers and parts of %s are one CUDA %s toolkit", h->path,
                   version_str(rel, nb, sizeof nb));
    } else {
        result_set(r, w.status, "%s", w.summary);
        r->fix = w.fix;
        w.fix = NULL;
    }
    free(w.summary);
    free(w.fix);
}

/* The archs a build would target: --arch, else TORCH_CUDA_ARCH_LIST (as SageAttention maps it:
 * 9.0 → sm_90a, 12.0 → sm_120a), else the local GPUs. */
static int target_archs(struct doctor_ctx *ctx, struct gpu_arch *out, int max, const char **from)
{
    int n = 0;
    if (ctx->opts->arch) {
        *from = "--arch";
        char *copy = xstrdup(ctx->opts->arch);
        char *save = NULL;
        for (char *a = strtok_r(copy, ",; ", &save); a && n < max; a = strtok_r(NULL, ",; ", &save))
            if (arch_parse(a, &out[n]) == 0)
                n++;
        free(copy);
        return n;
    }
    if (ctx->env.torch_arch_list && *ctx->env.torch_arch_list) {
        *from = "TORCH_CUDA_ARCH_LIST";
        struct arch_entries l;
        rule_parse_arch_list(ctx->env.torch_arch_list, ctx->torch.version, &l);
        for (int i = 0; i < l.n && n < max; i++)
            if (l.e[i].parsed && l.e[i].arch.major >= 8)
                out[n++] = arch_for_kernels(l.e[i].arch.major, l.e[i].arch.minor);
        rule_arch_entries_free(&l);
        return n;
    }
    *from = "the GPUs here";
    const struct gpu_info *g = ctx_gpu(ctx);
    for (int i = 0; i < g->count && n < max; i++)
        out[n++] = arch_for_kernels(g->devices[i].cc_major, g->devices[i].cc_minor);
    return n;
}

void check_toolkit_archs(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct nvcc_info *n = ctx_nvcc(ctx);
    if (!n || !n->ran) {
        result_set(r, CHECK_SKIP, "no working nvcc");
        return;
    }
    ctx_torch(ctx);
    struct gpu_arch archs[32];
    const char *from = NULL;
    int na = target_archs(ctx, archs, 32, &from);
    if (na == 0) {
        result_set(r, CHECK_SKIP, "no target arch (no GPU, no --arch, no TORCH_CUDA_ARCH_LIST)");
        return;
    }
    result_ev(r, "from", "%s", from);
    struct strbuf names = STRBUF_INIT, problems = STRBUF_INIT;
    struct version need = {{12, 0, 0, 0}, 2}; /* SageAttention's floor for any arch */
    int bad = 0;
    const struct version *rel = &n->version.release;
    char nb[32], vb[32], name[32];
    version_str(rel, nb, sizeof nb);
    for (int i = 0; i < na; i++) {
        arch_sm_name(&archs[i], name, sizeof name);
        sb_addf(&names, "%s%s", i ? " " : "", name);
        char *why = arch_nvcc_refusal(&archs[i], rel, (const char *const *)n->archs, n->narchs);
        struct version gate;
        if (!why && arch_min_nvcc_for_kernels(&archs[i], &gate) == 0 &&
            version_cmp_n(rel, &gate, 2) < 0)
            why = xasprintf("attention kernels for %s need nvcc >= %s (nvcc is %s)", name,
                            version_str(&gate, vb, sizeof vb), nb);
        struct version floor;
        if (arch_min_nvcc_for_kernels(&archs[i], &floor) == 0 && version_cmp(&floor, &need) > 0)
            need = floor;
        if (why) {
            sb_addf(&problems, "%s%s", bad ? "; " : "", why);
            result_ev(r, name, "%s", why);
            free(why);
            bad++;
        } else {
            result_ev(r, name, "ok");
        }
    }
    if (!bad && version_cmp_n(rel, &need, 2) < 0) {
        sb_addf(&problems, "SageAttention-class kernels need CUDA >= 12.0 (nvcc is %s)", nb);
        bad++;
    }
    result_ev(r, "archs", "%s", sb_str(&names));
    if (bad) {
        struct version want = ctx_torch_cuda(ctx);
        if (want.nparts == 0 || version_cmp_n(&want, &need, 2) < 0)
            want = need;
        result_set(r, CHECK_ERROR, "nvcc %s cannot build %s", nb, sb_str(&problems));
        r->fix = fix_fetch_cuda(&want);
    } else {
        result_set(r, CHECK_OK, "nvcc %s builds %s (from %s)", nb, sb_str(&names), from);
    }
    sb_free(&names);
    sb_free(&problems);
}

void check_toolkit_driver_ptx(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct nvcc_info *n = ctx_nvcc(ctx);
    const struct gpu_info *g = ctx_gpu(ctx);
    if (!n || !n->ran || g->cuda_driver_version <= 0) {
        result_set(r, CHECK_SKIP, !n || !n->ran ? "no working nvcc" : "no driver version known");
        return;
    }
    struct version dv = version_from_cuda_int(g->cuda_driver_version);
    char db[32], nb[32];
    version_str(&dv, db, sizeof db);
    version_str(&n->version.release, nb, sizeof nb);
    result_ev(r, "driver_max_cuda", "%s", db);
    result_ev(r, "nvcc", "%s", nb);
    if (version_cmp_n(&n->version.release, &dv, 2) > 0) {
        result_set(r, CHECK_WARN,
                   "nvcc %s is newer than the driver's CUDA %s: SASS for the exact GPU runs, but "
                   "PTX from this nvcc fails to JIT (cudaErrorUnsupportedPtxVersion)",
                   nb, db);
        r->fix = fix_fetch_cuda(&dv);
        return;
    }
    result_set(r, CHECK_OK, "the driver (CUDA %s) runs PTX from nvcc %s", db, nb);
}
