/* The pure parts of a build: head dims and the CMake command lines (the jobs and the host
 * compiler: toolchain/). */
#ifndef SB_BUILD_PLAN_H
#define SB_BUILD_PLAN_H

#define BUILD_MAX_HEAD_DIMS 4

/* "64,128" → {64, 128} (sorted, unique). The kernels compile 64 and 128; other dims run padded
 * to them, so other values are refused with that explanation. 0 or -1 with *error (heap). */
int build_parse_head_dims(const char *spec, int *dims, int *n, char **error);
/* "64;128" or "64,128". Heap string. */
char *build_join_head_dims(const int *dims, int n, const char *sep);

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
