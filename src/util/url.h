/* URLs as users write them for private mirrors and indexes often carry credentials
 * ("https://user:token@artifactory.example/simple"); anything printed or written to a file shows
 * them redacted. Pure. */
#ifndef SB_URL_H
#define SB_URL_H

/* url with the password of its userinfo replaced by "***" ("https://u:***@h/p"); a userinfo
 * without a password is kept. Heap string; NULL for NULL. */
char *url_redact(const char *url);

#endif
