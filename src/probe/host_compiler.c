#include "probe/host_compiler.h"
#include "probe/cuda_home.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/strbuf.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Finds "needle" then an optional run of spaces and a number, inside [line, line+len). */
static int number_after(const char *line, size_t len, const char *needle, int *n)
{
    size_t nl = strlen(needle);
    for (size_t i = 0; i + nl <= len; i++) {
        if (memcmp(line + i, needle, nl) != 0)
            continue;
        size_t j = i + nl;
        while (j < len && line[j] == ' ')
            j++;
        if (j >= len || !isdigit((unsigned char)line[j]))
            continue;
        long v = 0;
        while (j < len && isdigit((unsigned char)line[j]) && v < 10000)
            v = v * 10 + (line[j++] - '0');
        *n = (int)v;
        return 1;
    }
    return 0;
}

static int contains(const char *line, size_t len, const char *needle)
{
    size_t nl = strlen(needle);
    for (size_t i = 0; i + nl <= len; i++)
        if (!memcmp(line + i, needle, nl))
            return 1;
    return 0;
}

/* The limit is whatever condition guards the `#error -- unsupported GNU version!` line, so the
 * parser follows NVIDIA's wording rather than a line number. */
int host_config_parse(const char *text, struct host_limits *out)
{
    out->gcc_max = -1;
    out->clang_max = -1;
    if (!text)
        return -1;
    int fallback_gcc = -1;
    const char *last_if = NULL;
    size_t last_if_len = 0;
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *p = line;
        while (p < line + len && (*p == ' ' || *p == '\t'))
            p++;
        size_t rest = len - (size_t)(p - line);
        if (rest >= 3 && !memcmp(p, "#if", 3)) {
            last_if = p;
            last_if_len = rest;
            int n;
            if (fallback_gcc < 0 && number_after(p, rest, "__GNUC__ >", &n) &&
                !contains(p, rest, "__GNUC__ >="))
                fallback_gcc = n;
        } else if (rest >= 6 && !memcmp(p, "#error", 6) && last_if) {
            int n;
            if (out->gcc_max < 0 && contains(p, rest, "unsupported GNU version") &&
                number_after(last_if, last_if_len, "__GNUC__ >", &n) &&
                !contains(last_if, last_if_len, "__GNUC__ >="))
                out->gcc_max = n;
            if (out->clang_max < 0 && contains(p, rest, "unsupported clang version")) {
                if (number_after(last_if, last_if_len, "__clang_major__ >=", &n))
                    out->clang_max = n - 1;
                else if (number_after(last_if, last_if_len, "__clang_major__ >", &n))
                    out->clang_max = n;
            }
        }
        line = nl ? nl + 1 : line + len;
    }
    if (out->gcc_max < 0)
        out->gcc_max = fallback_gcc;
    return out->gcc_max >= 0 ? 0 : -1;
}

char *host_config_find(const char *cuda_home)
{
    const char *rel[] = {"include/crt/host_config.h"};
    char *path = cuda_home_find_file(cuda_home, rel, 1);
    if (path && !fs_is_file(path)) {
        free(path);
        return NULL;
    }
    return path;
}

static int base_is_clang(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return !strncmp(base, "clang", 5);
}

int probe_compiler(const char *cc, struct compiler_info *out)
{
    memset(out, 0, sizeof *out);
    out->command = xstrdup(cc);
    /* "ccache gcc" and "gcc -m64" happen in $CC: the compiler is the first word that is not a
     * launcher. Only the common launchers are skipped. */
    char *words = xstrdup(cc);
    char *argv0 = NULL;
    for (char *save = NULL, *w = strtok_r(words, " \t", &save); w;
         w = strtok_r(NULL, " \t", &save)) {
        const char *base = strrchr(w, '/');
        base = base ? base + 1 : w;
        if (!strcmp(base, "ccache") || !strcmp(base, "sccache") || !strcmp(base, "distcc"))
            continue;
        argv0 = w;
        break;
    }
    if (!argv0) {
        out->error = xasprintf("'%s' names no compiler", cc);
        free(words);
        return -1;
    }
    out->path = strchr(argv0, '/') ? xstrdup(argv0) : fs_which(argv0);
    if (!out->path || !fs_is_executable(out->path)) {
        out->error = xasprintf("%s not found%s", argv0, strchr(argv0, '/') ? "" : " on PATH");
        free(words);
        return -1;
    }
    char *real = fs_realpath(out->path);
    out->is_clang = base_is_clang(argv0) || (real && base_is_clang(real));
    free(real);
    const char *argv[] = {out->path, "-dumpfullversion", "-dumpversion", NULL};
    struct proc_opts opts = {.timeout_ms = COMPILER_PROBE_TIMEOUT_MS, .max_output = 4096};
    struct proc_result r;
    if (proc_run(argv, &opts, &r) == 0 && version_parse(r.out, &out->version) == 0) {
        out->found = 1;
    } else {
        char *why = proc_describe(&r);
        out->error = xasprintf(
            "%s -dumpfullversion: %s", out->path,
            r.timed_out || !r.started || !r.exited || r.exit_code ? why : "printed no version");
        free(why);
    }
    proc_result_free(&r);
    free(words);
    return out->found ? 0 : -1;
}

void compiler_info_free(struct compiler_info *c)
{
    free(c->command);
    free(c->path);
    free(c->error);
    memset(c, 0, sizeof *c);
}

int host_compiler_find_fitting(int gcc_max, const char *path_env, char **cc, char **cxx)
{
    *cc = *cxx = NULL;
    if (!path_env)
        path_env = getenv("PATH");
    /* gcc 5 is torch's floor for C++17 extensions; nothing older is worth proposing. */
    for (int n = gcc_max; n >= 5; n--) {
        char name_cc[32], name_cxx[32];
        snprintf(name_cc, sizeof name_cc, "gcc-%d", n);
        snprintf(name_cxx, sizeof name_cxx, "g++-%d", n);
        char *p_cc = fs_which_in(name_cc, path_env);
        char *p_cxx = p_cc ? fs_which_in(name_cxx, path_env) : NULL;
        int ok = 0;
        if (p_cc && p_cxx) {
            struct compiler_info ci;
            ok = probe_compiler(p_cc, &ci) == 0 && ci.version.part[0] == n;
            compiler_info_free(&ci);
        }
        free(p_cc);
        free(p_cxx);
        if (ok) {
            *cc = xstrdup(name_cc);
            *cxx = xstrdup(name_cxx);
            return n;
        }
    }
    return -1;
}
