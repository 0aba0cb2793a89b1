/* The build command's work as a function, so `wheel` and `install` build in-process with the
 * same rules, locking and up-to-date decision as `sagebuild build`. */
#ifndef SB_BUILD_API_H
#define SB_BUILD_API_H

#include "outcome.h"
#include "util/opt.h"

struct build_opts {
    const char *arch; /* "native" by default */
    const char *cuda_home;
    const char *python; /* whose torch picks among fetched toolkits; NULL: $SAGEBUILD_PYTHON */
    const char *host_cc;
    const char *out; /* NULL: the default output folder */
    const char *head_dims;
    int jobs;
    int json;    /* quiet: no progress line, the CMake output goes to <out>/build.log */
    int force;   /* from a clean CMake build folder */
    int verbose; /* stream CMake's output instead of the progress line */
    int timeout_s;
};

/* The defaults `sagebuild build` starts from. */
void build_opts_init(struct build_opts *o);
/* Builds (or finds up to date) what o asks for. 0, or -1 with res->error set. res must be
 * zeroed; free it with build_outcome_free. */
int build_run(const struct build_opts *o, struct build_outcome *res);
/* --out made absolute, else $XDG_DATA_HOME/sagebuild/sageattn. Heap string. */
char *build_out_dir(const char *flag);

/* The --build DIR option row of the commands that read a build (selftest, wheel, install):
 * one help text for the folder build_out_dir() defaults to. */
#define BUILD_DIR_OPTION(dest_)                                                                    \
    {                                                                                              \
        .kind = OPT_STRING, .name = "build", .arg = "DIR",                                         \
        .help = "the build folder, what `sagebuild build --out` made (default "                    \
                "$XDG_DATA_HOME/sagebuild/sageattn)",                                              \
        .dest = (dest_)                                                                            \
    }

#endif
