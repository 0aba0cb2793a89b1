#include "pypi_stub.h"
#include "util/fs.h"
#include "util/proc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

char **stub_symbols(const char *text, int *n)
{
    char **out = xcalloc(1, sizeof *out);
    int cap = 1;
    *n = 0;
    const char *kw = "CUresult";
    size_t kl = strlen(kw);
    for (const char *p = text ? strstr(text, kw) : NULL; p; p = strstr(p + kl, kw)) {
        if (p > text && ident_char(p[-1]))
            continue;
        const char *q = p + kl;
        if (!isspace((unsigned char)*q))
            continue;
        while (isspace((unsigned char)*q))
            q++;
        if (strncmp(q, "cu", 2))
            continue;
        const char *name = q;
        while (ident_char(*q))
            q++;
        size_t len = (size_t)(q - name);
        while (isspace((unsigned char)*q))
            q++;
        if (*q != '(' || len > 128)
            continue;
        out = xgrow(out, &cap, *n + 2, sizeof *out);
        out[(*n)++] = xstrndup(name, len);
        out[*n] = NULL;
    }
    qsort(out, (size_t)*n, sizeof *out, by_name);
    int k = 0;
    for (int i = 0; i < *n; i++) {
        if (k && !strcmp(out[k - 1], out[i]))
            free(out[i]);
        else
            out[k++] = out[i];
    }
    *n = k;
    out[k] = NULL;
    return out;
}

char *stub_source(char *const *names, int n)
{
    struct strbuf b = STRBUF_INIT;
    sb_adds(&b, "/* Link-time stand-in for libcuda.so.1, made by sagebuild from cuda.h. */\n"
                "#define STUB __attribute__((visibility(\"default\"))) int\n");
    for (int i = 0; i < n; i++)
        sb_addf(&b, "STUB %s(void) { return 999; }\n", names[i]);
    return sb_detach(&b);
}

/* cc -E of a header of the prefix with extra defines; its text appended to all. */
static int preprocess(const char *cc, const char *inc, const char *header, const char *define,
                      struct strbuf *all, char **why)
{
    char *path = fs_join(inc, header);
    char *iflag = xasprintf("-I%s", inc);
    const char *argv[] = {cc, "-E", "-P", "-x", "c", iflag, path, define, NULL};
    struct proc_opts o = {.timeout_ms = STUB_TIMEOUT_MS, .max_output = 16u << 20};
    struct proc_result r;
    int rc = proc_run(argv, &o, &r);
    if (rc == 0) {
        sb_add(all, r.out, r.out_len);
    } else {
        char *buf = proc_describe(&r);
        *why = xasprintf("%s -E %s: %s: %.300s", cc, path, buf, r.err ? r.err : "");
        free(buf);
    }
    proc_result_free(&r);
    free(iflag);
    free(path);
    return rc;
}

/* Whether the toolkit's nvcc is built for the machine this runs on (ELF e_machine): the host
 * compiler makes a stub for this machine only. Unknown counts as yes. */
static int same_machine(const char *root)
{
#if defined(__x86_64__)
    const int mine = 62;
#elif defined(__aarch64__)
    const int mine = 183;
#else
    const int mine = -1;
#endif
    char *nvcc = fs_join(root, "bin/nvcc");
    unsigned char h[20] = {0};
    FILE *f = fopen(nvcc, "rb");
    size_t got = f ? fread(h, 1, sizeof h, f) : 0;
    if (f)
        fclose(f);
    free(nvcc);
    if (mine < 0 || got < sizeof h ||
        memcmp(h,
               "\x7f"
               "ELF",
               4) ||
        h[5] != 1)
        return 1;
    return (h[18] | (h[19] << 8)) == mine;
}

int stub_make_libcuda(const char *root, const char *cc, struct strbuf *log, char **why)
{
    char *target = fs_join(root, "lib/stubs/libcuda.so");
    char *inc = fs_join(root, "include");
    char *cuda_h = fs_join(inc, "cuda.h");
    char *profiler_h = fs_join(inc, "cudaProfiler.h");
    char *dir = fs_dirname(target);
    char *src = NULL;
    int rc = 0;
    if (fs_exists(target))
        goto out;
    if (!cc || !fs_exists(cuda_h) || !same_machine(root)) {
        *why = xstrdup(!cc                  ? "no C compiler"
                       : !fs_exists(cuda_h) ? "no include/cuda.h"
                                            : "the toolkit is for another machine");
        rc = 1;
        goto out;
    }
    /* Programs see cuda.h's names three ways; the stub exports all of them. */
    static const char *const defines[] = {"-DSAGEBUILD_STUB",
                                          "-DCUDA_API_PER_THREAD_DEFAULT_STREAM",
                                          "-D__CUDA_API_VERSION_INTERNAL"};
    struct strbuf all = STRBUF_INIT;
    for (size_t i = 0; rc == 0 && i < 3; i++)
        rc = preprocess(cc, inc, "cuda.h", defines[i], &all, why);
    if (rc == 0 && fs_exists(profiler_h))
        rc = preprocess(cc, inc, "cudaProfiler.h", defines[0], &all, why);
    int n = 0;
    char **names = rc == 0 ? stub_symbols(sb_str(&all), &n) : NULL;
    sb_free(&all);
    if (rc == 0 && n < 100) {
        *why = xasprintf("%s declares only %d driver functions; not a stub to rely on", cuda_h, n);
        rc = -1;
    }
    if (rc == 0) {
        char *text = stub_source(names, n);
        src = fs_join(dir, ".libcuda-stub.c");
        fs_mkdir_p(dir, 0755);
        if (fs_write_file(src, text, strlen(text)) < 0) {
            *why = xasprintf("cannot write %s", src);
            rc = -1;
        }
        free(text);
    }
    if (rc == 0) {
        const char *argv[] = {cc,   "-shared", "-fPIC", "-O0", "-Wl,-soname,libcuda.so.1",
                              "-o", target,    src,     NULL};
        struct proc_opts o = {.timeout_ms = STUB_TIMEOUT_MS, .merge_stderr = 1};
        struct proc_result r;
        if (proc_run(argv, &o, &r) < 0) {
            char *buf = proc_describe(&r);
            *why = xasprintf("%s -shared: %s: %.300s", cc, buf, r.out ? r.out : "");
            free(buf);
            unlink(target);
            rc = -1;
        } else {
            sb_addf(log,
                    "lib/stubs/libcuda.so: link-time stub with %d driver functions from "
                    "cuda.h\n",
                    n);
        }
        proc_result_free(&r);
    }
    for (int i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
out:
    if (src)
        unlink(src);
    free(src);
    free(dir);
    free(profiler_h);
    free(cuda_h);
    free(inc);
    free(target);
    return rc;
}
