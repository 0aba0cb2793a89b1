/* Placeholder entry until the 'env' command lands: the table stays complete and honest. */
#include "cmd.h"

int cmd_env(int argc, char **argv, const struct global_opts *g)
{
    (void)argc;
    (void)argv;
    (void)g;
    return cmd_not_built("env");
}
