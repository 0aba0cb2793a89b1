#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "util/shquote.h"

static void check(char *got, const char *want)
{
    assert_string_equal(got, want);
    free(got);
}

static void quotes_only_when_needed(void **state)
{
    (void)state;
    check(shell_quote("/usr/bin/python3"), "/usr/bin/python3");
    check(shell_quote("-DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++-14"),
          "-DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++-14");
    check(shell_quote("user@host:1,2%"), "user@host:1,2%");
    check(shell_quote("/opt/my venv/bin/python"), "'/opt/my venv/bin/python'");
    check(shell_quote("-DSAGEATTN_ARCHS=sm_90;sm_120a"), "'-DSAGEATTN_ARCHS=sm_90;sm_120a'");
    check(shell_quote("$HOME"), "'$HOME'");
    check(shell_quote("a*b"), "'a*b'");
    check(shell_quote("it's"), "'it'\\''s'");
    check(shell_quote(""), "''");
}

static void quotes_always_for_each_shell(void **state)
{
    (void)state;
    check(shell_quote_always("/opt/cuda", SHELL_POSIX), "'/opt/cuda'");
    check(shell_quote_always("it's", SHELL_POSIX), "'it'\\''s'");
    /* a backslash is literal inside POSIX single quotes, an escape inside fish's */
    check(shell_quote_always("a\\b", SHELL_POSIX), "'a\\b'");
    check(shell_quote_always("it's \\", SHELL_FISH), "'it\\'s \\\\'");
    check(shell_quote_always("", SHELL_FISH), "''");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quotes_only_when_needed),
        cmocka_unit_test(quotes_always_for_each_shell),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
