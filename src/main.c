/* sagebuild: the command table and global options. Each command lives in its own folder. */
#include "cmd.h"
#include "util/suggest.h"

#include <getopt.h>
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

/* Global options may also follow the command (`sagebuild doctor --no-color`): they are taken
 * out of the command's arguments, up to a "--", before the command parses the rest. */
static int take_global_options(int argc, char **argv, struct global_opts *g)
{
    int kept = 1;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--no-color"))
            g->no_color = 1;
        else
            argv[kept++] = argv[i];
    }
    for (; i < argc; i++)
        argv[kept++] = argv[i];
    argv[kept] = NULL;
    return kept;
}

static void usage(FILE *f)
{
    fputs("usage: sagebuild [--no-color] [--version] [--help] <command> [<args>]\n\n"
          "--no-color may also follow the command.\n\n"
          "Commands:\n",
          f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fputs("\nRun 'sagebuild <command> --help' for a command's options; 'man sagebuild' for all.\n"
          "Exit status: 0 ok, 1 warnings, 2 errors, 64 usage, 70 internal, 77 nothing to test.\n",
          f);
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

int cmd_not_built(const char *name)
{
    fprintf(stderr,
            "sagebuild: '%s' is not built yet in this version (%s); see README.md for the "
            "commands that are.\n",
            name, SAGEBUILD_VERSION);
    return SB_EXIT_INTERNAL;
}

int main(int argc, char **argv)
{
    struct global_opts g = {0};
    static const struct option opts[] = {
        {"no-color", no_argument, NULL, 'C'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    /* '+' stops at the first non-option: everything after the command is the command's. */
    while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
        switch (c) {
        case 'C':
            g.no_color = 1;
            break;
        case 'V':
            printf("sagebuild %s\n", SAGEBUILD_VERSION);
            return SB_EXIT_OK;
        case 'h':
            usage(stdout);
            return SB_EXIT_OK;
        default:
            usage(stderr);
            return SB_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return SB_EXIT_USAGE;
    }
    const struct command *cmd = find_command(argv[optind]);
    if (!cmd) {
        no_such_command(argv[optind]);
        return SB_EXIT_USAGE;
    }
    /* Each command runs its own getopt_long from a clean state. */
    char **sub_argv = argv + optind;
    int sub_argc = take_global_options(argc - optind, sub_argv, &g);
    optind = 0;
    return cmd->fn(sub_argc, sub_argv, &g);
}
