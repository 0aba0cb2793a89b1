#include "plan.h"
#include "util/shquote.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

int build_parse_head_dims(const char *spec, int *dims, int *n, char **error)
{
    *n = 0;
    *error = NULL;
    char *copy = xstrdup(spec ? spec : "");
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",; \t", &save); tok && !rc;
         tok = strtok_r(NULL, ",; \t", &save)) {
        char *end;
        long d = strtol(tok, &end, 10);
        if (*end || end == tok || (d != 64 && d != 128)) {
            *error = xasprintf("head dim '%s': the kernels compile 64 and 128 (any other head "
                               "dim up to 128 runs padded to one of them)",
                               tok);
            rc = -1;
            break;
        }
        int seen = 0;
        for (int k = 0; k < *n; k++)
            seen |= dims[k] == (int)d;
        if (!seen && *n < BUILD_MAX_HEAD_DIMS)
            dims[(*n)++] = (int)d;
    }
    free(copy);
    if (!rc && *n == 0) {
        *error = xstrdup("--head-dims is empty; give 64, 128 or 64,128");
        rc = -1;
    }
    if (rc) {
        *n = 0;
        return -1;
    }
    for (int i = 1; i < *n; i++)
        for (int k = i; k > 0 && dims[k - 1] > dims[k]; k--) {
            int t = dims[k];
            dims[k] = dims[k - 1];
            dims[k - 1] = t;
        }
    return 0;
}

char *build_join_head_dims(const int *dims, int n, const char *sep)
{
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < n; i++)
        sb_addf(&sb, "%s%d", i ? sep : "", dims[i]);
    return sb_detach(&sb);
}

static char **argv_from(struct strbuf *parts, int n)
{
    char **argv = xcalloc((size_t)n + 1, sizeof *argv);
    for (int i = 0; i < n; i++)
        argv[i] = sb_detach(&parts[i]);
    return argv;
}

#define MAX_ARGS 24

char **build_cmake_configure_argv(const struct build_plan *p)
{
    struct strbuf a[MAX_ARGS];
    memset(a, 0, sizeof a);
    int n = 0;
    sb_adds(&a[n++], p->cmake);
    sb_adds(&a[n++], "-S");
    sb_adds(&a[n++], p->kernels_dir);
    sb_adds(&a[n++], "-B");
    sb_adds(&a[n++], p->build_dir);
    sb_adds(&a[n++], "-G");
    sb_adds(&a[n++], p->generator);
    sb_adds(&a[n++], "-DCMAKE_BUILD_TYPE=Release");
    sb_addf(&a[n++], "-DCMAKE_CUDA_COMPILER=%s", p->nvcc);
    sb_addf(&a[n++], "-DCMAKE_CUDA_HOST_COMPILER=%s", p->host_cxx);
    sb_addf(&a[n++], "-DSAGEATTN_ARCHS=%s", p->archs);
    sb_addf(&a[n++], "-DSAGEATTN_HEAD_DIMS=%s", p->head_dims);
    sb_addf(&a[n++], "-DCMAKE_INSTALL_PREFIX=%s", p->out_dir);
    /* not in the contract's line, but harmless: the record reads the real nvcc flags from it */
    sb_adds(&a[n++], "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON");
    return argv_from(a, n);
}

char **build_cmake_build_argv(const struct build_plan *p)
{
    struct strbuf a[MAX_ARGS];
    memset(a, 0, sizeof a);
    int n = 0;
    sb_adds(&a[n++], p->cmake);
    sb_adds(&a[n++], "--build");
    sb_adds(&a[n++], p->build_dir);
    sb_adds(&a[n++], "-j");
    sb_addf(&a[n++], "%d", p->jobs > 0 ? p->jobs : 1);
    return argv_from(a, n);
}

char **build_cmake_install_argv(const struct build_plan *p)
{
    struct strbuf a[MAX_ARGS];
    memset(a, 0, sizeof a);
    int n = 0;
    sb_adds(&a[n++], p->cmake);
    sb_adds(&a[n++], "--install");
    sb_adds(&a[n++], p->build_dir);
    return argv_from(a, n);
}

void build_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **p = argv; *p; p++)
        free(*p);
    free(argv);
}

char *build_argv_line(char *const *argv)
{
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; argv[i]; i++) {
        char *word = shell_quote(argv[i]);
        sb_addf(&sb, "%s%s", i ? " " : "", word);
        free(word);
    }
    return sb_detach(&sb);
}
