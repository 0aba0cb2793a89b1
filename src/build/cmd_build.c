/* Placeholder entry until the 'build' command lands: the table stays complete and honest. */
#include "cmd.h"

int cmd_build(int argc, char **argv, const struct global_opts *g)
{
    (void)argc;
    (void)argv;
    (void)g;
    return cmd_not_built("build");
}
