#include "util/suggest.h"

#include <string.h>

int suggest_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
        return SUGGEST_MAX_LEN + 1;
    /* d[i][j]: distance between the first i characters of a and the first j of b. */
    int d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int cost = a[i - 1] != b[j - 1];
            int best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *suggest_nearest(const char *word, const char *const *known, size_t n)
{
    const char *best = NULL;
    int best_d = 3; /* more than 2 edits away is another word, not a typo */
    int len = (int)strlen(word);
    for (size_t i = 0; i < n; i++) {
        int dist = suggest_distance(word, known[i]);
        if (dist < best_d && 2 * dist < len) {
            best = known[i];
            best_d = dist;
        }
    }
    return best;
}
