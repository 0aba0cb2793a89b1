#include "toolchain.h"
#include "probe/cuda_home.h"
#include "toolchain/host.h"
#include "toolchain/toolkit.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

int toolchain_choose_cuda(const char *flag_cuda_home, const char *python, struct toolchain *tc,
                          char **error, char **fix)
{
    memset(tc, 0, sizeof *tc);
    *error = *fix = NULL;
    enum toolkit_pick_rule rule;
    if (flag_cuda_home) {
        tc->cuda_home = xstrdup(flag_cuda_home);
        tc->chosen_by = "--cuda-home";
    } else if ((tc->cuda_home = toolkit_find_fetched(NULL, python, &rule))) {
        tc->chosen_by = "fetched toolkit";
        if (rule != TOOLKIT_PICK_ONLY)
            tc->cuda_note =
                xasprintf("CUDA toolkit: %s, %s", tc->cuda_home, toolkit_pick_rule_text(rule));
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
        tc->host_config = toolchain_read_limits(tc->cuda_home, &tc->limits);
    return rc;
}

static char *limit_text(const struct toolchain *tc, int is_clang)
{
    char nb[32];
    return xasprintf("nvcc %s accepts %s up to %d (%s)",
                     version_str(&tc->nvcc.version.release, nb, sizeof nb),
                     is_clang ? "clang" : "gcc", toolchain_host_limit(&tc->limits, is_clang),
                     tc->host_config ? tc->host_config : "host_config.h");
}

static void take(struct toolchain *tc, const struct compiler_info *ci)
{
    tc->host_cxx = xstrdup(ci->path);
    tc->host_version = ci->version;
    tc->host_is_clang = ci->is_clang;
}

/* The replacement hc found, probed as the C++ driver the build hands nvcc. 0, or -1 when it
 * does not answer. */
static int take_replacement(struct toolchain *tc, const struct host_choice *hc, const char *cxx)
{
    struct compiler_info fit;
    int rc = probe_compiler(hc->fit_cxx, &fit);
    if (rc == 0) {
        take(tc, &fit);
        char vb[32], nb[32];
        const struct compiler_info *ci = &hc->asked;
        tc->host_note = ci->found
                            ? xasprintf("%s %s is newer than nvcc %s accepts (gcc <= %d); using %s",
                                        ci->path, version_str(&ci->version, vb, sizeof vb),
                                        version_str(&tc->nvcc.version.release, nb, sizeof nb),
                                        tc->limits.gcc_max, fit.path)
                            : xasprintf("%s not found; using %s", cxx, fit.path);
    }
    compiler_info_free(&fit);
    return rc;
}

int toolchain_choose_host(const char *flag_host_cc, struct toolchain *tc, char **error, char **fix)
{
    *error = *fix = NULL;
    char *want = flag_host_cc ? xstrdup(flag_host_cc)
                              : toolchain_cmake_host_default(getenv("CUDAHOSTCXX"), getenv("CXX"),
                                                             getenv("CC"));
    /* nvcc links C++ through -ccbin: hand it the C++ driver even when told "gcc-13". */
    char *cxx = toolchain_cxx_for(want);
    struct host_choice hc;
    toolchain_host_choose(&tc->limits, cxx, NULL, &hc);
    const struct compiler_info *ci = &hc.asked;
    char vb[32];
    int rc = 0;
    if (hc.asked_fits) {
        take(tc, ci);
    } else if (ci->found && flag_host_cc) {
        char *lim = limit_text(tc, ci->is_clang);
        *error = xasprintf("--host-cc %s is version %s, too new: %s", flag_host_cc,
                           version_str(&ci->version, vb, sizeof vb), lim);
        free(lim);
        *fix = hc.fit_cxx ? xasprintf("sagebuild build --host-cc %s   (or leave --host-cc out)",
                                      hc.fit_cxx)
                          : xasprintf("install a gcc it accepts: sudo apt-get install g++-%d, "
                                      "then --host-cc g++-%d",
                                      tc->limits.gcc_max, tc->limits.gcc_max);
        rc = -1;
    } else if (!hc.fit_cxx || take_replacement(tc, &hc, cxx) < 0) {
        if (ci->found) {
            char *lim = limit_text(tc, ci->is_clang);
            *error = xasprintf("the host compiler %s (%s) is too new: %s, and no g++-N "
                               "within it is on PATH",
                               ci->path, version_str(&ci->version, vb, sizeof vb), lim);
            free(lim);
            *fix = xasprintf("sudo apt-get install g++-%d   (then run the build again; or "
                             "--host-cc PATH of a g++ <= %d)",
                             tc->limits.gcc_max, tc->limits.gcc_max);
        } else {
            *error = xasprintf("no host C++ compiler: %s", ci->error ? ci->error : cxx);
            *fix = xstrdup("sudo apt-get install g++   (or --host-cc PATH)");
        }
        rc = -1;
    }
    host_choice_free(&hc);
    free(cxx);
    free(want);
    return rc;
}

void toolchain_free(struct toolchain *tc)
{
    free(tc->cuda_home);
    nvcc_info_free(&tc->nvcc);
    free(tc->host_config);
    free(tc->host_cxx);
    free(tc->host_note);
    free(tc->cuda_note);
    memset(tc, 0, sizeof *tc);
}
