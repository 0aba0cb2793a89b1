#include "pypi_index.h"
#include "util/strbuf.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void pypi_listing_free(struct pypi_listing *l)
{
    for (int i = 0; i < l->nfiles; i++) {
        free(l->files[i].filename);
        free(l->files[i].url);
    }
    free(l->files);
    l->files = NULL;
    l->nfiles = l->cap = 0;
}

static struct pypi_file *listing_add(struct pypi_listing *l)
{
    l->files = xgrow(l->files, &l->cap, l->nfiles + 1, sizeof *l->files);
    struct pypi_file *f = &l->files[l->nfiles++];
    memset(f, 0, sizeof *f);
    f->size = -1;
    return f;
}

char *pypi_normalize(const char *name)
{
    struct strbuf b = STRBUF_INIT;
    int in_sep = 0;
    for (const char *p = name; *p; p++) {
        if (*p == '-' || *p == '_' || *p == '.') {
            in_sep = 1;
            continue;
        }
        if (in_sep && b.len)
            sb_adds(&b, "-");
        in_sep = 0;
        char c = (char)tolower((unsigned char)*p);
        sb_add(&b, &c, 1);
    }
    return sb_detach(&b);
}

char *pypi_project_url(const char *index_url, const char *project)
{
    size_t n = strlen(index_url);
    while (n && index_url[n - 1] == '/')
        n--;
    char *norm = pypi_normalize(project);
    char *url = xasprintf("%.*s/%s/", (int)n, index_url, norm);
    free(norm);
    return url;
}

/* ---- URL resolution ---- */

static size_t scheme_len(const char *s)
{
    if (!isalpha((unsigned char)s[0]))
        return 0;
    size_t i = 1;
    while (isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.')
        i++;
    return s[i] == ':' ? i : 0;
}

/* RFC 3986 §5.2.4: removes "." and ".." segments from an absolute path. */
static char *remove_dot_segments(const char *path)
{
    size_t n = strlen(path);
    char *out = xmalloc(n + 2);
    size_t o = 0;
    const char *p = path;
    while (*p) {
        if (!strncmp(p, "../", 3)) {
            p += 3;
        } else if (!strncmp(p, "./", 2)) {
            p += 2;
        } else if (!strncmp(p, "/./", 3)) {
            p += 2;
        } else if (!strcmp(p, "/.")) {
            out[o++] = '/';
            p += 2;
        } else if (!strncmp(p, "/../", 4) || !strcmp(p, "/..")) {
            p += 3;
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
            if (!*p)
                out[o++] = '/';
        } else if (!strcmp(p, ".") || !strcmp(p, "..")) {
            break;
        } else {
            size_t seg = 1;
            while (p[seg] && p[seg] != '/')
                seg++;
            memcpy(out + o, p, seg);
            o += seg;
            p += seg;
        }
    }
    out[o] = '\0';
    return out;
}

char *pypi_url_resolve(const char *base, const char *href)
{
    size_t hlen = strcspn(href, "#");
    char *ref = xstrndup(href, hlen);
    char *out;
    size_t bs = scheme_len(base);
    if (scheme_len(ref)) {
        out = ref;
        return out;
    }
    if (!bs) { /* no usable base: keep the reference as it is */
        return ref;
    }
    /* authority end of base: after "scheme://host[:port]" */
    const char *after_scheme = base + bs + 1;
    const char *path_start = after_scheme;
    if (!strncmp(after_scheme, "//", 2)) {
        path_start = after_scheme + 2;
        path_start += strcspn(path_start, "/?#");
    }
    if (!strncmp(ref, "//", 2)) {
        out = xasprintf("%.*s%s", (int)(bs + 1), base, ref);
    } else {
        size_t blen = strcspn(base, "?#");
        const char *path_end = base + blen;
        struct strbuf path = STRBUF_INIT;
        if (ref[0] == '/') {
            sb_adds(&path, ref);
        } else if (ref[0] == '\0') {
            sb_add(&path, path_start, (size_t)(path_end - path_start));
        } else if (ref[0] == '?') {
            sb_add(&path, path_start, (size_t)(path_end - path_start));
            sb_adds(&path, ref);
        } else {
            const char *last = path_end;
            while (last > path_start && last[-1] != '/')
                last--;
            if (last == path_start)
                sb_adds(&path, "/");
            else
                sb_add(&path, path_start, (size_t)(last - path_start));
            sb_adds(&path, ref);
        }
        size_t q = strcspn(sb_str(&path), "?");
        char *p = xstrndup(sb_str(&path), q);
        char *clean = remove_dot_segments(p);
        out = xasprintf("%.*s%s%s", (int)(path_start - base), base, clean, sb_str(&path) + q);
        free(clean);
        free(p);
        sb_free(&path);
    }
    free(ref);
    return out;
}

/* ---- HTML ---- */

static void add_codepoint(struct strbuf *b, unsigned long cp)
{
    char u[4];
    if (cp == 0 || cp > 0x10FFFF)
        cp = '?';
    if (cp < 0x80) {
        u[0] = (char)cp;
        sb_add(b, u, 1);
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        sb_add(b, u, 2);
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        sb_add(b, u, 3);
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        sb_add(b, u, 4);
    }
}

char *pypi_html_unescape(const char *s, size_t n)
{
    static const struct {
        const char *name;
        char c;
    } named[] = {{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
    struct strbuf b = STRBUF_INIT;
    sb_add(&b, "", 0);
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '&') {
            sb_add(&b, s + i, 1);
            continue;
        }
        size_t rest = n - i - 1;
        const char *r = s + i + 1;
        int done = 0;
        for (size_t k = 0; k < sizeof named / sizeof named[0] && !done; k++) {
            size_t kl = strlen(named[k].name);
            if (rest >= kl && !strncmp(r, named[k].name, kl)) {
                sb_add(&b, &named[k].c, 1);
                i += kl;
                done = 1;
            }
        }
        if (!done && rest >= 3 && r[0] == '#') {
            int hex = r[1] == 'x' || r[1] == 'X';
            size_t j = hex ? 2 : 1;
            unsigned long cp = 0;
            size_t digits = 0;
            while (j < rest && digits < 8 &&
                   (hex ? isxdigit((unsigned char)r[j]) : isdigit((unsigned char)r[j]))) {
                int d = isdigit((unsigned char)r[j]) ? r[j] - '0'
                                                     : tolower((unsigned char)r[j]) - 'a' + 10;
                cp = cp * (hex ? 16 : 10) + (unsigned long)d;
                j++;
                digits++;
            }
            if (digits && j < rest && r[j] == ';') {
                add_codepoint(&b, cp);
                i += j + 1;
                done = 1;
            }
        }
        if (!done)
            sb_add(&b, "&", 1);
    }
    return sb_detach(&b);
}

/* Case-insensitive search for needle in [p, end). */
static const char *find_ci(const char *p, const char *end, const char *needle)
{
    size_t nl = strlen(needle);
    for (; p + nl <= end; p++)
        if (!strncasecmp(p, needle, nl))
            return p;
    return NULL;
}

struct attr {
    const char *name;
    size_t nlen;
    const char *value; /* NULL when the attribute has no value */
    size_t vlen;
};

/* Reads the next attribute of a tag in [*p, end) (end points at '>'). 0 when none is left. */
static int next_attr(const char **p, const char *end, struct attr *a)
{
    const char *s = *p;
    while (s < end && (isspace((unsigned char)*s) || *s == '/'))
        s++;
    if (s >= end)
        return 0;
    a->name = s;
    while (s < end && !isspace((unsigned char)*s) && *s != '=' && *s != '/')
        s++;
    a->nlen = (size_t)(s - a->name);
    while (s < end && isspace((unsigned char)*s))
        s++;
    a->value = NULL;
    a->vlen = 0;
    if (s < end && *s == '=') {
        s++;
        while (s < end && isspace((unsigned char)*s))
            s++;
        if (s < end && (*s == '"' || *s == '\'')) {
            char q = *s++;
            a->value = s;
            while (s < end && *s != q)
                s++;
            a->vlen = (size_t)(s - a->value);
            if (s < end)
                s++;
        } else {
            a->value = s;
            while (s < end && !isspace((unsigned char)*s))
                s++;
            a->vlen = (size_t)(s - a->value);
        }
    }
    if (a->nlen == 0) /* a stray character: skip it so the loop advances */
        s++;
    *p = s;
    return 1;
}

static int attr_is(const struct attr *a, const char *name)
{
    return a->nlen == strlen(name) && !strncasecmp(a->name, name, a->nlen);
}

/* The end of the tag that starts at p ('<'): the next '>' outside quotes, or NULL. */
static const char *tag_end(const char *p, const char *end)
{
    char q = 0;
    for (; p < end; p++) {
        if (q) {
            if (*p == q)
                q = 0;
        } else if (*p == '"' || *p == '\'') {
            q = *p;
        } else if (*p == '>') {
            return p;
        }
    }
    return NULL;
}

static int is_hex64(const char *s, size_t n)
{
    if (n != 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

static void set_sha256(struct pypi_file *f, const char *hex, size_t n)
{
    if (!is_hex64(hex, n))
        return;
    for (size_t i = 0; i < 64; i++)
        f->sha256[i] = (char)tolower((unsigned char)hex[i]);
    f->sha256[64] = '\0';
}

/* The last path part of a URL (no query or fragment). */
static char *url_basename(const char *url)
{
    size_t n = strcspn(url, "?#");
    const char *s = url + n;
    while (s > url && s[-1] != '/')
        s--;
    return xstrndup(s, (size_t)(url + n - s));
}

static char *trimmed(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return pypi_html_unescape(s, n);
}

static void add_anchor(struct pypi_listing *out, const char *base, const char *href, int yanked,
                       const char *text, size_t tlen)
{
    struct pypi_file *f = listing_add(out);
    const char *frag = strchr(href, '#');
    if (frag && !strncasecmp(frag + 1, "sha256=", 7))
        set_sha256(f, frag + 8, strlen(frag + 8));
    f->url = pypi_url_resolve(base, href);
    f->yanked = yanked;
    char *name = trimmed(text, tlen);
    /* The anchor text must be the file name (PEP 503); fall back to the URL's when it is not
     * one (markup inside the anchor, or an empty text). */
    if (!*name || strchr(name, '<') || strchr(name, '/')) {
        free(name);
        name = url_basename(f->url);
    }
    f->filename = name;
}

void pypi_parse_html(const char *text, size_t len, const char *base_url, struct pypi_listing *out)
{
    memset(out, 0, sizeof *out);
    const char *end = text + len;
    char *base = xstrdup(base_url ? base_url : "");
    const char *p = text;
    while (p && p < end) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        if (!lt)
            break;
        if (end - lt >= 4 && !strncmp(lt, "<!--", 4)) {
            const char *close = find_ci(lt + 4, end, "-->");
            p = close ? close + 3 : end;
            continue;
        }
        const char *gt = tag_end(lt, end);
        if (!gt)
            break;
        const char *name = lt + 1;
        size_t nlen = 0;
        while (name + nlen < gt && isalpha((unsigned char)name[nlen]))
            nlen++;
        const char *ap = name + nlen;
        struct attr a;
        if (nlen == 4 && !strncasecmp(name, "base", 4)) {
            while (next_attr(&ap, gt, &a))
                if (attr_is(&a, "href") && a.value) {
                    char *h = pypi_html_unescape(a.value, a.vlen);
                    char *nb = pypi_url_resolve(base, h);
                    free(base);
                    base = nb;
                    free(h);
                }
        } else if (nlen == 1 && (*name == 'a' || *name == 'A')) {
            char *href = NULL;
            int yanked = 0;
            while (next_attr(&ap, gt, &a)) {
                if (attr_is(&a, "href") && a.value && !href)
                    href = pypi_html_unescape(a.value, a.vlen);
                else if (attr_is(&a, "data-yanked"))
                    yanked = 1;
            }
            const char *close = find_ci(gt + 1, end, "</a");
            const char *tend = close ? close : end;
            if (href && *href)
                add_anchor(out, base, href, yanked, gt + 1, (size_t)(tend - gt - 1));
            free(href);
            p = close ? close + 3 : end;
            continue;
        }
        p = gt + 1;
    }
    free(base);
}

/* ---- JSON ---- */

int pypi_is_json_type(const char *content_type)
{
    if (!content_type)
        return 0;
    while (isspace((unsigned char)*content_type))
        content_type++;
    const char *want = "application/vnd.pypi.simple.v1+json";
    size_t n = strlen(want);
    return !strncasecmp(content_type, want, n) &&
           (content_type[n] == '\0' || content_type[n] == ';' ||
            isspace((unsigned char)content_type[n]));
}

int pypi_parse_json(const char *text, size_t len, const char *base_url, struct pypi_listing *out,
                    char **err)
{
    memset(out, 0, sizeof *out);
    cJSON *doc = cJSON_ParseWithLength(text, len);
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        *err = xstrdup("not a JSON object");
        return -1;
    }
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "meta");
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(meta, "api-version");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(doc, "files");
    if (!cJSON_IsString(api) || !cJSON_IsArray(files)) {
        cJSON_Delete(doc);
        *err = xstrdup("not a PEP 691 project page (no meta.api-version or files)");
        return -1;
    }
    if (strtol(api->valuestring, NULL, 10) != 1) {
        *err = xasprintf("simple API version %s is not supported (major version 1 is)",
                         api->valuestring);
        cJSON_Delete(doc);
        return -1;
    }
    const cJSON *f;
    cJSON_ArrayForEach(f, files)
    {
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(f, "filename");
        const cJSON *url = cJSON_GetObjectItemCaseSensitive(f, "url");
        if (!cJSON_IsString(fn) || !cJSON_IsString(url) || !*url->valuestring)
            continue;
        struct pypi_file *pf = listing_add(out);
        pf->filename = xstrdup(fn->valuestring);
        pf->url = pypi_url_resolve(base_url ? base_url : "", url->valuestring);
        const cJSON *hashes = cJSON_GetObjectItemCaseSensitive(f, "hashes");
        const cJSON *sha = cJSON_GetObjectItemCaseSensitive(hashes, "sha256");
        if (cJSON_IsString(sha))
            set_sha256(pf, sha->valuestring, strlen(sha->valuestring));
        const cJSON *y = cJSON_GetObjectItemCaseSensitive(f, "yanked");
        pf->yanked = cJSON_IsTrue(y) || (cJSON_IsString(y));
        const cJSON *size = cJSON_GetObjectItemCaseSensitive(f, "size");
        if (cJSON_IsNumber(size) && size->valuedouble >= 0 && size->valuedouble < 9e15)
            pf->size = (long long)size->valuedouble;
    }
    cJSON_Delete(doc);
    return 0;
}

/* ---- index list ---- */

static void add_unique(char ***list, int *n, const char *s, size_t len)
{
    while (len && s[len - 1] == '/')
        len--;
    if (!len)
        return;
    for (int i = 0; i < *n; i++)
        if (strlen((*list)[i]) == len && !strncmp((*list)[i], s, len))
            return;
    *list = xrealloc(*list, (size_t)(*n + 2) * sizeof **list);
    (*list)[(*n)++] = xstrndup(s, len);
    (*list)[*n] = NULL;
}

static void add_split(char ***list, int *n, const char *s)
{
    while (s && *s) {
        size_t len = strcspn(s, " ,\t\n");
        add_unique(list, n, s, len);
        s += len;
        s += strspn(s, " ,\t\n");
    }
}

char **pypi_index_urls(char *const *cli, int ncli, const char *sagebuild_env, const char *pip_env,
                       int *n)
{
    char **list = xcalloc(1, sizeof *list);
    *n = 0;
    for (int i = 0; i < ncli; i++)
        add_split(&list, n, cli[i]);
    add_split(&list, n, sagebuild_env);
    add_split(&list, n, pip_env);
    if (*n == 0)
        add_unique(&list, n, PYPI_DEFAULT_INDEX, strlen(PYPI_DEFAULT_INDEX));
    return list;
}
