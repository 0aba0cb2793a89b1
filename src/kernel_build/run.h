/* Running one CMake step of a build: streamed to the terminal, or appended to a log file, always
 * under a timeout, with the CPU time of everything it started measured. */
#ifndef SB_BUILD_RUN_H
#define SB_BUILD_RUN_H

#include "util/proc.h"

#define BUILD_DEFAULT_TIMEOUT_S 3600

struct step_io {
    int stream;           /* the child writes to our terminal */
    const char *log_path; /* otherwise its output is appended here */
    int timeout_ms;
    void (*tick)(void *arg); /* called a few times a second while a step runs (progress) */
    void *tick_arg;
};

/* Runs argv; 0 when it exited with 0. res describes what happened (free it). cpu_seconds
 * (optional) receives the user+system time of the step's whole process tree. */
int build_run_step(char *const *argv, const struct step_io *io, struct proc_result *res,
                   double *cpu_seconds);

/* Pure: where the last `lines` lines of text start. */
const char *build_log_tail(const char *text, size_t len, int lines);

#endif
