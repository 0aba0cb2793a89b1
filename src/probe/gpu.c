#include "probe/gpu.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/strbuf.h"
#include "util/version.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Child → parent protocol, one fact per line, so a crash half-way still leaves what was learnt:
 *   libcuda_error <dlerror text>     driver_cuda <int>        init <CUresult>
 *   count <n>                        gpu <major> <minor> <name>
 *   nvml_driver <string>             nvml_error <text> */

typedef int (*cu_int_fn)(int *);
typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_name_fn)(char *, int, int);
typedef int (*cu_attr_fn)(int *, int, int);
typedef int (*nvml_void_fn)(void);
typedef int (*nvml_str_fn)(char *, unsigned);

enum { CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76 };

struct child_args {
    const char *libcuda;
    const char *libnvml; /* NULL: skip NVML (the kernel module already named the driver) */
};

static void *sym(void *h, const char *name)
{
    return h ? dlsym(h, name) : NULL;
}

static void child_libcuda(const char *lib, int fd)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        dprintf(fd, "libcuda_error %s\n", e ? e : "dlopen failed");
        return;
    }
    cu_int_fn get_version = (cu_int_fn)sym(h, "cuDriverGetVersion");
    cu_init_fn init = (cu_init_fn)sym(h, "cuInit");
    cu_int_fn get_count = (cu_int_fn)sym(h, "cuDeviceGetCount");
    cu_get_fn get_device = (cu_get_fn)sym(h, "cuDeviceGet");
    cu_name_fn get_name = (cu_name_fn)sym(h, "cuDeviceGetName");
    cu_attr_fn get_attr = (cu_attr_fn)sym(h, "cuDeviceGetAttribute");
    int v = 0;
    if (get_version && get_version(&v) == 0)
        dprintf(fd, "driver_cuda %d\n", v);
    if (!init || !get_count || !get_device || !get_name || !get_attr) {
        dprintf(fd, "libcuda_error %s lacks the device functions\n", lib);
        return;
    }
    int rc = init(0);
    dprintf(fd, "init %d\n", rc);
    int count = 0;
    if (rc != 0 || get_count(&count) != 0)
        return;
    dprintf(fd, "count %d\n", count);
    for (int i = 0; i < count && i < 64; i++) {
        int dev = 0, major = 0, minor = 0;
        char name[256] = "";
        if (get_device(&dev, i) != 0)
            continue;
        get_name(name, (int)sizeof name - 1, dev);
        get_attr(&major, CU_ATTR_CC_MAJOR, dev);
        get_attr(&minor, CU_ATTR_CC_MINOR, dev);
        for (char *p = name; *p; p++)
            if ((unsigned char)*p < 0x20)
                *p = ' ';
        dprintf(fd, "gpu %d %d %s\n", major, minor, name);
    }
}

static void child_nvml(const char *lib, int fd)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return; /* NVML is optional: libcuda already said what matters */
    nvml_void_fn init = (nvml_void_fn)sym(h, "nvmlInit_v2");
    nvml_str_fn get_driver = (nvml_str_fn)sym(h, "nvmlSystemGetDriverVersion");
    nvml_void_fn shutdown = (nvml_void_fn)sym(h, "nvmlShutdown");
    if (!init || !get_driver)
        return;
    int rc = init();
    if (rc != 0) {
        dprintf(fd, "nvml_error nvmlInit_v2 returned %d\n", rc);
        return;
    }
    char buf[96] = "";
    if (get_driver(buf, sizeof buf - 1) == 0 && buf[0])
        dprintf(fd, "nvml_driver %s\n", buf);
    if (shutdown)
        shutdown();
}

static int gpu_child(void *arg, int fd)
{
    const struct child_args *a = arg;
    child_libcuda(a->libcuda, fd);
    if (a->libnvml)
        child_nvml(a->libnvml, fd);
    return 0;
}

static void add_device(struct gpu_info *out, const char *name, int major, int minor)
{
    out->devices = xrealloc(out->devices, (size_t)(out->count + 1) * sizeof *out->devices);
    out->devices[out->count].name = xstrdup(name);
    out->devices[out->count].cc_major = major;
    out->devices[out->count].cc_minor = minor;
    out->count++;
}

void gpu_parse_child_output(const char *text, struct gpu_info *out)
{
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        char *l = nl ? xstrndup(line, (size_t)(nl - line)) : xstrdup(line);
        char *arg = strchr(l, ' ');
        if (arg)
            *arg++ = '\0';
        else
            arg = l + strlen(l);
        if (!strcmp(l, "libcuda_error")) {
            free(out->error);
            out->error = xstrdup(arg);
        } else if (!strcmp(l, "driver_cuda")) {
            out->libcuda_loaded = 1;
            out->cuda_driver_version = atoi(arg);
        } else if (!strcmp(l, "init")) {
            out->libcuda_loaded = 1;
            out->init_result = atoi(arg);
        } else if (!strcmp(l, "gpu")) {
            int major = 0, minor = 0, used = 0;
            /* Compute capabilities are small; anything else is not a GPU libcuda described. */
            if (sscanf(arg, "%3d %3d %n", &major, &minor, &used) == 2 && major >= 0 &&
                major < 100 && minor >= 0 && minor < 10)
                add_device(out, arg + used, major, minor);
        } else if (!strcmp(l, "nvml_driver") && !out->driver_version && *arg) {
            out->driver_version = xstrdup(arg);
        }
        free(l);
        line = nl ? nl + 1 : NULL;
    }
}

int gpu_driver_max_cuda(const char *driver_version)
{
    struct version v;
    if (!driver_version || version_parse_strict(driver_version, &v) < 0)
        return 0;
    static const int table[][2] = {
        {580, 13000}, {575, 12090}, {570, 12080}, {560, 12060}, {555, 12050},
        {550, 12040}, {545, 12030}, {535, 12020}, {530, 12010}, {525, 12000},
        {520, 11080}, {515, 11070}, {510, 11060}, {495, 11050}, {470, 11040},
        {465, 11030}, {460, 11020}, {455, 11010}, {450, 11000},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (v.part[0] >= table[i][0])
            return table[i][1];
    return 0;
}

int gpu_min_driver_for_cuda_major(int cuda_major)
{
    switch (cuda_major) {
    case 13:
        return 580;
    case 12:
        return 525;
    case 11:
        return 450;
    default:
        return 0;
    }
}

int gpu_parse_fake(const char *spec, struct gpu_info *out)
{
    memset(out, 0, sizeof *out);
    out->fake = 1;
    if (!spec)
        return -1;
    if (!strcmp(spec, "none")) {
        out->error = xstrdup("no NVIDIA driver (SAGEBUILD_FAKE_GPUS=none)");
        return 0;
    }
    char *copy = xstrdup(spec);
    int rc = 0;
    char *save = NULL;
    char *driver = strtok_r(copy, ";", &save);
    if (!driver) {
        free(copy);
        return -1;
    }
    char *slash = strchr(driver, '/');
    struct version v;
    if (slash) {
        *slash++ = '\0';
        if (version_parse_strict(slash, &v) < 0 || v.nparts < 2 || v.part[0] > 999 ||
            v.part[1] > 99)
            rc = -1;
        else
            out->cuda_driver_version = v.part[0] * 1000 + v.part[1] * 10;
    }
    if (version_parse_strict(driver, &v) < 0)
        rc = -1;
    out->libcuda_loaded = 1;
    out->driver_version = xstrdup(driver);
    if (!slash)
        out->cuda_driver_version = gpu_driver_max_cuda(driver);
    for (char *g = strtok_r(NULL, ";", &save); g && rc == 0; g = strtok_r(NULL, ";", &save)) {
        char *colon = strrchr(g, ':');
        struct version cc;
        if (!colon || colon == g || version_parse_strict(colon + 1, &cc) < 0 || cc.nparts != 2 ||
            cc.part[0] > 99 || cc.part[1] > 9) {
            rc = -1;
            break;
        }
        *colon = '\0';
        add_device(out, g, cc.part[0], cc.part[1]);
    }
    if (out->count == 0)
        out->init_result = 100; /* CUDA_ERROR_NO_DEVICE, as a real driver says */
    free(copy);
    if (rc < 0)
        gpu_info_free(out);
    return rc;
}

char *gpu_parse_kernel_module_version(const char *text)
{
    const char *p = text ? strstr(text, "Kernel Module") : NULL;
    if (!p)
        return NULL;
    p += strlen("Kernel Module");
    /* The open modules say "Open Kernel Module for x86_64  580.65.06  Release Build ...". */
    for (; *p && *p != '\n'; p++) {
        if (!isdigit((unsigned char)*p) || (p[-1] != ' ' && p[-1] != '\t'))
            continue;
        const char *e = p;
        while (isdigit((unsigned char)*e) || *e == '.')
            e++;
        if (memchr(p, '.', (size_t)(e - p)))
            return xstrndup(p, (size_t)(e - p));
    }
    return NULL;
}

int probe_gpu(int timeout_ms, struct gpu_info *out)
{
    memset(out, 0, sizeof *out);
    const char *fake = getenv("SAGEBUILD_FAKE_GPUS");
    if (fake && *fake) {
        if (gpu_parse_fake(fake, out) < 0) {
            memset(out, 0, sizeof *out);
            out->fake = 1;
            out->error = xasprintf("SAGEBUILD_FAKE_GPUS='%s' is malformed", fake);
            return -1;
        }
        return 0;
    }
    char *proc_text = fs_read_file("/proc/driver/nvidia/version", 4096, NULL);
    out->kernel_module_version = gpu_parse_kernel_module_version(proc_text);
    free(proc_text);

    struct child_args args = {getenv("SAGEBUILD_LIBCUDA"), getenv("SAGEBUILD_LIBNVML")};
    if (!args.libcuda || !*args.libcuda)
        args.libcuda = "libcuda.so.1";
    if (!args.libnvml || !*args.libnvml)
        args.libnvml = "libnvidia-ml.so.1";
    /* nvmlInit costs tens to hundreds of ms on big machines; /proc already has the version
     * (and cuInit reports a library/module mismatch itself, as 803). */
    if (out->kernel_module_version && !getenv("SAGEBUILD_LIBNVML"))
        args.libnvml = NULL;
    struct proc_opts opts = {.timeout_ms = timeout_ms > 0 ? timeout_ms : GPU_PROBE_TIMEOUT_MS,
                             .max_output = 1 << 16};
    struct proc_result r;
    proc_run_fn(gpu_child, &args, &opts, &r);
    out->elapsed_ms = r.elapsed_ms;
    gpu_parse_child_output(r.out, out);
    int rc = 0;
    if (r.timed_out || r.signaled) {
        char *why = proc_describe(&r);
        out->timed_out = r.timed_out;
        out->crashed = !r.timed_out;
        free(out->error);
        out->error = xasprintf("the driver probe (%s) %s", args.libcuda, why);
        free(why);
        rc = -1;
    }
    proc_result_free(&r);
    if (!out->driver_version && out->kernel_module_version)
        out->driver_version = xstrdup(out->kernel_module_version);
    return rc;
}

void gpu_info_free(struct gpu_info *g)
{
    for (int i = 0; i < g->count; i++)
        free(g->devices[i].name);
    free(g->devices);
    free(g->driver_version);
    free(g->kernel_module_version);
    free(g->error);
    memset(g, 0, sizeof *g);
}
