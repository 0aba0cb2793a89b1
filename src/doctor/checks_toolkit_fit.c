/* toolkit.consistency (one toolkit, not pieces of several: catalog #16), toolkit.archs (the
 * requested archs against this nvcc: #2, #5) and toolkit.driver_ptx (§4's PTX JIT caveat). */
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

static void worsen(struct check_result *r, enum check_status s, char **summary, char *text,
                   char **fix, char *fix_text)
{
    /* Keep the first, most severe finding as the summary and its fix. */
    int rank_new = s == CHECK_ERROR ? 2 : s == CHECK_WARN ? 1 : 0;
    int rank_old = r->status == CHECK_ERROR ? 2 : r->status == CHECK_WARN ? 1 : 0;
    if (rank_new > rank_old) {
        r->status = s;
        free(*summary);
        *summary = text;
        free(*fix);
        *fix = fix_text;
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

void check_toolkit_consistency(struct doctor_ctx *ctx, struct check_result *r)
{
    const struct cuda_home *h = ctx_home(ctx);
    const struct nvcc_info *n = ctx_nvcc(ctx);
    if (!n || !n->ran) {
        result_set(r, CHECK_SKIP, "no working nvcc in CUDA_HOME");
        return;
    }
    char *summary = NULL, *fix = NULL;
    char nb[32], ob[32];
    const struct version *rel = &n->version.release;
    version_str(rel, nb, sizeof nb);
    r->status = CHECK_OK;

    /* 1. The nvcc on PATH is the one tools outside torch (CMake, Makefiles) call. */
    char *home_nvcc_real = fs_realpath(n->path);
    char *path_nvcc_real = h->nvcc_on_path ? fs_realpath(h->nvcc_on_path) : NULL;
    if (path_nvcc_real && home_nvcc_real && strcmp(path_nvcc_real, home_nvcc_real)) {
        struct nvcc_info other;
        probe_nvcc(h->nvcc_on_path, NVCC_PROBE_TIMEOUT_MS, &other);
        const char *ov = other.ran ? version_str(&other.version.release, ob, sizeof ob) : "?";
        result_ev(r, "nvcc_on_path", "%s (%s)", h->nvcc_on_path, ov);
        int differ = !other.ran || !same_major_minor(&other.version.release, rel);
        char *bin = fs_join(h->path, "bin");
        char *qbin = shell_quote(bin);
        worsen(r, differ ? CHECK_WARN : CHECK_OK, &summary,
               xasprintf("the nvcc on PATH (%s, %s) is not CUDA_HOME's (%s, %s)", h->nvcc_on_path,
                         ov, n->path, nb),
               &fix, xasprintf("export PATH=%s:\"$PATH\"", qbin));
        free(qbin);
        free(bin);
        nvcc_info_free(&other);
    }
    free(home_nvcc_real);
    free(path_nvcc_real);

    /* 2. Headers of the same release as the compiler. */
    struct version want = ctx_torch_cuda(ctx);
    if (want.nparts == 0)
        want = *rel;
    static const char *const headers[][2] = {{"include/cuda.h", "CUDA_VERSION"},
                                             {"include/cuda_runtime_api.h", "CUDART_VERSION"}};
    for (size_t i = 0; i < 2; i++) {
        int v = header_define(h->path, headers[i][0], headers[i][1]);
        if (!v)
            continue;
        struct version hv = version_from_cuda_int(v);
        result_ev(r, headers[i][1], "%d (%s)", v, headers[i][0]);
        if (!same_major_minor(&hv, rel))
            worsen(r, CHECK_ERROR, &summary,
                   xasprintf("%s says CUDA %s but nvcc is %s: headers from another toolkit",
                             headers[i][0], version_str(&hv, ob, sizeof ob), nb),
                   &fix, fix_fetch_cuda(&want));
    }

    /* 3. What the toolkit records about its parts (13.x splits crt and nvvm from nvcc). */
    char names[16][48];
    struct version vers[16];
    int nrec = recorded_versions(h->path, names, vers, 16);
    for (int i = 0; i < nrec; i++) {
        result_ev(r, names[i], "%s", version_str(&vers[i], ob, sizeof ob));
        if (!same_major_minor(&vers[i], rel))
            worsen(r, CHECK_ERROR, &summary,
                   xasprintf("%s %s is installed with nvcc %s: parts of two toolkits", names[i],
                             version_str(&vers[i], ob, sizeof ob), nb),
                   &fix, fix_fetch_cuda(&want));
    }

    /* 4. cicc and crt must come from this tree, not through a link into another one. */
    char *home_real = fs_realpath(h->path);
    char *cicc = fs_join(h->path, "nvvm/bin/cicc");
    char *cicc_real = fs_realpath(cicc);
    if (home_real && cicc_real && strncmp(cicc_real, home_real, strlen(home_real)) &&
        !fs_is_dir(cicc_real)) {
        result_ev(r, "cicc", "%s", cicc_real);
        worsen(r, CHECK_WARN, &summary,
               xasprintf("cicc resolves to %s, outside CUDA_HOME (%s)", cicc_real, home_real), &fix,
               fix_fetch_cuda(&want));
    }
    free(cicc);
    free(cicc_real);

    /* 5. Distribution headers in /usr/include shadow nothing for nvcc, but a -I/usr/include or
     * a CMake FindCUDA may pick them up next to another toolkit's nvcc. */
    if (home_real && strcmp(home_real, "/usr") && fs_is_file("/usr/include/crt/host_config.h")) {
        result_ev(r, "system_crt", "/usr/include/crt/host_config.h");
        worsen(r, CHECK_WARN, &summary,
               xasprintf("/usr/include/crt holds another toolkit's headers (distribution "
                         "package) beside CUDA_HOME=%s",
                         h->path),
               &fix, xstrdup("sudo apt-get remove nvidia-cuda-dev nvidia-cuda-toolkit"));
    }
    free(home_real);

    if (r->status == CHECK_OK) {
        free(summary);
        free(fix);
        result_set(r, CHECK_OK, "nvcc, headers and parts of %s are one CUDA %s toolkit", h->path,
                   nb);
    } else {
        enum check_status s = r->status;
        result_set(r, s, "%s", summary);
        free(summary);
        r->fix = fix;
    }
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
