#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "install/decide.h"

static void reads_what_the_python_says(void **state)
{
    (void)state;
    struct py_facts f;
    assert_int_equal(install_parse_probe("python\t3.11.7\r\nexecutable\t/v/bin/python\n"
                                         "machine\tx86_64\nplatform\tlinux\npip\t23.2.1\n"
                                         "sageattention\t2.2.0\nsageattention_location\t/v/site\n"
                                         "noise without a tab\nunknown\tkey\n",
                                         &f),
                     0);
    assert_string_equal(f.version, "3.11.7");
    assert_string_equal(f.executable, "/v/bin/python");
    assert_string_equal(f.pip, "23.2.1");
    assert_null(f.torch);
    assert_string_equal(f.sage_version, "2.2.0");
    assert_string_equal(f.sage_location, "/v/site");
    assert_null(install_python_refusal(&f, "x86_64"));
    char *why = install_python_refusal(&f, "aarch64");
    assert_non_null(strstr(why, "'x86_64'"));
    free(why);
    free(f.pip);
    f.pip = NULL;
    why = install_python_refusal(&f, "x86_64");
    assert_non_null(strstr(why, "no pip"));
    free(why);
    free(f.platform);
    f.platform = strdup("win32");
    why = install_python_refusal(&f, "x86_64");
    assert_non_null(strstr(why, "Linux"));
    free(why);
    py_facts_free(&f);
    /* Not a python's answer at all. */
    assert_int_equal(install_parse_probe("Traceback (most recent call last):\n", &f), -1);
    py_facts_free(&f);
    assert_int_equal(install_parse_probe("", &f), -1);
    py_facts_free(&f);
    /* An empty value is no value. */
    assert_int_equal(install_parse_probe("python\t3.12.1\ntorch\t\n", &f), 0);
    assert_null(f.torch);
    py_facts_free(&f);
}

static void says_what_an_install_replaces(void **state)
{
    (void)state;
    char *s;
    assert_int_equal(install_replacement(NULL, "2.2.0+sagebuild.0.1.0", &s), REPLACE_NOTHING);
    assert_null(s);
    assert_int_equal(install_replacement("", "2.2.0+sagebuild.0.1.0", &s), REPLACE_NOTHING);
    assert_int_equal(install_replacement("2.2.0+sagebuild.0.1.0", "2.2.0+sagebuild.0.1.0", &s),
                     REPLACE_OURS);
    assert_non_null(strstr(s, "the same version"));
    free(s);
    assert_int_equal(install_replacement("2.2.0+sagebuild.0.0.9", "2.2.0+sagebuild.0.1.0", &s),
                     REPLACE_OURS);
    assert_non_null(strstr(s, "earlier install"));
    free(s);
    assert_int_equal(install_replacement("2.2.0", "2.2.0+sagebuild.0.1.0", &s), REPLACE_UPSTREAM);
    assert_non_null(strstr(s, "upstream"));
    assert_non_null(strstr(s, "sageattention==2.2.0"));
    free(s);
    assert_int_equal(install_replacement("2.2.0+cu128torch2.7.1", "x", &s), REPLACE_UPSTREAM);
    free(s);
}

static void builds_cover_gpus_by_arch_rules(void **state)
{
    (void)state;
    struct gpu_cc h200 = {9, 0}, rtx5090 = {12, 0}, rtx4090 = {8, 9}, a10 = {8, 6};
    const char *names[] = {"NVIDIA H200", "NVIDIA GeForce RTX 5090"};
    struct gpu_cc two[] = {h200, rtx5090};
    char *missing = NULL;
    assert_true(install_build_covers("sm_90,sm_120a", two, names, 2, &missing));
    assert_null(missing);
    assert_false(install_build_covers("sm_90", two, names, 2, &missing));
    assert_string_equal(missing, "NVIDIA GeForce RTX 5090 (sm_120)");
    free(missing);
    /* SASS for sm_89 does not run on sm_120; sm_80 runs on sm_86 and sm_89. */
    assert_false(install_build_covers("sm_89", &rtx5090, NULL, 1, &missing));
    assert_string_equal(missing, "GPU 0 (sm_120)");
    free(missing);
    assert_true(install_build_covers("sm_80", &a10, NULL, 1, NULL));
    assert_true(install_build_covers("sm_80", &rtx4090, NULL, 1, NULL));
    /* an 'a' build only on its exact arch */
    assert_false(install_build_covers("sm_90a", &rtx5090, NULL, 1, NULL));
    assert_true(install_build_covers("sm_90a", &h200, NULL, 1, NULL));
    assert_false(install_build_covers("", &h200, NULL, 1, NULL));
    assert_false(install_build_covers(NULL, &h200, NULL, 1, NULL));
    assert_false(install_build_covers("garbage,,;", &h200, NULL, 1, NULL));
    assert_true(install_build_covers("sm_90", NULL, NULL, 0, NULL));
}

static void reads_the_import_check(void **state)
{
    (void)state;
    struct import_facts f;
    assert_int_equal(install_parse_verify("version\t2.2.0+sagebuild.0.1.0\nfile\t/s/sageattention/"
                                          "__init__.py\ntorch_imported\t1\ncuda_initialized\t0\n"
                                          "dist_file\t/s/sageattention/__init__.py\n",
                                          &f),
                     0);
    assert_string_equal(f.version, "2.2.0+sagebuild.0.1.0");
    assert_int_equal(f.torch_imported, 1);
    assert_int_equal(f.cuda_initialized, 0);
    assert_string_equal(f.dist_file, "/s/sageattention/__init__.py");
    import_facts_free(&f);
    assert_int_equal(install_parse_verify("version\t1\ncuda_initialized\t1\n", &f), -1);
    assert_int_equal(f.cuda_initialized, 1);
    import_facts_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_what_the_python_says),
        cmocka_unit_test(says_what_an_install_replaces),
        cmocka_unit_test(builds_cover_gpus_by_arch_rules),
        cmocka_unit_test(reads_the_import_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
