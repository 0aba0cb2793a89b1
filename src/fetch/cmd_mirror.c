/* Placeholder entry until the 'mirror' command lands: the table stays complete and honest. */
#include "cmd.h"

int cmd_mirror(int argc, char **argv, const struct global_opts *g)
{
    (void)argc;
    (void)argv;
    (void)g;
    return cmd_not_built("mirror");
}
