/* The cmake program: found on PATH, its version checked against what kernels/CMakeLists.txt
 * asks (cmake_minimum_required), and the generator chosen (Ninja when present). */
#ifndef SB_BUILD_CMAKE_H
#define SB_BUILD_CMAKE_H

#include "util/version.h"

/* kernels/CMakeLists.txt: cmake_minimum_required(VERSION 3.25) */
#define BUILD_CMAKE_MIN "3.25"

struct cmake_info {
    char *path;
    struct version version;
    const char *generator; /* "Ninja" or "Unix Makefiles" */
};

/* Pure: "cmake version 3.25.1\n..." → 3.25.1; 0 or -1. */
int cmake_parse_version(const char *text, struct version *v);
/* Pure: the generator for what is installed. NULL when neither ninja nor make exists. */
const char *cmake_pick_generator(int have_ninja, int have_make);

/* Pure: the value of KEY in CMakeCache.txt text ("KEY:TYPE=value" lines); heap string or NULL. */
char *cmake_cache_value(const char *text, const char *key);

/* Pure: why a CMake cache made with other compilers, generator or sources cannot be reused
 * (CMake refuses to switch them in place), as one phrase; NULL when it can. */
char *cmake_cache_mismatch(const char *cache_text, const char *generator, const char *nvcc,
                           const char *host_cxx, const char *source_dir);

/* Pure: the nvcc command line CMake recorded for the first .cu file in compile_commands.json
 * text (its "command", or its "arguments" joined), so the record shows the real flags. Heap
 * string or NULL. */
char *cmake_first_cuda_command(const char *compile_commands_json);

/* 0, or -1 with *error and *fix (heap). */
int cmake_probe(struct cmake_info *out, char **error, char **fix);
void cmake_info_free(struct cmake_info *c);

#endif
