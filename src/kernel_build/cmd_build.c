/* sagebuild build: compiles kernels/ with CMake for the asked archs, with an nvcc and a host
 * compiler chosen by the doctor's rules, and records what it did in <out>/build-record.json. */
#include "api.h"
#include "arch.h"
#include "cmake.h"
#include "gpus.h"
#include "outcome.h"
#include "plan.h"
#include "products.h"
#include "progress.h"
#include "ptxas.h"
#include "record.h"
#include "run.h"
#include "srcinfo.h"
#include "toolchain.h"
#include "cmd.h"
#include "probe/resources.h"
#include "toolchain/jobs.h"
#include "util/datadir.h"
#include "util/fs.h"
#include "util/opt.h"
#include "util/out.h"
#include "util/xdg.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <unistd.h>

static const char about[] =
    "Compiles the bundled attention kernels (libsageattn.so, sageattn.h, sageattn.pc,\n"
    "sageattn-selftest) for the chosen GPU archs and installs them into --out.\n";
static const char footer[] =
    "A second build with nothing changed does no work. The full output of a build is kept\n"
    "in <out>/build.log (its tail is shown on a failure); on a terminal one line shows the\n"
    "step, the file being compiled and the time so far. A build that compiled nothing\n"
    "keeps the record and log of the build that made the files. Interrupted (Ctrl-C,\n"
    "SIGTERM), it stops CMake and the compilers and leaves the installed files, record\n"
    "and log as they were. Exit status: 0 built or up to date, 2 error, 64 usage.\n";

static enum opt_result parse_opts(int argc, char **argv, struct build_opts *o)
{
    build_opts_init(o);
    const struct opt table[] = {
        {.kind = OPT_STRING,
         .name = "arch",
         .arg = "LIST",
         .help = "sm_80 sm_86 sm_89 sm_90 sm_90a sm_100a sm_120a sm_121a, comma-separated; "
                 "'native' (default): the GPUs present (Hopper: sm_90 and sm_90a); 'all': every "
                 "arch but sm_90a",
         .dest = &o->arch},
        {.kind = OPT_STRING,
         .name = "cuda-home",
         .arg = "DIR",
         .help = "the toolkit to use; default: the one fetch-cuda installed for torch's CUDA, "
                 "else the newest it installed, else $CUDA_HOME, $CUDA_PATH, nvcc on PATH, "
                 "/usr/local/cuda",
         .dest = &o->cuda_home},
        {.kind = OPT_STRING,
         .name = "python",
         .arg = "PY",
         .help = "the python whose torch's CUDA picks among the toolkits fetch-cuda installed "
                 "(default $SAGEBUILD_PYTHON, else python3)",
         .dest = &o->python},
        {.kind = OPT_STRING,
         .name = "host-cc",
         .arg = "PATH",
         .help = "the host C++ compiler for nvcc (-ccbin); default: $CUDAHOSTCXX, $CXX, $CC, "
                 "g++, or the newest g++-N that nvcc accepts",
         .dest = &o->host_cc},
        {.kind = OPT_STRING,
         .name = "out",
         .arg = "DIR",
         .help = "install prefix (default $XDG_DATA_HOME/sagebuild/sageattn)",
         .dest = &o->out},
        {.kind = OPT_STRING,
         .name = "head-dims",
         .arg = "LIST",
         .help = "native head dims to compile: 64, 128 or both (default)",
         .dest = &o->head_dims},
        {.kind = OPT_INT,
         .name = "jobs",
         .letter = 'j',
         .arg = "N",
         .help = "parallel compile jobs (default: cores, at most one per 4 GB of available "
                 "memory)",
         .dest = &o->jobs,
         .min = 1,
         .max = 1024},
        {.kind = OPT_INT,
         .name = "timeout",
         .arg = "SECONDS",
         .help = "limit for each CMake step (default 3600)",
         .dest = &o->timeout_s,
         .min = 1,
         .max = 7 * 24 * 3600},
        {.kind = OPT_FLAG,
         .name = "force",
         .help = "rebuild everything, from a clean CMake build folder",
         .dest = &o->force},
        {.kind = OPT_FLAG,
         .name = "verbose",
         .letter = 'v',
         .help = "show CMake's and the compilers' output as it runs",
         .dest = &o->verbose},
        {.kind = OPT_FLAG, .name = "json", .help = "print the result as JSON", .dest = &o->json},
        {0},
    };
    const struct opt_command spec = {"build", about, footer, table, 0};
    return opt_parse(&spec, argc, argv);
}

/* Refuses, before compiling, every asked arch this nvcc cannot build. */
static int check_archs(const struct arch_list *archs, const struct toolchain *tc,
                       struct build_outcome *res)
{
    struct arch_list ok = {0};
    struct strbuf why = STRBUF_INIT;
    int first_bad = -1;
    for (int k = 0; k < archs->n; k++) {
        char *r = build_arch_refusal(archs->idx[k], &tc->nvcc.version.release,
                                     (const char *const *)tc->nvcc.archs, tc->nvcc.narchs);
        if (!r) {
            ok.idx[ok.n++] = archs->idx[k];
            continue;
        }
        if (first_bad < 0)
            first_bad = archs->idx[k];
        sb_addf(&why, "%s%s", why.len ? "; " : "", r);
        free(r);
    }
    if (first_bad < 0) {
        sb_free(&why);
        return 0;
    }
    char *fix = build_arch_fix(first_bad, &tc->nvcc.version.release, &ok);
    build_outcome_error(res, SB_EXIT_ERROR,
                        xasprintf("nvcc at %s cannot build what was asked: %s",
                                  tc->nvcc.path ? tc->nvcc.path : tc->cuda_home, sb_str(&why)),
                        fix);
    sb_free(&why);
    return -1;
}

static char *utc_now(void)
{
    char buf[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return xstrdup(buf);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int outputs_present(const char *out)
{
    static const char *const files[] = {"lib/libsageattn.so", "include/sageattn.h",
                                        "lib/pkgconfig/sageattn.pc", "bin/sageattn-selftest"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *p = fs_join(out, files[i]);
        int ok = fs_exists(p);
        free(p);
        if (!ok)
            return 0;
    }
    return 1;
}

static char *read_tail(const char *path)
{
    size_t len = 0;
    char *text = path ? fs_read_file(path, 8u << 20, &len) : NULL;
    char *tail = text ? xstrdup(build_log_tail(text, len, 40)) : NULL;
    free(text);
    return tail;
}

/* The terminal's progress line: redrawn from the log a few times a second. */
struct progress_tick {
    const char *stage; /* "configure", "compile", "install" */
    const char *log_path;
    double t0;
    int width;
};

static double wall_now(void);

static void draw_progress(void *arg)
{
    const struct progress_tick *t = arg;
    struct build_progress p;
    int have = strcmp(t->stage, "compile") == 0 && build_progress_read(t->log_path, &p);
    char *line = build_progress_line(t->stage, have ? &p : NULL, wall_now() - t->t0, t->width);
    out_clear_line(stdout);
    fputs(line, stdout);
    fflush(stdout);
    free(line);
}

/* Configure, build, install; measures the whole. record_path is removed before the install
 * step: until then the installed files and their record are the last build's, untouched by a
 * failed or interrupted compile. 0 or -1 with res->error set. */
static int compile(const struct build_plan *plan, const struct step_io *io_in,
                   const char *record_path, struct build_outcome *res, double *cpu)
{
    char **steps[3] = {build_cmake_configure_argv(plan), build_cmake_build_argv(plan),
                       build_cmake_install_argv(plan)};
    static const char *const names[3] = {"CMake configure", "compile", "install"};
    static const char *const stages[3] = {"configure", "compile", "install"};
    struct step_io io = *io_in;
    struct progress_tick *tick = io.tick_arg;
    static const char *const fixes[3] = {
        "read the CMake error above; `sagebuild doctor` checks the toolkit and compilers",
        "read the first error above; if the machine ran out of memory, lower --jobs",
        "check that --out is writable"};
    int rc = 0;
    *cpu = 0;
    for (int s = 0; s < 3 && rc == 0; s++) {
        struct proc_result pr;
        double step_cpu = 0;
        if (tick)
            tick->stage = stages[s];
        if (s == 2)
            unlink(record_path);
        if (build_run_step(steps[s], &io, &pr, &step_cpu) < 0) {
            char *why = NULL;
            if (tick)
                out_clear_line(stdout);
            res->log_tail = io.stream ? NULL : read_tail(io.log_path);
            build_outcome_error(res, SB_EXIT_ERROR,
                                xasprintf("%s %s", names[s], (why = proc_describe(&pr))),
                                xstrdup(pr.timed_out ? "raise --timeout, or lower --jobs if the "
                                                       "machine was swapping"
                                                     : fixes[s]));
            free(why);
            rc = -1;
        }
        *cpu += step_cpu;
        proc_result_free(&pr);
    }
    if (tick && rc == 0)
        out_clear_line(stdout);
    fflush(stdout);
    for (int s = 0; s < 3; s++)
        build_argv_free(steps[s]);
    return rc;
}

/* CMake cannot switch generator or compilers in an existing cache: start that folder afresh. */
static void drop_stale_cache(const struct build_plan *plan, struct build_outcome *res)
{
    char *cache_path = fs_join(plan->build_dir, "CMakeCache.txt");
    char *cache = fs_read_file(cache_path, 4u << 20, NULL);
    char *why = cache ? cmake_cache_mismatch(cache, plan->generator, plan->nvcc, plan->host_cxx,
                                             plan->kernels_dir)
                      : NULL;
    if (why) {
        sb_addf(&res->notes, "%s: starting from a fresh %s\n", why, plan->build_dir);
        fs_remove_tree(plan->build_dir);
    }
    free(why);
    free(cache);
    free(cache_path);
}

/* --out, absolute (CMake reads a relative install prefix against its build folder), else the
 * XDG default. Heap string. */
void build_opts_init(struct build_opts *o)
{
    *o = (struct build_opts){
        .arch = "native", .head_dims = "64,128", .timeout_s = BUILD_DEFAULT_TIMEOUT_S};
}

char *build_out_dir(const char *flag)
{
    if (flag && flag[0] == '/')
        return xstrdup(flag);
    if (flag) {
        char *cwd = getcwd(NULL, 0);
        char *abs = fs_join(cwd ? cwd : ".", flag);
        free(cwd);
        return abs;
    }
    char *data = xdg_data_dir();
    char *dir = fs_join(data ? data : ".", "sageattn");
    free(data);
    return dir;
}

/* What one build holds from phase to phase; build_job_free is its one cleanup path. */
struct build_job {
    const struct build_opts *o;
    struct build_outcome *res;
    char *kernels; /* the kernels/ folder CMake builds */
    struct arch_list archs;
    int dims[BUILD_MAX_HEAD_DIMS], ndims;
    struct toolchain tc;
    struct cmake_info cm;
    int lock_fd;
    char *record_path;        /* <out>/build-record.json */
    struct build_record prev; /* the last build's record, when have_prev */
    int have_prev;
    char *build_dir; /* <out>/cmake-build */
    char *archs_cmake, *dims_cmake;
    char *running_log, *final_log;
};

static void build_job_free(struct build_job *j)
{
    if (j->lock_fd >= 0)
        close(j->lock_fd);
    if (j->have_prev)
        build_record_free(&j->prev);
    cmake_info_free(&j->cm);
    toolchain_free(&j->tc);
    free(j->kernels);
    free(j->record_path);
    free(j->build_dir);
    free(j->archs_cmake);
    free(j->dims_cmake);
    free(j->running_log);
    free(j->final_log);
}

static int find_kernels(struct build_job *j)
{
    j->kernels = datadir_find("kernels");
    char *lists = j->kernels ? fs_join(j->kernels, "CMakeLists.txt") : NULL;
    int found = lists && fs_is_file(lists);
    free(lists);
    if (found)
        return 0;
    build_outcome_error(j->res, SB_EXIT_ERROR,
                        xasprintf("the kernel sources (kernels/CMakeLists.txt) were not found%s%s",
                                  j->kernels ? " in " : "", j->kernels ? j->kernels : ""),
                        xstrdup("set SAGEBUILD_DATADIR to the folder that holds kernels/, or "
                                "reinstall sagebuild (make install)"));
    return -1;
}

/* --arch and --head-dims; only `native` probes the GPUs. */
static int choose_archs(struct build_job *j)
{
    struct build_outcome *res = j->res;
    struct gpu_cc gpus[16];
    int ngpus = 0;
    if (strstr(j->o->arch, "native")) {
        char *why = NULL;
        ngpus = build_gpus_present(gpus, 16, &why);
        if (why)
            sb_addf(&res->notes, "GPU probe: %s\n", why);
        free(why);
    }
    char *notes = NULL, *err = NULL;
    int spec = build_arch_parse_spec(j->o->arch, gpus, ngpus, &j->archs, &notes, &err);
    if (spec < 0) {
        build_outcome_error(res, spec == ARCH_SPEC_BAD ? SB_EXIT_USAGE : SB_EXIT_ERROR, err,
                            build_arch_examples("sagebuild build --arch ", "; see --help"));
        return -1;
    }
    if (notes)
        sb_adds(&res->notes, notes);
    free(notes);
    if (build_parse_head_dims(j->o->head_dims, j->dims, &j->ndims, &err) < 0) {
        build_outcome_error(res, SB_EXIT_USAGE, err, xstrdup("--head-dims 64,128"));
        return -1;
    }
    return 0;
}

/* The toolkit first: which archs can be built depends on its nvcc, and refusing them comes
 * before anything else is probed or run. Then the host compiler and CMake. */
static int choose_tools(struct build_job *j)
{
    char *err = NULL, *fix = NULL;
    if (toolchain_choose_cuda(j->o->cuda_home, j->o->python, &j->tc, &err, &fix) < 0) {
        build_outcome_error(j->res, SB_EXIT_ERROR, err, fix);
        return -1;
    }
    if (check_archs(&j->archs, &j->tc, j->res) < 0)
        return -1;
    if (toolchain_choose_host(j->o->host_cc, &j->tc, &err, &fix) < 0 ||
        cmake_probe(&j->cm, &err, &fix) < 0) {
        build_outcome_error(j->res, SB_EXIT_ERROR, err, fix);
        return -1;
    }
    if (j->tc.cuda_note)
        sb_addf(&j->res->notes, "%s\n", j->tc.cuda_note);
    if (j->tc.host_note)
        sb_addf(&j->res->notes, "%s\n", j->tc.host_note);
    return 0;
}

/* What this build is made of, into res->rec: compared with the last record to skip work. */
static int describe_inputs(struct build_job *j)
{
    const struct toolchain *tc = &j->tc;
    struct build_record *w = &j->res->rec;
    j->res->have_rec = 1;
    char vb[32];
    w->sagebuild_version = xstrdup(SAGEBUILD_VERSION);
    w->archs = build_arch_join(&j->archs, ",");
    w->head_dims = build_join_head_dims(j->dims, j->ndims, ",");
    w->nvcc_path = xstrdup(tc->nvcc.path);
    w->nvcc_version = xstrdup(version_str(tc->nvcc.version.full.nparts ? &tc->nvcc.version.full
                                                                       : &tc->nvcc.version.release,
                                          vb, sizeof vb));
    w->cuda_home = xstrdup(tc->cuda_home);
    w->cuda_home_rule = xstrdup(tc->chosen_by);
    w->host_cxx_path = xstrdup(tc->host_cxx);
    w->host_cxx_version = xstrdup(version_str(&tc->host_version, vb, sizeof vb));
    w->generator = xstrdup(j->cm.generator);
    w->cmake_version = xstrdup(version_str(&j->cm.version, vb, sizeof vb));
    w->kernels_dir = fs_realpath(j->kernels);
    char *err = NULL;
    if (!(w->source_hash = srcinfo_hash_tree(j->kernels, &err))) {
        build_outcome_error(j->res, SB_EXIT_ERROR, err,
                            xstrdup("check the kernels folder's files"));
        return -1;
    }
    w->source_revision = srcinfo_git_revision(j->kernels);
    return 0;
}

/* One build at a time per output folder: two would share one CMake tree. The lock goes with
 * the process, so a killed build leaves nothing to clean up. */
static int lock_out_dir(struct build_job *j)
{
    const char *out = j->res->out_dir;
    if (fs_mkdir_p(out, 0755) < 0) {
        build_outcome_error(j->res, SB_EXIT_ERROR, xasprintf("cannot create %s: %m", out),
                            xstrdup("choose a writable --out DIR"));
        return -1;
    }
    char *lock_path = fs_join(out, ".build.lock");
    j->lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    free(lock_path);
    if (j->lock_fd < 0 || flock(j->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        build_outcome_error(j->res, SB_EXIT_ERROR,
                            xasprintf("another sagebuild build is using %s", out),
                            xstrdup("wait for it to finish, or build into another --out DIR"));
        return -1;
    }
    return 0;
}

/* Reads the last record and decides; 1 when there is nothing to do (res->rec is then the last
 * build's record: its flags and times, not empty ones). */
static int up_to_date(struct build_job *j)
{
    struct build_outcome *res = j->res;
    j->record_path = fs_join(res->out_dir, BUILD_RECORD_NAME);
    char *prev_text = fs_read_file(j->record_path, 1 << 20, NULL);
    j->have_prev = prev_text && build_record_from_json(prev_text, &j->prev) == 0;
    free(prev_text);
    enum build_freshness fresh =
        build_decide(j->have_prev ? &j->prev : NULL, &res->rec, outputs_present(res->out_dir),
                     j->o->force, &res->reason);
    if (fresh != BUILD_UP_TO_DATE)
        return 0;
    build_record_free(&res->rec);
    res->rec = j->prev; /* res owns it now */
    j->have_prev = 0;
    res->up_to_date = 1;
    return 1;
}

/* The CMake build folder (afresh under --force or for a stale cache) and the plan. */
static void make_plan(struct build_job *j, struct build_plan *plan)
{
    struct build_outcome *res = j->res;
    struct build_record *w = &res->rec;
    j->build_dir = fs_join(res->out_dir, "cmake-build");
    /* --force means from clean: with the old tree kept, ninja would find nothing to do. */
    if (j->o->force && fs_exists(j->build_dir)) {
        sb_addf(&res->notes, "--force: starting from a clean %s\n", j->build_dir);
        fs_remove_tree(j->build_dir);
    }
    struct resources rs;
    probe_resources(res->out_dir, &rs);
    j->archs_cmake = build_arch_join(&j->archs, ";");
    j->dims_cmake = build_join_head_dims(j->dims, j->ndims, ";");
    *plan = (struct build_plan){.cmake = j->cm.path,
                                .kernels_dir = w->kernels_dir,
                                .build_dir = j->build_dir,
                                .out_dir = res->out_dir,
                                .generator = j->cm.generator,
                                .nvcc = j->tc.nvcc.path,
                                .host_cxx = j->tc.host_cxx,
                                .archs = j->archs_cmake,
                                .head_dims = j->dims_cmake,
                                .jobs = j->o->jobs ? j->o->jobs
                                                   : toolchain_jobs(rs.cores, rs.mem_avail_kb)};
    resources_free(&rs);
    w->jobs = plan->jobs;
    drop_stale_cache(plan, res);
    char **configure = build_cmake_configure_argv(plan);
    for (w->nflags = 0; configure[w->nflags]; w->nflags++)
        ;
    w->flags = configure; /* the record owns it now */
}

/* Nothing compiled or linked: the installed files are the last real build's, so its times,
 * nvcc command and log stay; the inputs are the ones asked now. */
static void keep_last_build(struct build_job *j)
{
    struct build_record *w = &j->res->rec, *prev = &j->prev;
    w->cpu_seconds = prev->cpu_seconds;
    w->wall_seconds = prev->wall_seconds;
    w->jobs = prev->jobs;
    w->finished_at = prev->finished_at;
    w->nvcc_command = prev->nvcc_command;
    w->have_ptxas = prev->have_ptxas;
    w->ptxas = prev->ptxas;
    prev->finished_at = prev->nvcc_command = NULL;
    j->res->up_to_date = j->res->compiled_nothing = 1;
    sb_addf(&j->res->notes,
            "nothing needed compiling: the files are the ones built %s; its record and log are "
            "kept\n",
            w->finished_at ? w->finished_at : "before");
    unlink(j->running_log);
}

/* A real build: its times, nvcc command, log and ptxas' register and spill reports (a summary
 * in the record, the rest in the log). */
static void record_new_build(struct build_job *j, double wall_seconds, int stream)
{
    struct build_record *w = &j->res->rec;
    w->wall_seconds = wall_seconds;
    w->finished_at = utc_now();
    char *cc_path = fs_join(j->build_dir, "compile_commands.json");
    char *cc_text = fs_read_file(cc_path, 16u << 20, NULL);
    w->nvcc_command = cmake_first_cuda_command(cc_text);
    free(cc_text);
    free(cc_path);
    if (!stream && rename(j->running_log, j->final_log) == 0)
        j->res->log_path = xstrdup(j->final_log);
    size_t log_len = 0;
    char *log_text = stream ? NULL : fs_read_file(j->final_log, 64u << 20, &log_len);
    w->have_ptxas = log_text && ptxas_summarize(log_text, log_len, &w->ptxas);
    free(log_text);
}

/* The output goes to a log in the build tree while it runs, and becomes <out>/build.log only
 * when it is the log of a real build (or of a failure): an interrupted build leaves the last
 * one's log, and a build that compiled nothing does not hide it. */
static int compile_and_record(struct build_job *j, const struct build_plan *plan)
{
    const struct build_opts *o = j->o;
    struct build_outcome *res = j->res;
    struct build_record *w = &res->rec;
    int stream = o->verbose && !o->json;
    int progress = !stream && !o->json && isatty(STDOUT_FILENO);
    j->running_log = build_progress_log_path(res->out_dir);
    j->final_log = fs_join(res->out_dir, "build.log");
    fs_mkdir_p(j->build_dir, 0755);
    unlink(j->running_log);
    struct progress_tick tick = {"configure", j->running_log, wall_now(), out_width(stdout)};
    struct step_io io = {stream, stream ? NULL : j->running_log, o->timeout_s * 1000,
                         progress ? draw_progress : NULL, progress ? &tick : NULL};
    if (!o->json)
        printf("building %s (head dims %s) with nvcc %s, %s %s, %s -j%d: %s\n", w->archs,
               w->head_dims, w->nvcc_version, w->host_cxx_path, w->host_cxx_version, w->generator,
               plan->jobs, res->reason);
    fflush(stdout);
    double t0 = wall_now();
    double products_before = build_products_newest(j->build_dir);
    if (compile(plan, &io, j->record_path, res, &w->cpu_seconds) < 0) {
        /* the failure's own output is what the next person needs to read */
        if (!stream && rename(j->running_log, j->final_log) == 0)
            res->log_path = xstrdup(j->final_log);
        return -1;
    }
    int compiled = build_products_newest(j->build_dir) > products_before;
    if (!compiled && j->have_prev)
        keep_last_build(j);
    else
        record_new_build(j, wall_now() - t0, stream);
    char *json = build_record_to_json(w);
    if (fs_write_file(j->record_path, json, strlen(json)) < 0)
        sb_addf(&res->notes, "could not write %s: %m\n", j->record_path);
    free(json);
    return 0;
}

int build_run(const struct build_opts *o, struct build_outcome *res)
{
    struct build_job job = {.o = o, .res = res, .lock_fd = -1};
    res->out_dir = build_out_dir(o->out);
    int rc = -1;
    if (find_kernels(&job) == 0 && choose_archs(&job) == 0 && choose_tools(&job) == 0 &&
        describe_inputs(&job) == 0 && lock_out_dir(&job) == 0) {
        struct build_plan plan;
        if (up_to_date(&job))
            rc = 0;
        else {
            make_plan(&job, &plan);
            rc = compile_and_record(&job, &plan);
        }
    }
    build_job_free(&job);
    return rc;
}

int cmd_build(int argc, char **argv, const struct global_opts *g)
{
    struct build_opts o;
    enum opt_result parsed = parse_opts(argc, argv, &o);
    if (parsed != OPT_OK)
        return opt_exit_status(parsed);
    struct build_outcome res;
    memset(&res, 0, sizeof res);
    if (build_run(&o, &res) == 0)
        res.exit_code = SB_EXIT_OK;
    else if (!res.error)
        build_outcome_error(&res, SB_EXIT_INTERNAL, xstrdup("build failed for no known reason"),
                            NULL);
    if (o.json) {
        char *json = build_outcome_json(&res);
        fputs(json, stdout);
        free(json);
    } else {
        struct out_style st;
        out_style_init(&st, res.error ? stderr : stdout, g->no_color);
        build_outcome_print(&res, res.error ? stderr : stdout, &st);
    }
    int rc = res.exit_code;
    build_outcome_free(&res);
    return rc;
}
