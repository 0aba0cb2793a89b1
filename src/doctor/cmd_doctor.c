/* sagebuild doctor: runs the check table (or the checks named), prints each result as it
 * finishes, and exits 0 (ok), 1 (warnings only), 2 (errors) or 64 (usage). */
#include "cmd.h"
#include "doctor/doctor.h"
#include "doctor/report.h"
#include "probe/arch.h"
#include "util/opt.h"
#include "util/out.h"
#include "util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char about[] =
    "Diagnoses the environment a CUDA extension build (SageAttention, flash-attn, sagebuild's\n"
    "own kernels) depends on: driver and GPUs, torch and its CUDA, the toolkit torch would use,\n"
    "the host compiler against nvcc's limit, target archs, build resources, and an existing\n"
    "SageAttention install. Every problem comes with one command that fixes it.\n";
static const char footer[] =
    "Environment: CUDA_HOME, CUDA_PATH, PATH, CC, CXX, TORCH_CUDA_ARCH_LIST, MAX_JOBS are read as\n"
    "torch reads them; SAGEBUILD_FAKE_GPUS=\"580.65.06;NVIDIA GeForce RTX 5090:12.0\" (or none)\n"
    "replaces the driver probe.\n"
    "Exit status: 0 no issues, 1 warnings only, 2 errors, 64 usage.\n";

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int selected(const char *id, char **sel, int nsel)
{
    if (nsel == 0)
        return 1;
    for (int i = 0; i < nsel; i++) {
        size_t n = strlen(sel[i]);
        if (!strcmp(id, sel[i]) || (!strncmp(id, sel[i], n) && id[n] == '.'))
            return 1;
    }
    return 0;
}

/* --arch: one arch or more (sm_120a,sm_90a or 12.0;9.0), each one the probe knows. */
static int arch_list_arg(const char *list, void *dest)
{
    char *copy = xstrdup(list);
    char *save = NULL;
    int count = 0, ok = 1;
    for (char *a = strtok_r(copy, ",; ", &save); a; a = strtok_r(NULL, ",; ", &save)) {
        struct gpu_arch arch;
        ok &= arch_parse(a, &arch) == 0;
        count++;
    }
    free(copy);
    if (!ok || !count)
        return -1;
    *(const char **)dest = list;
    return 0;
}

/* The options into o; *first_check: the index of the first CHECK operand in argv. */
static enum opt_result parse_args(int argc, char **argv, struct doctor_opts *o, int *list_checks,
                                  int *first_check)
{
    const struct opt table[] = {
        {.kind = OPT_OPERANDS,
         .name = "CHECK",
         .arg = "[CHECK...]",
         .help = "run only these checks: an id (host.compiler) or a group (toolkit)",
         .dest = first_check},
        {.kind = OPT_FLAG,
         .name = "json",
         .help = "machine-readable output, schema 1",
         .dest = &o->json},
        {.kind = OPT_FLAG,
         .name = "verbose",
         .letter = 'v',
         .help = "show the evidence behind each verdict",
         .dest = &o->verbose,
         .group = 1},
        {.kind = OPT_FLAG,
         .name = "quiet",
         .letter = 'q',
         .help = "show only warnings and errors",
         .dest = &o->quiet,
         .group = 1},
        {.kind = OPT_STRING,
         .name = "python",
         .arg = "PY",
         .help = "the python whose torch is inspected (default $SAGEBUILD_PYTHON, else "
                 "python3); given, it also imports each compiled sageattention module to show "
                 "the real loader error",
         .dest = &o->python},
        {.kind = OPT_STRING,
         .name = "torch-dir",
         .arg = "DIR",
         .help = "read torch from DIR (the folder holding version.py), no python run",
         .dest = &o->torch_dir},
        {.kind = OPT_STRING,
         .name = "cuda-home",
         .arg = "DIR",
         .help = "check this toolkit instead of the one torch would resolve",
         .dest = &o->cuda_home},
        {.kind = OPT_PARSED,
         .name = "arch",
         .arg = "LIST",
         .help = "the archs a build would target (sm_120a,sm_90a or 12.0;9.0)",
         .dest = &o->arch,
         .parse = arch_list_arg,
         .wants = "a list of known archs such as sm_120a,sm_90a or 12.0;9.0"},
        {.kind = OPT_FLAG,
         .name = "list-checks",
         .help = "list the check ids and exit",
         .dest = list_checks},
        {0},
    };
    const struct opt_command spec = {"doctor", about, footer, table, 0};
    return opt_parse(&spec, argc, argv);
}

/* The first CHECK operand no check answers to, NULL when each names an id or a group. */
static const char *unknown_check(const struct check_def *defs, int ndefs, char **sel, int nsel)
{
    for (int i = 0; i < nsel; i++) {
        int any = 0;
        for (int k = 0; k < ndefs; k++)
            any |= selected(defs[k].id, &sel[i], 1);
        if (!any)
            return sel[i];
    }
    return NULL;
}

static void print_check_list(const struct check_def *defs, int ndefs, char **sel, int nsel)
{
    for (int k = 0; k < ndefs; k++)
        if (selected(defs[k].id, sel, nsel))
            printf("%-24s %s\n", defs[k].id, defs[k].title);
}

/* The checks that ran, in order, and what they found. */
struct doctor_run {
    const struct check_def **ran;
    struct check_result *results;
    int n;
    struct doctor_counts counts;
    long elapsed_ms;
};

/* Runs the selected checks; without --json each row is printed as its check finishes. */
static void run_checks(struct doctor_ctx *ctx, const struct check_def *defs, int ndefs, char **sel,
                       int nsel, const struct out_style *st, struct doctor_run *run)
{
    const struct doctor_opts *o = ctx->opts;
    memset(run, 0, sizeof *run);
    run->ran = xcalloc((size_t)ndefs, sizeof *run->ran);
    run->results = xcalloc((size_t)ndefs, sizeof *run->results);
    long start = now_ms();
    for (int k = 0; k < ndefs; k++) {
        if (!selected(defs[k].id, sel, nsel))
            continue;
        struct check_result *r = &run->results[run->n];
        run->ran[run->n++] = &defs[k];
        long check_start = now_ms();
        defs[k].run(ctx, r);
        /* The first check that needs a probe pays for it: this shows where a slow run went. */
        result_ev(r, "elapsed_ms", "%ld", now_ms() - check_start);
        report_count(&run->counts, r->status);
        if (!o->json) {
            report_human_row(stdout, st, &defs[k], r, o->verbose, o->quiet);
            fflush(stdout);
        }
    }
    run->elapsed_ms = now_ms() - start;
}

/* The JSON document, or the human summary line under the rows already printed. */
static void print_report(const struct doctor_opts *o, const struct out_style *st,
                         const struct doctor_run *run)
{
    if (o->json) {
        char *text = report_json(run->ran, run->results, run->n, &run->counts);
        puts(text);
        free(text);
    } else {
        report_human_summary(stdout, st, &run->counts, run->elapsed_ms, o->verbose);
    }
}

static void doctor_run_free(struct doctor_run *run)
{
    for (int i = 0; i < run->n; i++)
        result_free(&run->results[i]);
    free(run->results);
    free(run->ran);
}

int cmd_doctor(int argc, char **argv, const struct global_opts *g)
{
    struct doctor_opts o = {0};
    int list_checks = 0, first_check = 0;
    enum opt_result parsed = parse_args(argc, argv, &o, &list_checks, &first_check);
    if (parsed != OPT_OK)
        return opt_exit_status(parsed);
    int ndefs;
    const struct check_def *defs = doctor_checks(&ndefs);
    char **sel = argv + first_check;
    int nsel = argc - first_check;
    const char *unknown = unknown_check(defs, ndefs, sel, nsel);
    if (unknown) {
        fprintf(stderr, "sagebuild doctor: no check '%s'; see 'sagebuild doctor --list-checks'\n",
                unknown);
        return SB_EXIT_USAGE;
    }
    if (list_checks) {
        print_check_list(defs, ndefs, sel, nsel);
        return SB_EXIT_OK;
    }

    struct out_style st;
    out_style_init(&st, stdout, g ? g->no_color : 0);
    struct doctor_ctx ctx;
    ctx_init(&ctx, &o);
    struct doctor_run run;
    run_checks(&ctx, defs, ndefs, sel, nsel, &st, &run);
    print_report(&o, &st, &run);
    int rc = report_exit_status(&run.counts);
    doctor_run_free(&run);
    ctx_free(&ctx);
    return rc;
}
