#include "probe/nvcc.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int nvcc_parse_version(const char *text, struct nvcc_version *out)
{
    memset(out, 0, sizeof *out);
    if (!text)
        return -1;
    for (const char *p = strstr(text, "release "); p; p = strstr(p + 1, "release ")) {
        const char *q = p + 8;
        struct version v;
        /* torch's regex needs digits '.' digits right after "release ". */
        if (!isdigit((unsigned char)*q) || version_parse(q, &v) < 0 || v.nparts < 2)
            continue;
        v.nparts = 2;
        v.part[2] = v.part[3] = 0;
        out->release = v;
        const char *vv = strstr(q, ", V");
        const char *nl = strchr(q, '\n');
        if (vv && (!nl || vv < nl) && isdigit((unsigned char)vv[3]))
            version_parse(vv + 3, &out->full);
        return 0;
    }
    return -1;
}

char **nvcc_parse_arch_list(const char *text, size_t *n)
{
    *n = 0;
    size_t cap = 0;
    char **list = NULL;
    for (const char *p = text; p && *p;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        const char *start = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (p == start)
            break;
        char *word = xstrndup(start, (size_t)(p - start));
        struct gpu_arch a;
        if ((!strncmp(word, "compute_", 8) || !strncmp(word, "sm_", 3)) &&
            arch_parse(word, &a) == 0) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 16;
                list = xrealloc(list, cap * sizeof *list);
            }
            list[(*n)++] = word;
        } else {
            free(word);
        }
    }
    return list;
}

void nvcc_free_arch_list(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

char *nvcc_path_in(const char *cuda_home)
{
    return fs_join(cuda_home, "bin/nvcc");
}

static void set_error_from(struct nvcc_info *out, const char *what, const struct proc_result *r)
{
    char *why = proc_describe(r);
    out->error = xasprintf("%s %s %s", out->path, what, why);
    free(why);
}

int probe_nvcc(const char *nvcc_path, int timeout_ms, struct nvcc_info *out)
{
    memset(out, 0, sizeof *out);
    out->path = xstrdup(nvcc_path);
    if (!fs_exists(nvcc_path)) {
        out->error = xasprintf("%s does not exist", nvcc_path);
        return -1;
    }
    if (!fs_is_executable(nvcc_path)) {
        out->error = xasprintf("%s is not an executable file", nvcc_path);
        return -1;
    }
    out->found = 1;
    struct proc_opts opts = {.timeout_ms = timeout_ms > 0 ? timeout_ms : NVCC_PROBE_TIMEOUT_MS,
                             .max_output = 1 << 16,
                             .merge_stderr = 1};
    struct proc_result r;
    const char *argv_version[] = {nvcc_path, "--version", NULL};
    int rc = proc_run(argv_version, &opts, &r);
    out->elapsed_ms = r.elapsed_ms;
    if (nvcc_parse_version(r.out, &out->version) == 0) {
        out->ran = 1;
    } else if (rc == 0) {
        out->error = r.out_len ? xasprintf("%s --version printed no 'release X.Y' line", nvcc_path)
                               : xasprintf("%s --version printed nothing", nvcc_path);
    } else {
        set_error_from(out, "--version", &r);
    }
    int timed_out = r.timed_out;
    proc_result_free(&r);
    if (!out->ran || timed_out)
        return -1;

    const char *argv_list[] = {nvcc_path, "--list-gpu-arch", NULL};
    if (proc_run(argv_list, &opts, &r) == 0) {
        out->archs = nvcc_parse_arch_list(r.out, &out->narchs);
        if (out->narchs == 0) {
            free(out->archs);
            out->archs = NULL;
        }
    }
    out->elapsed_ms += r.elapsed_ms;
    proc_result_free(&r);
    return 0;
}

void nvcc_info_free(struct nvcc_info *n)
{
    free(n->path);
    nvcc_free_arch_list(n->archs, n->narchs);
    free(n->error);
    memset(n, 0, sizeof *n);
}
