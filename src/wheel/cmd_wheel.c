/* sagebuild wheel: packs a build (or builds one for --arch first, in-process) with the drop-in
 * `sageattention` package into a wheel that pip installs offline. */
#include "kernel_build/api.h"
#include "util/json.h"
#include "cmd.h"
#include "util/fs.h"
#include "util/opt.h"
#include "util/out.h"
#include "wheel/make.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct wheel_opts {
    const char *arch, *build, *out, *cuda_home;
    int json;
};

static const char about[] =
    "Makes sageattention-<version>-py3-none-linux_<machine>.whl: the drop-in\n"
    "`sageattention` Python package with the built libsageattn.so, its build record and,\n"
    "when the self-test wrote one for this library, its recommendation. No GPU needed.\n";
static const char footer[] =
    "The same build gives the same wheel bytes. Install it with\n"
    "`PY -m pip install --no-index <wheel>`, or let `sagebuild install --python PY` do\n"
    "it all. Exit status: 0 wheel written, 2 error, 64 usage.\n";

static enum opt_result parse_opts(int argc, char **argv, struct wheel_opts *o)
{
    memset(o, 0, sizeof *o);
    const struct opt table[] = {
        {.kind = OPT_STRING,
         .name = "arch",
         .arg = "LIST",
         .help = "build (or find up to date) these archs first, as `sagebuild build --arch` "
                 "does; without it the existing build is packed",
         .dest = &o->arch},
        BUILD_DIR_OPTION(&o->build),
        {.kind = OPT_STRING,
         .name = "cuda-home",
         .arg = "DIR",
         .help = "the toolkit for --arch builds (as `sagebuild build --cuda-home`)",
         .dest = &o->cuda_home},
        {.kind = OPT_STRING,
         .name = "out",
         .arg = "DIR",
         .help = "where the wheel goes (default: the current folder)",
         .dest = &o->out},
        {.kind = OPT_FLAG, .name = "json", .help = "print the result as JSON", .dest = &o->json},
        {0},
    };
    const struct opt_command spec = {"wheel", about, footer, table, 0};
    return opt_parse(&spec, argc, argv);
}

static void print_json(int exit_code, const struct wheel_made *m, const char *error,
                       const char *fix, const char *build_json)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema", 1);
    cJSON_AddStringToObject(root, "command", "wheel");
    cJSON_AddStringToObject(root, "status", error ? "error" : "ok");
    cJSON_AddNumberToObject(root, "exit_code", exit_code);
    if (m && m->w.path) {
        cJSON *w = cJSON_AddObjectToObject(root, "wheel");
        cJSON_AddStringToObject(w, "path", m->w.path);
        cJSON_AddStringToObject(w, "name", m->w.name);
        cJSON_AddStringToObject(w, "version", m->version);
        cJSON_AddStringToObject(w, "tag", m->w.tag);
        cJSON_AddStringToObject(w, "sha256", m->w.sha256);
        cJSON_AddNumberToObject(w, "size", (double)m->w.size);
        cJSON_AddNumberToObject(w, "files", m->w.nfiles);
        cJSON_AddItemToObject(w, "archs", json_str_or_null(m->archs));
        cJSON_AddStringToObject(w, "library_sha256", m->library_sha256);
        cJSON_AddBoolToObject(w, "recommendation", m->recommendation);
        cJSON_AddStringToObject(w, "package_dir", m->package_dir);
    } else {
        cJSON_AddNullToObject(root, "wheel");
    }
    cJSON *notes = cJSON_AddArrayToObject(root, "notes");
    if (m && m->note)
        cJSON_AddItemToArray(notes, cJSON_CreateString(m->note));
    cJSON *b = build_json ? cJSON_Parse(build_json) : NULL;
    cJSON_AddItemToObject(root, "build", b ? b : cJSON_CreateNull());
    if (error) {
        cJSON *e = cJSON_AddObjectToObject(root, "error");
        cJSON_AddStringToObject(e, "summary", error);
        cJSON_AddItemToObject(e, "fix", json_str_or_null(fix));
    } else {
        cJSON_AddNullToObject(root, "error");
    }
    char *text = json_text(root);
    fputs(text, stdout);
    free(text);
}

int cmd_wheel(int argc, char **argv, const struct global_opts *g)
{
    struct wheel_opts o;
    enum opt_result parsed = parse_opts(argc, argv, &o);
    if (parsed != OPT_OK)
        return opt_exit_status(parsed);
    struct out_style st;
    out_style_init(&st, stdout, g->no_color);
    char *build_dir = build_out_dir(o.build);
    char *build_json = NULL;
    struct wheel_made m;
    memset(&m, 0, sizeof m);
    const char *error = NULL, *fix = NULL;
    int rc = SB_EXIT_OK;

    struct build_outcome bo;
    memset(&bo, 0, sizeof bo);
    if (o.arch) {
        struct build_opts bopt;
        build_opts_init(&bopt);
        bopt.arch = o.arch;
        bopt.out = build_dir;
        bopt.cuda_home = o.cuda_home;
        bopt.json = o.json;
        if (build_run(&bopt, &bo) < 0 && !bo.error)
            build_outcome_error(&bo, SB_EXIT_INTERNAL, xstrdup("build failed for no known reason"),
                                NULL);
        if (o.json)
            build_json = build_outcome_json(&bo);
        else if (bo.error)
            build_outcome_print(&bo, stderr, &st);
        else
            printf("build: %s in %s%s\n", bo.rec.archs ? bo.rec.archs : o.arch, bo.out_dir,
                   bo.up_to_date ? " (up to date)" : "");
        if (bo.error) {
            error = bo.error;
            fix = bo.fix;
            rc = bo.exit_code ? bo.exit_code : SB_EXIT_ERROR;
        }
    }
    if (!error) {
        char *out = o.out ? xstrdup(o.out) : xstrdup(".");
        if (wheel_make(build_dir, out, &m) < 0) {
            error = m.error;
            fix = m.fix;
            rc = SB_EXIT_ERROR;
        }
        free(out);
    }
    if (o.json) {
        print_json(rc, &m, error, fix, build_json);
    } else if (error) {
        if (!bo.error) {
            struct out_style es;
            out_style_init(&es, stderr, g->no_color);
            fprintf(stderr, "%swheel failed:%s %s\n", out_color(&es, OUT_ERROR), out_reset(&es),
                    error);
            if (fix)
                fprintf(stderr, "  fix: %s\n", fix);
        }
    } else {
        if (m.note)
            printf("note: %s\n", m.note);
        printf("%s%s%s wrote %s\n", out_color(&st, OUT_OK), out_status_mark(&st, OUT_OK),
               out_reset(&st), m.w.path);
        printf("  version %s, %s, %d files, %.1f MB; kernels for %s; recommendation %s\n",
               m.version, m.w.tag, m.w.nfiles, m.w.size / 1e6, m.archs ? m.archs : "(unknown)",
               m.recommendation ? "included" : "none (the package uses each arch's default mode)");
        printf("  sha256 %s\n  install: PY -m pip install --no-index --force-reinstall %s\n",
               m.w.sha256, m.w.path);
    }
    wheel_made_free(&m);
    build_outcome_free(&bo);
    free(build_json);
    free(build_dir);
    return rc;
}
