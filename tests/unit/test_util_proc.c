#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/proc.h"

static void captures_output_and_status(void **state)
{
    (void)state;
    const char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    struct proc_result r;
    assert_int_equal(proc_run(argv, NULL, &r), -1);
    assert_true(r.started);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 3);
    assert_string_equal(r.out, "out\n");
    assert_string_equal(r.err, "err\n");
    proc_result_free(&r);
}

static void kills_on_timeout(void **state)
{
    (void)state;
    /* The grandchild sleep must die too: the whole process group is killed. */
    const char *argv[] = {"sh", "-c", "sleep 30 & sleep 30; echo never", NULL};
    struct proc_opts o = {.timeout_ms = 300};
    struct proc_result r;
    assert_int_equal(proc_run(argv, &o, &r), -1);
    assert_true(r.timed_out);
    assert_false(r.exited);
    assert_true(r.elapsed_ms < 5000);
    assert_string_equal(r.out, "");
    char *why = proc_describe(&r);
    assert_non_null(strstr(why, "timed out"));
    free(why);
    proc_result_free(&r);
}

static void reports_missing_program(void **state)
{
    (void)state;
    const char *argv[] = {"/nonexistent/definitely-not-here", NULL};
    struct proc_result r;
    assert_int_equal(proc_run(argv, NULL, &r), -1);
    assert_false(r.started);
    assert_int_not_equal(r.spawn_errno, 0);
    proc_result_free(&r);
}

static void caps_output(void **state)
{
    (void)state;
    const char *argv[] = {"sh", "-c", "yes | head -c 100000", NULL};
    struct proc_opts o = {.max_output = 1000};
    struct proc_result r;
    assert_int_equal(proc_run(argv, &o, &r), 0);
    assert_int_equal(r.out_len, 1000);
    proc_result_free(&r);
}

static void env_and_cwd(void **state)
{
    (void)state;
    const char *env[] = {"SB_TEST_VAR=hello", "HOME", NULL};
    const char *argv[] = {"sh", "-c", "echo \"$SB_TEST_VAR:${HOME:-unset}:$(pwd)\"", NULL};
    struct proc_opts o = {.env_set = env, .cwd = "/"};
    struct proc_result r;
    assert_int_equal(proc_run(argv, &o, &r), 0);
    assert_string_equal(r.out, "hello:unset:/\n");
    proc_result_free(&r);
}

static int crashing_probe(void *arg, int fd)
{
    (void)arg;
    if (write(fd, "partial", 7) < 0)
        return 1;
    raise(SIGSEGV);
    return 0;
}

static int good_probe(void *arg, int fd)
{
    const char *msg = arg;
    return write(fd, msg, strlen(msg)) < 0 ? 1 : 0;
}

static void function_children(void **state)
{
    (void)state;
    struct proc_result r;
    assert_int_equal(proc_run_fn(crashing_probe, NULL, NULL, &r), -1);
    assert_true(r.signaled);
    assert_int_equal(r.term_signal, SIGSEGV);
    assert_string_equal(r.out, "partial");
    proc_result_free(&r);
    assert_int_equal(proc_run_fn(good_probe, "fine", NULL, &r), 0);
    assert_string_equal(r.out, "fine");
    proc_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(captures_output_and_status),
        cmocka_unit_test(kills_on_timeout),
        cmocka_unit_test(reports_missing_program),
        cmocka_unit_test(caps_output),
        cmocka_unit_test(env_and_cwd),
        cmocka_unit_test(function_children),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
