/* Running other programs (and risky in-process probes) in a child with a hard timeout.
 * Every probe of the outside world goes through here, so a hanging nvcc, python or libcuda
 * is cut off and reported instead of hanging sagebuild. */
#ifndef SB_PROC_H
#define SB_PROC_H

#include <stddef.h>

struct proc_opts {
    int timeout_ms;             /* <= 0 means the default, PROC_DEFAULT_TIMEOUT_MS */
    size_t max_output;          /* bytes kept per stream; the rest is read and dropped */
    const char *cwd;            /* NULL: inherit */
    const char *const *env_set; /* NULL-terminated "NAME=value" / "NAME" (unset) list */
    int merge_stderr;           /* stderr goes into out */
    int inherit_stdio;          /* child writes straight to our terminal; out/err stay empty */
    void (*tick)(void *arg);    /* called about every tick_ms while the child runs (progress) */
    void *tick_arg;
    int tick_ms; /* <= 0: 250 */
};

#define PROC_DEFAULT_TIMEOUT_MS 10000
#define PROC_DEFAULT_MAX_OUTPUT (1u << 20)

struct proc_result {
    int started; /* 0: fork or exec failed; see spawn_errno */
    int spawn_errno;
    int exited; /* exited normally, exit_code valid */
    int exit_code;
    int signaled; /* killed by term_signal (also after a timeout) */
    int term_signal;
    int timed_out;
    int interrupted; /* sagebuild got SIGINT/SIGTERM/SIGHUP meanwhile and passed it on */
    char *out;       /* NUL-terminated, never NULL after proc_run */
    size_t out_len;
    char *err;
    size_t err_len;
    long elapsed_ms;
};

/* Runs argv[0] (searched in PATH when it has no '/'). Returns 0 when the child ran and exited
 * with status 0, -1 otherwise; res always describes what happened and must be freed.
 * The child runs in a process group of its own. SIGINT, SIGTERM or SIGHUP to sagebuild while
 * it runs are passed on to that group, which is waited for (and killed after 5 s), and then
 * delivered to sagebuild itself with the disposition it had: by default it dies of the signal
 * only after its children did; a handler (fetch-cuda's cancel flag) runs and proc_run returns. */
int proc_run(const char *const argv[], const struct proc_opts *opts, struct proc_result *res);

/* Runs fn(arg, fd) in a forked child; whatever fn writes to fd lands in res->out. The child
 * exits with fn's return value. Used for dlopen() probes that may crash or hang. */
typedef int (*proc_child_fn)(void *arg, int out_fd);
int proc_run_fn(proc_child_fn fn, void *arg, const struct proc_opts *opts, struct proc_result *res);

void proc_result_free(struct proc_result *res);

/* One line for humans: "exited with status 3", "killed by signal 11 (Segmentation fault)",
 * "timed out after 5.0 s and was killed", "could not run: ...". Heap string, whole whatever its
 * length. */
char *proc_describe(const struct proc_result *res);

#endif
