#include "util/plural.h"

const char *plural(long n, const char *one, const char *many)
{
    return n == 1 || n == -1 ? one : many;
}
