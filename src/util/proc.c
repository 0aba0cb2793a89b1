#include "util/proc.h"
#include "util/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Children run in process groups of their own (so a timeout can kill a whole tree), which also
 * keeps them out of the terminal's Ctrl-C and out of a `timeout` or service manager's SIGTERM
 * to sagebuild. So while children run, SIGINT, SIGTERM and SIGHUP are caught, sent on to every
 * live child group, the groups are waited for (SIGKILL after PROC_INTERRUPT_GRACE_MS), and
 * then the signal is delivered again with the disposition sagebuild had before: by default
 * sagebuild dies of it, after its children. */
static long now_ms(void);
#define PROC_INTERRUPT_GRACE_MS 5000
#define PROC_MAX_LIVE 16
static const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NFORWARDED ((int)(sizeof forwarded_signals / sizeof forwarded_signals[0]))
static volatile pid_t live_groups[PROC_MAX_LIVE];
static volatile sig_atomic_t pending_signal;
static struct sigaction saved_actions[NFORWARDED];
static int live_count; /* children being supervised; the handler is ours while > 0 */

static void forward_signal(int sig)
{
    int saved_errno = errno;
    pending_signal = sig;
    for (int i = 0; i < PROC_MAX_LIVE; i++)
        if (live_groups[i] > 0)
            kill(-live_groups[i], sig);
    errno = saved_errno;
}

static void block_forwarded(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < NFORWARDED; i++)
        sigaddset(&set, forwarded_signals[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

/* Called with the forwarded signals blocked. */
static void track_child(pid_t pid)
{
    if (live_count++ == 0) {
        pending_signal = 0;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = forward_signal;
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < NFORWARDED; i++) {
            sigaction(forwarded_signals[i], NULL, &saved_actions[i]);
            /* ignored on entry (SIGINT of a shell's background job, nohup's SIGHUP): the
             * children inherit that too, and nothing is passed on */
            if (saved_actions[i].sa_handler != SIG_IGN)
                sigaction(forwarded_signals[i], &sa, NULL);
        }
    }
    for (int i = 0; i < PROC_MAX_LIVE; i++)
        if (live_groups[i] == 0) {
            live_groups[i] = pid;
            break;
        }
}

/* The child is reaped: stop forwarding to it; the last one out restores the old dispositions
 * and re-delivers a signal that came meanwhile. */
static void untrack_child(pid_t pid)
{
    sigset_t old;
    block_forwarded(&old);
    for (int i = 0; i < PROC_MAX_LIVE; i++)
        if (live_groups[i] == pid)
            live_groups[i] = 0;
    int sig = 0;
    if (--live_count == 0) {
        for (int i = 0; i < NFORWARDED; i++)
            sigaction(forwarded_signals[i], &saved_actions[i], NULL);
        sig = pending_signal;
        pending_signal = 0;
    }
    if (sig)
        raise(sig); /* stays pending until the mask is restored */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* After an interruption or a timeout nothing of the child's group may outlive it: whatever is
 * left (orphans the child did not wait for) is killed, and waited for until it is gone. */
static void sweep_group(pid_t pgid)
{
    if (kill(-pgid, 0) < 0)
        return;
    kill(-pgid, SIGKILL);
    long until = now_ms() + 2000;
    while (kill(-pgid, 0) == 0 && now_ms() < until) {
        while (waitpid(-pgid, NULL, WNOHANG) > 0)
            ;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void apply_env(const char *const *env_set)
{
    for (; env_set && *env_set; env_set++) {
        const char *eq = strchr(*env_set, '=');
        if (!eq) {
            unsetenv(*env_set);
            continue;
        }
        char name[256];
        size_t n = (size_t)(eq - *env_set);
        if (n >= sizeof name)
            continue;
        memcpy(name, *env_set, n);
        name[n] = '\0';
        setenv(name, eq + 1, 1);
    }
}

struct capture {
    int fd;
    struct strbuf buf;
    size_t limit;
};

static void drain(struct capture *c)
{
    char chunk[8192];
    ssize_t n = read(c->fd, chunk, sizeof chunk);
    if (n > 0) {
        size_t room = c->buf.len < c->limit ? c->limit - c->buf.len : 0;
        sb_add(&c->buf, chunk, (size_t)n < room ? (size_t)n : room);
        return;
    }
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(c->fd);
        c->fd = -1;
    }
}

/* Waits at most wait_ms for output on the open pipes and reads what came. The number of pipes
 * that were open (0: none, nothing waited for), or -1 when poll failed. */
static int poll_captures(struct capture *cap, int ncap, long wait_ms)
{
    struct pollfd pfd[2];
    int n = 0;
    for (int i = 0; i < ncap; i++)
        if (cap[i].fd >= 0) {
            pfd[n].fd = cap[i].fd;
            pfd[n].events = POLLIN;
            n++;
        }
    if (n == 0)
        return 0;
    int r = poll(pfd, (nfds_t)n, (int)wait_ms);
    if (r < 0 && errno != EINTR)
        return -1;
    for (int i = 0, k = 0; i < ncap; i++) {
        if (cap[i].fd < 0)
            continue;
        if (r > 0 && (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
            drain(&cap[i]);
        k++;
    }
    return n;
}

/* After the watch: the child reaped (its group killed first on a timeout), what is left of the
 * group swept, the pipes closed, and how it ended into res. */
static void reap(pid_t pid, int status, int reaped, struct capture *cap, int ncap,
                 struct proc_result *res, long start)
{
    if (!reaped) {
        if (res->timed_out) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
        }
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    if (res->timed_out || res->interrupted || pending_signal)
        sweep_group(pid);
    for (int i = 0; i < ncap; i++)
        if (cap[i].fd >= 0)
            close(cap[i].fd);
    if (WIFEXITED(status)) {
        res->exited = !res->timed_out;
        res->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        res->signaled = 1;
        res->term_signal = WTERMSIG(status);
    }
    res->elapsed_ms = now_ms() - start;
}

/* The shared parent side: read both pipes until EOF or the deadline, then reap the child
 * (killing its whole process group on timeout so grandchildren such as cicc die too). */
static void supervise(pid_t pid, struct capture *cap, int ncap, const struct proc_opts *o,
                      struct proc_result *res, long start)
{
    int timeout = o && o->timeout_ms > 0 ? o->timeout_ms : PROC_DEFAULT_TIMEOUT_MS;
    long deadline = start + timeout;
    long kill_at = 0; /* after a forwarded signal: when the group gets SIGKILL */
    int tick_ms = o && o->tick_ms > 0 ? o->tick_ms : 250;
    long next_tick = start;
    int status = 0;
    int reaped = 0;

    for (;;) {
        if (o && o->tick && now_ms() >= next_tick) {
            o->tick(o->tick_arg);
            next_tick = now_ms() + tick_ms;
        }
        if (pending_signal && !res->interrupted) {
            res->interrupted = 1;
            kill_at = now_ms() + PROC_INTERRUPT_GRACE_MS;
        }
        if (kill_at && now_ms() >= kill_at) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            kill_at = 0;
        }
        long left = deadline - now_ms();
        if (left <= 0) {
            res->timed_out = 1;
            break;
        }
        if (kill_at && kill_at - now_ms() < left)
            left = kill_at - now_ms() > 0 ? kill_at - now_ms() : 1;
        int nopen = poll_captures(cap, ncap, left > 200 ? 200 : left);
        if (nopen < 0)
            break;
        if (nopen == 0) {
            /* Pipes closed (or never captured): wait for the exit, still bounded. */
            if (waitpid(pid, &status, WNOHANG) == pid) {
                reaped = 1;
                break;
            }
            struct timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    reap(pid, status, reaped, cap, ncap, res, start);
}

/* The pipes of one spawn: the child's stdout and stderr (none with inherit_stdio; stderr goes
 * into stdout's with merge_stderr), and one that carries errno back when exec fails. */
struct spawn_pipes {
    int out[2], err[2], exec[2];
    int inherit, merge;
};

static int open_pipes(struct spawn_pipes *p)
{
    if (!p->inherit && (pipe(p->out) < 0 || (!p->merge && pipe(p->err) < 0)))
        return -1;
    if (pipe(p->exec) < 0)
        return -1;
    fcntl(p->exec[1], F_SETFD, FD_CLOEXEC);
    return 0;
}

static void close_pipes(struct spawn_pipes *p)
{
    for (int i = 0; i < 2; i++) {
        if (p->out[i] >= 0)
            close(p->out[i]);
        if (p->err[i] >= 0)
            close(p->err[i]);
        if (p->exec[i] >= 0)
            close(p->exec[i]);
    }
}

/* The child failed before running anything: errno goes to the parent through the exec pipe. */
_Noreturn static void child_fail(const struct spawn_pipes *p)
{
    int e = errno;
    if (write(p->exec[1], &e, sizeof e) < 0) {
    }
    _exit(127);
}

/* In the forked child: its own process group, the dispositions sagebuild had, stdin from
 * /dev/null, stdout and stderr into the pipes, then fn or argv. */
_Noreturn static void run_child(const char *const argv[], proc_child_fn fn, void *arg,
                                const struct proc_opts *o, const struct spawn_pipes *p,
                                const sigset_t *old_mask)
{
    setpgid(0, 0);
    if (live_count > 0) /* another child is live: ours is installed, the child gets back
                           what sagebuild had before */
        for (int i = 0; i < NFORWARDED; i++)
            sigaction(forwarded_signals[i], &saved_actions[i], NULL);
    pthread_sigmask(SIG_SETMASK, old_mask, NULL);
    close(p->exec[0]);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    if (!p->inherit) {
        dup2(p->out[1], 1);
        dup2(p->merge ? p->out[1] : p->err[1], 2);
        close(p->out[0]);
        close(p->out[1]);
        if (!p->merge) {
            close(p->err[0]);
            close(p->err[1]);
        }
    }
    if (o && o->cwd && chdir(o->cwd) < 0)
        child_fail(p);
    if (o)
        apply_env(o->env_set);
    if (fn) {
        close(p->exec[1]);
        /* A crash in the probe must kill the child plainly, whatever handlers the parent
         * (a test harness, a sanitizer) installed, so the parent sees the signal. */
        const int crash_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGPIPE};
        for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
            signal(crash_signals[i], SIG_DFL);
        _exit(fn(arg, 1) & 0xff);
    }
    execvp(argv[0], (char *const *)argv);
    child_fail(p);
}

/* In the parent: the read ends of the child's output pipes, as captures. Their number. */
static int open_captures(struct spawn_pipes *p, struct capture cap[2], size_t limit)
{
    if (p->inherit)
        return 0;
    int ncap = 0;
    int *ends[2] = {p->out, p->merge ? NULL : p->err};
    for (int i = 0; i < 2; i++) {
        if (!ends[i])
            continue;
        close(ends[i][1]);
        cap[ncap].fd = ends[i][0];
        cap[ncap].buf = (struct strbuf)STRBUF_INIT;
        cap[ncap].limit = limit;
        ncap++;
    }
    return ncap;
}

static int spawn(const char *const argv[], proc_child_fn fn, void *arg, const struct proc_opts *o,
                 struct proc_result *res)
{
    memset(res, 0, sizeof *res);
    struct spawn_pipes p = {
        {-1, -1}, {-1, -1}, {-1, -1}, o && o->inherit_stdio, o && o->merge_stderr};
    size_t limit = o && o->max_output ? o->max_output : PROC_DEFAULT_MAX_OUTPUT;
    long start = now_ms();
    if (open_pipes(&p) < 0)
        goto fail;

    fflush(stdout);
    fflush(stderr);
    /* A signal between fork and tracking would miss the new group: hold them until then. */
    sigset_t old_mask;
    block_forwarded(&old_mask);
    pid_t pid = fork();
    if (pid < 0) {
        pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
        goto fail;
    }
    if (pid == 0)
        run_child(argv, fn, arg, o, &p, &old_mask);
    setpgid(pid, pid); /* also here, so the group exists before any kill(-pid) */
    track_child(pid);
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    close(p.exec[1]);
    int child_errno = 0;
    ssize_t got;
    while ((got = read(p.exec[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR)
        ;
    close(p.exec[0]);

    struct capture cap[2];
    int ncap = open_captures(&p, cap, limit);
    supervise(pid, cap, ncap, o, res, start);
    untrack_child(pid);
    res->started = got != (ssize_t)sizeof child_errno;
    if (!res->started) {
        res->spawn_errno = child_errno;
        res->exited = 0;
    }
    res->out = ncap > 0 ? sb_detach(&cap[0].buf) : xstrdup("");
    res->out_len = strlen(res->out);
    res->err = ncap > 1 ? sb_detach(&cap[1].buf) : xstrdup("");
    res->err_len = strlen(res->err);
    return res->started && res->exited && res->exit_code == 0 ? 0 : -1;

fail:
    res->spawn_errno = errno;
    close_pipes(&p);
    res->out = xstrdup("");
    res->err = xstrdup("");
    return -1;
}

int proc_run(const char *const argv[], const struct proc_opts *opts, struct proc_result *res)
{
    return spawn(argv, NULL, NULL, opts, res);
}

int proc_run_fn(proc_child_fn fn, void *arg, const struct proc_opts *opts, struct proc_result *res)
{
    return spawn(NULL, fn, arg, opts, res);
}

void proc_result_free(struct proc_result *res)
{
    free(res->out);
    free(res->err);
    res->out = res->err = NULL;
}

char *proc_describe(const struct proc_result *res)
{
    if (!res->started)
        return xasprintf("could not run: %s", strerror(res->spawn_errno));
    if (res->timed_out)
        return xasprintf("timed out after %.1f s and was killed", res->elapsed_ms / 1000.0);
    if (res->signaled)
        return xasprintf("killed by signal %d (%s)", res->term_signal, strsignal(res->term_signal));
    return xasprintf("exited with status %d", res->exit_code);
}
