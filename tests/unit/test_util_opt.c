/* The option-table parser on data: every kind of option stores what it is given, every mistake
 * gets its one message, and --help is rendered from the same table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/opt.h"

struct vals {
    int json, verbose, quiet, jobs, first;
    const char *out, *source, *cuda;
    long even;
    struct opt_list mirrors, names;
};

static const char *const sources[] = {"redist", "pypi", "auto", NULL};

/* An OPT_PARSED value: an even whole number, as a long. */
static int even_arg(const char *arg, void *dest)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (end == arg || *end || v % 2)
        return -1;
    *(long *)dest = v;
    return 0;
}

struct captured {
    char *out, *err;
    size_t out_len, err_len;
};

static void captured_free(struct captured *c)
{
    free(c->out);
    free(c->err);
}

/* Parses argv (NULL-terminated) with the test table; operands taken when `operands`. */
static enum opt_result parse(struct vals *v, int operands, int out_required, char **argv,
                             struct captured *cap)
{
    memset(v, 0, sizeof *v);
    v->jobs = -1;
    const struct opt table[] = {
        {.kind = OPT_OPERANDS,
         .name = "CHECK",
         .arg = "[CHECK...]",
         .help = "run only these",
         .dest = &v->first},
        {.kind = OPT_FLAG, .name = "json", .help = "as JSON", .dest = &v->json},
        {.kind = OPT_FLAG,
         .name = "verbose",
         .letter = 'v',
         .help = "more",
         .dest = &v->verbose,
         .group = 1},
        {.kind = OPT_FLAG,
         .name = "quiet",
         .letter = 'q',
         .help = "less",
         .dest = &v->quiet,
         .group = 1},
        {.kind = OPT_INT,
         .name = "jobs",
         .letter = 'j',
         .arg = "N",
         .help = "at once",
         .dest = &v->jobs,
         .min = 1,
         .max = 256},
        {.kind = OPT_STRING,
         .name = "out",
         .arg = "DIR",
         .help = "where to write",
         .dest = &v->out,
         .flags = out_required ? OPT_REQUIRED : 0},
        {.kind = OPT_ENUM,
         .name = "source",
         .arg = "S",
         .help = "where from",
         .dest = &v->source,
         .choices = sources},
        {.kind = OPT_PARSED,
         .name = "even",
         .arg = "N",
         .help = "an even number",
         .dest = &v->even,
         .parse = even_arg,
         .wants = "an even whole number"},
        {.kind = OPT_LIST,
         .name = "mirror",
         .arg = "URL",
         .help = "repeatable",
         .dest = &v->mirrors,
         .flags = OPT_SPLIT_COMMAS},
        {.kind = OPT_LIST, .name = "name", .arg = "S", .help = "kept whole", .dest = &v->names},
        {.kind = OPT_STRING, .name = "cuda", .arg = "X.Y", .help = "release", .dest = &v->cuda},
        {0},
    };
    const struct opt_command c = {"demo", "About it.\n", "Exit status: 0.\n",
                                  operands ? table : table + 1, 0};
    int argc = 0;
    while (argv[argc])
        argc++;
    FILE *out = open_memstream(&cap->out, &cap->out_len);
    FILE *err = open_memstream(&cap->err, &cap->err_len);
    enum opt_result r = opt_parse_to(&c, argc, argv, out, err);
    fclose(out);
    fclose(err);
    return r;
}

static void every_kind_stores_its_value(void **state)
{
    (void)state;
    struct vals v;
    struct captured cap;
    char *argv[] = {"demo",       "--json", "-v",     "--jobs", "8",        "--out=/x",
                    "--source",   "pypi",   "--even", "42",     "--mirror", "a,,b",
                    "--mirror=c", "--name", "p,q",    "--cuda", "12.8",     NULL};
    assert_int_equal(parse(&v, 0, 0, argv, &cap), OPT_OK);
    assert_int_equal(cap.err_len, 0);
    assert_int_equal(v.json, 1);
    assert_int_equal(v.verbose, 1);
    assert_int_equal(v.quiet, 0);
    assert_int_equal(v.jobs, 8);
    assert_string_equal(v.out, "/x");
    assert_string_equal(v.source, "pypi");
    assert_ptr_equal(v.source, sources[1]); /* the table's own string */
    assert_int_equal(v.even, 42);
    assert_int_equal(v.mirrors.n, 3);
    assert_string_equal(v.mirrors.v[0], "a");
    assert_string_equal(v.mirrors.v[1], "b");
    assert_string_equal(v.mirrors.v[2], "c");
    assert_null(v.mirrors.v[3]);
    assert_int_equal(v.names.n, 1);
    assert_string_equal(v.names.v[0], "p,q");
    assert_string_equal(v.cuda, "12.8");
    opt_list_free(&v.mirrors);
    opt_list_free(&v.names);
    assert_null(v.mirrors.v);
    captured_free(&cap);
}

static void accepts_the_gnu_spellings(void **state)
{
    (void)state;
    struct vals v;
    struct captured cap;
    /* -j4, a cluster of flags, a unique prefix, the last value winning */
    char *a[] = {"demo", "-j4", "-vq", "--js", "--ou", "/a", "--out", "/b", NULL};
    assert_int_equal(parse(&v, 0, 0, a, &cap), OPT_FAILED); /* -v and -q are one group */
    assert_string_equal(cap.err, "sagebuild demo: --verbose and --quiet exclude each other\n");
    captured_free(&cap);
    char *b[] = {"demo", "-j", "4", "-v", "--js", "--ou", "/a", "--out", "/b", NULL};
    assert_int_equal(parse(&v, 0, 0, b, &cap), OPT_OK);
    assert_int_equal(v.jobs, 4);
    assert_int_equal(v.verbose, 1);
    assert_int_equal(v.json, 1);
    assert_string_equal(v.out, "/b");
    captured_free(&cap);
    /* a value that starts with a dash is still the value */
    char *c[] = {"demo", "--cuda", "-x", NULL};
    assert_int_equal(parse(&v, 0, 0, c, &cap), OPT_OK);
    assert_string_equal(v.cuda, "-x");
    captured_free(&cap);
}

static void operands_move_after_the_options(void **state)
{
    (void)state;
    struct vals v;
    struct captured cap;
    char *argv[] = {"demo", "host", "--json", "-", "toolkit", "--", "--verbose", NULL};
    assert_int_equal(parse(&v, 1, 0, argv, &cap), OPT_OK);
    assert_int_equal(v.json, 1);
    assert_int_equal(v.verbose, 0); /* after "--" it is an operand */
    assert_int_equal(v.first, 3);
    assert_string_equal(argv[v.first], "host");
    assert_string_equal(argv[v.first + 1], "-");
    assert_string_equal(argv[v.first + 2], "toolkit");
    assert_string_equal(argv[v.first + 3], "--verbose");
    assert_null(argv[v.first + 4]);
    captured_free(&cap);
    /* a table without an operand row takes none */
    char *b[] = {"demo", "--json", "extra", NULL};
    assert_int_equal(parse(&v, 0, 0, b, &cap), OPT_FAILED);
    assert_string_equal(
        cap.err, "sagebuild demo: unexpected argument 'extra'. See 'sagebuild demo --help'.\n");
    captured_free(&cap);
}

/* One argv, its exit and its one message. */
static void expect_error(char **argv, int required, const char *message)
{
    struct vals v;
    struct captured cap;
    enum opt_result r = parse(&v, 0, required, argv, &cap);
    opt_list_free(&v.mirrors);
    opt_list_free(&v.names);
    assert_int_equal(r, OPT_FAILED);
    assert_int_equal(opt_exit_status(r), 64);
    assert_int_equal(cap.out_len, 0);
    assert_string_equal(cap.err, message);
    captured_free(&cap);
}

static void each_mistake_has_one_message(void **state)
{
    (void)state;
    char *a[] = {"demo", "--jsn", NULL};
    expect_error(a, 0,
                 "sagebuild demo: '--jsn' is not an option. Did you mean '--json'? See "
                 "'sagebuild demo --help'.\n");
    char *b[] = {"demo", "--frobnicate=1", NULL};
    expect_error(b, 0,
                 "sagebuild demo: '--frobnicate' is not an option. See 'sagebuild demo --help'.\n");
    char *c[] = {"demo", "-x", NULL};
    expect_error(c, 0, "sagebuild demo: '-x' is not an option. See 'sagebuild demo --help'.\n");
    char *d[] = {"demo", "--j", NULL};
    expect_error(d, 0,
                 "sagebuild demo: '--j' could be any of: --json, --jobs. See 'sagebuild demo "
                 "--help'.\n");
    char *e[] = {"demo", "--jobs", NULL};
    expect_error(e, 0, "sagebuild demo: --jobs needs a value (N)\n");
    char *f[] = {"demo", "-j", NULL};
    expect_error(f, 0, "sagebuild demo: --jobs needs a value (N)\n");
    char *g[] = {"demo", "--out=", NULL};
    expect_error(g, 0, "sagebuild demo: --out needs a value (DIR), not an empty string\n");
    char *h[] = {"demo", "--json=yes", NULL};
    expect_error(h, 0, "sagebuild demo: --json takes no value (not 'yes')\n");
    char *i[] = {"demo", "--source", "conda", NULL};
    expect_error(i, 0,
                 "sagebuild demo: --source must be one of: redist, pypi, auto (not 'conda')\n");
    char *j[] = {"demo", "--even", "3", NULL};
    expect_error(j, 0, "sagebuild demo: --even must be an even whole number (not '3')\n");
    char *k[] = {"demo", "--json", NULL};
    expect_error(k, 1, "sagebuild demo: --out DIR is required (where to write)\n");
}

static void integers_are_whole_and_in_range(void **state)
{
    (void)state;
    const char *bad[] = {"0", "257", "8x", "x8", "1.5", "99999999999999999999", "-1"};
    for (size_t n = 0; n < sizeof bad / sizeof bad[0]; n++) {
        char *argv[] = {"demo", "--jobs", (char *)bad[n], NULL};
        char want[128];
        snprintf(want, sizeof want,
                 "sagebuild demo: --jobs must be a whole number from 1 to 256 (not '%s')\n",
                 bad[n]);
        expect_error(argv, 0, want);
    }
    struct vals v;
    struct captured cap;
    char *argv[] = {"demo", "--jobs", "256", "-j1", NULL};
    assert_int_equal(parse(&v, 0, 0, argv, &cap), OPT_OK);
    assert_int_equal(v.jobs, 1);
    captured_free(&cap);
}

static void help_is_rendered_from_the_table(void **state)
{
    (void)state;
    struct vals v;
    struct captured cap;
    char *argv[] = {"demo", "--json", "--help", "--bogus", NULL};
    enum opt_result r = parse(&v, 1, 1, argv, &cap);
    assert_int_equal(r, OPT_HELP_SHOWN);
    assert_int_equal(opt_exit_status(r), 0);
    assert_int_equal(cap.err_len, 0);
    assert_string_equal(cap.out,
                        "usage: sagebuild demo [CHECK...] [--json] [--verbose|--quiet] [--jobs N]\n"
                        "                      --out DIR [--source redist|pypi|auto] [--even N]\n"
                        "                      [--mirror URL]... [--name S]... [--cuda X.Y]\n"
                        "\n"
                        "About it.\n"
                        "\n"
                        "  CHECK          run only these\n"
                        "  --json         as JSON\n"
                        "  -v, --verbose  more\n"
                        "  -q, --quiet    less\n"
                        "  -j, --jobs N   at once\n"
                        "  --out DIR      where to write (required)\n"
                        "  --source S     where from\n"
                        "  --even N       an even number\n"
                        "  --mirror URL   repeatable\n"
                        "  --name S       kept whole\n"
                        "  --cuda X.Y     release\n"
                        "\n"
                        "Exit status: 0.\n");
    captured_free(&cap);
    char *h[] = {"demo", "-h", NULL};
    assert_int_equal(parse(&v, 0, 0, h, &cap), OPT_HELP_SHOWN);
    assert_non_null(strstr(cap.out, "usage: sagebuild demo [--json]"));
    captured_free(&cap);
}

static void long_help_wraps_under_its_column(void **state)
{
    (void)state;
    int flag = 0;
    const char *where = NULL;
    const struct opt table[] = {
        {.kind = OPT_FLAG,
         .name = "a-rather-long-option-name",
         .help = "goes on the next line",
         .dest = &flag},
        {.kind = OPT_STRING,
         .name = "where",
         .arg = "DIR",
         .help = "one two three four five six seven eight nine ten eleven twelve thirteen "
                 "fourteen fifteen",
         .dest = &where},
        {.kind = OPT_OPERANDS, .name = "hidden", .arg = "<x>", .dest = &flag},
        {0},
    };
    const struct opt_command c = {"w", NULL, NULL, table, 0};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    opt_usage(&c, f);
    fclose(f);
    assert_string_equal(text, "usage: sagebuild w [--a-rather-long-option-name] [--where DIR] <x>\n"
                              "\n"
                              "  --a-rather-long-option-name\n"
                              "               goes on the next line\n"
                              "  --where DIR  one two three four five six seven eight nine ten "
                              "eleven twelve\n"
                              "               thirteen fourteen fifteen\n");
    free(text);
}

static void stops_at_the_first_operand_when_asked(void **state)
{
    (void)state;
    int color = 0, at = 0;
    const struct opt table[] = {
        {.kind = OPT_FLAG,
         .name = "no-color",
         .help = "no colour",
         .dest = &color,
         .flags = OPT_ANYWHERE},
        {.kind = OPT_OPERANDS, .name = "command", .arg = "<command>", .dest = &at},
        {0},
    };
    const struct opt_command c = {NULL, NULL, NULL, table, 1};
    char *argv[] = {"sagebuild",  "--no-color", "doctor",     "--json",
                    "--no-color", "--",         "--no-color", NULL};
    FILE *null = fopen("/dev/null", "w");
    assert_int_equal(opt_parse_to(&c, 7, argv, null, null), OPT_OK);
    assert_int_equal(color, 1);
    assert_int_equal(at, 2);
    /* the command's own words keep --json; --no-color is taken up to "--" only */
    color = 0;
    int argc = opt_take_anywhere(table, 7 - at, argv + at);
    assert_int_equal(color, 1);
    assert_int_equal(argc, 4);
    assert_string_equal(argv[at + 1], "--json");
    assert_string_equal(argv[at + 2], "--");
    assert_string_equal(argv[at + 3], "--no-color");
    assert_null(argv[at + 4]);
    /* sagebuild's own messages have no command name */
    char *bad[] = {"sagebuild", "--bogus", NULL};
    char *err = NULL;
    size_t len = 0;
    FILE *e = open_memstream(&err, &len);
    assert_int_equal(opt_parse_to(&c, 2, bad, null, e), OPT_FAILED);
    fclose(e);
    assert_string_equal(err, "sagebuild: '--bogus' is not an option. See 'sagebuild --help'.\n");
    free(err);
    fclose(null);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind_stores_its_value),
        cmocka_unit_test(accepts_the_gnu_spellings),
        cmocka_unit_test(operands_move_after_the_options),
        cmocka_unit_test(each_mistake_has_one_message),
        cmocka_unit_test(integers_are_whole_and_in_range),
        cmocka_unit_test(help_is_rendered_from_the_table),
        cmocka_unit_test(long_help_wraps_under_its_column),
        cmocka_unit_test(stops_at_the_first_operand_when_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
