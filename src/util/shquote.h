/* Quoting for the shell lines sagebuild prints (fix commands, logged command lines, the lines
 * of `sagebuild env`), so that a path with a space or a quote still pastes as one word. Pure. */
#ifndef SB_UTIL_SHQUOTE_H
#define SB_UTIL_SHQUOTE_H

enum shell_dialect { SHELL_POSIX, SHELL_FISH };

/* s as one POSIX shell word: as it is when it holds only letters, digits and /._-+=:,@%,
 * else in single quotes with each quote written '\''. The empty string is ''. Heap string. */
char *shell_quote(const char *s);
/* s always in single quotes, for lines that are evaluated (`eval "$(sagebuild env)"`): POSIX
 * writes a quote as '\''; fish, where a backslash also escapes inside quotes, as \' and a
 * backslash as \\. Heap string. */
char *shell_quote_always(const char *s, enum shell_dialect d);

#endif
