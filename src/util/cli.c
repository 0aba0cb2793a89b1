#include "util/cli.h"
#include "util/exitcodes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int cli_int_arg(const char *cmd, const char *opt, const char *arg, int min, int max, int *out)
{
    char *end;
    errno = 0;
    long v = arg ? strtol(arg, &end, 10) : 0;
    if (!arg || end == arg || *end || errno || v < min || v > max) {
        fprintf(stderr, "sagebuild %s: --%s wants a number from %d to %d\n", cmd, opt, min, max);
        return SB_EXIT_USAGE;
    }
    *out = (int)v;
    return 0;
}

int cli_no_operands(const char *cmd, int argc, char **argv, int first_operand)
{
    if (first_operand >= argc)
        return 0;
    fprintf(stderr, "sagebuild %s: unexpected argument '%s'\n", cmd, argv[first_operand]);
    return SB_EXIT_USAGE;
}
