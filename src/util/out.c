#include "util/out.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct out_style out_style_decide(int is_tty, const char *no_color_env, const char *term_env,
                                  const char *lang_env, int no_color_flag)
{
    struct out_style st = {0, 0, is_tty};
    int dumb = term_env && !strcmp(term_env, "dumb");
    st.color = is_tty && !no_color_flag && !(no_color_env && *no_color_env) && !dumb;
    /* Marks are plain ASCII unless the locale says UTF-8, so logs stay readable anywhere. */
    st.unicode = lang_env && (strstr(lang_env, "UTF-8") || strstr(lang_env, "utf8") ||
                              strstr(lang_env, "UTF8") || strstr(lang_env, "utf-8"));
    return st;
}

void out_style_init(struct out_style *st, FILE *stream, int no_color_flag)
{
    const char *lang = getenv("LC_ALL");
    if (!lang || !*lang)
        lang = getenv("LC_CTYPE");
    if (!lang || !*lang)
        lang = getenv("LANG");
    *st = out_style_decide(isatty(fileno(stream)), getenv("NO_COLOR"), getenv("TERM"), lang,
                           no_color_flag);
}

const char *out_status_mark(const struct out_style *st, enum out_status s)
{
    switch (s) {
    case OUT_OK:
        return st->unicode ? "[✓]" : "[ok]";
    case OUT_WARN:
        return "[!]";
    case OUT_ERROR:
        return st->unicode ? "[✗]" : "[x]";
    case OUT_SKIP:
        return "[-]";
    default:
        return st->unicode ? "[•]" : "[i]";
    }
}

const char *out_color(const struct out_style *st, enum out_status s)
{
    if (!st->color)
        return "";
    switch (s) {
    case OUT_OK:
        return "\033[32m";
    case OUT_WARN:
        return "\033[33m";
    case OUT_ERROR:
        return "\033[31m";
    case OUT_SKIP:
        return "\033[2m";
    default:
        return "\033[36m";
    }
}

const char *out_bold(const struct out_style *st)
{
    return st->color ? "\033[1m" : "";
}

const char *out_reset(const struct out_style *st)
{
    return st->color ? "\033[0m" : "";
}

void out_clear_line(FILE *stream)
{
    fputs("\r\033[K", stream);
}

int out_width(FILE *stream)
{
    struct winsize ws;
    if (ioctl(fileno(stream), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col - 1;
    return 79;
}
