#include "util/opt.h"
#include "util/exitcodes.h"
#include "util/strbuf.h"
#include "util/suggest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define USAGE_WIDTH 80
#define LABEL_MAX 22 /* a longer label puts its help on the next line */

/* -h/--help, which every command takes; a table may name its own "help" row instead. */
static const struct opt help_row = {
    .kind = OPT_FLAG, .name = "help", .letter = 'h', .help = "show this help"};

struct parse {
    const struct opt_command *c;
    FILE *out, *err;
    size_t n;     /* rows of c->opts */
    int *seen;    /* per row: how many times it was given */
    int own_help; /* the table has its own "help" row */
};

static size_t table_len(const struct opt *t)
{
    size_t n = 0;
    while (t[n].kind != OPT_END)
        n++;
    return n;
}

/* Row i of the table, or the built-in help row at i == n. */
static const struct opt *row(const struct parse *p, size_t i)
{
    return i < p->n ? &p->c->opts[i] : &help_row;
}

static void command_prefix(const struct opt_command *c, FILE *f)
{
    fprintf(f, "sagebuild%s%s: ", c->name ? " " : "", c->name ? c->name : "");
}

static void say(const struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct parse *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    command_prefix(p->c, p->err);
    vfprintf(p->err, fmt, ap);
    va_end(ap);
    fputc('\n', p->err);
}

static void see_help(const struct parse *p)
{
    fprintf(p->err, " See 'sagebuild%s%s --help'.\n", p->c->name ? " " : "",
            p->c->name ? p->c->name : "");
}

int opt_fail(const struct opt_command *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    command_prefix(c, stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return SB_EXIT_USAGE;
}

int opt_exit_status(enum opt_result r)
{
    return r == OPT_FAILED ? SB_EXIT_USAGE : SB_EXIT_OK;
}

void opt_list_free(struct opt_list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static void list_add(struct opt_list *l, const char *s, size_t len)
{
    l->v = xrealloc(l->v, (size_t)(l->n + 2) * sizeof *l->v);
    l->v[l->n++] = xstrndup(s, len);
    l->v[l->n] = NULL;
}

/* ---- finding the option a word names ---- */

/* The row `--word` names (len bytes, no dashes): an exact name, else the only name it begins.
 * -1: none; -2: several begin with it. */
static long find_long(const struct parse *p, const char *word, size_t len)
{
    long hit = -1;
    int hits = 0;
    for (size_t i = 0; i <= p->n; i++) {
        const struct opt *o = row(p, i);
        if (o->kind == OPT_OPERANDS || (i == p->n && p->own_help) || strncmp(o->name, word, len))
            continue;
        if (o->name[len] == '\0')
            return (long)i;
        hit = (long)i;
        hits++;
    }
    return hits == 1 ? hit : hits ? -2 : -1;
}

static long find_short(const struct parse *p, char letter)
{
    for (size_t i = 0; i <= p->n; i++) {
        const struct opt *o = row(p, i);
        if (o->kind != OPT_OPERANDS && o->letter == letter && !(i == p->n && p->own_help))
            return (long)i;
    }
    return -1;
}

/* "'--jsn' is not an option. Did you mean '--json'?", or the names an abbreviation fits. */
static void no_such_long(const struct parse *p, const char *word, size_t len, int ambiguous)
{
    const char **names = xcalloc(p->n + 1, sizeof *names);
    size_t k = 0;
    for (size_t i = 0; i <= p->n; i++) {
        const struct opt *o = row(p, i);
        if (o->kind != OPT_OPERANDS && !(i == p->n && p->own_help))
            names[k++] = o->name;
    }
    char *w = xstrndup(word, len);
    command_prefix(p->c, p->err);
    if (ambiguous) {
        fprintf(p->err, "'--%s' could be any of:", w);
        for (size_t i = 0, shown = 0; i < k; i++)
            if (!strncmp(names[i], w, len))
                fprintf(p->err, "%s --%s", shown++ ? "," : "", names[i]);
        fputc('.', p->err);
    } else {
        const char *near = suggest_nearest(w, names, k);
        fprintf(p->err, "'--%s' is not an option.", w);
        if (near)
            fprintf(p->err, " Did you mean '--%s'?", near);
    }
    see_help(p);
    free(w);
    free(names);
}

/* ---- storing a value ---- */

static int whole_number(const char *s, int min, int max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

static enum opt_result take_enum(const struct parse *p, const struct opt *o, const char *value)
{
    for (const char *const *ch = o->choices; *ch; ch++)
        if (!strcmp(*ch, value)) {
            *(const char **)o->dest = *ch;
            return OPT_OK;
        }
    command_prefix(p->c, p->err);
    fprintf(p->err, "--%s must be one of:", o->name);
    for (const char *const *ch = o->choices; *ch; ch++)
        fprintf(p->err, "%s %s", ch == o->choices ? "" : ",", *ch);
    fprintf(p->err, " (not '%s')\n", value);
    return OPT_FAILED;
}

static void take_list(const struct opt *o, const char *value)
{
    struct opt_list *l = o->dest;
    if (!(o->flags & OPT_SPLIT_COMMAS)) {
        list_add(l, value, strlen(value));
        return;
    }
    while (*value) {
        size_t len = strcspn(value, ",");
        if (len)
            list_add(l, value, len);
        value += len;
        value += *value == ',';
    }
}

/* Row i was given, with value (NULL for a flag). */
static enum opt_result take(struct parse *p, size_t i, const char *value)
{
    const struct opt *o = row(p, i);
    if (o == &help_row) {
        opt_usage(p->c, p->out);
        return OPT_HELP_SHOWN;
    }
    p->seen[i]++;
    if (o->kind == OPT_FLAG) {
        *(int *)o->dest = 1;
        return OPT_OK;
    }
    if (!*value) {
        say(p, "--%s needs a value (%s), not an empty string", o->name, o->arg);
        return OPT_FAILED;
    }
    switch (o->kind) {
    case OPT_STRING:
        *(const char **)o->dest = value;
        return OPT_OK;
    case OPT_INT:
        if (whole_number(value, o->min, o->max, o->dest) == 0)
            return OPT_OK;
        say(p, "--%s must be a whole number from %d to %d (not '%s')", o->name, o->min, o->max,
            value);
        return OPT_FAILED;
    case OPT_ENUM:
        return take_enum(p, o, value);
    case OPT_PARSED:
        if (o->parse(value, o->dest) == 0)
            return OPT_OK;
        say(p, "--%s must be %s (not '%s')", o->name, o->wants, value);
        return OPT_FAILED;
    case OPT_LIST:
        take_list(o, value);
        return OPT_OK;
    default:
        return OPT_FAILED;
    }
}

/* ---- words ---- */

static enum opt_result missing_value(const struct parse *p, const struct opt *o)
{
    say(p, "--%s needs a value (%s)", o->name, o->arg);
    return OPT_FAILED;
}

/* argv[*i] is "--name", "--name=value" or "--name" followed by its value (*i moves past it). */
static enum opt_result parse_long(struct parse *p, int argc, char **argv, int *i)
{
    const char *word = argv[*i] + 2;
    const char *eq = strchr(word, '=');
    size_t len = eq ? (size_t)(eq - word) : strlen(word);
    long r = find_long(p, word, len);
    if (r < 0) {
        no_such_long(p, word, len, r == -2);
        return OPT_FAILED;
    }
    const struct opt *o = row(p, (size_t)r);
    if (o->kind == OPT_FLAG) {
        if (!eq)
            return take(p, (size_t)r, NULL);
        say(p, "--%s takes no value (not '%s')", o->name, eq + 1);
        return OPT_FAILED;
    }
    if (eq)
        return take(p, (size_t)r, eq + 1);
    if (*i + 1 >= argc)
        return missing_value(p, o);
    return take(p, (size_t)r, argv[++*i]);
}

/* argv[*i] is "-v", "-vq", "-j4" or "-j" followed by its value (*i moves past it). */
static enum opt_result parse_short(struct parse *p, int argc, char **argv, int *i)
{
    for (const char *s = argv[*i] + 1; *s; s++) {
        long r = find_short(p, *s);
        if (r < 0) {
            command_prefix(p->c, p->err);
            fprintf(p->err, "'-%c' is not an option.", *s);
            see_help(p);
            return OPT_FAILED;
        }
        const struct opt *o = row(p, (size_t)r);
        if (o->kind != OPT_FLAG) {
            if (s[1])
                return take(p, (size_t)r, s + 1);
            if (*i + 1 >= argc)
                return missing_value(p, o);
            return take(p, (size_t)r, argv[++*i]);
        }
        enum opt_result rc = take(p, (size_t)r, NULL);
        if (rc != OPT_OK)
            return rc;
    }
    return OPT_OK;
}

/* What holds for the whole line: operands only where the table takes them, every required
 * option given, no two of one group. */
static enum opt_result check_line(const struct parse *p, char **operands, int noperands)
{
    const struct opt *t = p->c->opts;
    size_t k = 0;
    while (k < p->n && t[k].kind != OPT_OPERANDS)
        k++;
    if (noperands && k == p->n) {
        command_prefix(p->c, p->err);
        fprintf(p->err, "unexpected argument '%s'.", operands[0]);
        see_help(p);
        return OPT_FAILED;
    }
    for (size_t i = 0; i < p->n; i++)
        if ((t[i].flags & OPT_REQUIRED) && !p->seen[i]) {
            say(p, "--%s %s is required (%s)", t[i].name, t[i].arg, t[i].help);
            return OPT_FAILED;
        }
    for (size_t i = 0; i < p->n; i++)
        for (size_t j = i + 1; j < p->n; j++)
            if (t[i].group && t[i].group == t[j].group && p->seen[i] && p->seen[j]) {
                say(p, "--%s and --%s exclude each other", t[i].name, t[j].name);
                return OPT_FAILED;
            }
    return OPT_OK;
}

/* argv[1..argc) becomes the option words, then the operands; the operand row's dest gets the
 * index of the first operand. The values stored point into the strings, not the slots. */
static void permute(const struct parse *p, char **argv, char **words, int nwords, char **operands,
                    int noperands)
{
    int at = 1;
    for (int i = 0; i < nwords; i++)
        argv[at++] = words[i];
    for (int i = 0; i < noperands; i++)
        argv[at++] = operands[i];
    for (size_t k = 0; k < p->n; k++)
        if (p->c->opts[k].kind == OPT_OPERANDS)
            *(int *)p->c->opts[k].dest = 1 + nwords;
}

enum opt_result opt_parse_to(const struct opt_command *c, int argc, char **argv, FILE *out,
                             FILE *err)
{
    struct parse p = {.c = c, .out = out, .err = err, .n = table_len(c->opts)};
    p.seen = xcalloc(p.n + 1, sizeof *p.seen);
    for (size_t i = 0; i < p.n; i++)
        p.own_help |= c->opts[i].kind != OPT_OPERANDS && !strcmp(c->opts[i].name, "help");
    char **words = xcalloc((size_t)argc + 1, sizeof *words);
    char **operands = xcalloc((size_t)argc + 1, sizeof *operands);
    int nwords = 0, noperands = 0, i = 1;
    enum opt_result rc = OPT_OK;
    for (; i < argc && rc == OPT_OK; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            words[nwords++] = argv[i++];
            break;
        }
        if (a[0] != '-' || !a[1]) {
            if (c->stop_at_operand)
                break;
            operands[noperands++] = argv[i];
            continue;
        }
        int first = i;
        rc = a[1] == '-' ? parse_long(&p, argc, argv, &i) : parse_short(&p, argc, argv, &i);
        while (first <= i)
            words[nwords++] = argv[first++];
    }
    while (rc == OPT_OK && i < argc)
        operands[noperands++] = argv[i++];
    if (rc == OPT_OK)
        rc = check_line(&p, operands, noperands);
    if (rc == OPT_OK)
        permute(&p, argv, words, nwords, operands, noperands);
    free(words);
    free(operands);
    free(p.seen);
    return rc;
}

enum opt_result opt_parse(const struct opt_command *c, int argc, char **argv)
{
    return opt_parse_to(c, argc, argv, stdout, stderr);
}

int opt_take_anywhere(const struct opt *table, int argc, char **argv)
{
    int kept = 1, i = 1;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        const struct opt *hit = NULL;
        for (const struct opt *o = table; o->kind != OPT_END && !hit; o++)
            if ((o->flags & OPT_ANYWHERE) && o->kind == OPT_FLAG && !strncmp(argv[i], "--", 2) &&
                !strcmp(argv[i] + 2, o->name))
                hit = o;
        if (hit)
            *(int *)hit->dest = 1;
        else
            argv[kept++] = argv[i];
    }
    for (; i < argc; i++)
        argv[kept++] = argv[i];
    argv[kept] = NULL;
    return kept;
}

/* ---- --help ---- */

/* "[--name ARG]" as the usage line shows o (and, for a group, its partners after it). NULL for
 * a group member shown with the first one. Heap. */
static char *synopsis_item(const struct opt *t, size_t i)
{
    const struct opt *o = &t[i];
    if (o->kind == OPT_OPERANDS)
        return xstrdup(o->arg);
    for (size_t k = 0; o->group && k < i; k++)
        if (t[k].group == o->group)
            return NULL;
    struct strbuf sb = STRBUF_INIT;
    int required = (o->flags & OPT_REQUIRED) != 0;
    sb_adds(&sb, required ? "" : "[");
    for (size_t k = i; t[k].kind != OPT_END; k++) {
        const struct opt *m = &t[k];
        if (k != i && (!o->group || m->group != o->group))
            continue;
        sb_addf(&sb, "%s--%s", k == i ? "" : "|", m->name);
        if (m->kind == OPT_ENUM)
            for (const char *const *ch = m->choices; *ch; ch++)
                sb_addf(&sb, "%c%s", ch == m->choices ? ' ' : '|', *ch);
        else if (m->kind != OPT_FLAG)
            sb_addf(&sb, " %s", m->arg);
    }
    sb_adds(&sb, required ? "" : "]");
    if (o->kind == OPT_LIST)
        sb_adds(&sb, "...");
    return sb_detach(&sb);
}

static void usage_line(const struct opt_command *c, FILE *f)
{
    int indent = fprintf(f, "usage: sagebuild%s%s", c->name ? " " : "", c->name ? c->name : "");
    int col = indent;
    for (size_t i = 0; c->opts[i].kind != OPT_END; i++) {
        char *item = synopsis_item(c->opts, i);
        if (!item)
            continue;
        int len = (int)strlen(item);
        if (col > indent && col + 1 + len > USAGE_WIDTH)
            col = fprintf(f, "\n%*s", indent, "") - 1;
        col += fprintf(f, " %s", item);
        free(item);
    }
    fputc('\n', f);
}

static char *label_of(const struct opt *o)
{
    if (o->kind == OPT_OPERANDS)
        return xstrdup(o->name);
    return xasprintf("%s%s%s--%s%s%s", o->letter ? "-" : "",
                     o->letter ? (char[2]){o->letter, 0} : "", o->letter ? ", " : "", o->name,
                     o->arg ? " " : "", o->arg ? o->arg : "");
}

/* text from column col on, wrapped at USAGE_WIDTH, continuation lines indented to col. */
static void wrapped(FILE *f, const char *text, int col)
{
    int at = col;
    while (*text) {
        size_t len = strcspn(text, " \n");
        if (at > col && at + 1 + (int)len > USAGE_WIDTH) {
            fprintf(f, "\n%*s", col, "");
            at = col;
        }
        at += fprintf(f, "%s%.*s", at > col ? " " : "", (int)len, text);
        text += len;
        if (*text == '\n') {
            fprintf(f, "\n%*s", col, "");
            at = col;
        }
        text += strspn(text, " \n");
    }
    fputc('\n', f);
}

void opt_usage(const struct opt_command *c, FILE *f)
{
    usage_line(c, f);
    if (c->about)
        fprintf(f, "\n%s", c->about);
    int width = 0;
    for (const struct opt *o = c->opts; o->kind != OPT_END; o++) {
        if (!o->help)
            continue;
        char *label = label_of(o);
        int len = (int)strlen(label);
        if (len <= LABEL_MAX && len > width)
            width = len;
        free(label);
    }
    if (c->opts[0].kind != OPT_END)
        fputc('\n', f);
    int col = 2 + width + 2;
    for (const struct opt *o = c->opts; o->kind != OPT_END; o++) {
        if (!o->help)
            continue;
        char *label = label_of(o);
        if ((int)strlen(label) > width)
            fprintf(f, "  %s\n%*s", label, col, "");
        else
            fprintf(f, "  %-*s  ", width, label);
        char *help = xasprintf("%s%s", o->help, (o->flags & OPT_REQUIRED) ? " (required)" : "");
        wrapped(f, help, col);
        free(help);
        free(label);
    }
    if (c->footer)
        fprintf(f, "\n%s", c->footer);
}
