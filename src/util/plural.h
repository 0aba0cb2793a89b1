/* Counts in messages: "1 warning", "3 warnings", "0 errors". */
#ifndef SB_PLURAL_H
#define SB_PLURAL_H

/* Pure: one when n is 1 (or -1), else many. printf("%d %s", n, plural(n, "check", "checks")). */
const char *plural(long n, const char *one, const char *many);

#endif
