/* "Did you mean ...?" for a mistyped name: the nearest of the known names by edit distance. */
#ifndef SB_SUGGEST_H
#define SB_SUGGEST_H

#include <stddef.h>

/* Pure: the optimal-string-alignment distance between a and b (insertions, deletions,
 * substitutions and swaps of two neighbouring characters each cost 1), case-sensitive. Names
 * longer than SUGGEST_MAX_LEN compare as far apart (SUGGEST_MAX_LEN + 1). */
#define SUGGEST_MAX_LEN 64
int suggest_distance(const char *a, const char *b);

/* Pure: the known name nearest to word, or NULL when none is close enough to be what was meant
 * (distance at most 2, and less than half of word's length, so "x" suggests nothing). On a tie
 * the first in known wins. */
const char *suggest_nearest(const char *word, const char *const *known, size_t n);

#endif
