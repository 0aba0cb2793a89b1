/* Human output: colour only on a TTY, honouring NO_COLOR, --no-color and TERM=dumb. */
#ifndef SB_OUT_H
#define SB_OUT_H

#include <stdio.h>

enum out_status { OUT_OK, OUT_WARN, OUT_ERROR, OUT_SKIP, OUT_INFO };

struct out_style {
    int color;   /* emit ANSI colour */
    int unicode; /* ✓ ! ✗ rather than ASCII */
    int tty;
};

/* Decides colour for stream from the environment; no_color_flag is --no-color. Pure apart from
 * isatty(); out_style_decide is the testable core. */
void out_style_init(struct out_style *st, FILE *stream, int no_color_flag);
struct out_style out_style_decide(int is_tty, const char *no_color_env, const char *term_env,
                                  const char *lang_env, int no_color_flag);

const char *out_status_mark(const struct out_style *st, enum out_status s);
const char *out_color(const struct out_style *st, enum out_status s);
const char *out_bold(const struct out_style *st);
const char *out_reset(const struct out_style *st);

/* Back to the start of the line and erase it, for a progress line that is redrawn in place
 * (callers write it only to a terminal). */
void out_clear_line(FILE *stream);

/* Columns of the terminal behind stream, less one (the last column wraps on some terminals);
 * 79 when it is not a terminal or does not say. For progress lines. */
int out_width(FILE *stream);

#endif
