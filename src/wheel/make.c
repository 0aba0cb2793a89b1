#include "wheel/make.h"
#include "kernel_build/record.h"
#include "cmd.h"
#include "fetch/engine/verify.h"
#include "util/datadir.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#define RECORD_MAX (1u << 20)

char *wheel_find_package_dir(void)
{
    /* Installed: share/sagebuild/python/...; the source tree keeps it under share/python/. */
    static const char *const where[] = {"python/sageattention", "share/python/sageattention"};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        char *dir = datadir_find(where[i]);
        char *init = dir ? fs_join(dir, "__init__.py") : NULL;
        int ok = init && fs_is_file(init);
        free(init);
        if (ok)
            return dir;
        free(dir);
    }
    return NULL;
}

char *wheel_machine(void)
{
    struct utsname u;
    return xstrdup(uname(&u) == 0 ? u.machine : "");
}

static int fail(struct wheel_made *m, char *error, char *fix)
{
    m->error = error;
    m->fix = fix;
    return -1;
}

/* <build>/recommendation.json goes in only when it was written for this very library. */
static void add_recommendation(struct wheel_files *files, const char *build_dir,
                               struct wheel_made *m)
{
    char *recommend_path = fs_join(build_dir, "recommendation.json");
    char *recommend = fs_read_file(recommend_path, RECORD_MAX, NULL);
    if (recommend) {
        char *why = NULL;
        if (wheel_recommendation_fits(recommend, m->library_sha256, &why) == 1) {
            wheel_files_add_buffer(files, WHEEL_DIST_NAME "/_lib/recommendation.json", recommend,
                                   strlen(recommend), 0);
            recommend = NULL;
            m->recommendation = 1;
        } else {
            m->note = xasprintf("%s left out: %s (run `sagebuild selftest --build %s` on the "
                                "machine with the GPU to write a fresh one)",
                                recommend_path, why, build_dir);
        }
        free(why);
        free(recommend);
    }
    free(recommend_path);
}

/* The finished build's record: its text (for the wheel) and its fields. 0, or -1 with m's
 * error set. */
static int read_build_record(const char *build_dir, const char *lib, char **rec_text,
                             struct build_record *rec, struct wheel_made *m)
{
    char *rec_path = fs_join(build_dir, BUILD_RECORD_NAME);
    int rc = -1;
    if (!fs_is_file(lib) || !(*rec_text = fs_read_file(rec_path, RECORD_MAX, NULL)))
        fail(m,
             xasprintf("%s holds no finished build (%s)", build_dir,
                       fs_is_file(lib) ? "no readable build-record.json" : "no lib/libsageattn.so"),
             xasprintf("sagebuild build --arch sm_120a --out %s   (or give the archs to this "
                       "command with --arch)",
                       build_dir));
    else if (build_record_from_json(*rec_text, rec) < 0)
        fail(m, xasprintf("%s is not a build record this sagebuild reads", rec_path),
             xasprintf("sagebuild build --force --arch ... --out %s", build_dir));
    else
        rc = 0;
    free(rec_path);
    return rc;
}

int wheel_make(const char *build_dir, const char *out_dir, struct wheel_made *m)
{
    memset(m, 0, sizeof *m);
    char *lib = fs_join(build_dir, "lib/libsageattn.so");
    char *rec_text = NULL, *err = NULL, *machine = NULL;
    struct wheel_files files = {0};
    struct build_record rec;
    int have_rec = 0, rc = -1;

    if (read_build_record(build_dir, lib, &rec_text, &rec, m) < 0)
        goto done;
    have_rec = 1;
    m->archs = rec.archs ? xstrdup(rec.archs) : NULL;
    if (!(m->package_dir = wheel_find_package_dir())) {
        fail(m,
             xstrdup("the drop-in package sources (python/sageattention/__init__.py) were not "
                     "found beside sagebuild"),
             xstrdup("set SAGEBUILD_DATADIR to the folder that holds python/sageattention, or "
                     "reinstall sagebuild (make install)"));
        goto done;
    }
    if (wheel_files_add_tree(&files, WHEEL_DIST_NAME, m->package_dir, &err) < 0 ||
        wheel_files_add_file(&files, WHEEL_DIST_NAME "/_lib/libsageattn.so", lib, 1, &err) < 0) {
        fail(m, err, xstrdup("check the files named above"));
        goto done;
    }
    wheel_files_add_buffer(&files, WHEEL_DIST_NAME "/_lib/" BUILD_RECORD_NAME, rec_text,
                           strlen(rec_text), 0);
    rec_text = NULL;
    m->library_sha256 =
        xstrdup(wheel_files_find(&files, WHEEL_DIST_NAME "/_lib/libsageattn.so")->sha256);

    add_recommendation(&files, build_dir, m);

    m->version = wheel_version(SAGEBUILD_VERSION);
    machine = wheel_machine();
    struct wheel_meta meta = {.version = m->version,
                              .cli_version = SAGEBUILD_VERSION,
                              .archs = rec.archs,
                              .nvcc = rec.nvcc_version};
    if (wheel_write(&files, &meta, machine, out_dir, &m->w, &err) < 0) {
        fail(m, err, xasprintf("check that %s is writable and has space", out_dir));
        goto done;
    }
    rc = 0;
done:
    if (have_rec)
        build_record_free(&rec);
    wheel_files_free(&files);
    free(machine);
    free(rec_text);
    free(lib);
    return rc;
}

void wheel_made_free(struct wheel_made *m)
{
    wheel_written_free(&m->w);
    free(m->version);
    free(m->archs);
    free(m->package_dir);
    free(m->library_sha256);
    free(m->note);
    free(m->error);
    free(m->fix);
    memset(m, 0, sizeof *m);
}
