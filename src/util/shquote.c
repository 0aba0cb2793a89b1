#include "util/shquote.h"
#include "util/strbuf.h"

#include <string.h>

/* Characters no POSIX shell treats specially anywhere in a word. */
static const char plain_chars[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@%";

char *shell_quote(const char *s)
{
    if (*s && strspn(s, plain_chars) == strlen(s))
        return xstrdup(s);
    return shell_quote_always(s, SHELL_POSIX);
}

char *shell_quote_always(const char *s, enum shell_dialect d)
{
    struct strbuf b = STRBUF_INIT;
    sb_adds(&b, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            sb_adds(&b, d == SHELL_FISH ? "\\'" : "'\\''");
        else if (*p == '\\' && d == SHELL_FISH)
            sb_adds(&b, "\\\\");
        else
            sb_add(&b, p, 1);
    }
    sb_adds(&b, "'");
    return sb_detach(&b);
}
