#include "sa_check.h"

int sa_check_failures;
long sa_check_count;

int sa_check_report(const char *program)
{
    printf("%s: %ld checks, %d failed\n", program, sa_check_count, sa_check_failures);
    return sa_check_failures ? 1 : 0;
}
