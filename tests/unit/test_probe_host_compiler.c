#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probe/host_compiler.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The shape of CUDA 12.8's check (gcc ≤ 14, clang < 20), written out here. */
static const char host_config_12_8[] =
    "#if defined(__GNUC__)\n"
    "\n"
    "#if __GNUC__ > 14\n"
    "\n"
    "#error -- unsupported GNU version! gcc versions later than 14 are not supported! The nvcc "
    "flag '-allow-unsupported-compiler' can be used to override this version check\n"
    "\n"
    "#endif /* __GNUC__ > 14 */\n"
    "\n"
    "#if defined(__HORIZON__)\n"
    "#if (__clang_major__ >= 19) || (__clang_major__ < 3)\n"
    "#error -- unsupported HOS clang version! The version must be must be less than 19\n"
    "#endif\n"
    "#endif\n"
    "#if defined(__clang__) && !defined(__ibmxl_vrm__) && !defined(__ICC) && "
    "!defined(__HORIZON__) && !defined(__APPLE__)\n"
    "\n"
    "#if (__clang_major__ >= 20) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  "
    "(__clang_minor__ < 3))\n"
    "#error -- unsupported clang version! clang version must be less than 20 and greater than "
    "3.2 .\n"
    "#endif\n"
    "#endif\n"
    "#endif /* __GNUC__ */\n";

static void parses_12x_layout(void **state)
{
    (void)state;
    struct host_limits l;
    assert_int_equal(host_config_parse(host_config_12_8, &l), 0);
    assert_int_equal(l.gcc_max, 14);
    assert_int_equal(l.clang_max, 19);
}

static void parses_bare_and_broken_files(void **state)
{
    (void)state;
    struct host_limits l;
    /* No #error wording: the first `#if __GNUC__ > N` still counts. */
    assert_int_equal(host_config_parse("#if __GNUC__ > 12\n#endif\n", &l), 0);
    assert_int_equal(l.gcc_max, 12);
    assert_int_equal(l.clang_max, -1);
    /* `>=` is a floor check in other headers, not the limit. */
    assert_int_equal(host_config_parse("#if __GNUC__ >= 5\n#endif\n", &l), -1);
    assert_int_equal(host_config_parse("", &l), -1);
    assert_int_equal(l.gcc_max, -1);
    assert_int_equal(host_config_parse(NULL, &l), -1);
    assert_int_equal(host_config_parse("#error -- unsupported GNU version!\n#if __GNUC__ >", &l),
                     -1);
    assert_int_equal(host_config_parse("\xff\xfe#if\n#error\n\x01", &l), -1);
}

static void reads_the_installed_toolkit(void **state)
{
    (void)state;
    char *path = host_config_find("/usr/local/cuda");
    if (!path)
        skip();
    char *text = fs_read_file(path, 1 << 20, NULL);
    assert_non_null(text);
    struct host_limits l;
    assert_int_equal(host_config_parse(text, &l), 0);
    /* Every toolkit since CUDA 9 limits gcc somewhere between 6 and 20. */
    assert_in_range(l.gcc_max, 6, 20);
    assert_in_range(l.clang_max, 3, 40);
    free(text);
    free(path);
}

static void finds_host_config_under_targets(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sb-hc-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    assert_null(host_config_find(tmpl));
    char *crt = fs_join(tmpl, "targets/x86_64-linux/include/crt");
    fs_mkdir_p(crt, 0755);
    char *file = fs_join(crt, "host_config.h");
    fs_write_file(file, "#if __GNUC__ > 15\n", 18);
    char *found = host_config_find(tmpl);
    assert_non_null(found);
    assert_string_equal(found, file);
    free(found);
    free(file);
    free(crt);
    fs_remove_tree(tmpl);
}

static void write_script(const char *dir, const char *name, const char *body)
{
    char *path = fs_join(dir, name);
    char *text = xasprintf("#!/bin/sh\n%s\n", body);
    fs_write_file(path, text, strlen(text));
    chmod(path, 0755);
    free(text);
    free(path);
}

static void probes_fake_compilers(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sb-cc-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    write_script(tmpl, "gcc-13", "echo 13.3.0");
    write_script(tmpl, "g++-13", "echo 13.3.0");
    write_script(tmpl, "gcc-14", "echo 14.2.0"); /* no g++-14: not a usable pair */
    write_script(tmpl, "gcc-12", "echo 12.2.0");
    write_script(tmpl, "g++-12", "echo 12.2.0");
    write_script(tmpl, "clang-21", "echo 21.1.0");
    write_script(tmpl, "silent", "exit 0");

    char *cc, *cxx;
    assert_int_equal(host_compiler_find_fitting(15, tmpl, &cc, &cxx), 13);
    assert_string_equal(cc, "gcc-13");
    assert_string_equal(cxx, "g++-13");
    free(cc);
    free(cxx);
    assert_int_equal(host_compiler_find_fitting(12, tmpl, &cc, &cxx), 12);
    free(cc);
    free(cxx);
    assert_int_equal(host_compiler_find_fitting(11, tmpl, &cc, &cxx), -1);
    assert_null(cc);

    struct compiler_info ci;
    char *p = fs_join(tmpl, "gcc-13");
    char *with_launcher = xasprintf("ccache %s", p);
    assert_int_equal(probe_compiler(with_launcher, &ci), 0);
    assert_int_equal(ci.version.part[0], 13);
    assert_false(ci.is_clang);
    compiler_info_free(&ci);
    free(with_launcher);
    free(p);

    p = fs_join(tmpl, "clang-21");
    assert_int_equal(probe_compiler(p, &ci), 0);
    assert_true(ci.is_clang);
    compiler_info_free(&ci);
    free(p);

    p = fs_join(tmpl, "silent");
    assert_int_equal(probe_compiler(p, &ci), -1);
    assert_non_null(strstr(ci.error, "no version"));
    compiler_info_free(&ci);
    free(p);

    assert_int_equal(probe_compiler("no-such-compiler-xyz", &ci), -1);
    assert_non_null(strstr(ci.error, "not found"));
    compiler_info_free(&ci);
    fs_remove_tree(tmpl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_12x_layout),
        cmocka_unit_test(parses_bare_and_broken_files),
        cmocka_unit_test(reads_the_installed_toolkit),
        cmocka_unit_test(finds_host_config_under_targets),
        cmocka_unit_test(probes_fake_compilers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
