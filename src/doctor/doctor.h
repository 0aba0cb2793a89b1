/* The doctor's model: a check is a table entry (stable dotted id, title, run function); running
 * it fills a check_result (status, one-line summary, evidence key/values, one fix command).
 * Probes are gathered lazily into a doctor_ctx, each at most once per run, so a check only
 * pays for the probes it needs and `doctor host.compiler` stays fast. */
#ifndef SB_DOCTOR_H
#define SB_DOCTOR_H

#include "probe/cuda_home.h"
#include "probe/gpu.h"
#include "probe/host_compiler.h"
#include "probe/nvcc.h"
#include "probe/resources.h"
#include "probe/torch.h"
#include "toolchain/host.h"

enum check_status { CHECK_OK, CHECK_WARN, CHECK_ERROR, CHECK_SKIP };

struct evidence {
    char *key;
    char *value;
};

struct check_result {
    enum check_status status;
    char *summary;
    struct evidence *evidence;
    int nevidence;
    char *fix; /* a command that works when pasted; NULL when nothing is to be done */
};

/* The environment a run sees, captured once so checks are functions of it (tests build it). */
struct doctor_env {
    const char *path;                 /* $PATH */
    const char *cc;                   /* $CC */
    const char *cxx;                  /* $CXX */
    const char *torch_arch_list;      /* $TORCH_CUDA_ARCH_LIST */
    const char *max_jobs;             /* $MAX_JOBS */
    const char *cache_dir;            /* where fetch-cuda downloads (for the disk check) */
    const char *tmp_dir;              /* $TMPDIR, else /tmp */
    const char *cuda_visible_devices; /* $CUDA_VISIBLE_DEVICES */
    const char *system_include;       /* /usr/include: where distribution CUDA headers land */
};

struct doctor_opts {
    /* --python: whose torch is read (NULL: $SAGEBUILD_PYTHON, else python3); given, it also
     * imports the compiled sageattention modules */
    const char *python;
    const char *torch_dir;
    const char *cuda_home;
    const char *arch; /* --arch: the archs a build would target */
    int verbose;
    int quiet;
    int json;
};

/* Free space where a build writes; free_bytes -1 when it could not be measured. */
struct disk_free {
    const char *role; /* "build_dir", "cache_dir", "tmp_dir" */
    char *dir;        /* the nearest existing folder at or above the path (heap) */
    long long free_bytes;
};

/* Everything known about the machine so far; the have_* flags say what was probed. */
struct doctor_ctx {
    const struct doctor_opts *opts;
    struct doctor_env env;

    int have_torch;
    struct torch_info torch;
    char *sage_dir; /* the sageattention package folder, NULL when not installed */
    char *triton_dir;
    char *nvidia_dir; /* site-packages/nvidia (pip's CUDA runtime wheels) */

    int have_gpu;
    struct gpu_info gpu;

    int have_home;
    struct cuda_home home;

    int have_nvcc;
    struct nvcc_info nvcc; /* $CUDA_HOME/bin/nvcc */

    int have_host;
    char *host_config_path;
    struct host_limits limits;
    struct host_choice host; /* $CC, else gcc; and the gcc-N to use when it does not fit */

    int have_resources;
    struct resources res;

    int have_nvcc_on_path;
    struct nvcc_info nvcc_on_path; /* the nvcc on PATH, when it is another file than CUDA_HOME's */

    int have_disk;
    struct disk_free disk[3]; /* the build folder, the download cache, the temporary folder */
};

struct check_def {
    const char *id;
    const char *title;
    void (*run)(struct doctor_ctx *ctx, struct check_result *r);
};

/* The table in the order checks run: early findings explain later ones. */
const struct check_def *doctor_checks(int *n);

/* Lazy probes. */
const struct torch_info *ctx_torch(struct doctor_ctx *ctx);
const struct gpu_info *ctx_gpu(struct doctor_ctx *ctx);
const struct cuda_home *ctx_home(struct doctor_ctx *ctx);
const struct nvcc_info *ctx_nvcc(struct doctor_ctx *ctx); /* NULL when there is no CUDA_HOME */
void ctx_host(struct doctor_ctx *ctx);
const struct resources *ctx_resources(struct doctor_ctx *ctx);
/* The nvcc on PATH when it resolves to another file than CUDA_HOME's, NULL otherwise. */
const struct nvcc_info *ctx_nvcc_on_path(struct doctor_ctx *ctx);
const struct disk_free *ctx_disk(struct doctor_ctx *ctx); /* 3 entries */
void ctx_init(struct doctor_ctx *ctx, const struct doctor_opts *opts);
void ctx_free(struct doctor_ctx *ctx);

/* The CUDA version torch was built for as a version (nparts 0 when none). */
struct version ctx_torch_cuda(struct doctor_ctx *ctx);
/* The python to name in fix commands: --python, else the one asked, else $SAGEBUILD_PYTHON,
 * else python3. */
const char *ctx_python(struct doctor_ctx *ctx);

/* Result builders. */
void result_set(struct check_result *r, enum check_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void result_fix(struct check_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void result_ev(struct check_result *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void result_free(struct check_result *r);
const char *check_status_name(enum check_status s);

/* Check implementations, one file per area. */
void check_torch_found(struct doctor_ctx *ctx, struct check_result *r);
void check_torch_cuda(struct doctor_ctx *ctx, struct check_result *r);
void check_torch_triton(struct doctor_ctx *ctx, struct check_result *r);
void check_driver_present(struct doctor_ctx *ctx, struct check_result *r);
void check_driver_gpus(struct doctor_ctx *ctx, struct check_result *r);
void check_driver_torch(struct doctor_ctx *ctx, struct check_result *r);
void check_torch_gpu_arch(struct doctor_ctx *ctx, struct check_result *r);
void check_toolkit_cuda_home(struct doctor_ctx *ctx, struct check_result *r);
void check_toolkit_nvcc(struct doctor_ctx *ctx, struct check_result *r);
void check_toolkit_version_match(struct doctor_ctx *ctx, struct check_result *r);
void check_toolkit_components(struct doctor_ctx *ctx, struct check_result *r);
void check_toolkit_consistency(struct doctor_ctx *ctx, struct check_result *r);
void check_toolkit_archs(struct doctor_ctx *ctx, struct check_result *r);
void check_toolkit_driver_ptx(struct doctor_ctx *ctx, struct check_result *r);
void check_host_compiler(struct doctor_ctx *ctx, struct check_result *r);
void check_build_ninja(struct doctor_ctx *ctx, struct check_result *r);
void check_build_jobs(struct doctor_ctx *ctx, struct check_result *r);
void check_build_disk(struct doctor_ctx *ctx, struct check_result *r);
void check_arch_list(struct doctor_ctx *ctx, struct check_result *r);
void check_sage_install(struct doctor_ctx *ctx, struct check_result *r);
void check_sage_kernels(struct doctor_ctx *ctx, struct check_result *r);
void check_sage_imports(struct doctor_ctx *ctx, struct check_result *r);

#endif
