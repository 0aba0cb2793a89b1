#include "probe/resources.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/strbuf.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int meminfo_field(const char *text, const char *name, long long *kb)
{
    size_t nl = strlen(name);
    for (const char *line = text; line && *line;) {
        if (!strncmp(line, name, nl) && line[nl] == ':') {
            long long v;
            if (sscanf(line + nl + 1, " %lld", &v) == 1 && v >= 0) {
                *kb = v;
                return 0;
            }
        }
        const char *next = strchr(line, '\n');
        line = next ? next + 1 : NULL;
    }
    return -1;
}

int resources_parse_meminfo(const char *text, long long *avail_kb, long long *total_kb)
{
    *avail_kb = *total_kb = -1;
    if (!text)
        return -1;
    meminfo_field(text, "MemTotal", total_kb);
    return meminfo_field(text, "MemAvailable", avail_kb);
}

static int usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void probe_resources(const char *disk_path, struct resources *out)
{
    memset(out, 0, sizeof *out);
    out->cores = usable_cores();
    char *meminfo = fs_read_file("/proc/meminfo", 1 << 16, NULL);
    resources_parse_meminfo(meminfo, &out->mem_avail_kb, &out->mem_total_kb);
    free(meminfo);
    out->disk_path = xstrdup(disk_path ? disk_path : ".");
    struct statvfs vfs;
    out->disk_free_bytes =
        statvfs(out->disk_path, &vfs) == 0 ? (long long)vfs.f_bavail * (long long)vfs.f_frsize : -1;
    out->ninja_path = fs_which("ninja");
    if (!out->ninja_path)
        return;
    const char *argv[] = {out->ninja_path, "--version", NULL};
    struct proc_opts opts = {.timeout_ms = 5000, .max_output = 1024};
    struct proc_result r;
    if (proc_run(argv, &opts, &r) == 0 && r.out_len) {
        size_t n = strcspn(r.out, "\r\n");
        out->ninja_version = xstrndup(r.out, n);
    } else {
        char *why = proc_describe(&r);
        out->ninja_error = xasprintf("%s --version %s", out->ninja_path, why);
        free(why);
    }
    proc_result_free(&r);
}

void resources_free(struct resources *r)
{
    free(r->disk_path);
    free(r->ninja_path);
    free(r->ninja_version);
    free(r->ninja_error);
    memset(r, 0, sizeof *r);
}
