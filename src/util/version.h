/* Dotted version numbers as CUDA, gcc and torch print them. Pure functions. */
#ifndef SB_VERSION_H
#define SB_VERSION_H

#include <stddef.h>

struct version {
    int part[4]; /* major, minor, patch, build; missing parts are 0 */
    int nparts;  /* how many were given (1..4); 0 means "no version" */
};

/* Parses the first dotted number in s, skipping a leading 'v' or 'V' ("V13.0.88", "12.8",
 * "2.11.0+cu130" → 2.11.0). Trailing text is ignored. Returns 0 on success, -1 if no digits. */
int version_parse(const char *s, struct version *v);
/* Like version_parse, but s must be exactly the version (no leading or trailing text). */
int version_parse_strict(const char *s, struct version *v);
/* Compares the first n parts (n <= 0 compares all four). <0, 0, >0 like strcmp. */
int version_cmp_n(const struct version *a, const struct version *b, int n);
int version_cmp(const struct version *a, const struct version *b);
/* Formats the given parts ("13.0", "13.0.2"). Returns buf. */
const char *version_str(const struct version *v, char *buf, size_t len);
/* CUDA driver API encoding: 1000*major + 10*minor (13000 → 13.0). */
struct version version_from_cuda_int(int v);

#endif
