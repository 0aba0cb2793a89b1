/* sagebuild doctor: runs the check table (or the checks named), prints each result as it
 * finishes, and exits 0 (ok), 1 (warnings only), 2 (errors) or 64 (usage). */
#include "cmd.h"
#include "doctor/doctor.h"
#include "doctor/report.h"
#include "probe/arch.h"
#include "util/out.h"
#include "util/strbuf.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage_text[] =
    "usage: sagebuild doctor [CHECK...] [--json] [-v|-q] [--python PATH] [--torch-dir DIR]\n"
    "                        [--cuda-home DIR] [--arch LIST] [--list-checks]\n"
    "\n"
    "Diagnoses the environment a CUDA extension build (SageAttention, flash-attn, sagebuild's\n"
    "own kernels) depends on: driver and GPUs, torch and its CUDA, the toolkit torch would use,\n"
    "the host compiler against nvcc's limit, target archs, build resources, and an existing\n"
    "SageAttention install. Every problem comes with one command that fixes it.\n"
    "\n"
    "  CHECK            run only these checks: an id (host.compiler) or a group (toolkit)\n"
    "  --json           machine-readable output, schema 1\n"
    "  -v, --verbose    show the evidence behind each verdict\n"
    "  -q, --quiet      show only warnings and errors\n"
    "  --python PATH    the interpreter to inspect (default python3); also imports each\n"
    "                   compiled sageattention module to show the real loader error\n"
    "  --torch-dir DIR  read torch from DIR (the folder holding version.py), no python run\n"
    "  --cuda-home DIR  check this toolkit instead of the one torch would resolve\n"
    "  --arch LIST      the archs a build would target (sm_120a,sm_90a or 12.0;9.0)\n"
    "  --list-checks    list the check ids and exit\n"
    "\n"
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

static int validate_arch_option(const char *list)
{
    char *copy = xstrdup(list);
    char *save = NULL;
    int count = 0, ok = 1;
    for (char *a = strtok_r(copy, ",; ", &save); a; a = strtok_r(NULL, ",; ", &save)) {
        struct gpu_arch arch;
        if (arch_parse(a, &arch) < 0) {
            fprintf(stderr, "sagebuild doctor: --arch: '%s' is not an arch (sm_120a, 9.0, ...)\n",
                    a);
            ok = 0;
        }
        count++;
    }
    free(copy);
    if (count == 0) {
        fprintf(stderr, "sagebuild doctor: --arch needs at least one arch\n");
        ok = 0;
    }
    return ok;
}

int cmd_doctor(int argc, char **argv, const struct global_opts *g)
{
    struct doctor_opts o = {0};
    int list_checks = 0;
    enum { OPT_PYTHON = 256, OPT_TORCH_DIR, OPT_CUDA_HOME, OPT_ARCH, OPT_LIST, OPT_JSON };
    static const struct option long_opts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"verbose", no_argument, NULL, 'v'},
        {"quiet", no_argument, NULL, 'q'},
        {"python", required_argument, NULL, OPT_PYTHON},
        {"torch-dir", required_argument, NULL, OPT_TORCH_DIR},
        {"cuda-home", required_argument, NULL, OPT_CUDA_HOME},
        {"arch", required_argument, NULL, OPT_ARCH},
        {"list-checks", no_argument, NULL, OPT_LIST},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "vqh", long_opts, NULL)) != -1) {
        switch (c) {
        case OPT_JSON:
            o.json = 1;
            break;
        case 'v':
            o.verbose = 1;
            break;
        case 'q':
            o.quiet = 1;
            break;
        case OPT_PYTHON:
            o.python = optarg;
            break;
        case OPT_TORCH_DIR:
            o.torch_dir = optarg;
            break;
        case OPT_CUDA_HOME:
            o.cuda_home = optarg;
            break;
        case OPT_ARCH:
            o.arch = optarg;
            break;
        case OPT_LIST:
            list_checks = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return SB_EXIT_OK;
        default:
            fputs(usage_text, stderr);
            return SB_EXIT_USAGE;
        }
    }
    if (o.verbose && o.quiet) {
        fprintf(stderr, "sagebuild doctor: -v and -q exclude each other\n");
        return SB_EXIT_USAGE;
    }
    if (o.arch && !validate_arch_option(o.arch))
        return SB_EXIT_USAGE;
    if ((o.python && !*o.python) || (o.torch_dir && !*o.torch_dir) ||
        (o.cuda_home && !*o.cuda_home)) {
        fprintf(stderr, "sagebuild doctor: an option was given an empty value\n");
        return SB_EXIT_USAGE;
    }

    int ndefs;
    const struct check_def *defs = doctor_checks(&ndefs);
    char **sel = argv + optind;
    int nsel = argc - optind;
    for (int i = 0; i < nsel; i++) {
        int any = 0;
        for (int k = 0; k < ndefs; k++)
            any |= selected(defs[k].id, &sel[i], 1);
        if (!any) {
            fprintf(stderr,
                    "sagebuild doctor: no check '%s'; see 'sagebuild doctor "
                    "--list-checks'\n",
                    sel[i]);
            return SB_EXIT_USAGE;
        }
    }
    if (list_checks) {
        for (int k = 0; k < ndefs; k++)
            if (selected(defs[k].id, sel, nsel))
                printf("%-24s %s\n", defs[k].id, defs[k].title);
        return SB_EXIT_OK;
    }

    struct out_style st;
    out_style_init(&st, stdout, g ? g->no_color : 0);
    struct doctor_ctx ctx;
    ctx_init(&ctx, &o);
    const struct check_def **ran = xcalloc((size_t)ndefs, sizeof *ran);
    struct check_result *results = xcalloc((size_t)ndefs, sizeof *results);
    struct doctor_counts counts = {0, 0, 0, 0};
    int n = 0;
    long start = now_ms();
    for (int k = 0; k < ndefs; k++) {
        if (!selected(defs[k].id, sel, nsel))
            continue;
        ran[n] = &defs[k];
        long check_start = now_ms();
        defs[k].run(&ctx, &results[n]);
        /* The first check that needs a probe pays for it: this shows where a slow run went. */
        result_ev(&results[n], "elapsed_ms", "%ld", now_ms() - check_start);
        report_count(&counts, results[n].status);
        if (!o.json) {
            report_human_row(stdout, &st, &defs[k], &results[n], o.verbose, o.quiet);
            fflush(stdout);
        }
        n++;
    }
    long elapsed = now_ms() - start;
    if (o.json) {
        char *text = report_json(ran, results, n, &counts);
        puts(text);
        free(text);
    } else {
        report_human_summary(stdout, &st, &counts, elapsed, o.verbose);
    }
    int rc = report_exit_status(&counts);
    for (int i = 0; i < n; i++)
        result_free(&results[i]);
    free(results);
    free(ran);
    ctx_free(&ctx);
    return rc;
}
