#include "toolchain/host.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

int toolchain_host_limit(const struct host_limits *lim, int is_clang)
{
    return is_clang ? lim->clang_max : lim->gcc_max;
}

int toolchain_host_fits(const struct host_limits *lim, int is_clang, const struct version *v)
{
    int max = toolchain_host_limit(lim, is_clang);
    return max < 0 || v->part[0] <= max;
}

/* Swaps the compiler's base name (before any "-N" suffix) for its C++ driver. */
char *toolchain_cxx_for(const char *compiler)
{
    static const struct {
        const char *c, *cxx;
    } pairs[] = {{"gcc", "g++"}, {"clang", "clang++"}, {"cc", "c++"}};
    const char *slash = strrchr(compiler, '/');
    const char *base = slash ? slash + 1 : compiler;
    size_t dir_len = (size_t)(base - compiler);
    /* cross prefixes such as x86_64-linux-gnu-gcc-13 keep everything before the name */
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        size_t cl = strlen(pairs[i].c);
        const char *hit = NULL;
        for (const char *p = base; (p = strstr(p, pairs[i].c)); p++) {
            int starts = p == base || p[-1] == '-';
            int ends = p[cl] == '\0' || p[cl] == '-';
            if (starts && ends)
                hit = p;
        }
        if (!hit)
            continue;
        if (!strcmp(pairs[i].c, "cc") && hit > base)
            continue; /* "x-gcc" already matched gcc; a bare "cc" only as the whole name */
        return xasprintf("%.*s%.*s%s%s", (int)dir_len, compiler, (int)(hit - base), base,
                         pairs[i].cxx, hit + cl);
    }
    return xstrdup(compiler);
}

const char *toolchain_torch_host_default(const char *env_cc)
{
    return env_cc && *env_cc ? env_cc : "gcc";
}

char *toolchain_cmake_host_default(const char *env_cudahostcxx, const char *env_cxx,
                                   const char *env_cc)
{
    if (env_cudahostcxx && *env_cudahostcxx)
        return xstrdup(env_cudahostcxx);
    if (env_cxx && *env_cxx)
        return xstrdup(env_cxx);
    if (env_cc && *env_cc)
        return toolchain_cxx_for(env_cc);
    return xstrdup("g++");
}

char *toolchain_read_limits(const char *cuda_home, struct host_limits *lim)
{
    lim->gcc_max = lim->clang_max = -1;
    char *path = cuda_home ? host_config_find(cuda_home) : NULL;
    char *text = path ? fs_read_file(path, 1 << 20, NULL) : NULL;
    host_config_parse(text, lim);
    free(text);
    return path;
}

void toolchain_host_choose(const struct host_limits *lim, const char *asked, const char *path_env,
                           struct host_choice *out)
{
    memset(out, 0, sizeof *out);
    out->asked_fits = probe_compiler(asked, &out->asked) == 0 &&
                      toolchain_host_fits(lim, out->asked.is_clang, &out->asked.version);
    /* The replacement is always a gcc: it is what distributions ship side by side (gcc-13 next
     * to gcc-14), and every toolkit names its gcc limit. */
    if (!out->asked_fits && lim->gcc_max >= 0)
        host_compiler_find_fitting(lim->gcc_max, path_env, &out->fit_cc, &out->fit_cxx);
}

void host_choice_free(struct host_choice *c)
{
    compiler_info_free(&c->asked);
    free(c->fit_cc);
    free(c->fit_cxx);
    memset(c, 0, sizeof *c);
}

/* $CXX when set; else the C++ driver of cc, or the family's own when cc's name has none. */
static char *cxx_partner(const char *cc, int is_clang)
{
    const char *env_cxx = getenv("CXX");
    if (env_cxx && *env_cxx)
        return xstrdup(env_cxx);
    char *cxx = toolchain_cxx_for(cc);
    if (strcmp(cxx, cc))
        return cxx;
    free(cxx);
    return xstrdup(is_clang ? "clang++" : "g++");
}

static char *limit_text(int limit, int is_clang)
{
    if (limit < 0)
        return xstrdup("no limit in its host_config.h");
    return xasprintf("%s <= %d", is_clang ? "clang" : "gcc", limit);
}

void hostcc_choose(const char *root, struct hostcc_choice *out)
{
    memset(out, 0, sizeof *out);
    struct host_limits lim;
    free(toolchain_read_limits(root, &lim));
    out->gcc_max = lim.gcc_max;
    const char *cc = toolchain_torch_host_default(getenv("CC"));
    struct host_choice ch;
    toolchain_host_choose(&lim, cc, NULL, &ch);
    const struct compiler_info *ci = &ch.asked;
    char *limit = limit_text(toolchain_host_limit(&lim, ci->is_clang), ci->is_clang);
    if (ch.asked_fits) {
        out->cc = xstrdup(cc);
        out->cxx = cxx_partner(cc, ci->is_clang);
        out->note =
            xasprintf("%s %d is within this toolkit's limit (%s)", cc, ci->version.part[0], limit);
    } else if (ch.fit_cc) {
        out->cc = ch.fit_cc;
        out->cxx = ch.fit_cxx;
        ch.fit_cc = ch.fit_cxx = NULL;
        out->note = ci->found ? xasprintf("%s %d is newer than this toolkit accepts (%s); using %s",
                                          cc, ci->version.part[0], limit, out->cc)
                              : xasprintf("%s not found; using %s", cc, out->cc);
    } else if (ci->found) {
        out->note = lim.gcc_max >= 0 ? xasprintf("%s %d is newer than this toolkit accepts (%s) "
                                                 "and no gcc-N on PATH fits; install gcc-%d",
                                                 cc, ci->version.part[0], limit, lim.gcc_max)
                                     : xasprintf("%s %d is newer than this toolkit accepts (%s); "
                                                 "install a gcc",
                                                 cc, ci->version.part[0], limit);
    } else {
        out->note = xasprintf("no host C compiler found (%s); install gcc", cc);
    }
    free(limit);
    host_choice_free(&ch);
}

void hostcc_free(struct hostcc_choice *h)
{
    free(h->cc);
    free(h->cxx);
    free(h->note);
    memset(h, 0, sizeof *h);
}
