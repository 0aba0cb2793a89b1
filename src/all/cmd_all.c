/* Placeholder entry until the 'all' command lands: the table stays complete and honest. */
#include "cmd.h"

int cmd_all(int argc, char **argv, const struct global_opts *g)
{
    (void)argc;
    (void)argv;
    (void)g;
    return cmd_not_built("all");
}
