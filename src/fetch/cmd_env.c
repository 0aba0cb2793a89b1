/* sagebuild env: the shell lines that point torch extension builds at a fetched toolkit. */
#include "util/json.h"
#include "cmd.h"
#include "env_toolkit.h"
#include "fetch/engine/lockfile.h"
#include "probe/resources.h"
#include "toolchain/host.h"
#include "toolchain/jobs.h"
#include "toolchain/toolkit.h"
#include "util/fs.h"
#include "util/opt.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char about[] =
    "Prints the lines that point CUDA_HOME, PATH, the host compiler (CC, CXX,\n"
    "NVCC_CCBIN: one that the toolkit's host_config.h accepts), MAX_JOBS and, for CUDA 13,\n"
    "CPLUS_INCLUDE_PATH (include/cccl, for host-compiled .cpp files) at a toolkit made\n"
    "by fetch-cuda, for\n"
    "    eval \"$(sagebuild env)\"\n"
    "before pip install --no-build-isolation of a torch CUDA extension.\n";
static const char footer[] =
    "When there is no toolkit to point at, it says why on stderr and prints `false` on\n"
    "stdout (unless that is a terminal), so eval \"$(sagebuild env)\" && ... stops there.\n"
    "Exit status: 0, 1 no fitting host compiler (the other lines are printed), 2 no\n"
    "toolkit, 64 usage.\n";

/* The shells whose syntax `env` writes: every name but fish gets sh's lines. */
static const char *const shell_choices[] = {"sh", "bash", "zsh", "dash", "fish", NULL};

/* An error for `eval "$(sagebuild env)"`: the evaluated text itself must fail, or the command
 * after `&&` would run against whatever toolkit happens to be around. */
static int no_toolkit(int json, const char *why, const char *fix)
{
    fprintf(stderr, "sagebuild env: %s\n", why);
    if (fix)
        fprintf(stderr, "  fix: %s\n", fix);
    if (!json && !isatty(STDOUT_FILENO))
        puts("false");
    return SB_EXIT_ERROR;
}

struct env_args {
    const char *prefix; /* NULL: the default toolkit */
    const char *python; /* whose torch picks it; NULL: $SAGEBUILD_PYTHON, else python3 */
    enum env_shell shell;
    int json;
};

static enum opt_result parse_args(int argc, char **argv, struct env_args *a)
{
    const char *shell = "sh";
    const struct opt table[] = {
        {.kind = OPT_STRING,
         .name = "prefix",
         .arg = "DIR",
         .help = "the toolkit (default: the fetched one matching torch's CUDA, else the newest "
                 "under ~/.local/share/sagebuild; with none fetched, the one torch's rules find "
                 "when the doctor says it fits)",
         .dest = &a->prefix},
        {.kind = OPT_STRING,
         .name = "python",
         .arg = "PY",
         .help = "the python whose torch's CUDA picks the fetched toolkit, or decides whether the "
                 "one torch's rules find fits (default $SAGEBUILD_PYTHON, else python3)",
         .dest = &a->python},
        {.kind = OPT_ENUM,
         .name = "shell",
         .arg = "NAME",
         .help = "sh (bash, zsh, dash) or fish (default: sh)",
         .dest = &shell,
         .choices = shell_choices},
        {.kind = OPT_FLAG, .name = "json", .help = "the values as JSON", .dest = &a->json},
        {0},
    };
    const struct opt_command spec = {"env", about, footer, table, 0};
    *a = (struct env_args){NULL, NULL, ENV_SH, 0};
    enum opt_result parsed = opt_parse(&spec, argc, argv);
    a->shell = strcmp(shell, "fish") ? ENV_SH : ENV_FISH;
    return parsed;
}

/* Nothing fetched: the toolkit torch would use, when it is one `all` would not replace. NULL
 * after saying why (*rc: the exit status); *found_by says how it was found. */
static char *toolkit_by_torch_rules(const struct env_args *a, char **found_by, int *rc)
{
    struct env_toolkit t;
    env_toolkit_probe(a->python, &t);
    char *prefix = NULL;
    if (!t.fits) {
        char *why = t.prefix ? xasprintf("no toolkit fetched yet, and the one torch's rules "
                                         "find (%s, %s) does not fit: %s",
                                         t.prefix, t.rule, t.why)
                             : xstrdup(t.why);
        *rc = no_toolkit(a->json, why, t.fix);
        free(why);
    } else {
        prefix = t.prefix;
        t.prefix = NULL;
        *found_by = xasprintf("torch's rules (%s)", t.rule);
        fprintf(stderr,
                "sagebuild env: no toolkit fetched; %s, the one torch's rules find (%s), fits\n",
                prefix, t.rule);
    }
    env_toolkit_free(&t);
    return prefix;
}

/* The toolkit to point at: --prefix, else the newest fetched one (torch's CUDA first), else the
 * one torch's rules find. NULL after saying why (*rc: the exit status); *found_by (heap) says
 * how it was found. */
static char *find_toolkit(const struct env_args *a, char **found_by, int *rc)
{
    char *prefix = a->prefix ? fs_realpath(a->prefix) : toolkit_find_fetched(NULL, a->python, NULL);
    if (prefix || a->prefix)
        *found_by = xstrdup(a->prefix ? "--prefix" : "fetched toolkit");
    else if (!(prefix = toolkit_by_torch_rules(a, found_by, rc)))
        return NULL;
    char *nvcc = prefix ? fs_join(prefix, "bin/nvcc") : NULL;
    int usable = prefix && fs_is_executable(nvcc);
    free(nvcc);
    if (!usable) {
        char *why = xasprintf("%s has no bin/nvcc", prefix ? prefix : a->prefix);
        *rc = no_toolkit(a->json, why, "sagebuild fetch-cuda   (or --prefix a toolkit)");
        free(why);
        free(prefix);
        return NULL;
    }
    return prefix;
}

static void print_env_json(const struct env_values *ev, const char *found_by, const char *release,
                           const struct hostcc_choice *hc)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "schema", 1);
    cJSON_AddStringToObject(doc, "prefix", ev->cuda_home);
    cJSON_AddStringToObject(doc, "found_by", found_by);
    if (release)
        cJSON_AddStringToObject(doc, "release", release);
    cJSON *vars = cJSON_AddObjectToObject(doc, "vars");
    cJSON_AddStringToObject(vars, "CUDA_HOME", ev->cuda_home);
    char *bin = fs_join(ev->cuda_home, "bin");
    cJSON_AddStringToObject(vars, "PATH_PREPEND", bin);
    free(bin);
    if (hc->cxx) {
        cJSON_AddStringToObject(vars, "CC", hc->cc);
        cJSON_AddStringToObject(vars, "CXX", hc->cxx);
        cJSON_AddStringToObject(vars, "NVCC_CCBIN", hc->cxx);
    }
    cJSON_AddNumberToObject(vars, "MAX_JOBS", ev->max_jobs);
    if (ev->cccl_include)
        cJSON_AddStringToObject(vars, "CPLUS_INCLUDE_PATH_PREPEND", ev->cccl_include);
    cJSON_AddNumberToObject(doc, "gcc_max", hc->gcc_max);
    if (hc->note)
        cJSON_AddStringToObject(doc, "host_compiler_note", hc->note);
    char *text = json_text(doc);
    fputs(text, stdout);
    free(text);
}

/* The lines (or with --json the values) for the toolkit at prefix. The exit status: 1 when no
 * host compiler fits (the other lines are printed). */
static int print_env(const char *prefix, const char *found_by, const struct env_args *a)
{
    struct hostcc_choice hc;
    hostcc_choose(prefix, &hc);
    struct resources r;
    probe_resources(prefix, &r);
    int max_jobs = toolchain_jobs(r.cores, r.mem_avail_kb);
    resources_free(&r);
    char *lock = fs_join(prefix, LOCKFILE_NAME);
    char *lock_text = fs_read_file(lock, 1 << 20, NULL);
    char *release = lockfile_release(lock_text);
    free(lock_text);
    free(lock);
    char *cccl = fs_join(prefix, "include/cccl");
    struct env_values ev = {prefix, hc.cc, hc.cxx, max_jobs, fs_is_dir(cccl) ? cccl : NULL};
    if (a->json) {
        print_env_json(&ev, found_by, release, &hc);
    } else {
        char *lines = env_format(&ev, a->shell);
        fputs(lines, stdout);
        free(lines);
        if (!hc.cxx)
            fprintf(stderr, "sagebuild env: warning: %s\n", hc.note);
    }
    int rc = hc.cxx ? SB_EXIT_OK : SB_EXIT_WARN;
    hostcc_free(&hc);
    free(cccl);
    free(release);
    return rc;
}

int cmd_env(int argc, char **argv, const struct global_opts *g)
{
    (void)g;
    struct env_args args;
    enum opt_result parsed = parse_args(argc, argv, &args);
    if (parsed != OPT_OK)
        return opt_exit_status(parsed);
    char *found_by = NULL;
    int rc = SB_EXIT_ERROR;
    char *prefix = find_toolkit(&args, &found_by, &rc);
    if (prefix)
        rc = print_env(prefix, found_by, &args);
    free(prefix);
    free(found_by);
    return rc;
}
