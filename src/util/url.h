/* URLs as users write them for private mirrors and indexes often carry credentials
 * ("https://user:token@artifactory.example/simple"); anything printed or written to a file shows
 * them redacted. Pure. */
#ifndef SB_URL_H
#define SB_URL_H

/* url with the password of its userinfo replaced by "***" ("https://u:***@h/p"); a userinfo
 * without a password is kept. Heap string; NULL for NULL. */
char *url_redact(const char *url);

/* Whether url can name a mirror or an index: an http:// or https:// URL with a host, or a
 * file:// URL with an absolute path (the schemes downloads allow). 0, or -1 with *why (heap:
 * what is wrong, e.g. "it has no scheme; write https://HOST/PATH"). */
int url_check(const char *url, char **why);

#endif
