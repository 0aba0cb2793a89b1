/* sagebuild: the command table and global options. Each command lives in its own folder. */
#include "cmd.h"
#include "util/opt.h"
#include "util/strbuf.h"
#include "util/suggest.h"

#include <stdio.h>
#include <string.h>

struct command {
    const char *name;
    cmd_fn fn;
    const char *summary;
};

static int cmd_help(int argc, char **argv, const struct global_opts *g);

static const struct command commands[] = {
    {"doctor", cmd_doctor, "diagnose the CUDA extension build environment"},
    {"fetch-cuda", cmd_fetch_cuda, "download the minimal CUDA toolkit that matches torch"},
    {"env", cmd_env, "print shell lines that point builds at the fetched toolkit"},
    {"mirror", cmd_mirror, "write a redist-shaped mirror tree from the download cache"},
    {"build", cmd_build, "compile the bundled attention kernels for chosen GPU archs"},
    {"selftest", cmd_selftest, "check the built kernels' accuracy and speed on each GPU"},
    {"wheel", cmd_wheel, "pack the built kernels and the drop-in sageattention as a wheel"},
    {"install", cmd_install, "build, test and install the drop-in sageattention into a python"},
    {"all", cmd_all, "doctor, fetch-cuda when needed, build, selftest; install with --python"},
    {"help", cmd_help, "show help for sagebuild or one command"},
};

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

/* "sagebuild: 'doctr' is not a command" and, when one is near, "did you mean 'doctor'?". */
static void no_such_command(const char *name)
{
    const char *names[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        names[i] = commands[i].name;
    const char *near = suggest_nearest(name, names, sizeof names / sizeof names[0]);
    fprintf(stderr, "sagebuild: '%s' is not a command.", name);
    if (near)
        fprintf(stderr, " Did you mean '%s'?", near);
    fputs(" See 'sagebuild --help'.\n", stderr);
}

/* The global options: before the command, or (--no-color) anywhere after it up to a "--". */
static struct global_opts global;
static int show_version, show_help, command_at;
static const struct opt global_table[] = {
    {.kind = OPT_FLAG,
     .name = "no-color",
     .help = "never colour the output (also: NO_COLOR, or output that is not a terminal); may "
             "also follow the command",
     .dest = &global.no_color,
     .flags = OPT_ANYWHERE},
    {.kind = OPT_FLAG,
     .name = "version",
     .letter = 'V',
     .help = "print the version and exit",
     .dest = &show_version},
    {.kind = OPT_FLAG,
     .name = "help",
     .letter = 'h',
     .help = "print this list of commands and exit",
     .dest = &show_help},
    {.kind = OPT_OPERANDS, .name = "command", .arg = "<command> [<args>]", .dest = &command_at},
    {0},
};

static void usage(FILE *f)
{
    struct strbuf about = STRBUF_INIT;
    sb_adds(&about, "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        sb_addf(&about, "  %-11s %s\n", commands[i].name, commands[i].summary);
    struct opt_command spec = {
        .about = sb_str(&about),
        .footer = "Run 'sagebuild <command> --help' for a command's options; 'man sagebuild' for "
                  "all.\nExit status: 0 ok, 1 warnings, 2 errors, 64 usage, 70 internal, 77 "
                  "nothing to test.\n",
        .opts = global_table,
        .stop_at_operand = 1,
    };
    opt_usage(&spec, f);
    sb_free(&about);
}

static int cmd_help(int argc, char **argv, const struct global_opts *g)
{
    if (argc > 1) {
        const struct command *c = find_command(argv[1]);
        if (!c) {
            no_such_command(argv[1]);
            return SB_EXIT_USAGE;
        }
        if (c->fn == cmd_help) { /* help for help is the usage */
            usage(stdout);
            return SB_EXIT_OK;
        }
        char *sub_argv[] = {argv[1], "--help", NULL};
        return c->fn(2, sub_argv, g);
    }
    usage(stdout);
    return SB_EXIT_OK;
}

int main(int argc, char **argv)
{
    /* The first operand is the command: everything after it is the command's to parse. */
    const struct opt_command spec = {.opts = global_table, .stop_at_operand = 1};
    enum opt_result r = opt_parse(&spec, argc, argv);
    if (r != OPT_OK)
        return opt_exit_status(r);
    if (show_help || show_version) {
        if (show_help)
            usage(stdout);
        else
            printf("sagebuild %s\n", SAGEBUILD_VERSION);
        return SB_EXIT_OK;
    }
    if (command_at >= argc) {
        usage(stderr);
        return SB_EXIT_USAGE;
    }
    const struct command *cmd = find_command(argv[command_at]);
    if (!cmd) {
        no_such_command(argv[command_at]);
        return SB_EXIT_USAGE;
    }
    char **sub_argv = argv + command_at;
    int sub_argc = opt_take_anywhere(global_table, argc - command_at, sub_argv);
    return cmd->fn(sub_argc, sub_argv, &global);
}
