/* sagebuild-lock.json (what a prefix holds, so the same request again is a no-op and a user can
 * see exactly which archives made it) and the shell lines of `sagebuild env` / env.sh. Pure:
 * text in, text out. Source-neutral: a PyPI-made prefix records its wheels the same way. */
#ifndef SB_FETCH_LOCKFILE_H
#define SB_FETCH_LOCKFILE_H

#define LOCKFILE_NAME "sagebuild-lock.json"
#define ENVSH_NAME "env.sh"

struct lock_component {
    const char *name; /* "cuda_nvcc" or a wheel's project name */
    const char *version;
    const char *file; /* relative_path or wheel file name */
    const char *sha256;
    long long size;
    const char *url; /* where it came from; NULL: cache or --from */
};

struct lock_info {
    const char *source;       /* "redist", "pypi" */
    const char *release;      /* "13.0.2" */
    const char *release_date; /* may be NULL */
    const char *platform;     /* "linux-x86_64" */
    const char *manifest;     /* where the manifest came from */
    const char *manifest_sha256;
    const struct lock_component *components;
    int ncomponents;
};

/* JSON text of the lock file (heap). */
char *lockfile_format(const struct lock_info *li);
/* Whether an existing lock file's text records the same source, release, platform and exactly
 * the same component hashes. */
int lockfile_matches(const char *text, const struct lock_info *li);
/* The release recorded in a lock file (heap), or NULL. */
char *lockfile_release(const char *text);

enum env_shell { ENV_SH, ENV_FISH };

struct env_values {
    const char *cuda_home;
    const char *cc, *cxx; /* NULL: leave the host compiler alone */
    int max_jobs;         /* <= 0: leave MAX_JOBS alone */
    /* CUDA 13 moved thrust/cub/libcu++ to include/cccl: nvcc adds it itself, a host compiler
     * building an extension's .cpp files does not. NULL when the toolkit has no such folder. */
    const char *cccl_include;
};

/* The lines that point builds at the toolkit, for `eval "$(sagebuild env)"`. Heap string. */
char *env_format(const struct env_values *v, enum env_shell sh);

#endif
