/* A minimal check harness for the kernel CPU tests: each CHECK failure prints where and why and
 * counts; a test program exits 1 if any check failed. */
#ifndef SA_CHECK_H
#define SA_CHECK_H

#include <stdio.h>

extern int sa_check_failures;
extern long sa_check_count;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        sa_check_count++;                                                                          \
        if (!(cond)) {                                                                             \
            sa_check_failures++;                                                                   \
            if (sa_check_failures <= 40) {                                                         \
                fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond);                  \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* Prints the summary line and returns the exit status. */
int sa_check_report(const char *program);

#endif
