#include "util/url.h"
#include "util/strbuf.h"

#include <string.h>

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
