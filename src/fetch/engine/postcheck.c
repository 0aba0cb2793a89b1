#include "postcheck.h"
#include "util/fs.h"
#include "util/proc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char postcheck_source[] =
    "#include <cuda_fp16.h>\n"
    "#include <cuda_bf16.h>\n"
    "#include <cuda_fp8.h>\n"
    "#include <cuda_runtime.h>\n"
    "__global__ void mix(__half *h, const __nv_bfloat16 *b, const __nv_fp8_e4m3 *f)\n"
    "{\n"
    "    h[threadIdx.x] = __float2half(__bfloat162float(b[threadIdx.x]) + float(f[threadIdx.x]));\n"
    "}\n"
    "int main(void)\n"
    "{\n"
    "    mix<<<1, 32>>>(nullptr, nullptr, nullptr);\n"
    "    return cudaGetLastError() == cudaSuccess ? 0 : 1;\n"
    "}\n";

int postcheck_trace_uses_root(const char *trace, const char *root)
{
    /* ld -t prints each input it opens; the libcudart line must lie under root. */
    const char *p = trace;
    int seen = 0;
    while (p && *p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *line = xstrndup(p, len);
        if (strstr(line, "libcudart")) {
            seen = 1;
            if (!strstr(line, root)) {
                free(line);
                return 0;
            }
        }
        free(line);
        p = eol ? eol + 1 : NULL;
    }
    return seen;
}

/* The kind of a failure to set up the check: the compiler is not to blame for a full disk. */
static enum fetch_error_kind setup_failure(int errnum)
{
    return fetch_error_kind_of_errno(errnum) == FETCH_ERR_DISK ? FETCH_ERR_DISK
                                                               : FETCH_ERR_POSTCHECK;
}

enum fetch_error_kind postcheck_compile(const char *root, const char *cxx, struct strbuf *log)
{
    const char *tmpdir = getenv("TMPDIR");
    char *dir = xasprintf("%s/sagebuild-check-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(dir)) {
        int e = errno;
        sb_addf(log, "cannot create a temporary folder: %s\n", strerror(e));
        free(dir);
        return setup_failure(e);
    }
    char *src = fs_join(dir, "check.cu"), *exe = fs_join(dir, "check");
    char *nvcc = fs_join(root, "bin/nvcc");
    enum fetch_error_kind rc = FETCH_ERR_POSTCHECK;
    if (fs_write_file(src, postcheck_source, strlen(postcheck_source)) < 0) {
        int e = errno;
        sb_addf(log, "cannot write %s: %s\n", src, strerror(e));
        rc = setup_failure(e);
        goto out;
    }
    /* Shared libcudart, as torch links it (-L$CUDA_HOME/lib64 -lcudart). The environment's
     * search paths are cleared so only the tree's own files can satisfy the build. */
    const char *argv[] = {nvcc, "-ccbin", cxx, "-cudart", "shared", "-Xlinker",
                          "-t", "-o",     exe, src,       NULL};
    const char *env[] = {
        "LIBRARY_PATH",      "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "NVCC_PREPEND_FLAGS",
        "NVCC_APPEND_FLAGS", NULL};
    struct proc_opts po = {
        .timeout_ms = POSTCHECK_TIMEOUT_MS, .merge_stderr = 1, .env_set = env, .cwd = dir};
    struct proc_result pr;
    int ran = proc_run(argv, &po, &pr);
    if (ran != 0) {
        char *why = proc_describe(&pr);
        sb_addf(log, "nvcc -ccbin %s: %s\n%s", cxx, why, pr.out ? pr.out : "");
        free(why);
    } else if (!postcheck_trace_uses_root(pr.out, root)) {
        sb_addf(log, "the program linked, but not against %s/lib64/libcudart\n", root);
    } else {
        rc = FETCH_ERR_NONE;
    }
    proc_result_free(&pr);
out:
    unlink(src);
    unlink(exe);
    rmdir(dir);
    free(src);
    free(exe);
    free(nvcc);
    free(dir);
    return rc;
}
