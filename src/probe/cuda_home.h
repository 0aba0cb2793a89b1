/* CUDA_HOME exactly as torch.utils.cpp_extension._find_cuda_home computes it, so the doctor and
 * `build` look at the toolkit a `pip install --no-build-isolation` would really use:
 *   1. $CUDA_HOME or $CUDA_PATH (Python's `a or b`: an empty CUDA_HOME falls through to
 *      CUDA_PATH, an empty CUDA_PATH then yields no toolkit at all);
 *   2. dirname(dirname(which nvcc)), with no realpath (/usr/bin/nvcc gives /usr);
 *   3. /usr/local/cuda when it exists.
 * An explicit --cuda-home overrides all of them. */
#ifndef SB_PROBE_CUDA_HOME_H
#define SB_PROBE_CUDA_HOME_H

enum cuda_home_rule {
    CUDA_HOME_NOT_FOUND = 0,
    CUDA_HOME_FROM_FLAG,      /* --cuda-home */
    CUDA_HOME_FROM_CUDA_HOME, /* $CUDA_HOME */
    CUDA_HOME_FROM_CUDA_PATH, /* $CUDA_PATH */
    CUDA_HOME_FROM_NVCC,      /* the nvcc found on PATH */
    CUDA_HOME_FROM_DEFAULT,   /* /usr/local/cuda */
};

struct cuda_home {
    char *path; /* heap; NULL when not found */
    enum cuda_home_rule rule;
    char *nvcc_on_path; /* which nvcc (heap or NULL), kept for the consistency check */
};

typedef int (*cuda_home_exists_fn)(const char *path, void *ctx);

/* Pure: decides from the given values. which_nvcc is what `which nvcc` found (NULL: none);
 * exists answers whether /usr/local/cuda exists. NULL means unset for every string. */
void cuda_home_resolve(const char *flag, const char *env_cuda_home, const char *env_cuda_path,
                       const char *which_nvcc, cuda_home_exists_fn exists, void *ctx,
                       struct cuda_home *out);
/* The same over the real environment and file system (flag may be NULL). */
void probe_cuda_home(const char *flag, struct cuda_home *out);
void cuda_home_free(struct cuda_home *h);

/* "--cuda-home", "$CUDA_HOME", "$CUDA_PATH", "nvcc on PATH", "/usr/local/cuda", "not found" */
const char *cuda_home_rule_name(enum cuda_home_rule r);

#define CUDA_HOME_DEFAULT_PATH "/usr/local/cuda"

/* The first of home/<rel[i]> that exists, also looked for under home/targets/<any>/ (13.x redist
 * trees keep include/ and lib/ there). Heap path or NULL. */
char *cuda_home_find_file(const char *home, const char *const *rel, int nrel);

#endif
