/* One option table per command, read both by the parser and by --help, so the usage text cannot
 * list an option the parser does not take or miss one it does, and every command answers a
 * mistake in the same words. */
#ifndef SB_OPT_H
#define SB_OPT_H

#include <stdio.h>

enum opt_kind {
    OPT_END = 0,  /* ends a table */
    OPT_FLAG,     /* no value: *(int *)dest = 1 */
    OPT_STRING,   /* a non-empty value: *(const char **)dest, the last one given wins */
    OPT_INT,      /* a whole decimal number in [min, max]: *(int *)dest */
    OPT_ENUM,     /* one of choices: *(const char **)dest = that choice (the table's string) */
    OPT_PARSED,   /* a value parse() accepts; the error says it must be `wants` */
    OPT_LIST,     /* repeatable: each value appended to *(struct opt_list *)dest */
    OPT_OPERANDS, /* not an option: the operands (name: their label, arg: their synopsis);
                   * *(int *)dest = the index of the first one in the permuted argv. A table
                   * without this row takes no operands. */
};

enum opt_flags {
    OPT_REQUIRED = 1u << 0,     /* missing is a usage error */
    OPT_SPLIT_COMMAS = 1u << 1, /* OPT_LIST: "a,b" adds a and b */
    OPT_ANYWHERE = 1u << 2,     /* a global flag that may also follow the command */
};

struct opt {
    enum opt_kind kind;
    const char *name;           /* long name without "--" */
    char letter;                /* the short form (-v), or 0 */
    const char *arg;            /* the value's name in the help (DIR, N); NULL for flags */
    const char *help;           /* one paragraph; --help wraps it (NULL: not listed) */
    void *dest;                 /* see enum opt_kind */
    unsigned flags;             /* enum opt_flags */
    int group;                  /* options of one nonzero group exclude each other */
    int min, max;               /* OPT_INT */
    const char *const *choices; /* OPT_ENUM: NULL-terminated */
    int (*parse)(const char *arg, void *dest); /* OPT_PARSED: 0, or -1 when arg is not one */
    const char *wants;                         /* OPT_PARSED: "whole seconds from 0 to 604800" */
};

/* Values of an OPT_LIST option: heap copies, v NULL-terminated (NULL while n is 0). */
struct opt_list {
    char **v;
    int n;
};
void opt_list_free(struct opt_list *l);

struct opt_command {
    const char *name;   /* "doctor": messages start "sagebuild doctor: "; NULL: sagebuild's own */
    const char *about;  /* printed after the usage line (wrapped by its author, ends in \n) */
    const char *footer; /* printed after the options, or NULL */
    const struct opt *opts;
    int stop_at_operand; /* the first operand ends the options (sagebuild's command name) */
};

enum opt_result {
    OPT_OK = 0,         /* parsed: the command runs */
    OPT_HELP_SHOWN = 1, /* --help printed on stdout: the command exits 0 */
    OPT_FAILED = 2,     /* a usage error was printed on stderr: the command exits 64 */
};

/* Parses argv[1..argc) against c->opts in the GNU way: options and operands in any order
 * (operands moved to the end of argv), "--" ends the options, --name=value or --name value,
 * -j4 or -j 4, -vq, and unambiguous prefixes of long names. -h/--help prints the usage. */
enum opt_result opt_parse(const struct opt_command *c, int argc, char **argv);
/* The same with the output streams given (the unit tests read them). */
enum opt_result opt_parse_to(const struct opt_command *c, int argc, char **argv, FILE *out,
                             FILE *err);
/* What a command returns for r: 0 after --help, 64 after a usage error. */
int opt_exit_status(enum opt_result r);

/* The --help text: usage line, about, the options with their help, footer. */
void opt_usage(const struct opt_command *c, FILE *f);

/* Removes from argv[1..argc) every OPT_ANYWHERE flag of table spelled in full (--no-color),
 * up to a "--", setting its dest; returns the new argc (argv[argc] becomes NULL). */
int opt_take_anywhere(const struct opt *table, int argc, char **argv);

/* "sagebuild CMD: <message>" on stderr for a usage error found after parsing; returns 64. */
int opt_fail(const struct opt_command *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
