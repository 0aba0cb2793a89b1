/* The words of messages: counts that agree with their noun, and "did you mean" suggestions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "util/plural.h"
#include "util/suggest.h"

static void plural_agrees_with_the_count(void **state)
{
    (void)state;
    assert_string_equal(plural(1, "check", "checks"), "check");
    assert_string_equal(plural(-1, "warning", "warnings"), "warning");
    assert_string_equal(plural(0, "warning", "warnings"), "warnings");
    assert_string_equal(plural(2, "archive", "archives"), "archives");
    assert_string_equal(plural(11, "file", "files"), "files");
}

static void distance_counts_each_edit_once(void **state)
{
    (void)state;
    assert_int_equal(suggest_distance("doctor", "doctor"), 0);
    assert_int_equal(suggest_distance("doctr", "doctor"), 1);   /* a deletion */
    assert_int_equal(suggest_distance("doctoor", "doctor"), 1); /* an insertion */
    assert_int_equal(suggest_distance("buidl", "build"), 1);    /* two neighbours swapped */
    assert_int_equal(suggest_distance("bulid", "build"), 1);
    assert_int_equal(suggest_distance("selftets", "selftest"), 1);
    assert_int_equal(suggest_distance("mirrir", "mirror"), 1); /* a substitution */
    assert_int_equal(suggest_distance("", "env"), 3);
    assert_int_equal(suggest_distance("kitten", "sitting"), 3);
    assert_int_equal(suggest_distance("ca", "abc"), 3); /* OSA: no edits of a swapped pair */
    char longname[SUGGEST_MAX_LEN + 2];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(suggest_distance(longname, "a"), SUGGEST_MAX_LEN + 1);
}

static const char *const commands[] = {"doctor", "fetch-cuda", "env", "mirror",
                                       "build",  "selftest",   "all", "help"};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void nearest_command_for_typos(void **state)
{
    (void)state;
    assert_string_equal(suggest_nearest("doctr", commands, NCOMMANDS), "doctor");
    assert_string_equal(suggest_nearest("fetch-cdua", commands, NCOMMANDS), "fetch-cuda");
    assert_string_equal(suggest_nearest("fetchcuda", commands, NCOMMANDS), "fetch-cuda");
    assert_string_equal(suggest_nearest("biuld", commands, NCOMMANDS), "build");
    assert_string_equal(suggest_nearest("self-test", commands, NCOMMANDS), "selftest");
    assert_string_equal(suggest_nearest("Build", commands, NCOMMANDS), "build");
}

static void nothing_suggested_for_other_words(void **state)
{
    (void)state;
    assert_null(suggest_nearest("frobnicate", commands, NCOMMANDS));
    assert_null(suggest_nearest("x", commands, NCOMMANDS));  /* one letter matches anything */
    assert_null(suggest_nearest("al", commands, NCOMMANDS)); /* too short to be sure */
    assert_null(suggest_nearest("", commands, NCOMMANDS));
    assert_null(suggest_nearest("install-everything", commands, NCOMMANDS));
}

static void ties_go_to_the_first_known_name(void **state)
{
    (void)state;
    static const char *const known[] = {"abcd", "abce"};
    assert_string_equal(suggest_nearest("abcf", known, 2), "abcd");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plural_agrees_with_the_count),
        cmocka_unit_test(distance_counts_each_edit_once),
        cmocka_unit_test(nearest_command_for_typos),
        cmocka_unit_test(nothing_suggested_for_other_words),
        cmocka_unit_test(ties_go_to_the_first_known_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
