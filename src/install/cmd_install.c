/* sagebuild install --python PY: the drop-in `sageattention` into the environment an application
 * (ComfyUI) runs with. Checks the python, builds for this machine's GPUs when the build lacks
 * them, runs the self-test so the recommendation is fresh, makes the wheel and installs it with
 * that python's pip, offline, then imports it with that python. */
#include "kernel_build/api.h"
#include "kernel_build/arch.h"
#include "kernel_build/record.h"
#include "util/json.h"
#include "cmd.h"
#include "install/decide.h"
#include "probe/gpu.h"
#include "util/fs.h"
#include "util/opt.h"
#include "util/out.h"
#include "util/proc.h"
#include "util/stage_result.h"
#include "util/strbuf.h"
#include "wheel/make.h"

#include <cJSON.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROBE_TIMEOUT_MS (30 * 1000)
#define PIP_TIMEOUT_MS (10 * 60 * 1000)
#define IMPORT_TIMEOUT_MS (2 * 60 * 1000)
#define MAX_GPUS 16

struct install_opts {
    const char *python, *arch, *build, *cuda_home;
    int json, yes, skip_selftest;
};

struct install_run {
    const struct install_opts *o;
    const struct global_opts *g;
    struct out_style st;
    int exit_code;
    char *error, *fix;
    struct strbuf notes;
    struct py_facts py;
    int have_py;
    char *build_dir;
    char *build_json;    /* build's outcome when this run built */
    char *build_note;    /* what was done about the build, one line */
    char *selftest_json; /* the self-test's JSON (with --json) */
    int selftest_exit;   /* -1: not run */
    char *tmp_dir;
    struct wheel_made made;
    enum replacement replaced;
    char *replace_sentence;
    int pip_exit;
    char *pip_tail;
    struct import_facts imp;
    int have_imp;
};

static const char about[] =
    "Installs the drop-in `sageattention` (the built kernels behind SageAttention's API)\n"
    "into the environment of the python an application runs with, e.g. ComfyUI's\n"
    "venv/bin/python: builds the library for this machine's GPUs when the build has no\n"
    "code for them, runs the self-test on the GPUs so the package knows the best mode,\n"
    "makes the wheel and installs it with PY -m pip, offline, then imports it with PY.\n";
static const char footer[] =
    "`PY -m pip uninstall sageattention` removes it again. Exit status: 0 installed and\n"
    "imported, 1 installed with warnings (the self-test warned or failed), 2 error, 64\n"
    "usage.\n";

static enum opt_result parse_opts(int argc, char **argv, struct install_opts *o)
{
    memset(o, 0, sizeof *o);
    const struct opt table[] = {
        {.kind = OPT_STRING,
         .name = "python",
         .arg = "PY",
         .help = "the interpreter to install into: the one your application runs with, e.g. "
                 "~/ComfyUI/venv/bin/python",
         .dest = &o->python,
         .flags = OPT_REQUIRED},
        {.kind = OPT_STRING,
         .name = "arch",
         .arg = "LIST",
         .help = "build these archs (default: the GPUs present when the build lacks them; "
                 "with no GPU, the existing build is used as it is)",
         .dest = &o->arch},
        BUILD_DIR_OPTION(&o->build),
        {.kind = OPT_STRING,
         .name = "cuda-home",
         .arg = "DIR",
         .help = "the toolkit for a build (as `sagebuild build --cuda-home`)",
         .dest = &o->cuda_home},
        {.kind = OPT_FLAG,
         .name = "skip-selftest",
         .help = "do not run the self-test first (sagebuild all has just run it)",
         .dest = &o->skip_selftest},
        {.kind = OPT_FLAG,
         .name = "yes",
         .letter = 'y',
         .help = "replace an installed upstream SageAttention without asking",
         .dest = &o->yes},
        {.kind = OPT_FLAG, .name = "json", .help = "print the result as JSON", .dest = &o->json},
        {0},
    };
    const struct opt_command spec = {"install", about, footer, table, 0};
    return opt_parse(&spec, argc, argv);
}

static void say(struct install_run *r, enum out_status s, const char *stage, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void say(struct install_run *r, enum out_status s, const char *stage, const char *fmt, ...)
{
    if (r->o->json)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("%s%s%s %-9s ", out_color(&r->st, s), out_status_mark(&r->st, s), out_reset(&r->st),
           stage);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

static int fail(struct install_run *r, char *error, char *fix)
{
    r->exit_code = SB_EXIT_ERROR;
    r->error = error;
    r->fix = fix;
    return -1;
}

static void note(struct install_run *r, const char *stage, char *line)
{
    sb_addf(&r->notes, "%s\n", line);
    say(r, OUT_WARN, stage, "%s", line);
    free(line);
    if (r->exit_code == SB_EXIT_OK)
        r->exit_code = SB_EXIT_WARN;
}

/* The last lines of a program's output, for an error message. Heap. */
static char *tail_of(const struct proc_result *pr)
{
    const char *src = pr->err_len ? pr->err : pr->out;
    size_t len = strlen(src), keep = len > 1500 ? 1500 : len;
    char *t = xstrndup(src + len - keep, keep);
    for (size_t n = strlen(t); n && (t[n - 1] == '\n' || t[n - 1] == ' '); n--)
        t[n - 1] = '\0';
    return t;
}

static int check_python(struct install_run *r)
{
    const char *argv[] = {r->o->python, "-c", install_probe_script, NULL};
    struct proc_opts po = {.timeout_ms = PROBE_TIMEOUT_MS, .max_output = 1 << 16};
    struct proc_result pr;
    int ran = proc_run(argv, &po, &pr) == 0;
    char *why = NULL;
    int rc = 0;
    if (!ran || install_parse_probe(pr.out, &r->py) < 0) {
        char *tail = tail_of(&pr);
        rc = fail(r,
                  xasprintf("%s does not run as a python: %s%s%s", r->o->python,
                            (why = proc_describe(&pr)), *tail ? ": " : "", tail),
                  xstrdup("give the interpreter your application uses, e.g. --python "
                          "~/ComfyUI/venv/bin/python"));
        free(tail);
        free(why);
    } else {
        r->have_py = 1;
        char *machine = wheel_machine();
        char *refusal = install_python_refusal(&r->py, machine);
        free(machine);
        if (refusal)
            rc = fail(r, xasprintf("%s: %s", r->o->python, refusal),
                      xstrdup(r->py.pip ? "use the python of this machine's application "
                                          "environment"
                                        : "install pip into it first: PY -m ensurepip"));
        else
            say(r, OUT_OK, "python", "%s: Python %s on %s, pip %s, %s%s", r->o->python,
                r->py.version, r->py.machine, r->py.pip, r->py.torch ? "torch " : "",
                r->py.torch ? r->py.torch : "no torch (the package imports; calls need torch)");
        free(refusal);
    }
    proc_result_free(&pr);
    return rc;
}

/* The GPUs here with their names, for the build decision and the messages. */
static int gpus_here(struct gpu_cc *gpus, char **names, char **why)
{
    struct gpu_info gi;
    probe_gpu(0, &gi);
    int n = 0;
    for (int i = 0; i < gi.count && n < MAX_GPUS; i++, n++) {
        gpus[n] = (struct gpu_cc){gi.devices[i].cc_major, gi.devices[i].cc_minor};
        names[n] = xstrdup(gi.devices[i].name ? gi.devices[i].name : "GPU");
    }
    *why = !n && gi.error ? xstrdup(gi.error) : NULL;
    gpu_info_free(&gi);
    return n;
}

/* The archs of the build in build_dir (heap), or NULL when it holds no finished build. */
static char *existing_archs(const char *build_dir)
{
    char *lib = fs_join(build_dir, "lib/libsageattn.so");
    char *rec_path = fs_join(build_dir, BUILD_RECORD_NAME);
    char *text = fs_is_file(lib) ? fs_read_file(rec_path, 1 << 20, NULL) : NULL;
    struct build_record rec;
    char *archs = NULL;
    if (text && build_record_from_json(text, &rec) == 0) {
        archs = rec.archs ? xstrdup(rec.archs) : xstrdup("");
        build_record_free(&rec);
    }
    free(text);
    free(lib);
    free(rec_path);
    return archs;
}

static int build_with(struct install_run *r, const char *arch)
{
    struct build_opts bo;
    build_opts_init(&bo);
    bo.arch = arch;
    bo.out = r->build_dir;
    bo.cuda_home = r->o->cuda_home;
    bo.python = r->o->python; /* the toolkit matching the torch it installs for */
    bo.json = r->o->json;
    struct build_outcome res;
    memset(&res, 0, sizeof res);
    if (build_run(&bo, &res) < 0 && !res.error)
        build_outcome_error(&res, SB_EXIT_INTERNAL, xstrdup("build failed for no known reason"),
                            NULL);
    r->build_json = build_outcome_json(&res);
    int rc = 0;
    if (res.error) {
        if (!r->o->json)
            build_outcome_print(&res, stderr, &r->st);
        rc = fail(r, xasprintf("build: %s", res.error), res.fix ? xstrdup(res.fix) : NULL);
    } else {
        r->build_note = xasprintf("%s in %s%s", res.rec.archs ? res.rec.archs : arch, r->build_dir,
                                  res.up_to_date ? " (up to date, no work done)" : " (built)");
        say(r, OUT_OK, "build", "%s", r->build_note);
    }
    build_outcome_free(&res);
    return rc;
}

/* Uses the build when it has code for every GPU here; else builds for them (or --arch). */
static int ensure_build(struct install_run *r, const struct gpu_cc *gpus, char *const *names,
                        int ngpus)
{
    if (r->o->arch)
        return build_with(r, r->o->arch);
    char *archs = existing_archs(r->build_dir);
    char *missing = NULL;
    if (archs && (ngpus == 0 ||
                  install_build_covers(archs, gpus, (const char *const *)names, ngpus, &missing))) {
        r->build_note = xasprintf("using the build in %s (%s)%s", r->build_dir, archs,
                                  ngpus ? "" : "; no GPU here to check it against");
        say(r, OUT_OK, "build", "%s", r->build_note);
        free(archs);
        return 0;
    }
    if (ngpus == 0) {
        free(archs);
        char *command = xasprintf("sagebuild install --python %s --arch ", r->o->python);
        char *fix = build_arch_examples(command, "");
        free(command);
        return fail(r,
                    xasprintf("no GPU was found and %s holds no finished build, so it is not "
                              "known which archs to build",
                              r->build_dir),
                    fix);
    }
    if (archs)
        say(r, OUT_INFO, "build",
            "the build in %s (%s) has no code for %s: building for the GPUs "
            "here",
            r->build_dir, archs, missing);
    free(archs);
    free(missing);
    return build_with(r, "native");
}

/* Runs a command function in-process with its stdout captured (for --json); *out (heap). */
static int run_captured(cmd_fn fn, int argc, char **argv, const struct global_opts *g, char **out)
{
    *out = NULL;
    char path[] = "/tmp/sagebuild-capture.XXXXXX";
    const char *tmpdir = getenv("TMPDIR");
    char *tmpl =
        tmpdir && *tmpdir ? xasprintf("%s/sagebuild-capture.XXXXXX", tmpdir) : xstrdup(path);
    int fd = mkstemp(tmpl);
    if (fd < 0) {
        free(tmpl);
        return SB_EXIT_INTERNAL;
    }
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(fd, STDOUT_FILENO);
    int rc = fn(argc, argv, g);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(fd);
    *out = fs_read_file(tmpl, 32u << 20, NULL);
    unlink(tmpl);
    free(tmpl);
    return rc;
}

/* The self-test through the selftest command's own code: it writes <build>/recommendation.json,
 * which the wheel then carries. A failing self-test does not stop the install: the package
 * falls back to each arch's default mode, and the warning says so. */
static void run_selftest(struct install_run *r)
{
    char *argv[] = {"selftest", "--build", r->build_dir, r->o->json ? "--json" : NULL, NULL};
    int argc = r->o->json ? 4 : 3;
    say(r, OUT_INFO, "selftest",
        "running the kernels on each GPU (the recommendation the "
        "package reads comes from here)");
    if (r->o->json) {
        r->selftest_exit = run_captured(cmd_selftest, argc, argv, r->g, &r->selftest_json);
    } else {
        r->selftest_exit = cmd_selftest(argc, argv, r->g);
    }
    if (r->selftest_exit == SB_EXIT_WARN)
        note(r, "selftest",
             xstrdup("the self-test passed with warnings (see above); the "
                     "package uses the modes it recommends"));
    else if (r->selftest_exit != SB_EXIT_OK && r->selftest_exit != SB_EXIT_SKIPPED)
        note(r, "selftest",
             xasprintf("the self-test failed (exit %d, see above); installing anyway: the "
                       "package uses each arch's default mode where no fresh recommendation "
                       "fits",
                       r->selftest_exit));
}

static int make_wheel(struct install_run *r)
{
    const char *tmpdir = getenv("TMPDIR");
    r->tmp_dir = xasprintf("%s/sagebuild-install.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(r->tmp_dir)) {
        free(r->tmp_dir);
        r->tmp_dir = NULL;
        return fail(r, xstrdup("cannot create a temporary folder for the wheel"),
                    xstrdup("set TMPDIR to a writable folder"));
    }
    if (wheel_make(r->build_dir, r->tmp_dir, &r->made) < 0)
        return fail(r, xasprintf("wheel: %s", r->made.error),
                    r->made.fix ? xstrdup(r->made.fix) : NULL);
    if (r->made.note)
        note(r, "wheel", xstrdup(r->made.note));
    say(r, OUT_OK, "wheel", "%s (%s; recommendation %s)", r->made.w.name,
        r->made.archs ? r->made.archs : "archs unknown",
        r->made.recommendation ? "included" : "none: each arch's default mode");
    return 0;
}

static int confirm_upstream(struct install_run *r)
{
    if (r->o->yes)
        return 1;
    if (r->o->json || !isatty(STDIN_FILENO))
        return 0;
    printf("Replace it? [y/N] ");
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin))
        return 0;
    return line[0] == 'y' || line[0] == 'Y';
}

static int pip_install(struct install_run *r)
{
    r->replaced = install_replacement(r->py.sage_version, r->made.version, &r->replace_sentence);
    if (r->replace_sentence)
        say(r, r->replaced == REPLACE_UPSTREAM ? OUT_WARN : OUT_INFO, "replace", "%s%s%s",
            r->replace_sentence, r->py.sage_location ? " in " : "",
            r->py.sage_location ? r->py.sage_location : "");
    if (r->replaced == REPLACE_UPSTREAM && !confirm_upstream(r))
        return fail(r,
                    xasprintf("sageattention %s (upstream) is installed for %s, and replacing "
                              "it was not confirmed",
                              r->py.sage_version, r->o->python),
                    xasprintf("sagebuild install --python %s --yes", r->o->python));
    const char *argv[] = {r->o->python,        "-m",         "pip",
                          "install",           "--no-index", "--no-deps",
                          "--force-reinstall", "--no-input", "--disable-pip-version-check",
                          r->made.w.path,      NULL};
    struct proc_opts po = {.timeout_ms = PIP_TIMEOUT_MS, .max_output = 1 << 20, .merge_stderr = 1};
    struct proc_result pr;
    int ok = proc_run(argv, &po, &pr) == 0;
    r->pip_exit = pr.exited ? pr.exit_code : -1;
    r->pip_tail = tail_of(&pr);
    int rc = 0;
    if (!ok) {
        char *why = NULL;
        if (!r->o->json && *r->pip_tail)
            fprintf(stderr, "--- pip's last lines ---\n%s\n--- end ---\n", r->pip_tail);
        rc = fail(r, xasprintf("%s -m pip install %s", r->o->python, (why = proc_describe(&pr))),
                  xasprintf("read pip's words above; the wheel is kept: %s -m pip install "
                            "--no-index --no-deps --force-reinstall %s",
                            r->o->python, r->made.w.path));
        free(why);
    } else {
        say(r, OUT_OK, "pip", "installed sageattention %s with %s -m pip (offline)",
            r->made.version, r->o->python);
    }
    proc_result_free(&pr);
    return rc;
}

static int verify_import(struct install_run *r)
{
    /* An absolute path: a relative one would name another file from the temp folder, and
     * resolving symlinks would step out of a venv (its python links to the system's). */
    char *cwd = getcwd(NULL, 0);
    char *python = strchr(r->o->python, '/') && r->o->python[0] != '/'
                       ? fs_join(cwd ? cwd : ".", r->o->python)
                       : xstrdup(r->o->python);
    free(cwd);
    const char *argv[] = {python, "-c", install_verify_script, NULL};
    /* From the temp folder: a `sageattention` folder in the caller's working directory must not
     * stand in for the installed package. */
    struct proc_opts po = {
        .timeout_ms = IMPORT_TIMEOUT_MS, .max_output = 1 << 16, .cwd = r->tmp_dir};
    struct proc_result pr;
    int ok = proc_run(argv, &po, &pr) == 0;
    int rc = 0;
    char *why = NULL;
    if (!ok || install_parse_verify(pr.out, &r->imp) < 0) {
        char *tail = tail_of(&pr);
        rc = fail(r,
                  xasprintf("the installed package does not import with %s: it %s%s%s",
                            r->o->python, (why = proc_describe(&pr)), *tail ? ": " : "", tail),
                  xasprintf("%s -c 'import sageattention'   (to see the whole error; "
                            "`%s -m pip uninstall sageattention` removes it)",
                            r->o->python, r->o->python));
        free(tail);
        free(why);
    } else {
        r->have_imp = 1;
        char *got = fs_realpath(r->imp.file);
        char *want = r->imp.dist_file ? fs_realpath(r->imp.dist_file) : NULL;
        if (got && want && strcmp(got, want))
            note(r, "import",
                 xasprintf("`import sageattention` loads %s, not the copy just installed (%s): "
                           "another one comes first on that python's path (PYTHONPATH, the "
                           "working folder)",
                           r->imp.file, r->imp.dist_file));
        free(got);
        free(want);
        if (r->imp.cuda_initialized)
            note(r, "import", xstrdup("importing sageattention initialised CUDA; it must not"));
        say(r, OUT_OK, "import", "sageattention %s from %s", r->imp.version, r->imp.file);
    }
    proc_result_free(&pr);
    free(python);
    return rc;
}

static cJSON *parsed_or_null(const char *text)
{
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    return j ? j : cJSON_CreateNull();
}

/* The stage result `all` reads: the wheel installed, what it replaced, the notes. */
static void add_stage_result(cJSON *root, const struct install_run *r)
{
    cJSON *payload = cJSON_CreateObject();
    cJSON_AddItemToObject(payload, "python", json_str_or_null(r->o->python));
    cJSON_AddItemToObject(payload, "version",
                          json_str_or_null(r->made.w.path ? r->made.version : NULL));
    cJSON *rep = cJSON_CreateNull();
    if (r->replaced != REPLACE_NOTHING) {
        cJSON_Delete(rep);
        rep = cJSON_CreateObject();
        cJSON_AddItemToObject(rep, "version", json_str_or_null(r->py.sage_version));
        cJSON_AddBoolToObject(rep, "ours", r->replaced == REPLACE_OURS);
    }
    cJSON_AddItemToObject(payload, "replaced", rep);
    cJSON_AddItemToObject(payload, "notes",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(root, "notes"), 1));
    char *summary = r->error ? xstrdup(r->error)
                             : xasprintf("sageattention %s into %s",
                                         r->made.w.path ? r->made.version : "?", r->o->python);
    stage_result_add(root, "install", r->exit_code, summary, r->error ? r->fix : NULL, payload);
    free(summary);
}

static void print_json(struct install_run *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema", 1);
    cJSON_AddStringToObject(root, "command", "install");
    cJSON_AddStringToObject(root, "status",
                            r->error                       ? "error"
                            : r->exit_code == SB_EXIT_WARN ? "warn"
                                                           : "ok");
    cJSON_AddNumberToObject(root, "exit_code", r->exit_code);
    cJSON *py = cJSON_AddObjectToObject(root, "python");
    cJSON_AddStringToObject(py, "path", r->o->python);
    cJSON_AddItemToObject(py, "version", json_str_or_null(r->py.version));
    cJSON_AddItemToObject(py, "executable", json_str_or_null(r->py.executable));
    cJSON_AddItemToObject(py, "machine", json_str_or_null(r->py.machine));
    cJSON_AddItemToObject(py, "pip", json_str_or_null(r->py.pip));
    cJSON_AddItemToObject(py, "torch", json_str_or_null(r->py.torch));
    cJSON_AddItemToObject(root, "build_dir", json_str_or_null(r->build_dir));
    cJSON_AddItemToObject(root, "build_summary", json_str_or_null(r->build_note));
    cJSON_AddItemToObject(root, "build", parsed_or_null(r->build_json));
    cJSON_AddItemToObject(root, "selftest", parsed_or_null(r->selftest_json));
    if (r->made.w.path) {
        cJSON *w = cJSON_AddObjectToObject(root, "wheel");
        cJSON_AddStringToObject(w, "name", r->made.w.name);
        cJSON_AddStringToObject(w, "version", r->made.version);
        cJSON_AddStringToObject(w, "sha256", r->made.w.sha256);
        cJSON_AddItemToObject(w, "archs", json_str_or_null(r->made.archs));
        cJSON_AddBoolToObject(w, "recommendation", r->made.recommendation);
    } else {
        cJSON_AddNullToObject(root, "wheel");
    }
    if (r->replaced != REPLACE_NOTHING) {
        cJSON *rep = cJSON_AddObjectToObject(root, "replaced");
        cJSON_AddStringToObject(rep, "version", r->py.sage_version);
        cJSON_AddBoolToObject(rep, "ours", r->replaced == REPLACE_OURS);
        cJSON_AddItemToObject(rep, "location", json_str_or_null(r->py.sage_location));
    } else {
        cJSON_AddNullToObject(root, "replaced");
    }
    if (r->have_imp) {
        cJSON *imp = cJSON_AddObjectToObject(root, "import");
        cJSON_AddStringToObject(imp, "version", r->imp.version);
        cJSON_AddStringToObject(imp, "file", r->imp.file);
        cJSON_AddBoolToObject(imp, "cuda_initialized", r->imp.cuda_initialized);
    } else {
        cJSON_AddNullToObject(root, "import");
    }
    cJSON *notes = cJSON_AddArrayToObject(root, "notes");
    for (const char *p = sb_str(&r->notes); *p;) {
        size_t n = strcspn(p, "\n");
        char *line = xstrndup(p, n);
        cJSON_AddItemToArray(notes, cJSON_CreateString(line));
        free(line);
        p += n + (p[n] == '\n');
    }
    if (r->error) {
        cJSON *e = cJSON_AddObjectToObject(root, "error");
        cJSON_AddStringToObject(e, "summary", r->error);
        cJSON_AddItemToObject(e, "fix", json_str_or_null(r->fix));
        cJSON_AddItemToObject(e, "pip_output", json_str_or_null(r->pip_tail));
    } else {
        cJSON_AddNullToObject(root, "error");
    }
    add_stage_result(root, r);
    char *text = json_text(root);
    fputs(text, stdout);
    free(text);
}

static void run_install(struct install_run *r)
{
    if (check_python(r) < 0)
        return;
    struct gpu_cc gpus[MAX_GPUS];
    char *names[MAX_GPUS] = {0};
    char *why = NULL;
    int ngpus = gpus_here(gpus, names, &why);
    if (ngpus == 0)
        say(r, OUT_INFO, "gpus", "none found%s%s: no self-test here", why ? ": " : "",
            why ? why : "");
    free(why);
    int rc = ensure_build(r, gpus, names, ngpus);
    for (int i = 0; i < ngpus; i++)
        free(names[i]);
    if (rc < 0)
        return;
    if (ngpus && !r->o->skip_selftest)
        run_selftest(r);
    if (make_wheel(r) < 0 || pip_install(r) < 0 || verify_import(r) < 0)
        return;
}

int cmd_install(int argc, char **argv, const struct global_opts *g)
{
    struct install_opts o;
    enum opt_result parsed = parse_opts(argc, argv, &o);
    if (parsed != OPT_OK)
        return opt_exit_status(parsed);
    struct install_run r;
    memset(&r, 0, sizeof r);
    r.o = &o;
    r.g = g;
    r.selftest_exit = -1;
    r.pip_exit = -1;
    out_style_init(&r.st, stdout, g->no_color);
    r.build_dir = build_out_dir(o.build);
    run_install(&r);
    if (o.json) {
        print_json(&r);
    } else if (r.error) {
        struct out_style es;
        out_style_init(&es, stderr, g->no_color);
        fprintf(stderr, "%sinstall failed:%s %s\n", out_color(&es, OUT_ERROR), out_reset(&es),
                r.error);
        if (r.fix)
            fprintf(stderr, "  fix: %s\n", r.fix);
    } else {
        printf("sagebuild install: done%s. `import sageattention` in %s now uses these kernels; "
               "`%s -m pip uninstall sageattention` removes them.\n",
               r.exit_code == SB_EXIT_WARN ? ", with the warnings above" : "", o.python, o.python);
    }
    /* The wheel is kept only when pip failed, so the fix can name it. */
    if (r.tmp_dir && !(r.error && r.made.w.path && r.pip_exit != 0 && r.pip_exit != -1))
        fs_remove_tree(r.tmp_dir);
    int rc = r.exit_code;
    free(r.error);
    free(r.fix);
    sb_free(&r.notes);
    py_facts_free(&r.py);
    free(r.build_dir);
    free(r.build_json);
    free(r.build_note);
    free(r.selftest_json);
    free(r.tmp_dir);
    wheel_made_free(&r.made);
    free(r.replace_sentence);
    free(r.pip_tail);
    import_facts_free(&r.imp);
    return rc;
}
