#include "fetch_error.h"
#include "util/strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int fetch_fail_with(struct fetch_error *e, enum fetch_error_kind kind, char *message)
{
    free(e->message);
    e->kind = kind;
    e->message = message;
    return -1;
}

int fetch_fail(struct fetch_error *e, enum fetch_error_kind kind, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    return fetch_fail_with(e, kind, sb_detach(&sb));
}

int fetch_fail_errno(struct fetch_error *e, int errnum, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    sb_addf(&sb, ": %s", strerror(errnum));
    return fetch_fail_with(e, fetch_error_kind_of_errno(errnum), sb_detach(&sb));
}

void fetch_error_free(struct fetch_error *e)
{
    free(e->message);
    e->message = NULL;
    e->kind = FETCH_ERR_NONE;
}

enum fetch_error_kind fetch_error_kind_of_errno(int errnum)
{
    switch (errnum) {
    case ENOSPC:
    case EFBIG: /* RLIMIT_FSIZE, with SIGXFSZ ignored */
    case EDQUOT:
        return FETCH_ERR_DISK;
    default:
        return FETCH_ERR_OTHER;
    }
}

/* How strongly a kind's fix claims the line when several archives failed; 0: no claim. */
static int claim(enum fetch_error_kind k)
{
    switch (k) {
    case FETCH_ERR_UNDELIVERED:
        return 3;
    case FETCH_ERR_OFFLINE:
        return 2;
    case FETCH_ERR_DISK:
        return 1;
    default:
        return 0;
    }
}

enum fetch_error_kind fetch_error_kind_leading(enum fetch_error_kind a, enum fetch_error_kind b)
{
    if (a == FETCH_ERR_NONE)
        return b;
    return claim(b) > claim(a) ? b : a;
}
