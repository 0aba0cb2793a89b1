/* The host compiler nvcc calls (-ccbin), chosen against the limit the toolkit itself enforces in
 * crt/host_config.h. One rule for every command: the compiler asked for is used when it fits (an
 * unknown limit passes); otherwise the newest gcc-N/g++-N on PATH within the gcc limit replaces
 * it. What is asked for differs only by who will call nvcc: a torch extension build hands nvcc
 * $CC (env, fetch-cuda's post-check, the doctor), CMake takes $CUDAHOSTCXX, then $CXX (build). */
#ifndef SB_TOOLCHAIN_HOST_H
#define SB_TOOLCHAIN_HOST_H

#include "probe/host_compiler.h"

/* Pure: the limit for a compiler of this kind (gcc_max or clang_max), -1 when unknown. */
int toolchain_host_limit(const struct host_limits *lim, int is_clang);
/* Pure: whether a compiler of this version passes the limits (an unknown limit passes). */
int toolchain_host_fits(const struct host_limits *lim, int is_clang, const struct version *v);

/* Pure: the C++ driver that goes with a compiler name, keeping its folder and version suffix:
 * gcc-13 -> g++-13, /usr/bin/gcc -> /usr/bin/g++, clang-18 -> clang++-18, cc -> c++; C++ names
 * and anything unknown stay as they are. Heap string. */
char *toolchain_cxx_for(const char *compiler);
/* Pure: what torch hands nvcc: $CC when set (it becomes -ccbin), else "gcc" (nvcc's default is
 * the compiler on PATH). */
const char *toolchain_torch_host_default(const char *env_cc);
/* Pure: CMake's CUDA host compiler when none is named: $CUDAHOSTCXX, else $CXX, else the C++
 * driver of $CC, else g++. Heap string. */
char *toolchain_cmake_host_default(const char *env_cudahostcxx, const char *env_cxx,
                                   const char *env_cc);

/* The toolkit's limits from its crt/host_config.h (both -1 when the file is missing or says
 * nothing). Returns that file's heap path, or NULL when not found. */
char *toolchain_read_limits(const char *cuda_home, struct host_limits *lim);

struct host_choice {
    struct compiler_info asked; /* the compiler asked for, as probed (found 0 when it is not) */
    int asked_fits;             /* found, and within its kind's limit */
    char *fit_cc, *fit_cxx;     /* when asked does not fit: the replacement ("gcc-13",
                                 * "g++-13"), NULL when none is on PATH (heap) */
};

/* Probes `asked` (a command such as "g++", "gcc-14", "ccache gcc") and, when it is missing or
 * too new, looks on path_env (NULL: $PATH) for the newest gcc-N/g++-N within lim->gcc_max.
 * Always fills *out; free with host_choice_free. */
void toolchain_host_choose(const struct host_limits *lim, const char *asked, const char *path_env,
                           struct host_choice *out);
void host_choice_free(struct host_choice *c);

/* The C and C++ compilers for a torch extension build against the toolkit at root ($CC, or
 * gcc, with $CXX or its own C++ driver; else the replacement), as env prints them and
 * fetch-cuda's post-check compiles with. */
struct hostcc_choice {
    char *cc;    /* heap, NULL when no fitting compiler was found */
    char *cxx;   /* heap */
    int gcc_max; /* the toolkit's limit, -1 unknown */
    char *note;  /* why this one, or why none (heap) */
};
void hostcc_choose(const char *root, struct hostcc_choice *out);
void hostcc_free(struct hostcc_choice *h);

#endif
