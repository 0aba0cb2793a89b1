#include "cmake.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/strbuf.h"

#include <cJSON.h>

#include <stdlib.h>
#include <string.h>

#define CMAKE_PROBE_TIMEOUT_MS 5000

int cmake_parse_version(const char *text, struct version *v)
{
    const char *p = text ? strstr(text, "cmake version ") : NULL;
    if (!p)
        return -1;
    return version_parse(p + strlen("cmake version "), v);
}

const char *cmake_pick_generator(int have_ninja, int have_make)
{
    if (have_ninja)
        return "Ninja";
    return have_make ? "Unix Makefiles" : NULL;
}

char *cmake_cache_value(const char *text, const char *key)
{
    size_t klen = strlen(key);
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > klen && !strncmp(line, key, klen) && (line[klen] == ':' || line[klen] == '=')) {
            const char *eq = memchr(line, '=', len);
            if (eq) {
                size_t vlen = len - (size_t)(eq + 1 - line);
                while (vlen && eq[vlen] == '\r')
                    vlen--;
                return xstrndup(eq + 1, vlen);
            }
        }
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

char *cmake_cache_mismatch(const char *cache_text, const char *generator, const char *nvcc,
                           const char *host_cxx, const char *source_dir)
{
    const struct {
        const char *key, *want, *what;
    } checks[] = {
        {"CMAKE_GENERATOR", generator, "generator"},
        {"CMAKE_CUDA_COMPILER", nvcc, "nvcc"},
        {"CMAKE_CUDA_HOST_COMPILER", host_cxx, "host compiler"},
        {"CMAKE_HOME_DIRECTORY", source_dir, "kernel sources"},
    };
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        char *have = cmake_cache_value(cache_text, checks[i].key);
        if (have && checks[i].want && strcmp(have, checks[i].want)) {
            char *why = xasprintf("%s changed (%s -> %s)", checks[i].what, have, checks[i].want);
            free(have);
            return why;
        }
        free(have);
    }
    return NULL;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

char *cmake_first_cuda_command(const char *compile_commands_json)
{
    cJSON *root = compile_commands_json ? cJSON_Parse(compile_commands_json) : NULL;
    char *found = NULL;
    cJSON *list = cJSON_IsArray(root) ? root : NULL;
    cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        cJSON *file = cJSON_GetObjectItemCaseSensitive(e, "file");
        if (found || !cJSON_IsString(file) || !ends_with(file->valuestring, ".cu"))
            continue;
        cJSON *cmd = cJSON_GetObjectItemCaseSensitive(e, "command");
        cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "arguments");
        if (cJSON_IsString(cmd)) {
            found = xstrdup(cmd->valuestring);
        } else if (cJSON_IsArray(args)) {
            struct strbuf sb = STRBUF_INIT;
            cJSON *a;
            cJSON_ArrayForEach(a, args)
            {
                if (cJSON_IsString(a))
                    sb_addf(&sb, "%s%s", sb.len ? " " : "", a->valuestring);
            }
            found = sb_detach(&sb);
        }
    }
    cJSON_Delete(root);
    return found;
}

int cmake_probe(struct cmake_info *out, char **error, char **fix)
{
    memset(out, 0, sizeof *out);
    *error = *fix = NULL;
    out->path = fs_which("cmake");
    if (!out->path) {
        *error = xstrdup("cmake is not on PATH");
        *fix = xstrdup("sudo apt-get install cmake   (or: pip install cmake)");
        return -1;
    }
    const char *argv[] = {out->path, "--version", NULL};
    struct proc_opts o = {.timeout_ms = CMAKE_PROBE_TIMEOUT_MS, .max_output = 4096};
    struct proc_result r;
    int ok = proc_run(argv, &o, &r) == 0 && cmake_parse_version(r.out, &out->version) == 0;
    char *why = ok ? NULL : proc_describe(&r);
    if (!ok)
        *error = xasprintf("%s --version: %s", out->path,
                           r.exited && r.exit_code == 0 ? "printed no version" : why);
    free(why);
    proc_result_free(&r);
    if (!ok) {
        *fix = xstrdup("reinstall cmake (sudo apt-get install --reinstall cmake)");
        return -1;
    }
    struct version min;
    version_parse_strict(BUILD_CMAKE_MIN, &min);
    if (version_cmp_n(&out->version, &min, 2) < 0) {
        char vb[32];
        *error = xasprintf("cmake %s is older than the kernels need (%s)",
                           version_str(&out->version, vb, sizeof vb), BUILD_CMAKE_MIN);
        *fix = xstrdup("pip install 'cmake>=" BUILD_CMAKE_MIN "'   (then make sure it comes first "
                       "on PATH)");
        return -1;
    }
    char *ninja = fs_which("ninja");
    char *make = fs_which("make");
    out->generator = cmake_pick_generator(ninja != NULL, make != NULL);
    free(ninja);
    free(make);
    if (!out->generator) {
        *error = xstrdup("neither ninja nor make is on PATH");
        *fix = xstrdup("sudo apt-get install ninja-build");
        return -1;
    }
    return 0;
}

void cmake_info_free(struct cmake_info *c)
{
    free(c->path);
    memset(c, 0, sizeof *c);
}
