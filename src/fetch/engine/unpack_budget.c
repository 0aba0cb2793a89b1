#include "unpack_budget.h"
#include "util/strbuf.h"

#include <stdlib.h>

static long long clamp(long long v, long long lo, long long hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void unpack_budget_for(long long archive_size, struct unpack_budget *b)
{
    if (archive_size < 0) {
        b->bytes = UNPACK_CEILING_BYTES;
        b->entries = UNPACK_CEILING_ENTRIES;
        return;
    }
    /* Above the ceiling divided by the ratio the product would only be clamped: no overflow. */
    long long bytes = archive_size > UNPACK_CEILING_BYTES / UNPACK_RATIO
                          ? UNPACK_CEILING_BYTES
                          : archive_size * UNPACK_RATIO;
    b->bytes = clamp(bytes, UNPACK_FLOOR_BYTES, UNPACK_CEILING_BYTES);
    b->entries =
        clamp(archive_size / UNPACK_BYTES_PER_ENTRY, UNPACK_FLOOR_ENTRIES, UNPACK_CEILING_ENTRIES);
}

static char *human(long long n)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    return u ? xasprintf("%.1f %s", v, units[u]) : xasprintf("%lld bytes", n);
}

char *unpack_budget_refusal(const struct unpack_budget *b, long long archive_size,
                            const char *archive, int entries)
{
    char *size = archive_size >= 0 ? human(archive_size) : xstrdup("size unknown");
    char *out;
    if (entries) {
        out = xasprintf("%s (%s) has more than %lld entries, its budget (one per %lld bytes of "
                        "archive, at least %lld, at most %lld); refusing it",
                        archive, size, b->entries, UNPACK_BYTES_PER_ENTRY, UNPACK_FLOOR_ENTRIES,
                        UNPACK_CEILING_ENTRIES);
    } else {
        char *bytes = human(b->bytes), *floor = human(UNPACK_FLOOR_BYTES),
             *ceiling = human(UNPACK_CEILING_BYTES);
        out = xasprintf("%s (%s) unpacks to more than %s, its budget (%lld times the archive's "
                        "size, at least %s, at most %s); refusing it",
                        archive, size, bytes, UNPACK_RATIO, floor, ceiling);
        free(bytes);
        free(floor);
        free(ceiling);
    }
    free(size);
    return out;
}
