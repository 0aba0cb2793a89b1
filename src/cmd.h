/* The command table's contract: every subcommand is `int cmd_NAME(argc, argv, globals)`,
 * argv[0] being the command's own name, returning an exit status from util/exitcodes.h. */
#ifndef SB_CMD_H
#define SB_CMD_H

#include "util/exitcodes.h"

#define SAGEBUILD_VERSION "0.1.0"

struct global_opts {
    int no_color; /* --no-color */
};

typedef int (*cmd_fn)(int argc, char **argv, const struct global_opts *g);

int cmd_doctor(int argc, char **argv, const struct global_opts *g);
int cmd_fetch_cuda(int argc, char **argv, const struct global_opts *g);
int cmd_env(int argc, char **argv, const struct global_opts *g);
int cmd_mirror(int argc, char **argv, const struct global_opts *g);
int cmd_build(int argc, char **argv, const struct global_opts *g);
int cmd_selftest(int argc, char **argv, const struct global_opts *g);
int cmd_wheel(int argc, char **argv, const struct global_opts *g);
int cmd_install(int argc, char **argv, const struct global_opts *g);
int cmd_all(int argc, char **argv, const struct global_opts *g);

#endif
