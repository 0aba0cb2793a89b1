#include "toolchain.h"
#include "plan.h"
#include "probe/cuda_home.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/xdg.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

int toolchain_newest_fetched(const char *const *names, int n)
{
    int best = -1;
    struct version bv = {{0}, 0};
    for (int i = 0; i < n; i++) {
        struct version v;
        if (strncmp(names[i], "cuda-", 5) || version_parse_strict(names[i] + 5, &v) < 0 ||
            v.nparts < 2)
            continue;
        if (best < 0 || version_cmp(&v, &bv) > 0) {
            best = i;
            bv = v;
        }
    }
    return best;
}

char *toolchain_find_fetched(const char *data_dir)
{
    char *own = data_dir ? NULL : xdg_data_dir();
    const char *dir = data_dir ? data_dir : own;
    DIR *d = dir ? opendir(dir) : NULL;
    char *found = NULL;
    if (d) {
        /* Only prefixes that hold an nvcc take part: a half-written staging folder or an
         * unrelated cuda-* folder must not win by its name. */
        const char **names = NULL;
        int n = 0, cap = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (strncmp(de->d_name, "cuda-", 5))
                continue;
            char *prefix = fs_join(dir, de->d_name);
            char *nvcc = nvcc_path_in(prefix);
            int ok = fs_is_executable(nvcc);
            free(nvcc);
            free(prefix);
            if (!ok)
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                names = xrealloc(names, (size_t)cap * sizeof *names);
            }
            names[n++] = xstrdup(de->d_name);
        }
        closedir(d);
        int best = toolchain_newest_fetched(names, n);
        if (best >= 0)
            found = fs_join(dir, names[best]);
        for (int i = 0; i < n; i++)
            free((char *)names[i]);
        free(names);
    }
    free(own);
    return found;
}

static void read_limits(struct toolchain *tc)
{
    tc->limits.gcc_max = tc->limits.clang_max = -1;
    tc->host_config = host_config_find(tc->cuda_home);
    if (!tc->host_config)
        return;
    char *text = fs_read_file(tc->host_config, 1 << 20, NULL);
    if (text)
        host_config_parse(text, &tc->limits);
    free(text);
}

int toolchain_choose_cuda(const char *flag_cuda_home, struct toolchain *tc, char **error,
                          char **fix)
{
    memset(tc, 0, sizeof *tc);
    *error = *fix = NULL;
    if (flag_cuda_home) {
        tc->cuda_home = xstrdup(flag_cuda_home);
        tc->chosen_by = "--cuda-home";
    } else if ((tc->cuda_home = toolchain_find_fetched(NULL))) {
        tc->chosen_by = "fetched toolkit";
    } else {
        struct cuda_home h;
        probe_cuda_home(NULL, &h);
        tc->chosen_by = cuda_home_rule_name(h.rule);
        tc->cuda_home = h.path ? xstrdup(h.path) : NULL;
        cuda_home_free(&h);
    }
    if (!tc->cuda_home) {
        *error = xstrdup("no CUDA toolkit found (none fetched; CUDA_HOME, CUDA_PATH unset; no "
                         "nvcc on PATH; no /usr/local/cuda)");
        *fix = xstrdup("sagebuild fetch-cuda   (or: sagebuild build --cuda-home DIR)");
        return -1;
    }
    char *nvcc = nvcc_path_in(tc->cuda_home);
    int rc = probe_nvcc(nvcc, 0, &tc->nvcc);
    if (rc < 0) {
        *error =
            xasprintf("nvcc of the toolkit at %s (chosen by %s) does not work: %s", tc->cuda_home,
                      tc->chosen_by, tc->nvcc.error ? tc->nvcc.error : "no version");
        *fix = xstrdup("sagebuild doctor   (then sagebuild fetch-cuda, or --cuda-home DIR of a "
                       "working toolkit)");
    }
    free(nvcc);
    if (rc == 0)
        read_limits(tc);
    return rc;
}

int toolchain_host_fits(const struct host_limits *lim, int is_clang, const struct version *v)
{
    int max = is_clang ? lim->clang_max : lim->gcc_max;
    return max < 0 || v->part[0] <= max;
}

static const char *default_host(char **owned)
{
    *owned = NULL;
    const char *v = getenv("CUDAHOSTCXX");
    if (v && *v)
        return v;
    v = getenv("CXX");
    if (v && *v)
        return v;
    v = getenv("CC");
    if (v && *v)
        return *owned = build_host_cxx_for(v);
    return "g++";
}

static void take(struct toolchain *tc, struct compiler_info *ci)
{
    tc->host_cxx = xstrdup(ci->path);
    tc->host_version = ci->version;
    tc->host_is_clang = ci->is_clang;
}

static char *limit_text(const struct toolchain *tc, int is_clang)
{
    char nb[32];
    return xasprintf(
        "nvcc %s accepts %s up to %d (%s)", version_str(&tc->nvcc.version.release, nb, sizeof nb),
        is_clang ? "clang" : "gcc", is_clang ? tc->limits.clang_max : tc->limits.gcc_max,
        tc->host_config ? tc->host_config : "host_config.h");
}

int toolchain_choose_host(const char *flag_host_cc, struct toolchain *tc, char **error, char **fix)
{
    *error = *fix = NULL;
    char *owned = NULL;
    const char *want = flag_host_cc ? flag_host_cc : default_host(&owned);
    /* nvcc links C++ through -ccbin: hand it the C++ driver even when told "gcc-13". */
    char *cxx = build_host_cxx_for(want);
    struct compiler_info ci;
    int found = probe_compiler(cxx, &ci) == 0;
    char vb[32], nb[32];
    int rc = 0;
    if (found && toolchain_host_fits(&tc->limits, ci.is_clang, &ci.version)) {
        take(tc, &ci);
    } else if (found && flag_host_cc) {
        char *lim = limit_text(tc, ci.is_clang);
        *error = xasprintf("--host-cc %s is version %s, too new: %s", flag_host_cc,
                           version_str(&ci.version, vb, sizeof vb), lim);
        free(lim);
        char *fit_cc, *fit_cxx;
        if (tc->limits.gcc_max >= 0 &&
            host_compiler_find_fitting(tc->limits.gcc_max, NULL, &fit_cc, &fit_cxx) >= 0) {
            *fix = xasprintf("sagebuild build --host-cc %s   (or leave --host-cc out)", fit_cxx);
            free(fit_cc);
            free(fit_cxx);
        } else {
            *fix = xasprintf("install a gcc it accepts: sudo apt-get install g++-%d, then "
                             "--host-cc g++-%d",
                             tc->limits.gcc_max, tc->limits.gcc_max);
        }
        rc = -1;
    } else {
        /* The default is missing or too new: the newest gcc-N/g++-N pair within the limit. */
        char *fit_cc = NULL, *fit_cxx = NULL;
        int n = tc->limits.gcc_max >= 0
                    ? host_compiler_find_fitting(tc->limits.gcc_max, NULL, &fit_cc, &fit_cxx)
                    : -1;
        struct compiler_info fit;
        if (n >= 0 && probe_compiler(fit_cxx, &fit) == 0) {
            take(tc, &fit);
            if (found)
                tc->host_note = xasprintf("%s %s is newer than nvcc %s accepts (gcc <= %d); "
                                          "using %s",
                                          ci.path, version_str(&ci.version, vb, sizeof vb),
                                          version_str(&tc->nvcc.version.release, nb, sizeof nb),
                                          tc->limits.gcc_max, fit.path);
            else
                tc->host_note = xasprintf("%s not found; using %s", cxx, fit.path);
            compiler_info_free(&fit);
        } else {
            if (n >= 0)
                compiler_info_free(&fit);
            if (found) {
                char *lim = limit_text(tc, ci.is_clang);
                *error = xasprintf("the host compiler %s (%s) is too new: %s, and no g++-N "
                                   "within it is on PATH",
                                   ci.path, version_str(&ci.version, vb, sizeof vb), lim);
                free(lim);
                *fix = xasprintf("sudo apt-get install g++-%d   (then run the build again; or "
                                 "--host-cc PATH of a g++ <= %d)",
                                 tc->limits.gcc_max, tc->limits.gcc_max);
            } else {
                *error = xasprintf("no host C++ compiler: %s", ci.error ? ci.error : cxx);
                *fix = xstrdup("sudo apt-get install g++   (or --host-cc PATH)");
            }
            rc = -1;
        }
        free(fit_cc);
        free(fit_cxx);
    }
    compiler_info_free(&ci);
    free(cxx);
    free(owned);
    return rc;
}

void toolchain_free(struct toolchain *tc)
{
    free(tc->cuda_home);
    nvcc_info_free(&tc->nvcc);
    free(tc->host_config);
    free(tc->host_cxx);
    free(tc->host_note);
    memset(tc, 0, sizeof *tc);
}
