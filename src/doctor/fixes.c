#include "doctor/fixes.h"
#include "doctor/rules.h"
#include "toolchain/jobs.h"
#include "util/fs.h"
#include "util/shquote.h"
#include "util/strbuf.h"

#include <dirent.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *fix_fetch_cuda(const struct version *cuda)
{
    if (!cuda || cuda->nparts == 0)
        return xstrdup("sagebuild fetch-cuda --match-torch && eval \"$(sagebuild env)\"");
    return xasprintf("sagebuild fetch-cuda --cuda %d.%d && eval \"$(sagebuild env)\"",
                     cuda->part[0], cuda->part[1]);
}

char *fix_install_torch(struct doctor_ctx *ctx, int pin_version, int reinstall)
{
    const struct gpu_info *g = ctx_gpu(ctx);
    const char *tag = NULL;
    if (g->cuda_driver_version > 0) {
        tag = rule_torch_index_tag(g->cuda_driver_version);
    } else {
        const struct nvcc_info *n = ctx_nvcc(ctx);
        if (n && n->ran)
            tag = rule_torch_index_tag_exact(&n->version.release);
    }
    if (!tag)
        tag = "cu130";
    char *py = shell_quote(ctx_python(ctx));
    char *pin = NULL;
    const struct torch_info *t = ctx_torch(ctx);
    if (pin_version && t->version) {
        size_t n = strcspn(t->version, "+");
        pin = xasprintf("==%.*s", (int)n, t->version);
    }
    char *fix = xasprintf("%s -m pip install %storch%s --index-url "
                          "https://download.pytorch.org/whl/%s",
                          py, reinstall ? "--force-reinstall " : "", pin ? pin : "", tag);
    free(pin);
    free(py);
    return fix;
}

char *local_arch_list(struct doctor_ctx *ctx)
{
    const struct gpu_info *g = ctx_gpu(ctx);
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < g->count; i++) {
        char one[16];
        snprintf(one, sizeof one, "%d.%d", g->devices[i].cc_major, g->devices[i].cc_minor);
        if (sb.len && strstr(sb_str(&sb), one))
            continue;
        if (sb.len)
            sb_adds(&sb, ";");
        sb_adds(&sb, one);
    }
    if (!sb.len)
        return NULL;
    return sb_detach(&sb);
}

char *fix_rebuild_sage(struct doctor_ctx *ctx, const char *arch_list)
{
    char *local = arch_list ? NULL : local_arch_list(ctx);
    const char *archs = arch_list ? arch_list : local;
    const struct resources *res = ctx_resources(ctx);
    int jobs = toolchain_jobs(res->cores, res->mem_avail_kb);
    char *py = shell_quote(ctx_python(ctx));
    char *fix = xasprintf("%s%s%sMAX_JOBS=%d EXT_PARALLEL=1 %s -m pip install --no-build-isolation "
                          "--force-reinstall --no-deps "
                          "'git+https://github.com/thu-ml/SageAttention.git'",
                          archs ? "TORCH_CUDA_ARCH_LIST='" : "", archs ? archs : "",
                          archs ? "' " : "", jobs, py);
    free(py);
    free(local);
    return fix;
}

char *site_dist_metadata_text(const char *site, const char *name)
{
    DIR *d = site ? opendir(site) : NULL;
    struct dirent *de;
    char *text = NULL;
    size_t nlen = strlen(name);
    while (d && !text && (de = readdir(d))) {
        /* "triton-3.5.0.dist-info", not "triton_kernels-..." */
        if (strncmp(de->d_name, name, nlen) || de->d_name[nlen] != '-' ||
            !strstr(de->d_name, ".dist-info"))
            continue;
        char *meta = xasprintf("%s/%s/METADATA", site, de->d_name);
        text = fs_read_file(meta, 1 << 20, NULL);
        free(meta);
    }
    if (d)
        closedir(d);
    return text;
}

char *site_dist_metadata(const char *site, const char *name, const char *key)
{
    char *text = site_dist_metadata_text(site, name);
    char *needle = xasprintf("\n%s: ", key);
    const char *v = text ? strstr(text, needle) : NULL;
    char *value = NULL;
    if (v) {
        v += strlen(needle);
        value = xstrndup(v, strcspn(v, "\r\n"));
    }
    free(needle);
    free(text);
    return value;
}
