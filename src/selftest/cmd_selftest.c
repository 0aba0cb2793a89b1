/* sagebuild selftest: runs the built sageattn-selftest in its own process (a crashing kernel
 * cannot take the CLI down), reads its JSON, shows per GPU and mode whether it is safe to use
 * and whether it met its engineering goal, and records the recommended mode per GPU in
 * <build>/recommendation.json for the sageattention package. */
#include "kernel_build/api.h"
#include "kernel_build/run.h"
#include "cmd.h"
#include "fetch/engine/verify.h"
#include "probe/gpu.h"
#include "selftest/recommendation.h"
#include "selftest/render.h"
#include "selftest/report.h"
#include "util/fs.h"
#include "util/opt.h"
#include "util/out.h"
#include "util/proc.h"
#include "util/strbuf.h"
#include "util/xdg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SELFTEST_DEFAULT_TIMEOUT_S 1800
#define SELFTEST_MAX_OUTPUT (32u << 20)

struct selftest_opts {
    const char *build;
    const char *device; /* "N" or "all"; NULL: the program's default */
    const char *depth;  /* "--quick", "--full" or NULL */
    int json;
    int timeout_s;
};

static const char about[] =
    "Runs DIR/bin/sageattn-selftest: accuracy of each mode (fp16, int8-fp16, int8-fp8 and\n"
    "the P.V variants int8-fp16-f16acc, int8-fp8-f16acc, int8-fp8-bs, and Hopper's\n"
    "int8-fp8-wgmma where the library has sm_90a code) against a\n"
    "high-precision reference on the GPU, and speed in TOPS against the fp16 baseline.\n"
    "Per GPU and mode: safe (every case finite, complete and within cos >= 0.999,\n"
    "rel-L1 <= 0.05) and its engineering goal (a note); the recommended mode is the\n"
    "fastest safe one at L=16K (--full) or 4K, D=128, never one slower than fp16. It is\n"
    "written to DIR/recommendation.json, which the sageattention package reads.\n";
static const char footer[] =
    "Exit status: 0 every mode safe (missed goals are notes), 1 a mode is not safe, 2 a mode\n"
    "is broken (NaN, missing writes, errors), no mode is safe, a GPU has no code, or the\n"
    "self-test crashed, hung or printed garbage; 77 skipped: no GPU; 64 usage.\n";

/* --device: a GPU index (0, 1, ...) or "all". */
static int device_arg(const char *arg, void *dest)
{
    char *end;
    strtol(arg, &end, 10);
    if (strcmp(arg, "all") && (*end || end == arg || arg[0] == '-'))
        return -1;
    *(const char **)dest = arg;
    return 0;
}

static enum opt_result parse_opts(int argc, char **argv, struct selftest_opts *o)
{
    *o = (struct selftest_opts){.timeout_s = SELFTEST_DEFAULT_TIMEOUT_S};
    int quick = 0, full = 0;
    const struct opt table[] = {
        BUILD_DIR_OPTION(&o->build),
        {.kind = OPT_PARSED,
         .name = "device",
         .arg = "N|all",
         .help = "which GPU (default: every GPU)",
         .dest = &o->device,
         .parse = device_arg,
         .wants = "a GPU index or 'all'"},
        {.kind = OPT_FLAG,
         .name = "quick",
         .help = "a representative subset (the default)",
         .dest = &quick,
         .group = 1},
        {.kind = OPT_FLAG,
         .name = "full",
         .help = "the whole matrix of shapes",
         .dest = &full,
         .group = 1},
        {.kind = OPT_INT,
         .name = "timeout",
         .arg = "SECONDS",
         .help = "kill a hanging self-test after this long (default 1800)",
         .dest = &o->timeout_s,
         .min = 1,
         .max = 7 * 24 * 3600},
        {.kind = OPT_FLAG,
         .name = "json",
         .help = "print a normalised JSON with every number",
         .dest = &o->json},
        {0},
    };
    const struct opt_command spec = {"selftest", about, footer, table, 0};
    enum opt_result parsed = opt_parse(&spec, argc, argv);
    if (parsed != OPT_OK)
        return parsed;
    o->depth = quick ? "--quick" : full ? "--full" : NULL;
    /* A --build that names no folder is a mistyped path, not a machine without a GPU. */
    if (o->build && !fs_is_dir(o->build)) {
        opt_fail(&spec, "--build %s: %s; give the folder `sagebuild build --out` made", o->build,
                 fs_exists(o->build) ? "not a folder" : "no such folder");
        return OPT_FAILED;
    }
    return OPT_OK;
}

struct outcome {
    struct st_run run;
    struct selftest_report report;
    int have_report;
    char *error, *fix, *tail, *program, *build_dir, *out_flag;
    char *record_path, *record_note;
};

static void fail(struct outcome *oc, char *error, char *fix)
{
    oc->run.exit_code = SB_EXIT_ERROR;
    oc->error = error;
    oc->fix = fix;
}

/* The program's stderr tail, else its stdout's: what to show when it went wrong. */
static char *tail_of(const struct proc_result *r)
{
    const char *src = r->err_len ? r->err : r->out;
    size_t len = r->err_len ? r->err_len : r->out_len;
    const char *t = build_log_tail(src, len, 20);
    return *t ? xstrndup(t, 4000) : NULL;
}

/* No program to run: on a machine with no GPU that is still a plain skip. */
static void no_program(struct outcome *oc, struct selftest_report *rep)
{
    struct gpu_info gi;
    probe_gpu(0, &gi);
    if (gi.count == 0) {
        oc->run.exit_code = SB_EXIT_SKIPPED;
        rep->skipped = xasprintf("no GPU: %s (and nothing built in %s)",
                                 gi.error ? gi.error : "the driver lists no device", oc->build_dir);
        oc->have_report = 1;
    } else {
        fail(
            oc, xasprintf("%s does not exist: nothing was built in %s", oc->program, oc->build_dir),
            xasprintf("sagebuild build --arch native%s   (then run selftest again)", oc->out_flag));
    }
    gpu_info_free(&gi);
}

static void run_selftest(const struct selftest_opts *o, struct outcome *oc)
{
    char *data = NULL;
    oc->build_dir =
        o->build ? xstrdup(o->build) : fs_join((data = xdg_data_dir()) ? data : ".", "sageattn");
    free(data);
    oc->out_flag = o->build ? xasprintf(" --out %s", o->build) : xstrdup("");
    oc->program = fs_join(oc->build_dir, "bin/sageattn-selftest");
    oc->run.child_exit = -1;
    if (!fs_is_executable(oc->program)) {
        no_program(oc, &oc->report);
        return;
    }
    const char *argv[8];
    int n = 0;
    argv[n++] = oc->program;
    argv[n++] = "--json";
    if (o->device) {
        argv[n++] = "--device";
        argv[n++] = o->device;
    }
    if (o->depth)
        argv[n++] = o->depth;
    argv[n] = NULL;
    struct proc_opts po = {.timeout_ms = o->timeout_s * 1000, .max_output = SELFTEST_MAX_OUTPUT};
    struct proc_result r;
    proc_run(argv, &po, &r);
    oc->run.elapsed_s = r.elapsed_ms / 1000.0;
    char *why = NULL;
    if (!r.started) {
        fail(oc, xasprintf("%s could not be run: %s", oc->program, (why = proc_describe(&r))),
             xasprintf("sagebuild build --force%s", oc->out_flag));
    } else if (r.timed_out) {
        oc->tail = tail_of(&r);
        fail(oc, xasprintf("the self-test hung: %s", (why = proc_describe(&r))),
             xstrdup("run it again with --timeout SECONDS if the GPU is busy; otherwise report "
                     "the output above"));
    } else if (r.signaled) {
        oc->tail = tail_of(&r);
        fail(oc, xasprintf("the self-test crashed: %s", (why = proc_describe(&r))),
             xasprintf("run %s --quick by hand (under compute-sanitizer) and report the output",
                       oc->program));
    } else {
        oc->run.child_exit = r.exit_code;
        char *perr = NULL;
        if (selftest_parse(r.out, r.out_len, &oc->report, &perr) == 0) {
            oc->have_report = 1;
            oc->run.exit_code = selftest_exit_status(&oc->report, r.exit_code);
        } else if (r.exit_code == SB_EXIT_SKIPPED) {
            /* an older or terser self-test: its last line says why */
            char *t = tail_of(&r);
            oc->report.skipped = t ? t : xstrdup("no GPU");
            oc->have_report = 1;
            oc->run.exit_code = SB_EXIT_SKIPPED;
        } else {
            oc->tail = tail_of(&r);
            fail(oc,
                 xasprintf("the self-test (exit status %d) did not print its report: %s",
                           r.exit_code, perr),
                 r.exit_code == SB_EXIT_USAGE
                     ? xasprintf("the self-test does not match this sagebuild: sagebuild build "
                                 "--force%s",
                                 oc->out_flag)
                     : xasprintf("run %s by hand and report its output", oc->program));
        }
        free(perr);
    }
    free(why);
    proc_result_free(&r);
}

/* Writes path atomically: a reader sees the old record or the new one, never half of one. */
static int write_atomically(const char *path, const char *text)
{
    char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
    int rc = fs_write_file(tmp, text, strlen(text));
    if (rc == 0)
        rc = rename(tmp, path);
    int e = errno;
    unlink(tmp);
    free(tmp);
    errno = e;
    return rc;
}

/* <build>/recommendation.json from a run that tested at least one GPU. */
static void record_recommendation(struct outcome *oc)
{
    if (!oc->have_report || oc->report.ndevices == 0 || oc->error)
        return;
    char *lib = fs_join(oc->build_dir, "lib/libsageattn.so");
    char *path = fs_join(oc->build_dir, RECOMMENDATION_NAME);
    char hex[65];
    if (sha256_file(lib, hex, NULL) < 0) {
        oc->record_note = xasprintf("cannot read %s: %s", lib, strerror(errno));
    } else {
        size_t len = 0;
        char *previous = fs_read_file(path, 1u << 20, &len);
        char date[32];
        time_t now = time(NULL);
        struct tm tm;
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
        struct recommendation_facts f = {hex, "sagebuild selftest " SAGEBUILD_VERSION, date,
                                         previous};
        int n = 0;
        char *text = recommendation_build(&oc->report, &f, &n);
        if (!text && unlink(path) == 0)
            oc->record_note = xasprintf("no GPU has a recommended mode; removed the old %s", path);
        else if (!text)
            oc->record_note = xstrdup("no GPU has a recommended mode");
        else if (write_atomically(path, text) < 0)
            oc->record_note = xasprintf("cannot write %s: %s", path, strerror(errno));
        else
            oc->record_path = xstrdup(path);
        free(text);
        free(previous);
    }
    free(lib);
    free(path);
}

int cmd_selftest(int argc, char **argv, const struct global_opts *g)
{
    struct selftest_opts o;
    enum opt_result parsed = parse_opts(argc, argv, &o);
    if (parsed != OPT_OK)
        return opt_exit_status(parsed);
    struct outcome oc;
    memset(&oc, 0, sizeof oc);
    run_selftest(&o, &oc);
    record_recommendation(&oc);
    oc.run.record_path = oc.record_path;
    oc.run.record_note = oc.record_note;
    oc.run.build_dir = oc.build_dir;
    oc.run.program = oc.program;
    oc.run.error = oc.error;
    oc.run.fix = oc.fix;
    oc.run.output_tail = oc.tail;
    oc.run.out_flag = oc.out_flag;
    const struct selftest_report *rep = oc.have_report ? &oc.report : NULL;
    if (o.json) {
        char *json = selftest_render_json(rep, &oc.run);
        fputs(json, stdout);
        free(json);
    } else {
        FILE *f = oc.error ? stderr : stdout;
        struct out_style st;
        out_style_init(&st, f, g->no_color);
        selftest_render_text(rep, &oc.run, f, &st);
    }
    int rc = oc.run.exit_code;
    selftest_report_free(&oc.report);
    free(oc.error);
    free(oc.fix);
    free(oc.tail);
    free(oc.program);
    free(oc.build_dir);
    free(oc.out_flag);
    free(oc.record_path);
    free(oc.record_note);
    return rc;
}
