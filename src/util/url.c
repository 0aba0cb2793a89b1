#include "util/url.h"
#include "util/strbuf.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

char *url_redact(const char *url)
{
    if (!url)
        return NULL;
    const char *scheme_end = strstr(url, "://");
    if (!scheme_end)
        return xstrdup(url);
    const char *auth = scheme_end + 3;
    size_t auth_len = strcspn(auth, "/?#");
    /* The last '@' of the authority ends the userinfo. */
    const char *at = NULL;
    for (const char *p = auth; p < auth + auth_len; p++)
        if (*p == '@')
            at = p;
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (!colon)
        return xstrdup(url);
    return xasprintf("%.*s:***%s", (int)(colon - url), url, at);
}

int url_check(const char *url, char **why)
{
    *why = NULL;
    const char *sep = url ? strstr(url, "://") : NULL;
    size_t scheme_len = sep ? (size_t)(sep - url) : 0;
    for (size_t i = 0; i < scheme_len; i++)
        if (!isalnum((unsigned char)url[i]) && !strchr("+-.", url[i]))
            scheme_len = 0; /* "a/b://c": the "://" is not after a scheme */
    if (!scheme_len) {
        *why = xstrdup("it is not a URL (no scheme): write https://HOST/PATH, or file:///DIR for "
                       "a local folder");
        return -1;
    }
    const char *rest = sep + 3;
    if (scheme_len == 4 && !strncasecmp(url, "file", 4)) {
        if (rest[0] != '/') {
            *why = xstrdup("a file:// URL needs an absolute path (file:///DIR)");
            return -1;
        }
        return 0;
    }
    if (!((scheme_len == 4 && !strncasecmp(url, "http", 4)) ||
          (scheme_len == 5 && !strncasecmp(url, "https", 5)))) {
        *why = xasprintf("the scheme '%.*s' is not supported: use https://, http:// or file://",
                         (int)scheme_len, url);
        return -1;
    }
    /* The host: the authority after any userinfo, before any port. */
    size_t auth_len = strcspn(rest, "/?#");
    const char *host = rest;
    for (const char *p = rest; p < rest + auth_len; p++)
        if (*p == '@')
            host = p + 1;
    size_t host_len = (size_t)(rest + auth_len - host);
    if (host_len && host[0] == '[') {
        const char *close = memchr(host, ']', host_len);
        host_len = close ? (size_t)(close - host) + 1 : 0;
        if (host_len <= 2)
            host_len = 0;
    } else {
        const char *colon = memchr(host, ':', host_len);
        if (colon)
            host_len = (size_t)(colon - host);
    }
    if (!host_len) {
        *why = xstrdup("it has no host name: write https://HOST/PATH");
        return -1;
    }
    for (size_t i = 0; i < host_len; i++)
        if (isspace((unsigned char)host[i])) {
            *why = xstrdup("its host name contains a space");
            return -1;
        }
    return 0;
}
