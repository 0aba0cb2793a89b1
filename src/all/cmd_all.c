/* sagebuild all: doctor → fetch-cuda when the toolkit does not fit → build → selftest. Each stage
 * is this same binary run again with --json, so stages stay isolated (a crash in one is a
 * reported failure, not ours) and each is tested on its own; this file only decides. */
#include "all/call.h"
#include "all/stages.h"
#include "kernel_build/api.h"
#include "kernel_build/arch.h"
#include "kernel_build/gpus.h"
#include "kernel_build/progress.h"
#include "kernel_build/run.h"
#include "util/json.h"
#include "cmd.h"
#include "util/fs.h"
#include "util/opt.h"
#include "util/out.h"
#include "util/plural.h"
#include "util/proc.h"
#include "util/shquote.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DOCTOR_TIMEOUT_MS (120 * 1000)
#define FETCH_TIMEOUT_MS (2 * 3600 * 1000)
#define BUILD_TIMEOUT_MS (4 * 3600 * 1000) /* build limits each of its 3 steps to 1 h */
#define SELFTEST_TIMEOUT_MS (2 * 3600 * 1000)
#define INSTALL_TIMEOUT_MS (30 * 60 * 1000)
#define CALL_TIMEOUT_MS (10 * 60 * 1000)
#define STAGE_MAX_OUTPUT (32u << 20)

struct all_opts {
    const char *arch, *cuda_home, *out;
    const char *source; /* fetch-cuda --source, when given */
    const char *python; /* install into it and call through it */
    int json, yes;
};

enum stage_id {
    ST_ARCHS,
    ST_DOCTOR,
    ST_FETCH,
    ST_BUILD,
    ST_SELFTEST,
    ST_INSTALL,
    ST_CALL,
    NSTAGES
};
static const char *const stage_names[NSTAGES] = {"archs",    "doctor",  "fetch-cuda", "build",
                                                 "selftest", "install", "call"};

struct stage {
    const char *state; /* "ok" "warn" "error" "skipped" "not run" */
    char *summary;
    char *fix;
    cJSON *output; /* the stage's own JSON, when it printed some */
};

struct run {
    const struct all_opts *o;
    struct out_style st;
    char *self;
    struct stage stages[NSTAGES];
    int exit_code;
    int stopped;   /* a stage stopped the run */
    int last_exit; /* the exit status of the last stage process, -1 when it did not exit */
    /* On a terminal (not --json) the stage that runs shows one updating line: what it does,
     * the build's [n/N] step and file (read from its log in progress), the time so far. */
    int live;
    char *live_text;      /* "build sm_120a into OUT" */
    char *live_build_log; /* the build's log in progress, for its step */
    double live_t0;
    struct build_progress live_last; /* kept while the log is between steps or moved */
    int live_have;
    cJSON *warnings; /* [{"stage","id","summary"}]: every warning of every stage, by name */
};

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void draw_live(void *arg)
{
    struct run *r = arg;
    struct build_progress p;
    if (r->live_build_log && build_progress_read(r->live_build_log, &p)) {
        r->live_last = p;
        r->live_have = 1;
    }
    char *head = xasprintf("  ...  %s", r->live_text ? r->live_text : "");
    char *line = build_progress_line(head, r->live_have ? &r->live_last : NULL,
                                     seconds_now() - r->live_t0, out_width(stdout));
    out_clear_line(stdout);
    fputs(line, stdout);
    fflush(stdout);
    free(line);
    free(head);
}

/* What the next stage does: a line in a log, the start of the live line on a terminal. */
static void announce(struct run *r, const char *build_log, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void announce(struct run *r, const char *build_log, const char *fmt, ...)
{
    if (r->o->json)
        return;
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    if (!r->live) {
        printf("  ...  %s\n", sb_str(&sb));
        fflush(stdout);
        sb_free(&sb);
        return;
    }
    free(r->live_text);
    free(r->live_build_log);
    r->live_text = sb_detach(&sb);
    r->live_build_log = build_log ? xstrdup(build_log) : NULL;
}

static const char about[] =
    "The main job: doctor, then fetch-cuda when the toolkit does not fit torch's CUDA or\n"
    "lacks components, then build for the GPUs present (or --arch), then selftest; with\n"
    "--python, then install the drop-in sageattention into PY and make a real call through\n"
    "it on each GPU next to torch's SDPA. Stops at the first blocking problem and prints\n"
    "its fix.\n";
static const char footer[] =
    "Exit status: 0 built and tested (or built, and skipped testing with no GPU), 1 the\n"
    "self-test or the real call warned, 2 a stage failed or a blocking problem was found,\n"
    "64 usage.\n";

/* fetch-cuda's --source values, passed on as they are. */
static const char *const source_choices[] = {"redist", "pypi", "auto", NULL};

static enum opt_result parse_opts(int argc, char **argv, struct all_opts *o)
{
    memset(o, 0, sizeof *o);
    const struct opt table[] = {
        {.kind = OPT_STRING,
         .name = "arch",
         .arg = "LIST",
         .help = "archs to build: a list, native or all (default: the GPUs present; with no "
                 "GPU, pass one)",
         .dest = &o->arch},
        {.kind = OPT_STRING,
         .name = "cuda-home",
         .arg = "DIR",
         .help = "use this toolkit (never fetch one)",
         .dest = &o->cuda_home},
        {.kind = OPT_STRING,
         .name = "out",
         .arg = "DIR",
         .help = "install prefix of the build (default $XDG_DATA_HOME/sagebuild/sageattn)",
         .dest = &o->out},
        {.kind = OPT_FLAG,
         .name = "yes",
         .letter = 'y',
         .help = "fetch a toolkit without asking",
         .dest = &o->yes},
        {.kind = OPT_ENUM,
         .name = "source",
         .arg = "SRC",
         .help = "where fetch-cuda gets it: redist (default), pypi, auto",
         .dest = &o->source,
         .choices = source_choices},
        {.kind = OPT_STRING,
         .name = "python",
         .arg = "PY",
         .help = "judge the toolkit by its torch (doctor, fetch-cuda and build read it, not "
                 "python3's), install into this python (e.g. ~/ComfyUI/venv/bin/python) and "
                 "compare a real call with torch SDPA (--yes also replaces an upstream "
                 "SageAttention there)",
         .dest = &o->python},
        {.kind = OPT_FLAG,
         .name = "json",
         .help = "print every stage's result as one JSON object",
         .dest = &o->json},
        {0},
    };
    const struct opt_command spec = {"all", about, footer, table, 0};
    return opt_parse(&spec, argc, argv);
}

static void say(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct run *r, const char *fmt, ...)
{
    if (r->o->json)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

/* One warning: on its own line under its stage (by check id when it has one), and in --json. */
static void add_warning(struct run *r, enum stage_id s, const char *id, const char *summary)
{
    cJSON *w = cJSON_CreateObject();
    cJSON_AddStringToObject(w, "stage", stage_names[s]);
    if (id)
        cJSON_AddStringToObject(w, "id", id);
    else
        cJSON_AddNullToObject(w, "id");
    cJSON_AddStringToObject(w, "summary", summary ? summary : "");
    cJSON_AddItemToArray(r->warnings, w);
    if (id)
        say(r, "      warning %s: %s\n", id, summary ? summary : "");
}

static void set_stage(struct run *r, enum stage_id s, const char *state, char *summary, char *fix)
{
    struct stage *st = &r->stages[s];
    st->state = state;
    free(st->summary);
    free(st->fix);
    st->summary = summary;
    st->fix = fix;
    enum out_status os = !strcmp(state, "ok")      ? OUT_OK
                         : !strcmp(state, "warn")  ? OUT_WARN
                         : !strcmp(state, "error") ? OUT_ERROR
                                                   : OUT_SKIP;
    const char *mark = out_status_mark(&r->st, os);
    say(r, "%s%s%s %-10s %s\n", out_color(&r->st, os), mark, out_reset(&r->st), stage_names[s],
        summary ? summary : state);
    if (fix)
        say(r, "      fix: %s\n", fix);
}

static void stop(struct run *r, int code)
{
    r->stopped = 1;
    r->exit_code = code;
}

/* A stage's command line: `sagebuild` and its words, as many as there are. */
struct args {
    const char **v; /* NULL-terminated once anything was added */
    int n, cap;
};

static void args_add(struct args *a, const char *word)
{
    a->v = xgrow(a->v, &a->cap, a->n + 2, sizeof *a->v);
    a->v[a->n++] = word;
    a->v[a->n] = NULL;
}

/* Why `sagebuild <stage> --json` gave no result: how it ended and its stderr's last 600 bytes. */
static char *no_result_why(enum stage_id s, const struct proc_result *pr, int parsed)
{
    struct strbuf sb = STRBUF_INIT;
    char *how = proc_describe(pr);
    sb_addf(&sb, "`sagebuild %s --json` %s%s", stage_names[s],
            !parsed && pr->exited ? "printed no JSON; it " : "", how);
    free(how);
    size_t tl = pr->err_len ? strlen(pr->err) : 0;
    if (tl)
        sb_addf(&sb, ": %s", pr->err + (tl > 600 ? tl - 600 : 0));
    return sb_detach(&sb);
}

/* Runs `sagebuild <args> --json`: 0 with its JSON text in *json_out (heap) and parsed into the
 * stage's output, or -1 with *why (heap) when it crashed, hung or printed no JSON. */
static int run_stage(struct run *r, enum stage_id s, const char *const *args, int timeout_ms,
                     char **json_out, char **why)
{
    struct args argv = {0};
    args_add(&argv, r->self);
    for (; *args; args++)
        args_add(&argv, *args);
    args_add(&argv, "--json");
    struct proc_opts po = {.timeout_ms = timeout_ms, .max_output = STAGE_MAX_OUTPUT};
    if (r->live && r->live_text) {
        r->live_t0 = seconds_now();
        r->live_have = 0;
        po.tick = draw_live;
        po.tick_arg = r;
    }
    struct proc_result pr;
    proc_run(argv.v, &po, &pr);
    free(argv.v);
    if (po.tick) { /* the stage's own line comes next, where the live one was */
        out_clear_line(stdout);
        fflush(stdout);
    }
    free(r->live_text);
    free(r->live_build_log);
    r->live_text = r->live_build_log = NULL;
    r->last_exit = pr.exited ? pr.exit_code : -1;
    *json_out = NULL;
    *why = NULL;
    cJSON *parsed = pr.out_len ? cJSON_Parse(pr.out) : NULL;
    int rc = 0;
    if (!pr.started || pr.timed_out || pr.signaled || !parsed) {
        *why = no_result_why(s, &pr, parsed != NULL);
        cJSON_Delete(parsed);
        rc = -1;
    } else {
        *json_out = xstrdup(pr.out);
        r->stages[s].output = parsed;
    }
    proc_result_free(&pr);
    return rc;
}

/* The doctor's line: its counts and what `all` does about each error. */
static char *doctor_line(const struct doctor_summary *d)
{
    struct strbuf sb = STRBUF_INIT;
    sb_addf(&sb, "%d ok, %d %s, %d %s", d->ok, d->warn, plural(d->warn, "warning", "warnings"),
            d->error, plural(d->error, "error", "errors"));
    for (int i = 0; i < d->nfindings; i++)
        sb_addf(&sb, "%s%s (%s)", i ? ", " : "; ", d->findings[i].id ? d->findings[i].id : "?",
                d->findings[i].action == FINDING_FETCH   ? "fetch-cuda fixes it"
                : d->findings[i].action == FINDING_BUILD ? "build handles it"
                                                         : "not needed for these kernels");
    return sb_detach(&sb);
}

/* What the doctor found: a stop, a fetch to do, or only a line with its warnings. */
static void act_on_doctor(struct run *r, const struct doctor_summary *d, int *needs_fetch)
{
    const struct finding *block = all_first_block(d);
    if (block) {
        set_stage(r, ST_DOCTOR, "error",
                  xasprintf("%s: %s", block->id ? block->id : "?",
                            block->summary ? block->summary : "error"),
                  block->fix ? xstrdup(block->fix) : xstrdup("sagebuild doctor -v"));
        stop(r, SB_EXIT_ERROR);
        return;
    }
    set_stage(r, ST_DOCTOR, d->error || d->warn ? "warn" : "ok", doctor_line(d), NULL);
    for (int i = 0; i < d->nwarnings; i++)
        add_warning(r, ST_DOCTOR, d->warnings[i].id ? d->warnings[i].id : "?",
                    d->warnings[i].summary);
    *needs_fetch = d->needs_fetch;
    if (!d->needs_fetch || !r->o->cuda_home)
        return;
    const struct finding *f = NULL;
    for (int i = 0; i < d->nfindings && !f; i++)
        if (d->findings[i].action == FINDING_FETCH)
            f = &d->findings[i];
    set_stage(r, ST_DOCTOR, "error",
              xasprintf("the toolkit given by --cuda-home does not fit: %s",
                        f && f->summary ? f->summary : "see sagebuild doctor"),
              xstrdup(f && f->fix ? f->fix : "leave --cuda-home out to let all fetch one"));
    stop(r, SB_EXIT_ERROR);
}

static void stage_doctor(struct run *r, const char *archs, int ngpus, int *needs_fetch)
{
    struct args args = {0};
    args_add(&args, "doctor");
    if (r->o->cuda_home) {
        args_add(&args, "--cuda-home");
        args_add(&args, r->o->cuda_home);
    }
    if (archs) {
        args_add(&args, "--arch");
        args_add(&args, archs);
    }
    if (r->o->python) { /* whether the toolkit fits is a question about PY's torch */
        args_add(&args, "--python");
        args_add(&args, r->o->python);
    }
    char *json, *why, *err = NULL;
    *needs_fetch = 0;
    int ran = run_stage(r, ST_DOCTOR, args.v, DOCTOR_TIMEOUT_MS, &json, &why);
    free(args.v);
    struct doctor_summary d;
    if (ran < 0) {
        /* The doctor only advises: without it, build's own checks still stop a bad setup. */
        set_stage(r, ST_DOCTOR, "warn", why, xstrdup("sagebuild doctor"));
    } else if (all_read_doctor(json, r->last_exit, ngpus > 0, &d, &err) < 0) {
        set_stage(r, ST_DOCTOR, "warn", xasprintf("doctor: %s", err), xstrdup("sagebuild doctor"));
        free(err);
    } else {
        act_on_doctor(r, &d, needs_fetch);
        all_doctor_summary_free(&d);
    }
    free(json);
}

static int confirm_fetch(struct run *r)
{
    if (r->o->yes)
        return 1;
    if (r->o->json || !isatty(STDIN_FILENO))
        return 0;
    printf("The toolkit does not fit. Download the matching CUDA compiler components "
           "(about 75 MB) with fetch-cuda? [Y/n] ");
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin))
        return 0;
    return line[0] == '\n' || line[0] == 'y' || line[0] == 'Y';
}

/* `sagebuild fetch-cuda` as a fix names --python PY: without it, it would fetch the release of
 * python3's torch, not the one this run needs. Heap. */
static char *fetch_command(const struct run *r, const char *then)
{
    char *py = r->o->python ? shell_quote(r->o->python) : NULL;
    char *cmd = xasprintf("sagebuild fetch-cuda%s%s%s", py ? " --python " : "", py ? py : "",
                          then ? then : "");
    free(py);
    return cmd;
}

/* The fix when a fetch is needed but was not allowed. Heap. */
static char *yes_or_fetch_first(const struct run *r)
{
    char *fetch = fetch_command(r, ", then sagebuild all");
    char *fix = xasprintf("sagebuild all --yes   (or: %s)", fetch);
    free(fetch);
    return fix;
}

/* The toolkit fetch-cuda installed (heap), or NULL when the run stopped. */
static char *stage_fetch(struct run *r)
{
    if (!confirm_fetch(r)) {
        set_stage(r, ST_FETCH, "error",
                  xstrdup("the toolkit must be fetched, and --yes was not given"),
                  yes_or_fetch_first(r));
        stop(r, SB_EXIT_ERROR);
        return NULL;
    }
    announce(r, NULL, "fetch-cuda: downloading and checking the toolkit");
    struct args args = {0};
    args_add(&args, "fetch-cuda");
    if (r->o->source) {
        args_add(&args, "--source");
        args_add(&args, r->o->source);
    }
    if (r->o->python) { /* the release PY's torch was built for, the one build then uses */
        args_add(&args, "--python");
        args_add(&args, r->o->python);
    }
    char *json, *why, *err = NULL, *prefix = NULL;
    int ran = run_stage(r, ST_FETCH, args.v, FETCH_TIMEOUT_MS, &json, &why);
    free(args.v);
    if (ran < 0) {
        set_stage(r, ST_FETCH, "error", why, fetch_command(r, NULL));
        stop(r, SB_EXIT_ERROR);
        return NULL;
    }
    struct stage_outcome sr;
    if (all_read_stage(json, "fetch-cuda", r->last_exit, &sr, &err) < 0) {
        set_stage(r, ST_FETCH, "error", xasprintf("fetch-cuda: %s", err), fetch_command(r, NULL));
        free(err);
        stop(r, SB_EXIT_ERROR);
    } else if (sr.status == STAGE_ERROR) {
        /* A warning (installed, but no host compiler for the post-check) goes on: the build
         * stage finds the compiler problem itself and says how to fix it. */
        set_stage(r, ST_FETCH, "error", xstrdup(sr.summary),
                  xstrdup(sr.fix ? sr.fix
                                 : "sagebuild fetch-cuda --mirror URL (a mirror that works; see "
                                   "its --help), then sagebuild all"));
        stop(r, SB_EXIT_ERROR);
    } else if (!sr.prefix) {
        set_stage(r, ST_FETCH, "error", xstrdup("fetch-cuda did not say where it installed"),
                  fetch_command(r, "; then sagebuild all --cuda-home <its prefix>"));
        stop(r, SB_EXIT_ERROR);
    } else {
        prefix = xstrdup(sr.prefix);
        set_stage(r, ST_FETCH, "ok", xasprintf("toolkit in %s", prefix), NULL);
    }
    all_stage_outcome_free(&sr);
    free(json);
    return prefix;
}

/* The last lines of a failed stage's output, indented under the stage lines. */
static void show_tail(struct run *r, const char *tail, const char *from)
{
    if (!tail || !*tail)
        return;
    const char *t = build_log_tail(tail, strlen(tail), 15);
    say(r, "      --- last lines of %s ---\n", from ? from : "its output");
    while (*t) {
        size_t n = strcspn(t, "\n");
        say(r, "      | %.*s\n", (int)n, t);
        t += n + (t[n] == '\n');
    }
}

/* Says what the build does: on a terminal the live line follows its log in progress. */
static void announce_build(struct run *r, const char *archs)
{
    char *out_dir = build_out_dir(r->o->out);
    char *running = build_progress_log_path(out_dir);
    if (r->live)
        announce(r, running, "build %s", archs);
    else
        announce(r, NULL, "build: %s into %s (log: %s/build.log)", archs, out_dir, out_dir);
    free(running);
    free(out_dir);
}

/* The build's install prefix (heap), or NULL when the run stopped. */
static char *stage_build(struct run *r, const char *archs, const char *cuda_home)
{
    struct args args = {0};
    args_add(&args, "build");
    args_add(&args, "--arch");
    args_add(&args, archs);
    if (cuda_home) {
        args_add(&args, "--cuda-home");
        args_add(&args, cuda_home);
    }
    if (r->o->python) { /* of several fetched toolkits, the one matching PY's torch */
        args_add(&args, "--python");
        args_add(&args, r->o->python);
    }
    if (r->o->out) {
        args_add(&args, "--out");
        args_add(&args, r->o->out);
    }
    announce_build(r, archs);
    char *json, *why, *err = NULL, *out = NULL;
    int ran = run_stage(r, ST_BUILD, args.v, BUILD_TIMEOUT_MS, &json, &why);
    free(args.v);
    if (ran < 0) {
        set_stage(r, ST_BUILD, "error", why, xstrdup("sagebuild build --arch ... (to see it run)"));
        stop(r, SB_EXIT_ERROR);
        return NULL;
    }
    struct stage_outcome sr;
    if (all_read_stage(json, "build", r->last_exit, &sr, &err) < 0) {
        set_stage(r, ST_BUILD, "error", xasprintf("build: %s", err), NULL);
        free(err);
        stop(r, SB_EXIT_ERROR);
    } else if (sr.status == STAGE_ERROR) {
        show_tail(r, sr.log_tail, sr.log);
        set_stage(r, ST_BUILD, "error",
                  sr.log ? xasprintf("%s (full log: %s)", sr.summary, sr.log) : xstrdup(sr.summary),
                  sr.fix ? xstrdup(sr.fix) : NULL);
        stop(r, sr.exit_code);
    } else {
        out = xstrdup(sr.out ? sr.out : ".");
        set_stage(r, ST_BUILD, "ok", xstrdup(sr.summary), NULL);
    }
    all_stage_outcome_free(&sr);
    free(json);
    return out;
}

/* A summary of several lines (one per GPU) with the lines after the first under the first. */
static char *indented(const char *summary)
{
    struct strbuf sb = STRBUF_INIT;
    for (const char *p = summary; *p; p++) {
        if (*p == '\n')
            sb_adds(&sb, "\n                ");
        else
            sb_add(&sb, p, 1);
    }
    return sb_detach(&sb);
}

static void stage_selftest(struct run *r, const char *build_dir)
{
    const char *args[] = {"selftest", "--build", build_dir, NULL};
    announce(r, NULL, "selftest: running the kernels on each GPU");
    char *json, *why, *err = NULL;
    if (run_stage(r, ST_SELFTEST, args, SELFTEST_TIMEOUT_MS, &json, &why) < 0) {
        set_stage(r, ST_SELFTEST, "error", why,
                  xasprintf("sagebuild selftest --build %s   (to see it run)", build_dir));
        stop(r, SB_EXIT_ERROR);
        return;
    }
    struct stage_outcome sr;
    if (all_read_stage(json, "selftest", r->last_exit, &sr, &err) < 0) {
        set_stage(r, ST_SELFTEST, "error", xasprintf("selftest: %s", err), NULL);
        free(err);
        stop(r, SB_EXIT_ERROR);
    } else if (sr.status == STAGE_SKIPPED) {
        /* Built for --arch on a machine without a GPU: nothing to test here, and not a failure. */
        set_stage(
            r, ST_SELFTEST, "skipped", xstrdup(sr.summary),
            xasprintf("on the machine with the GPU: sagebuild selftest --build %s", build_dir));
        r->exit_code = SB_EXIT_OK;
    } else {
        show_tail(r, sr.log_tail, "sageattn-selftest");
        set_stage(r, ST_SELFTEST, stage_status_name(sr.status), indented(sr.summary),
                  sr.fix ? xstrdup(sr.fix) : NULL);
        r->exit_code = sr.status == STAGE_ERROR ? SB_EXIT_ERROR : sr.exit_code;
    }
    all_stage_outcome_free(&sr);
    free(json);
}

/* "sageattention 2.2.0+sagebuild.0.1.0 into PY (replaced 2.1.1, the upstream SageAttention)"
 * and the install's notes, one per line, from its result's payload. */
static char *install_line(const cJSON *payload, const char *python)
{
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(payload, "version");
    const cJSON *replaced = cJSON_GetObjectItemCaseSensitive(payload, "replaced");
    const cJSON *was = cJSON_GetObjectItemCaseSensitive(replaced, "version");
    const cJSON *notes = cJSON_GetObjectItemCaseSensitive(payload, "notes");
    struct strbuf sb = STRBUF_INIT;
    sb_addf(&sb, "sageattention %s into %s", cJSON_IsString(version) ? version->valuestring : "?",
            python);
    if (cJSON_IsString(was))
        sb_addf(&sb, " (replaced %s%s)", was->valuestring,
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(replaced, "ours"))
                    ? ""
                    : ", the upstream SageAttention");
    const cJSON *n;
    cJSON_ArrayForEach(n, notes)
    {
        if (cJSON_IsString(n))
            sb_addf(&sb, "\n                %s", n->valuestring);
    }
    return sb_detach(&sb);
}

static void stage_install(struct run *r, const char *build_dir)
{
    const char *args[] = {"install",
                          "--python",
                          r->o->python,
                          "--build",
                          build_dir,
                          "--skip-selftest",
                          r->o->yes ? "--yes" : NULL,
                          NULL};
    announce(r, NULL, "install: the drop-in sageattention into %s", r->o->python);
    char *json, *why, *err = NULL;
    if (run_stage(r, ST_INSTALL, args, INSTALL_TIMEOUT_MS, &json, &why) < 0) {
        set_stage(r, ST_INSTALL, "error", why,
                  xasprintf("sagebuild install --python %s --build %s   (to see it run)",
                            r->o->python, build_dir));
        stop(r, SB_EXIT_ERROR);
        return;
    }
    struct stage_outcome sr;
    if (all_read_stage(json, "install", r->last_exit, &sr, &err) < 0) {
        set_stage(r, ST_INSTALL, "error", xasprintf("install: %s", err), NULL);
        free(err);
        stop(r, SB_EXIT_ERROR);
    } else if (sr.status == STAGE_ERROR) {
        set_stage(r, ST_INSTALL, "error", xstrdup(sr.summary), sr.fix ? xstrdup(sr.fix) : NULL);
        stop(r, SB_EXIT_ERROR);
    } else {
        set_stage(r, ST_INSTALL, sr.status == STAGE_WARN ? "warn" : "ok",
                  install_line(sr.payload, r->o->python), NULL);
        if (sr.status == STAGE_WARN && r->exit_code == SB_EXIT_OK)
            r->exit_code = SB_EXIT_WARN;
    }
    all_stage_outcome_free(&sr);
    free(json);
}

/* The call's result lines as a JSON array, for --json. */
static cJSON *call_lines_json(const char *text)
{
    cJSON *arr = cJSON_CreateArray();
    for (const char *line = text ? text : ""; *line;) {
        size_t len = strcspn(line, "\n");
        char *one = xstrndup(line, len);
        cJSON *o = one[0] == '{' ? cJSON_Parse(one) : NULL;
        if (o)
            cJSON_AddItemToArray(arr, o);
        free(one);
        line += len + (line[len] == '\n');
    }
    return arr;
}

/* The call on each GPU: one line each, and the worst verdict sets the stage's state. */
static void judge_calls(struct run *r, const struct call_report *rep)
{
    enum call_verdict worst = CALL_OK;
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < rep->ngpus; i++) {
        enum call_verdict v;
        char *line = all_call_line(&rep->gpus[i], &v);
        sb_addf(&sb, "%s%s", i ? "\n                " : "", line);
        free(line);
        if (v > worst)
            worst = v;
    }
    if (rep->ngpus == 0)
        sb_adds(&sb, "torch listed no GPU");
    set_stage(r, ST_CALL,
              worst == CALL_FAIL   ? "error"
              : worst == CALL_WARN ? "warn"
                                   : "ok",
              sb_detach(&sb),
              worst == CALL_FAIL
                  ? xasprintf("sagebuild doctor --python %s sageattention", r->o->python)
                  : NULL);
    if (worst == CALL_FAIL)
        stop(r, SB_EXIT_ERROR);
    else if (worst == CALL_WARN && r->exit_code == SB_EXIT_OK)
        r->exit_code = SB_EXIT_WARN;
}

static void stage_call(struct run *r, int ngpus)
{
    if (ngpus == 0) {
        set_stage(r, ST_CALL, "skipped", xstrdup("skipped: no GPU here for a real call"), NULL);
        return;
    }
    say(r, "  ...  call: sageattn and torch SDPA on each GPU through %s\n", r->o->python);
    const char *argv[] = {r->o->python, "-c", all_call_script, NULL};
    struct proc_opts po = {.timeout_ms = CALL_TIMEOUT_MS, .max_output = 1 << 20};
    struct proc_result pr;
    proc_run(argv, &po, &pr);
    r->stages[ST_CALL].output = call_lines_json(pr.out);
    struct call_report rep;
    char *err = NULL;
    if (all_parse_call(pr.out, &rep, &err) < 0 || pr.timed_out || pr.signaled) {
        show_tail(r, pr.err, "the call's stderr");
        char *how = proc_describe(&pr);
        set_stage(
            r, ST_CALL, "error",
            xasprintf("the real call through %s %s%s%s", r->o->python, how, err ? ": " : "",
                      err ? err : ""),
            xasprintf("%s -c 'import sageattention'   (and see the output above)", r->o->python));
        free(how);
        stop(r, SB_EXIT_ERROR);
    } else if (rep.import_error) {
        set_stage(r, ST_CALL, "error",
                  xasprintf("`import sageattention` with torch loaded fails in %s: %s",
                            r->o->python, rep.import_error),
                  xasprintf("sagebuild doctor --python %s sageattention", r->o->python));
        stop(r, SB_EXIT_ERROR);
    } else if (rep.skipped) {
        set_stage(r, ST_CALL, "skipped", xasprintf("skipped: %s", rep.skipped),
                  xasprintf("install torch with CUDA into %s to compare with SDPA", r->o->python));
    } else {
        judge_calls(r, &rep);
    }
    all_call_report_free(&rep);
    free(err);
    proc_result_free(&pr);
}
static void print_json(struct run *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema", 1);
    cJSON_AddStringToObject(root, "command", "all");
    /* A stage that warned shows in the status even when the exit status is 0 (a doctor warning
     * does not fail the run): "warn", with each warning in "warnings". */
    int warned = 0;
    for (int s = 0; s < NSTAGES; s++) {
        const struct stage *st = &r->stages[s];
        if (!st->state || strcmp(st->state, "warn"))
            continue;
        warned = 1;
        int named = 0;
        cJSON *w;
        cJSON_ArrayForEach(w, r->warnings)
        {
            cJSON *ws = cJSON_GetObjectItemCaseSensitive(w, "stage");
            named |= cJSON_IsString(ws) && !strcmp(ws->valuestring, stage_names[s]);
        }
        if (!named)
            add_warning(r, (enum stage_id)s, NULL, st->summary);
    }
    cJSON_AddStringToObject(root, "status",
                            r->exit_code == 0 && !warned             ? "ok"
                            : r->exit_code == 0 || r->exit_code == 1 ? "warn"
                                                                     : "error");
    cJSON_AddNumberToObject(root, "exit_code", r->exit_code);
    cJSON_AddItemToObject(root, "warnings", r->warnings);
    r->warnings = NULL;
    const char *stopped_at = NULL;
    cJSON *stages = cJSON_AddArrayToObject(root, "stages");
    for (int s = 0; s < NSTAGES; s++) {
        struct stage *st = &r->stages[s];
        if ((s == ST_INSTALL || s == ST_CALL) && !r->o->python)
            continue; /* not part of this run */
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "stage", stage_names[s]);
        cJSON_AddStringToObject(o, "status", st->state ? st->state : "not run");
        if (st->summary)
            cJSON_AddStringToObject(o, "summary", st->summary);
        else
            cJSON_AddNullToObject(o, "summary");
        if (st->fix)
            cJSON_AddStringToObject(o, "fix", st->fix);
        else
            cJSON_AddNullToObject(o, "fix");
        cJSON_AddItemToObject(o, "output", st->output ? st->output : cJSON_CreateNull());
        st->output = NULL;
        cJSON_AddItemToArray(stages, o);
        if (st->state && !strcmp(st->state, "error") && !stopped_at)
            stopped_at = stage_names[s];
    }
    if (stopped_at && r->stopped)
        cJSON_AddStringToObject(root, "stopped_at", stopped_at);
    else
        cJSON_AddNullToObject(root, "stopped_at");
    char *text = json_text(root);
    fputs(text, stdout);
    free(text);
}

/* Which archs to build: decided first, so a machine without a GPU stops before any download.
 * SB_EXIT_OK with *archs (heap; NULL when the run stopped), or SB_EXIT_USAGE for a bad --arch. */
static int stage_archs(struct run *r, const struct gpu_cc *gpus, int ngpus, char **archs)
{
    const char *spec = r->o->arch;
    *archs = NULL;
    if ((!spec || strstr(spec, "native")) && ngpus == 0) {
        set_stage(r, ST_ARCHS, "error",
                  xstrdup("no NVIDIA GPU was found, so `all` cannot tell which archs to build"),
                  build_arch_examples("name them: sagebuild all --arch ", ""));
        stop(r, SB_EXIT_ERROR);
        return SB_EXIT_OK;
    }
    struct arch_list list;
    char *notes = NULL, *err = NULL;
    if (build_arch_parse_spec(spec ? spec : "native", gpus, ngpus, &list, &notes, &err) < 0) {
        fprintf(stderr, "sagebuild all: %s\n", err);
        free(err);
        return SB_EXIT_USAGE;
    }
    *archs = build_arch_join(&list, ",");
    set_stage(r, ST_ARCHS, "ok",
              xasprintf("%s (%s)", *archs,
                        spec         ? "from --arch"
                        : ngpus == 1 ? "for the GPU present"
                                     : "for the GPUs present"),
              NULL);
    for (char *line = notes, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl)
            nl = line + strlen(line) - 1;
        say(r, "      note: %.*s\n", (int)(nl - line), line);
    }
    free(notes);
    return SB_EXIT_OK;
}

/* doctor, fetch-cuda when needed, build, selftest, and with --python install and call; each
 * only while no stage has stopped the run. */
static void run_stages(struct run *r, const char *archs, int ngpus)
{
    int needs_fetch = 0;
    char *fetched = NULL, *out = NULL;
    if (!r->stopped)
        stage_doctor(r, archs, ngpus, &needs_fetch);
    if (!r->stopped && needs_fetch)
        fetched = stage_fetch(r);
    else if (!r->stopped)
        set_stage(r, ST_FETCH, "skipped", xstrdup("not needed: the toolkit fits"), NULL);
    if (!r->stopped)
        out = stage_build(r, archs, fetched ? fetched : r->o->cuda_home);
    if (!r->stopped)
        stage_selftest(r, out);
    if (!r->stopped && r->o->python)
        stage_install(r, out);
    if (!r->stopped && r->o->python)
        stage_call(r, ngpus);
    free(fetched);
    free(out);
}

/* The last line for people: how the run ended and what to do next. */
static void print_ending(const struct run *r)
{
    const struct all_opts *o = r->o;
    int nwarnings = cJSON_GetArraySize(r->warnings);
    if (r->stopped)
        printf("sagebuild all: stopped; fix the problem above and run it again.\n");
    else if (o->python)
        printf("sagebuild all: %s; `import sageattention` in %s now runs these kernels.\n",
               r->exit_code == SB_EXIT_OK     ? "done"
               : r->exit_code == SB_EXIT_WARN ? "done, with the warnings above"
                                              : "installed, but the self-test failed (see above)",
               o->python);
    else if (r->stages[ST_SELFTEST].state && !strcmp(r->stages[ST_SELFTEST].state, "skipped"))
        printf("sagebuild all: built; the self-test needs a GPU (see above).\n");
    else if (r->exit_code == SB_EXIT_OK && nwarnings > 0)
        printf("sagebuild all: done: built and tested, with %d %s (above).\n", nwarnings,
               plural(nwarnings, "warning", "warnings"));
    else if (r->exit_code == SB_EXIT_OK)
        printf("sagebuild all: done: built and tested.\n");
    else
        printf("sagebuild all: built; the self-test %s (exit %d).\n",
               r->exit_code == SB_EXIT_WARN ? "passed with warnings" : "failed", r->exit_code);
    if (!r->stopped && !o->python)
        printf("To use them from PyTorch (ComfyUI): sagebuild install --python "
               "~/ComfyUI/venv/bin/python\n");
}

static void run_free(struct run *r)
{
    for (int s = 0; s < NSTAGES; s++) {
        free(r->stages[s].summary);
        free(r->stages[s].fix);
        cJSON_Delete(r->stages[s].output);
    }
    cJSON_Delete(r->warnings);
    free(r->self);
}

int cmd_all(int argc, char **argv, const struct global_opts *g)
{
    struct all_opts o;
    enum opt_result parsed = parse_opts(argc, argv, &o);
    if (parsed != OPT_OK)
        return opt_exit_status(parsed);
    struct run r;
    memset(&r, 0, sizeof r);
    r.o = &o;
    out_style_init(&r.st, stdout, g->no_color);
    r.live = r.st.tty && !o.json;
    r.self = fs_realpath("/proc/self/exe");
    if (!r.self) {
        fprintf(stderr, "sagebuild all: cannot find its own executable (/proc/self/exe)\n");
        return SB_EXIT_INTERNAL;
    }
    r.warnings = cJSON_CreateArray();
    struct gpu_cc gpus[16];
    int ngpus = build_gpus_present(gpus, 16, NULL);
    char *archs = NULL;
    int rc = stage_archs(&r, gpus, ngpus, &archs);
    if (rc == SB_EXIT_OK) {
        run_stages(&r, archs, ngpus);
        if (o.json)
            print_json(&r);
        else
            print_ending(&r);
        rc = r.exit_code;
    }
    free(archs);
    run_free(&r);
    return rc;
}
