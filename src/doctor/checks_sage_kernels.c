/* sageattention.kernels: which GPU code an installed sageattention really carries, read from the
 * `.nv_fatbin` section of its shared libraries (no cuobjdump), against the GPUs present. This
 * catches "CUDA error: no kernel image is available for execution on the device" before the
 * first call: an environment moved from an RTX 4090 (sm_89 SASS) to an RTX 5090 (sm_120). For
 * sagebuild's drop-in the library is sageattention/_lib/libsageattn.so; for upstream
 * SageAttention, its compiled modules (_qattn_sm80/89/90, _fused, ...). */
#include "doctor/doctor.h"
#include "doctor/fixes.h"
#include "doctor/rules.h"
#include "probe/fatbin.h"
#include "util/fs.h"
#include "util/shquote.h"
#include "util/strbuf.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LIBS 32
#define MAX_LIB_SIZE (4ull << 30)

struct lib {
    char name[128]; /* file name, or "_lib/libsageattn.so" */
    struct fatbin_list code;
    char *error; /* unreadable, not an ELF, a damaged fat binary */
};

/* Maps the file and reads its fat binaries. */
static void read_lib(const char *path, struct lib *l)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (unsigned long long)st.st_size > MAX_LIB_SIZE) {
        l->error = xstrdup(fd < 0 ? "cannot be opened" : "not a readable file");
        if (fd >= 0)
            close(fd);
        return;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        l->error = xstrdup("cannot be mapped");
        return;
    }
    fatbin_from_elf(map, (size_t)st.st_size, &l->code, &l->error);
    munmap(map, (size_t)st.st_size);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct lib *)a)->name, ((const struct lib *)b)->name);
}

/* The shared libraries in the package folder (upstream), sorted by name. */
static int list_libs(const char *dir, struct lib *libs, int max)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) && n < max) {
        const char *so = strstr(de->d_name, ".so");
        if (!so || (so[3] && so[3] != '.') || strlen(de->d_name) >= sizeof libs[0].name)
            continue;
        char *path = fs_join(dir, de->d_name);
        if (fs_is_file(path)) {
            memset(&libs[n], 0, sizeof libs[n]);
            memcpy(libs[n].name, de->d_name, strlen(de->d_name) + 1); /* length checked above */
            read_lib(path, &libs[n]);
            n++;
        }
        free(path);
    }
    if (d)
        closedir(d);
    qsort(libs, (size_t)n, sizeof *libs, by_name);
    return n;
}

static char *describe(const struct lib *l)
{
    if (l->error)
        return xasprintf("unreadable: %s", l->error);
    if (l->code.n == 0)
        return xstrdup("no GPU code");
    char *sass = fatbin_archs(&l->code, FATBIN_SASS), *ptx = fatbin_archs(&l->code, FATBIN_PTX);
    char *s = xasprintf("SASS %s; PTX %s", *sass ? sass : "none", *ptx ? ptx : "none");
    free(sass);
    free(ptx);
    return s;
}

/* The modules a GPU loads: upstream's core.py imports _fused and the _qattn module of its arch;
 * when neither is here, every library is taken into account. */
static int needed_by(const struct lib *l, const char *module)
{
    size_t n = module ? strlen(module) : 0;
    return (module && !strncmp(l->name, module, n) && l->name[n] == '.') ||
           (!strncmp(l->name, "_fused", 6) && l->name[6] == '.');
}

struct verdict {
    enum fatbin_fit fit;
    const struct lib *lib;   /* the library that decided it (the worst one) */
    struct fatbin_image via; /* the image that fits, when one does */
};

static struct verdict judge_gpu(const struct lib *libs, int n, int cc_major, int cc_minor, int ours)
{
    const char *module = ours ? NULL : rule_sage_module_for_cc(cc_major, cc_minor);
    int any_needed = 0;
    for (int i = 0; i < n && !ours; i++)
        any_needed |= needed_by(&libs[i], module);
    struct verdict v = {FATBIN_FIT_SASS, NULL, {0}};
    for (int i = 0; i < n; i++) {
        if (any_needed && !needed_by(&libs[i], module))
            continue;
        if (libs[i].error || libs[i].code.n == 0)
            continue; /* said in the evidence; a module without GPU code is not a kernel */
        struct fatbin_image via;
        enum fatbin_fit f = fatbin_fit(&libs[i].code, cc_major, cc_minor, &via);
        if (!v.lib || f < v.fit) {
            v.fit = f;
            v.lib = &libs[i];
            v.via = via;
        }
    }
    if (!v.lib)
        v.fit = FATBIN_FIT_NONE;
    return v;
}

/* The package's libraries: sagebuild's drop-in has one (*ours = 1), upstream one per module. */
static int read_package(const char *sage_dir, struct lib *libs, int *ours)
{
    char *ours_lib = fs_join(sage_dir, "_lib/libsageattn.so");
    int n;
    *ours = fs_is_file(ours_lib);
    if (*ours) {
        snprintf(libs[0].name, sizeof libs[0].name, "_lib/libsageattn.so");
        read_lib(ours_lib, &libs[0]);
        n = 1;
    } else {
        n = list_libs(sage_dir, libs, MAX_LIBS);
    }
    free(ours_lib);
    return n;
}

/* Each GPU against the libraries it loads: no kernel image (error), PTX only (warning), SASS. */
static void judge_gpus(const struct gpu_info *g, const struct lib *libs, int n, int ours,
                       const char *py, struct check_result *r)
{
    struct strbuf none = STRBUF_INIT, jit = STRBUF_INIT, fine = STRBUF_INIT;
    for (int k = 0; k < g->count; k++) {
        const struct gpu_device *d = &g->devices[k];
        struct verdict v = judge_gpu(libs, n, d->cc_major, d->cc_minor, ours);
        char img[32];
        if (v.fit == FATBIN_FIT_NONE) {
            char *what = v.lib ? describe(v.lib) : xstrdup("no GPU code");
            sb_addf(&none, "%sno kernel image for %s (sm_%d%d) in %s (%s)", none.len ? "; " : "",
                    d->name, d->cc_major, d->cc_minor, v.lib ? v.lib->name : "its libraries", what);
            free(what);
        } else if (v.fit == FATBIN_FIT_PTX) {
            sb_addf(&jit,
                    "%s%s (sm_%d%d) runs %s only by JIT-compiling %s PTX (slow first calls; "
                    "the driver must be as new as the nvcc that wrote it)",
                    jit.len ? "; " : "", d->name, d->cc_major, d->cc_minor, v.lib->name,
                    fatbin_image_name(&v.via, img, sizeof img));
        } else {
            sb_addf(&fine, "%s%s: %s", fine.len ? ", " : "", d->name,
                    fatbin_image_name(&v.via, img, sizeof img));
        }
    }
    if (none.len) {
        result_set(r, CHECK_ERROR,
                   "%s; every call fails with 'CUDA error: no kernel image is available for "
                   "execution on the device'",
                   sb_str(&none));
        result_fix(r, "sagebuild install --python %s", py);
    } else if (jit.len) {
        result_set(r, CHECK_WARN, "%s", sb_str(&jit));
        result_fix(r, "sagebuild install --python %s", py);
    } else {
        result_set(r, CHECK_OK, "SASS for every GPU here (%s)", sb_str(&fine));
    }
    sb_free(&none);
    sb_free(&jit);
    sb_free(&fine);
}

void check_sage_kernels(struct doctor_ctx *ctx, struct check_result *r)
{
    ctx_torch(ctx);
    if (!ctx->sage_dir) {
        result_set(r, CHECK_SKIP, "sageattention is not installed");
        return;
    }
    struct lib *libs = xcalloc(MAX_LIBS, sizeof *libs);
    int ours;
    int n = read_package(ctx->sage_dir, libs, &ours);
    result_ev(r, "package", "%s%s", ctx->sage_dir, ours ? " (sagebuild's drop-in)" : "");
    int with_code = 0;
    for (int i = 0; i < n; i++) {
        char *d = describe(&libs[i]);
        result_ev(r, libs[i].name, "%s", d);
        free(d);
        with_code += !libs[i].error && libs[i].code.n > 0;
    }
    char *py = shell_quote(ctx_python(ctx));
    const struct gpu_info *g = ctx_gpu(ctx);
    if (with_code == 0) {
        result_set(r, ours ? CHECK_ERROR : CHECK_SKIP,
                   ours ? "sagebuild's drop-in has no readable GPU code in _lib/libsageattn.so"
                   : n  ? "sageattention's shared libraries hold no GPU code"
                        : "sageattention has no compiled modules to read");
        if (ours)
            result_fix(r, "sagebuild install --python %s", py);
    } else if (g->count == 0) {
        result_set(r, CHECK_SKIP, "%s carries GPU code (see evidence); no GPU here to compare with",
                   ours ? "sagebuild's drop-in" : "sageattention");
    } else {
        judge_gpus(g, libs, n, ours, py, r);
    }
    free(py);
    for (int i = 0; i < n; i++) {
        fatbin_list_free(&libs[i].code);
        free(libs[i].error);
    }
    free(libs);
}
