/* The one updating line a terminal shows while the kernels compile: the build step ([n/N] from
 * ninja, or [ NN%] from make), the file being compiled and the time so far. The full output
 * stays in the log file it is read from. Pure, apart from build_progress_read. */
#ifndef SB_BUILD_PROGRESS_H
#define SB_BUILD_PROGRESS_H

#include <stddef.h>

struct build_progress {
    int step, total; /* ninja's [step/total]; 0 when unknown */
    int percent;     /* make's [ NN%]; -1 when unknown */
    char what[200];  /* "src/attn/attn_fp16.cu", "Linking CUDA shared library ...", "" */
};

/* The latest progress line in text (a log's tail): 1 when one was found, else 0 (p cleared). */
int build_progress_parse(const char *text, size_t len, struct build_progress *p);

/* "compile [3/15] src/attn/attn_fp16.cu  1:02", cut to width columns (no newline). stage is
 * the step of the build ("configure", "compile", "install"); p may be NULL. Heap string. */
char *build_progress_line(const char *stage, const struct build_progress *p, double elapsed_s,
                          int width);

/* Where `build` writes the output of a build in progress (moved to <out>/build.log when it
 * ends): <out>/cmake-build/build-in-progress.log. Heap string. */
char *build_progress_log_path(const char *out_dir);

/* Reads the tail of the log at path and parses it; 1 when progress was found. */
int build_progress_read(const char *path, struct build_progress *p);

#endif
