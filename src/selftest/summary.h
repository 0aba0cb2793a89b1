/* The self-test's result in a few lines, for its stage result (what `sagebuild all` shows). */
#ifndef SB_SELFTEST_SUMMARY_H
#define SB_SELFTEST_SUMMARY_H

#include <cJSON.h>

/* One line per GPU of the "devices" array of `selftest --json`: the recommended mode and its
 * TOPS, the safe modes, the unsafe ones ("GPU 0 NVIDIA H200: recommended mode int8-fp16 (414
 * TOPS); safe: fp16, int8-fp16, int8-fp8"), or the build to run for a GPU without code. Lines
 * joined by '\n', no newline at the end; heap string, NULL when there is no device. */
char *selftest_gpu_lines(const cJSON *devices);

#endif
