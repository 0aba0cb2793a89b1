/* A growable NUL-terminated byte buffer. Allocation failure aborts: the CLI cannot do anything
 * useful without memory, and checking every append would hide the logic. */
#ifndef SB_STRBUF_H
#define SB_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
    char *buf; /* always NUL-terminated once anything was added; NULL when empty and unused */
    size_t len;
    size_t cap;
};

#define STRBUF_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

void sb_add(struct strbuf *sb, const void *data, size_t len);
void sb_adds(struct strbuf *sb, const char *s);
void sb_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Returns the contents ("" when empty); the buffer stays owned by sb. */
const char *sb_str(const struct strbuf *sb);
/* Hands the heap string to the caller and resets sb. Never NULL. */
char *sb_detach(struct strbuf *sb);
void sb_free(struct strbuf *sb);

/* Small helpers used everywhere. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* p (an array of elem-sized elements with room for *cap) made to hold at least need elements,
 * doubling: lists built from untrusted input (index pages, directory listings, archives) never
 * cost quadratic time. */
void *xgrow(void *p, int *cap, int need, size_t elem);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
