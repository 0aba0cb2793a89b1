#include "pypi_wheel.h"
#include "util/strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void wheel_name_free(struct wheel_name *w)
{
    free(w->project);
    free(w->version);
    free(w->build);
    free(w->python);
    free(w->abi);
    free(w->platform);
    memset(w, 0, sizeof *w);
}

int wheel_name_parse(const char *filename, struct wheel_name *w)
{
    memset(w, 0, sizeof *w);
    size_t n = strlen(filename);
    if (n < 5 || strcasecmp(filename + n - 4, ".whl"))
        return -1;
    char *stem = xstrndup(filename, n - 4);
    int dashes = 0;
    for (const char *p = stem; *p; p++)
        dashes += *p == '-';
    /* name-version[-build]-python-abi-platform: 4 or 5 dashes, no part empty. */
    char *parts[6];
    int np = 0, ok = dashes == 4 || dashes == 5;
    for (char *s = stem; ok && s; np++) {
        parts[np] = s;
        char *dash = strchr(s, '-');
        if (dash)
            *dash = '\0';
        ok = *s != '\0';
        s = dash ? dash + 1 : NULL;
    }
    if (ok) {
        w->project = xstrdup(parts[0]);
        w->version = xstrdup(parts[1]);
        w->build = np == 6 ? xstrdup(parts[2]) : NULL;
        w->python = xstrdup(parts[np - 3]);
        w->abi = xstrdup(parts[np - 2]);
        w->platform = xstrdup(parts[np - 1]);
    }
    free(stem);
    return ok ? 0 : -1;
}

int pep440_parse(const char *s, struct pep440 *v)
{
    memset(v, 0, sizeof *v);
    v->post = -1;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == 'v' || *s == 'V')
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    while (isdigit((unsigned char)*s)) {
        long part = 0;
        while (isdigit((unsigned char)*s)) {
            if (part < 100000000)
                part = part * 10 + (*s - '0');
            s++;
        }
        if (v->nrelease < PEP440_MAX_PARTS)
            v->release[v->nrelease] = (int)part;
        v->nrelease++;
        if (*s == '.' && isdigit((unsigned char)s[1]))
            s++;
        else
            break;
    }
    if (v->nrelease > PEP440_MAX_PARTS)
        return -1;
    /* What follows: [.-_]?(a|b|c|rc|alpha|beta|pre|preview|dev)N → pre-release;
     * [.-_]?(post|rev|r)N or -N → post-release; +local is ignored. */
    while (*s && *s != '+') {
        const char *t = s;
        if (*t == '.' || *t == '-' || *t == '_')
            t++;
        if (!strncasecmp(t, "post", 4) || !strncasecmp(t, "rev", 3) ||
            ((*t == 'r' || *t == 'R') && isdigit((unsigned char)t[1]))) {
            t += !strncasecmp(t, "post", 4) ? 4 : !strncasecmp(t, "rev", 3) ? 3 : 1;
            if (*t == '.' || *t == '-' || *t == '_')
                t++;
            v->post = strtol(t, NULL, 10);
            while (isdigit((unsigned char)*t))
                t++;
        } else if (*s == '-' && isdigit((unsigned char)s[1])) {
            v->post = strtol(s + 1, NULL, 10);
            t = s + 1;
            while (isdigit((unsigned char)*t))
                t++;
        } else if (isalpha((unsigned char)*t)) {
            v->pre = 1;
            while (isalpha((unsigned char)*t))
                t++;
            if (*t == '.' || *t == '-' || *t == '_')
                t++;
            while (isdigit((unsigned char)*t))
                t++;
        } else {
            return -1;
        }
        s = t;
    }
    return 0;
}

int pep440_cmp(const struct pep440 *a, const struct pep440 *b)
{
    int n = a->nrelease > b->nrelease ? a->nrelease : b->nrelease;
    for (int i = 0; i < n && i < PEP440_MAX_PARTS; i++) {
        int x = i < a->nrelease ? a->release[i] : 0;
        int y = i < b->nrelease ? b->release[i] : 0;
        if (x != y)
            return x < y ? -1 : 1;
    }
    if (a->pre != b->pre)
        return a->pre ? -1 : 1;
    if (a->post != b->post)
        return a->post < b->post ? -1 : 1;
    return 0;
}

int pypi_version_serves(const char *have, const char *want)
{
    struct pep440 h, w;
    if (pep440_parse(have, &h) < 0 || pep440_parse(want, &w) < 0 || h.pre)
        return 0;
    if (h.nrelease < w.nrelease)
        return 0;
    for (int i = 0; i < w.nrelease; i++)
        if (h.release[i] != w.release[i])
            return 0;
    return w.post < 0 || h.post == w.post;
}

const char *pypi_arch_for_platform(const char *redist_platform)
{
    if (!redist_platform)
        return NULL;
    if (!strcmp(redist_platform, "linux-x86_64"))
        return "x86_64";
    if (!strcmp(redist_platform, "linux-sbsa") || !strcmp(redist_platform, "linux-aarch64"))
        return "aarch64";
    return NULL;
}

/* One tag: 2 when it is a manylinux tag for arch that this glibc runs, 1 for "any", else 0. */
static int tag_score(const char *tag, size_t len, const char *arch, int gmaj, int gmin)
{
    if (len == 3 && !strncmp(tag, "any", 3))
        return 1;
    size_t al = strlen(arch);
    if (len <= al + 1 || tag[len - al - 1] != '_' || strncmp(tag + len - al, arch, al))
        return 0;
    size_t head = len - al - 1; /* "manylinux2014", "manylinux_2_17" */
    int need_maj = 0, need_min = 0;
    static const struct {
        const char *legacy;
        int maj, min;
    } aliases[] = {{"manylinux1", 2, 5}, {"manylinux2010", 2, 12}, {"manylinux2014", 2, 17}};
    int known = 0;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (head == strlen(aliases[i].legacy) && !strncmp(tag, aliases[i].legacy, head)) {
            need_maj = aliases[i].maj;
            need_min = aliases[i].min;
            known = 1;
        }
    if (!known) {
        if (head < 14 || strncmp(tag, "manylinux_", 10))
            return 0;
        char *h = xstrndup(tag + 10, head - 10);
        char *end = NULL;
        long maj = strtol(h, &end, 10);
        long min = (end && *end == '_') ? strtol(end + 1, &end, 10) : -1;
        known = end && *end == '\0' && maj >= 0 && min >= 0 && maj < 1000 && min < 1000;
        need_maj = (int)maj;
        need_min = (int)min;
        free(h);
        if (!known)
            return 0;
    }
    if (gmaj > 0 && (need_maj > gmaj || (need_maj == gmaj && need_min > gmin)))
        return 0;
    return 2;
}

int wheel_platform_score(const char *platform_tags, const char *arch, int glibc_major,
                         int glibc_minor)
{
    int best = 0;
    const char *s = platform_tags;
    while (s && *s) {
        size_t len = strcspn(s, ".");
        int sc = tag_score(s, len, arch, glibc_major, glibc_minor);
        if (sc > best)
            best = sc;
        s += len;
        s += *s == '.';
    }
    return best;
}

struct candidate {
    int index;
    int yanked, exact, score;
    struct pep440 version;
    const char *filename;
};

/* Better first. */
static int cand_better(const struct candidate *a, const struct candidate *b)
{
    if (a->yanked != b->yanked)
        return a->yanked < b->yanked;
    if (a->exact != b->exact)
        return a->exact > b->exact;
    int c = pep440_cmp(&a->version, &b->version);
    if (c)
        return c > 0;
    if (a->score != b->score)
        return a->score > b->score;
    return strcmp(a->filename, b->filename) < 0;
}

#define VERSIONS_SHOWN 24 /* an index may list 100 000: the message names the first few */

static void add_version_seen(struct strbuf *seen, int *nseen, const char *v)
{
    /* Space-separated, no duplicates; at most VERSIONS_SHOWN, so a linear scan is enough. */
    const char *s = sb_str(seen);
    size_t vl = strlen(v);
    while (*s) {
        size_t l = strcspn(s, " ");
        if (l == vl && !strncmp(s, v, l))
            return;
        s += l;
        s += *s == ' ';
    }
    if (*nseen == VERSIONS_SHOWN)
        sb_adds(seen, " ...");
    if (*nseen < VERSIONS_SHOWN)
        sb_addf(seen, "%s%s", *nseen ? " " : "", v);
    (*nseen)++;
}

int pypi_choose(const struct pypi_listing *l, const struct pypi_want *w, int *yanked, char **why)
{
    char *want_name = pypi_normalize(w->project);
    struct candidate best = {-1, 0, 0, 0, {{0}, 0, 0, -1}, NULL};
    struct strbuf seen = STRBUF_INIT;
    int nseen = 0, nwheels = 0;
    for (int i = 0; i < l->nfiles; i++) {
        struct wheel_name wn;
        if (wheel_name_parse(l->files[i].filename, &wn) < 0)
            continue;
        char *name = pypi_normalize(wn.project);
        int same = !strcmp(name, want_name);
        free(name);
        struct candidate c = {i, l->files[i].yanked, 0, 0, {{0}, 0, 0, -1}, l->files[i].filename};
        if (same) {
            nwheels++;
            c.score = wheel_platform_score(wn.platform, w->arch, w->glibc_major, w->glibc_minor);
            if (c.score && pep440_parse(wn.version, &c.version) == 0 && !c.version.pre)
                add_version_seen(&seen, &nseen, wn.version);
        }
        if (same && c.score && pypi_version_serves(wn.version, w->version) &&
            pep440_parse(wn.version, &c.version) == 0) {
            struct pep440 want;
            c.exact = pep440_parse(w->version, &want) == 0 && pep440_cmp(&c.version, &want) == 0;
            if (best.index < 0 || cand_better(&c, &best))
                best = c;
        }
        wheel_name_free(&wn);
    }
    free(want_name);
    if (best.index >= 0) {
        if (yanked)
            *yanked = best.yanked;
        sb_free(&seen);
        return best.index;
    }
    if (nwheels == 0)
        *why = xasprintf("the index lists no wheel of %s", w->project);
    else if (nseen == 0)
        *why = xasprintf("the index lists %d wheel(s) of %s, none for Linux %s%s", nwheels,
                         w->project, w->arch, w->glibc_major ? " with this machine's glibc" : "");
    else
        *why = xasprintf("the index has no %s %s for Linux %s (versions it lists for it: %s)",
                         w->project, w->version, w->arch, sb_str(&seen));
    sb_free(&seen);
    return -1;
}
