/* lib/stubs/libcuda.so for a toolkit made from wheels. The redist cuda_cudart archive carries
 * this link-time stand-in for the driver library (programs that call the driver API link
 * -lcuda against it; the real libcuda.so.1 comes with the driver at run time), but no NVIDIA
 * wheel does. It only has to export the right names under the soname libcuda.so.1, so it is
 * built from the toolkit's own cuda.h: every function it declares, read from the preprocessed
 * header in the three ways programs see it (default, per-thread default stream, and the
 * unversioned names), which gives the names of NVIDIA's 13.0 stub but for the profiler's
 * three (added from cudaProfiler.h when present). */
#ifndef SB_FETCH_PYPI_STUB_H
#define SB_FETCH_PYPI_STUB_H

#include "util/strbuf.h"

/* Pure: the driver API functions declared in preprocessed C text ("CUresult cuX(" ...),
 * sorted and unique. NULL-terminated heap array of *n heap strings. */
char **stub_symbols(const char *preprocessed, int *n);

/* Pure: a C file that defines each name as an exported function. Heap. */
char *stub_source(char *const *names, int n);

#define STUB_TIMEOUT_MS 60000

/* Builds root/lib/stubs/libcuda.so with the C compiler cc unless it exists. 0 made or already
 * there, 1 skipped (no compiler or no include/cuda.h; *why says so), -1 failed with *why. */
int stub_make_libcuda(const char *root, const char *cc, struct strbuf *log, char **why);

#endif
