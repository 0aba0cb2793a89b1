/* Small pieces every command's option parsing needs, with the same messages everywhere. */
#ifndef SB_CLI_H
#define SB_CLI_H

/* Reads a whole decimal integer in [min, max] for `--opt`. 0, or 64 (usage) after printing
 * "sagebuild CMD: --OPT wants a number from MIN to MAX". */
int cli_int_arg(const char *cmd, const char *opt, const char *arg, int min, int max, int *out);
/* After getopt: 0 when no operand is left, else 64 after naming the first one. */
int cli_no_operands(const char *cmd, int argc, char **argv, int first_operand);

#endif
