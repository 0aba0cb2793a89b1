#include "progress.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_TAIL_BYTES 16384

/* "[3/15] rest" → 3, 15 and rest; 0 when the line does not start so. */
static int ninja_step(const char *line, size_t len, int *step, int *total, const char **rest)
{
    int a = 0, b = 0, used = 0;
    char buf[64];
    size_t n = len < sizeof buf - 1 ? len : sizeof buf - 1;
    memcpy(buf, line, n);
    buf[n] = '\0';
    if (sscanf(buf, "[%d/%d]%n", &a, &b, &used) != 2 || used <= 0 || a < 0 || b <= 0 || a > b)
        return 0;
    *step = a;
    *total = b;
    *rest = line + used;
    return 1;
}

/* "[ 42%] rest" → 42 and rest. */
static int make_percent(const char *line, size_t len, int *percent, const char **rest)
{
    int pc = 0, used = 0;
    char buf[64];
    size_t n = len < sizeof buf - 1 ? len : sizeof buf - 1;
    memcpy(buf, line, n);
    buf[n] = '\0';
    if (sscanf(buf, "[%d%%]%n", &pc, &used) != 1 || used <= 0 || pc < 0 || pc > 100)
        return 0;
    *percent = pc;
    *rest = line + used;
    return 1;
}

/* "Building CUDA object CMakeFiles/sageattn.dir/src/attn/attn_fp16.cu.o" → the source file
 * "src/attn/attn_fp16.cu"; anything else stays as CMake wrote it. */
static void describe(const char *rest, size_t len, char *out, size_t cap)
{
    while (len && (*rest == ' ' || *rest == '\t')) {
        rest++;
        len--;
    }
    while (len && (rest[len - 1] == '\r' || rest[len - 1] == ' '))
        len--;
    const char *obj = NULL;
    for (const char *p = rest; p + 8 <= rest + len; p++)
        if (!strncmp(p, " object ", 8))
            obj = p + 8;
    if (obj) {
        size_t olen = (size_t)(rest + len - obj);
        const char *dir = NULL;
        for (const char *p = obj; p + 5 <= obj + olen; p++)
            if (!strncmp(p, ".dir/", 5))
                dir = p + 5;
        if (dir) {
            olen -= (size_t)(dir - obj);
            obj = dir;
        }
        if (olen > 2 && !strncmp(obj + olen - 2, ".o", 2))
            olen -= 2;
        rest = obj;
        len = olen;
    }
    size_t n = len < cap - 1 ? len : cap - 1;
    memcpy(out, rest, n);
    out[n] = '\0';
}

int build_progress_parse(const char *text, size_t len, struct build_progress *p)
{
    memset(p, 0, sizeof *p);
    p->percent = -1;
    if (!text)
        return 0;
    /* from the last line backwards: the newest step wins */
    const char *end = text + len;
    while (end > text) {
        const char *start = end;
        while (start > text && start[-1] != '\n')
            start--;
        size_t l = (size_t)(end - start);
        const char *rest;
        int step, total, percent;
        if (ninja_step(start, l, &step, &total, &rest)) {
            p->step = step;
            p->total = total;
            describe(rest, (size_t)(end - rest), p->what, sizeof p->what);
            return 1;
        }
        if (make_percent(start, l, &percent, &rest)) {
            p->percent = percent;
            describe(rest, (size_t)(end - rest), p->what, sizeof p->what);
            return 1;
        }
        end = start > text ? start - 1 : text;
    }
    return 0;
}

char *build_progress_line(const char *stage, const struct build_progress *p, double elapsed_s,
                          int width)
{
    long secs = elapsed_s > 0 ? (long)elapsed_s : 0;
    char clock[32];
    snprintf(clock, sizeof clock, "%ld:%02ld", secs / 60, secs % 60);
    struct strbuf sb = STRBUF_INIT;
    sb_adds(&sb, stage);
    if (p && p->total)
        sb_addf(&sb, " [%d/%d]", p->step, p->total);
    else if (p && p->percent >= 0)
        sb_addf(&sb, " [%3d%%]", p->percent);
    /* the clock always shows: cut the description to what is left of the width */
    size_t room = width > 0 && (size_t)width > sb.len + strlen(clock) + 3
                      ? (size_t)width - sb.len - strlen(clock) - 3
                      : 0;
    if (p && p->what[0] && room > 3) {
        size_t wl = strlen(p->what);
        if (wl <= room)
            sb_addf(&sb, " %s", p->what);
        else /* keep the end: the file name is what tells files apart */
            sb_addf(&sb, " ...%s", p->what + wl - (room - 3));
    }
    sb_addf(&sb, "  %s", clock);
    char *line = sb_detach(&sb);
    if (width > 0 && strlen(line) > (size_t)width)
        line[width] = '\0';
    return line;
}

char *build_progress_log_path(const char *out_dir)
{
    char *dir = fs_join(out_dir, "cmake-build");
    char *path = fs_join(dir, "build-in-progress.log");
    free(dir);
    return path;
}

int build_progress_read(const char *path, struct build_progress *p)
{
    char buf[PROGRESS_TAIL_BYTES];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    memset(p, 0, sizeof *p);
    p->percent = -1;
    if (fd < 0)
        return 0;
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > (off_t)sizeof buf ? size - (off_t)sizeof buf : 0;
    ssize_t n = size > 0 ? pread(fd, buf, sizeof buf, from) : 0;
    close(fd);
    if (n <= 0)
        return 0;
    return build_progress_parse(buf, (size_t)n, p);
}
