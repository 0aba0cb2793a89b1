/* The pure parts of a build: head dims, parallelism, the host C++ compiler's name, and the
 * CMake command lines of kernel-contracts.md. */
#ifndef SB_BUILD_PLAN_H
#define SB_BUILD_PLAN_H

#define BUILD_MAX_HEAD_DIMS 4

/* "64,128" → {64, 128} (sorted, unique). The kernels compile 64 and 128; other dims run padded
 * to them, so other values are refused with that explanation. 0 or -1 with *error (heap). */
int build_parse_head_dims(const char *spec, int *dims, int *n, char **error);
/* "64;128" or "64,128". Heap string. */
char *build_join_head_dims(const int *dims, int n, const char *sep);

/* Parallel compile jobs: one per core, but no more than the memory holds at
 * RESOURCES_GB_PER_JOB (probe/resources.h) each; at least 1. mem_available_bytes <= 0 means
 * unknown (cores decide). */
int build_jobs_for(int cores, long long mem_available_bytes);

/* The C++ driver that goes with a compiler name, keeping its folder and version suffix:
 * gcc-13 → g++-13, /usr/bin/gcc → /usr/bin/g++, clang-18 → clang++-18, cc → c++; C++ names
 * and anything unknown stay as they are. Heap string. */
char *build_host_cxx_for(const char *compiler);

struct build_plan {
    const char *cmake;       /* "cmake" or a path */
    const char *kernels_dir; /* -S */
    const char *build_dir;   /* -B: <out>/cmake-build */
    const char *out_dir;     /* CMAKE_INSTALL_PREFIX */
    const char *generator;   /* "Ninja" or "Unix Makefiles" */
    const char *nvcc;
    const char *host_cxx;
    const char *archs;     /* "sm_90;sm_120a" */
    const char *head_dims; /* "64;128" */
    int jobs;
};

/* NULL-terminated heap argv arrays (free with build_argv_free). */
char **build_cmake_configure_argv(const struct build_plan *p);
char **build_cmake_build_argv(const struct build_plan *p);
char **build_cmake_install_argv(const struct build_plan *p);
void build_argv_free(char **argv);
/* The argv as one shell-quoted line, for logs and messages. Heap string. */
char *build_argv_line(char *const *argv);

#endif
