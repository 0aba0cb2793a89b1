#include "run.h"
#include "plan.h"
#include "util/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct log_child {
    char *const *argv;
    const char *log_path;
};

static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Runs in the forked child: output goes to the log, then the step replaces the child. */
static int exec_into_log(void *arg, int out_fd)
{
    (void)out_fd;
    const struct log_child *c = arg;
    int fd = open(c->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return 126;
    char *line = build_argv_line(c->argv);
    char *head = xasprintf("$ %s\n", line);
    write_all(fd, head, strlen(head));
    if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
        return 126;
    execvp(c->argv[0], c->argv);
    char *why = xasprintf("sagebuild: cannot run %s: %s\n", c->argv[0], strerror(errno));
    write_all(2, why, strlen(why));
    return 127;
}

static double children_cpu(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

int build_run_step(char *const *argv, const struct step_io *io, struct proc_result *res,
                   double *cpu_seconds)
{
    struct proc_opts o = {.timeout_ms = io->timeout_ms,
                          .max_output = 64 * 1024,
                          .tick = io->tick,
                          .tick_arg = io->tick_arg};
    double before = children_cpu();
    int rc;
    if (io->stream || !io->log_path) {
        o.inherit_stdio = 1;
        rc = proc_run((const char *const *)argv, &o, res);
    } else {
        struct log_child c = {argv, io->log_path};
        o.merge_stderr = 1;
        rc = proc_run_fn(exec_into_log, &c, &o, res);
        /* the child reports exec failures by exit status 127 (126: the log) */
        if (res->exited && (res->exit_code == 127 || res->exit_code == 126))
            rc = -1;
    }
    /* Every process of the step has been waited for by the time it returns (cmake waits for
     * ninja, ninja for nvcc), so RUSAGE_CHILDREN counts the whole tree. A step killed on
     * timeout leaves orphans that nobody waits for: their time is lost, not miscounted. */
    if (cpu_seconds)
        *cpu_seconds = children_cpu() - before;
    return rc;
}

const char *build_log_tail(const char *text, size_t len, int lines)
{
    if (!text || !len)
        return text ? text : "";
    const char *p = text + len;
    if (p > text && p[-1] == '\n')
        p--;
    while (p > text) {
        if (p[-1] == '\n' && --lines <= 0)
            break;
        p--;
    }
    return p;
}
