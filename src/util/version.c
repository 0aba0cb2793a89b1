#include "util/version.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static int parse_at(const char *p, struct version *v, const char **end)
{
    memset(v, 0, sizeof *v);
    if (!isdigit((unsigned char)*p))
        return -1;
    while (v->nparts < 4 && isdigit((unsigned char)*p)) {
        long n = 0;
        while (isdigit((unsigned char)*p)) {
            if (n < INT_MAX / 10)
                n = n * 10 + (*p - '0');
            else
                n = INT_MAX;
            p++;
        }
        v->part[v->nparts++] = (int)n;
        if (*p == '.' && isdigit((unsigned char)p[1]))
            p++;
        else
            break;
    }
    if (end)
        *end = p;
    return 0;
}

int version_parse(const char *s, struct version *v)
{
    memset(v, 0, sizeof *v);
    if (!s)
        return -1;
    for (const char *p = s; *p; p++) {
        if (isdigit((unsigned char)*p))
            return parse_at(p, v, NULL);
    }
    return -1;
}

int version_parse_strict(const char *s, struct version *v)
{
    const char *end = NULL;
    memset(v, 0, sizeof *v);
    if (!s)
        return -1;
    if (*s == 'v' || *s == 'V')
        s++;
    if (parse_at(s, v, &end) < 0 || *end != '\0') {
        memset(v, 0, sizeof *v);
        return -1;
    }
    return 0;
}

int version_cmp_n(const struct version *a, const struct version *b, int n)
{
    if (n <= 0 || n > 4)
        n = 4;
    for (int i = 0; i < n; i++)
        if (a->part[i] != b->part[i])
            return a->part[i] < b->part[i] ? -1 : 1;
    return 0;
}

int version_cmp(const struct version *a, const struct version *b)
{
    return version_cmp_n(a, b, 4);
}

const char *version_str(const struct version *v, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < v->nparts && off < len; i++) {
        int n = snprintf(buf + off, len - off, i ? ".%d" : "%d", v->part[i]);
        if (n < 0)
            break;
        off += (size_t)n;
    }
    return buf;
}

struct version version_from_cuda_int(int n)
{
    struct version v = {{0, 0, 0, 0}, 0};
    if (n <= 0)
        return v;
    v.part[0] = n / 1000;
    v.part[1] = (n % 1000) / 10;
    v.nparts = 2;
    return v;
}
