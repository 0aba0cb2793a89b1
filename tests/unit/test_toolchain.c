/* The toolchain module's rules on data: which fetched toolkit, which host compiler, how many
 * jobs; and its probes on fake trees and fake compilers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "toolchain/host.h"
#include "toolchain/jobs.h"
#include "toolchain/toolkit.h"
#include "util/fs.h"
#include "util/strbuf.h"

static void picks_the_fetched_toolkit_matching_torch(void **state)
{
    (void)state;
    const char *names[] = {"cuda-12.9.1", "cuda-13.0.2", "cuda-13.0.10", "cuda-12.8.1",
                           "cuda-12.8.0", "cuda-x",      "other",        "cuda-13.1.0.staging",
                           "cuda-13",     "cuda-14.0.0"};
    int n = 10;
    enum toolkit_pick_rule rule;
    /* torch's major.minor first, the newest patch among them, even when a newer one exists */
    assert_int_equal(toolkit_pick_fetched(names, n, "12.8", &rule), 3);
    assert_int_equal(rule, TOOLKIT_PICK_TORCH);
    assert_int_equal(toolkit_pick_fetched(names, n, "13.0", &rule), 2);
    assert_int_equal(rule, TOOLKIT_PICK_TORCH);
    /* torch's CUDA not fetched, or unknown: the newest; "cuda-13" is no release */
    assert_int_equal(toolkit_pick_fetched(names, n, "12.6", &rule), 9);
    assert_int_equal(rule, TOOLKIT_PICK_NEWEST);
    assert_int_equal(toolkit_pick_fetched(names, n, NULL, &rule), 9);
    assert_int_equal(rule, TOOLKIT_PICK_NO_TORCH);
    assert_int_equal(toolkit_pick_fetched(names, n, "None", &rule), 9);
    assert_int_equal(rule, TOOLKIT_PICK_NO_TORCH);
    /* a torch release with a patch part matches only that patch release */
    assert_int_equal(toolkit_pick_fetched(names, n, "13.0.2", &rule), 1);
    /* one candidate is used whatever torch says; none at all is -1 */
    assert_int_equal(toolkit_pick_fetched(names + 3, 1, "13.0", &rule), 0);
    assert_int_equal(rule, TOOLKIT_PICK_ONLY);
    assert_int_equal(toolkit_pick_fetched(names + 5, 4, "13.0", &rule), -1);
    assert_int_equal(rule, TOOLKIT_PICK_NONE);
    assert_int_equal(toolkit_pick_fetched(NULL, 0, NULL, NULL), -1);
    assert_non_null(strstr(toolkit_pick_rule_text(TOOLKIT_PICK_TORCH), "torch's CUDA"));
}

static void mk_nvcc(const char *data, const char *name, mode_t mode)
{
    char *bin = xasprintf("%s/%s/bin", data, name);
    assert_int_equal(fs_mkdir_p(bin, 0755), 0);
    char *nvcc = fs_join(bin, "nvcc");
    assert_int_equal(fs_write_file(nvcc, "#!/bin/sh\n", 10), 0);
    chmod(nvcc, mode);
    free(nvcc);
    free(bin);
}

static void finds_fetched_toolkits_with_an_nvcc(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sb-toolkits-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    enum toolkit_pick_rule rule;
    assert_null(toolkit_find_fetched(tmpl, NULL, &rule));
    assert_int_equal(rule, TOOLKIT_PICK_NONE);
    mk_nvcc(tmpl, "cuda-12.8.1", 0755);
    mk_nvcc(tmpl, "cuda-13.0.2", 0644); /* not executable: not a toolkit */
    mk_nvcc(tmpl, "cuda-13.1.0.staging", 0755);
    char *dir = xasprintf("%s/cuda-14.0.0/bin", tmpl); /* no nvcc at all */
    fs_mkdir_p(dir, 0755);
    free(dir);
    /* one candidate: used without asking torch */
    char *found = toolkit_find_fetched(tmpl, NULL, &rule);
    char *want = fs_join(tmpl, "cuda-12.8.1");
    assert_string_equal(found, want);
    assert_int_equal(rule, TOOLKIT_PICK_ONLY);
    free(found);
    free(want);
    char *missing = fs_join(tmpl, "nowhere");
    assert_null(toolkit_find_fetched(missing, NULL, NULL));
    free(missing);
    fs_remove_tree(tmpl);
}

/* --python PY, else $SAGEBUILD_PYTHON, else python3: the one rule every command that reads torch
 * follows (an empty $SAGEBUILD_PYTHON is unset, as `SAGEBUILD_PYTHON= cmd` means). */
static void picks_the_python_whose_torch_decides(void **state)
{
    (void)state;
    assert_string_equal(toolkit_python_pick("/venv/bin/python", "/usr/bin/python3.12"),
                        "/venv/bin/python");
    assert_string_equal(toolkit_python_pick("/venv/bin/python", NULL), "/venv/bin/python");
    assert_string_equal(toolkit_python_pick(NULL, "/usr/bin/python3.12"), "/usr/bin/python3.12");
    assert_string_equal(toolkit_python_pick(NULL, ""), "python3");
    assert_string_equal(toolkit_python_pick(NULL, NULL), "python3");
}

static void names_fetched_prefixes(void **state)
{
    (void)state;
    setenv("XDG_DATA_HOME", "/data", 1);
    char *p = toolkit_fetched_prefix("13.0.2");
    assert_string_equal(p, "/data/sagebuild/cuda-13.0.2");
    free(p);
}

static void judges_host_limits(void **state)
{
    (void)state;
    struct host_limits lim = {14, 19};
    struct version g15 = {{15, 1, 0, 0}, 3}, g14 = {{14, 2, 0, 0}, 3}, c18 = {{18, 1, 0, 0}, 3};
    assert_false(toolchain_host_fits(&lim, 0, &g15));
    assert_true(toolchain_host_fits(&lim, 0, &g14));
    assert_true(toolchain_host_fits(&lim, 1, &c18));
    assert_false(toolchain_host_fits(&lim, 1, &(struct version){{20, 0, 0, 0}, 2}));
    assert_int_equal(toolchain_host_limit(&lim, 0), 14);
    assert_int_equal(toolchain_host_limit(&lim, 1), 19);
    struct host_limits unknown = {-1, -1};
    assert_true(toolchain_host_fits(&unknown, 0, &g15));
    assert_true(toolchain_host_fits(&unknown, 1, &c18));
}

static void names_the_cxx_driver(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"gcc", "g++"},
        {"gcc-13", "g++-13"},
        {"/usr/bin/gcc-14", "/usr/bin/g++-14"},
        {"x86_64-linux-gnu-gcc-12", "x86_64-linux-gnu-g++-12"},
        {"clang", "clang++"},
        {"/opt/llvm/bin/clang-18", "/opt/llvm/bin/clang++-18"},
        {"cc", "c++"},
        {"/usr/bin/cc", "/usr/bin/c++"},
        {"g++-13", "g++-13"},
        {"clang++", "clang++"},
        {"icpx", "icpx"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = toolchain_cxx_for(cases[i][0]);
        assert_string_equal(s, cases[i][1]);
        free(s);
    }
}

static void defaults_as_torch_and_cmake_do(void **state)
{
    (void)state;
    assert_string_equal(toolchain_torch_host_default(NULL), "gcc");
    assert_string_equal(toolchain_torch_host_default(""), "gcc");
    assert_string_equal(toolchain_torch_host_default("gcc-13"), "gcc-13");
    const char *cases[][4] = {
        /* CUDAHOSTCXX, CXX, CC, expected */
        {"g++-12", "g++-13", "gcc-14", "g++-12"},
        {"", "g++-13", "gcc-14", "g++-13"},
        {NULL, NULL, "gcc-14", "g++-14"},
        {NULL, "", "", "g++"},
        {NULL, NULL, NULL, "g++"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = toolchain_cmake_host_default(cases[i][0], cases[i][1], cases[i][2]);
        assert_string_equal(s, cases[i][3]);
        free(s);
    }
}

static void sizes_jobs_by_cores_and_memory(void **state)
{
    (void)state;
    long long gib_kb = 1024LL * 1024;
    assert_int_equal(toolchain_jobs(16, 128 * gib_kb), 16); /* cores bound */
    assert_int_equal(toolchain_jobs(16, 20 * gib_kb), 5);   /* 4 GiB each */
    assert_int_equal(toolchain_jobs(2, 23 * gib_kb), 2);
    assert_int_equal(toolchain_jobs(8, 2 * gib_kb), 1); /* never zero */
    assert_int_equal(toolchain_jobs(8, 0), 8);          /* memory unknown: the cores */
    assert_int_equal(toolchain_jobs(8, -1), 8);
    assert_int_equal(toolchain_jobs(0, -1), 1);
    assert_int_equal(toolchain_max_jobs(20.0, 4.0, 16), 5);
    assert_int_equal(toolchain_max_jobs(200.0, 4.0, 16), 16);
    assert_int_equal(toolchain_max_jobs(2.0, 4.0, 16), 1);
    assert_int_equal(toolchain_max_jobs(0.0, 4.0, 2), 1);
    assert_int_equal(toolchain_max_jobs(8.0, 0.0, 4), 1);
    assert_int_equal(toolchain_max_jobs(100.0, 4.0, 0), 1);
}

static void write_script(const char *dir, const char *name, const char *version)
{
    char *path = fs_join(dir, name);
    char *text = xasprintf("#!/bin/sh\necho %s\n", version);
    fs_write_file(path, text, strlen(text));
    chmod(path, 0755);
    free(text);
    free(path);
}

static void chooses_a_host_compiler_on_fake_ones(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sb-host-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    write_script(tmpl, "gcc", "15.1.0");
    write_script(tmpl, "gcc-13", "13.3.0");
    write_script(tmpl, "g++-13", "13.3.0");
    write_script(tmpl, "clang-20", "20.1.0");
    write_script(tmpl, "clang-21", "21.1.0");
    char *gcc = fs_join(tmpl, "gcc"), *clang20 = fs_join(tmpl, "clang-20"),
         *clang21 = fs_join(tmpl, "clang-21"), *none = fs_join(tmpl, "gcc-99");
    struct host_limits lim = {14, 20};
    struct host_choice c;

    /* too new: the newest gcc-N/g++-N within the gcc limit replaces it */
    toolchain_host_choose(&lim, gcc, tmpl, &c);
    assert_true(c.asked.found);
    assert_false(c.asked_fits);
    assert_string_equal(c.fit_cc, "gcc-13");
    assert_string_equal(c.fit_cxx, "g++-13");
    host_choice_free(&c);
    /* a clang is held to the clang limit */
    toolchain_host_choose(&lim, clang20, tmpl, &c);
    assert_true(c.asked_fits);
    assert_true(c.asked.is_clang);
    assert_null(c.fit_cc);
    host_choice_free(&c);
    toolchain_host_choose(&lim, clang21, tmpl, &c);
    assert_false(c.asked_fits);
    assert_string_equal(c.fit_cc, "gcc-13");
    host_choice_free(&c);
    /* missing: replaced the same way */
    toolchain_host_choose(&lim, none, tmpl, &c);
    assert_false(c.asked.found);
    assert_string_equal(c.fit_cc, "gcc-13");
    host_choice_free(&c);
    /* no limit known: whatever was asked fits, nothing is looked for */
    struct host_limits unknown = {-1, -1};
    toolchain_host_choose(&unknown, gcc, tmpl, &c);
    assert_true(c.asked_fits);
    host_choice_free(&c);
    /* a limit nothing on PATH meets */
    struct host_limits old = {11, -1};
    toolchain_host_choose(&old, gcc, tmpl, &c);
    assert_false(c.asked_fits);
    assert_null(c.fit_cc);
    host_choice_free(&c);
    free(gcc);
    free(clang20);
    free(clang21);
    free(none);
    fs_remove_tree(tmpl);
}

/* A toolkit tree with only crt/host_config.h, for the torch-side choice. */
static char *mk_toolkit(const char *dir, const char *name, int gcc_max)
{
    char *crt = xasprintf("%s/%s/include/crt", dir, name);
    fs_mkdir_p(crt, 0755);
    char *file = fs_join(crt, "host_config.h");
    char *text =
        xasprintf("#if __GNUC__ > %d\n#error -- unsupported GNU version!\n#endif\n", gcc_max);
    fs_write_file(file, text, strlen(text));
    free(text);
    free(file);
    free(crt);
    return fs_join(dir, name);
}

static void pairs_compilers_for_torch_builds(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sb-hostcc-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    write_script(tmpl, "gcc", "15.1.0");
    write_script(tmpl, "gcc-13", "13.3.0");
    write_script(tmpl, "g++-13", "13.3.0");
    char *old_path = xstrdup(getenv("PATH"));
    setenv("PATH", tmpl, 1);
    unsetenv("CXX");
    char *root = mk_toolkit(tmpl, "cuda-12.8", 14);
    struct hostcc_choice h;

    unsetenv("CC");
    hostcc_choose(root, &h);
    assert_string_equal(h.cc, "gcc-13");
    assert_string_equal(h.cxx, "g++-13");
    assert_int_equal(h.gcc_max, 14);
    assert_non_null(strstr(h.note, "gcc 15 is newer than this toolkit accepts (gcc <= 14)"));
    hostcc_free(&h);
    /* a fitting $CC is paired with its own C++ driver, not the default g++ */
    setenv("CC", "gcc-13", 1);
    hostcc_choose(root, &h);
    assert_string_equal(h.cc, "gcc-13");
    assert_string_equal(h.cxx, "g++-13");
    assert_non_null(strstr(h.note, "within this toolkit's limit (gcc <= 14)"));
    hostcc_free(&h);
    /* $CXX, when set, is the user's pairing */
    setenv("CXX", "g++-13", 1);
    setenv("CC", "gcc-13", 1);
    hostcc_choose(root, &h);
    assert_string_equal(h.cxx, "g++-13");
    hostcc_free(&h);
    unsetenv("CXX");
    /* $CC missing: said so, not "version -1" */
    setenv("CC", "gcc-99", 1);
    hostcc_choose(root, &h);
    assert_string_equal(h.cc, "gcc-13");
    assert_non_null(strstr(h.note, "gcc-99 not found; using gcc-13"));
    hostcc_free(&h);
    /* nothing fits */
    char *root11 = mk_toolkit(tmpl, "cuda-11.4", 11);
    unsetenv("CC");
    hostcc_choose(root11, &h);
    assert_null(h.cc);
    assert_null(h.cxx);
    assert_non_null(strstr(h.note, "install gcc-11"));
    hostcc_free(&h);

    setenv("PATH", old_path, 1);
    unsetenv("CC");
    free(old_path);
    free(root);
    free(root11);
    fs_remove_tree(tmpl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(picks_the_fetched_toolkit_matching_torch),
        cmocka_unit_test(finds_fetched_toolkits_with_an_nvcc),
        cmocka_unit_test(picks_the_python_whose_torch_decides),
        cmocka_unit_test(names_fetched_prefixes),
        cmocka_unit_test(judges_host_limits),
        cmocka_unit_test(names_the_cxx_driver),
        cmocka_unit_test(defaults_as_torch_and_cmake_do),
        cmocka_unit_test(sizes_jobs_by_cores_and_memory),
        cmocka_unit_test(chooses_a_host_compiler_on_fake_ones),
        cmocka_unit_test(pairs_compilers_for_torch_builds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
