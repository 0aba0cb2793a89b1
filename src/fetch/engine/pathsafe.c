#include "pathsafe.h"
#include "util/strbuf.h"

#include <string.h>

static const char *component_check(const char *s, size_t len)
{
    if (len == 2 && s[0] == '.' && s[1] == '.')
        return "contains '..'";
    if (len > 255)
        return "has a component longer than 255 bytes";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return "contains a control character";
        if (c == '\\')
            return "contains a backslash";
    }
    return NULL;
}

const char *path_rel_check(const char *rel)
{
    if (!rel || !*rel)
        return "is empty";
    if (rel[0] == '/')
        return "is an absolute path";
    const char *p = rel;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        const char *why = component_check(p, len);
        if (why)
            return why;
        if (!slash)
            break;
        p = slash + 1;
    }
    return NULL;
}

const char *path_cache_name_check(const char *rel)
{
    const char *why = path_rel_check(rel);
    if (why)
        return why;
    size_t n = strlen(rel);
    if (n > 1024)
        return "is longer than 1024 bytes";
    if (n >= 5 && !strcmp(rel + n - 5, ".part"))
        return "ends in .part (the name of a download in progress)";
    for (const char *p = rel; *p;) {
        size_t len = strcspn(p, "/");
        if (len == 0)
            return "has an empty component";
        if (p[0] == '.')
            return "has a component starting with '.' (the cache's own files are hidden ones)";
        if (len > 255)
            return "has a component longer than 255 bytes";
        p += len;
        p += *p == '/';
    }
    return NULL;
}

char *path_strip(const char *name, int strip, const char **why)
{
    *why = NULL;
    if (!name || !*name) {
        *why = "is empty";
        return NULL;
    }
    if (name[0] == '/') {
        *why = "is an absolute path";
        return NULL;
    }
    if (strlen(name) > 4095) {
        *why = "is longer than 4095 bytes";
        return NULL;
    }
    struct strbuf out = STRBUF_INIT;
    int index = 0;
    const char *p = name;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if ((*why = component_check(p, len))) {
            sb_free(&out);
            return NULL;
        }
        int skip = len == 0 || (len == 1 && p[0] == '.');
        if (!skip) {
            if (index >= strip) {
                if (out.len)
                    sb_adds(&out, "/");
                sb_add(&out, p, len);
            }
            index++;
        }
        if (!slash)
            break;
        p = slash + 1;
    }
    return sb_detach(&out);
}

const char *path_link_check(const char *rel, const char *target)
{
    if (!target || !*target)
        return "has an empty link target";
    if (target[0] == '/')
        return "links to an absolute path";
    /* Depth of the link's directory below the root, then walk the target. */
    int depth = 0;
    for (const char *p = rel; *p; p++)
        if (*p == '/')
            depth++;
    /* ".." only before any named component: after one, the walk could pass through another
     * symlink and "..", which lexical reasoning cannot follow. */
    int descended = 0;
    const char *p = target;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            if (descended)
                return "has '..' after a named component in its link target";
            if (--depth < 0)
                return "links outside the tree";
        } else if (len > 0 && !(len == 1 && p[0] == '.')) {
            descended = 1;
            const char *why = component_check(p, len);
            if (why)
                return why;
            depth++;
        }
        if (!slash)
            break;
        p = slash + 1;
    }
    return NULL;
}
