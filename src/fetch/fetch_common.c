#include "fetch_common.h"
#include "fetch/sources/resolve.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

void fetch_dl_opts_from(struct dl_opts *o, const char *timeout_env, const char *retries_env)
{
    long t = timeout_env && *timeout_env ? strtol(timeout_env, NULL, 10) : 0;
    if (t > 0 && t <= 3600) {
        o->stall_timeout = t;
        o->connect_timeout = t / 2 > 0 ? (t / 2 < 15 ? t / 2 : 15) : 1;
    }
    long r = retries_env && *retries_env ? strtol(retries_env, NULL, 10) : 0;
    if (r > 0 && r <= 20)
        o->retries = (int)r;
}

int fetch_parse_rate(const char *s, long *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 1)
        return -1;
    if (*end == 'k' || *end == 'K')
        v *= 1024, end++;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024, end++;
    if (*end && strcmp(end, "/s") && strcmp(end, "B/s"))
        return -1;
    if (v > (1LL << 30))
        return -1;
    *out = (long)v;
    return 0;
}

int fetch_parse_seconds(const char *s, long *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 0 || v > 7LL * 24 * 3600 || (*end && strcmp(end, "s")))
        return -1;
    *out = (long)v;
    return 0;
}

void fetch_dl_limits_from(struct dl_opts *o, const char *min_rate_env, const char *deadline_env)
{
    long v;
    if (fetch_parse_rate(min_rate_env, &v) == 0)
        o->min_rate = v;
    if (fetch_parse_seconds(deadline_env, &v) == 0)
        o->deadline = v;
}

void fetch_dl_opts(struct dl_opts *o, int offline, int progress)
{
    dl_opts_defaults(o);
    fetch_dl_opts_from(o, getenv("SAGEBUILD_TIMEOUT"), getenv("SAGEBUILD_RETRIES"));
    fetch_dl_limits_from(o, getenv("SAGEBUILD_MIN_RATE"), getenv("SAGEBUILD_DEADLINE"));
    o->offline = offline;
    o->progress = progress;
}

const char *fetch_machine_platform(void)
{
    struct utsname u;
    if (uname(&u) < 0)
        return NULL;
    return resolve_platform_for_machine(u.machine);
}

char *fetch_absolute(const char *path)
{
    if (path[0] == '/')
        return xstrdup(path);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return xstrdup(path);
    return fs_join(cwd, path);
}
