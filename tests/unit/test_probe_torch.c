#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probe/torch.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char cu130_version_py[] =
    "from typing import Optional\n"
    "\n"
    "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n"
    "__version__ = '2.11.0+cu130'\n"
    "debug = False\n"
    "cuda: Optional[str] = '13.0'\n"
    "git_version = '70d99e998b4955e0049d6ae4a5bc6b5e5c6ea3f5'\n"
    "hip: Optional[str] = None\n"
    "xpu: Optional[str] = None\n";

static void parses_a_cuda_build(void **state)
{
    (void)state;
    struct torch_version_py v;
    assert_int_equal(torch_parse_version_py(cu130_version_py, strlen(cu130_version_py), &v), 0);
    assert_string_equal(v.version, "2.11.0+cu130");
    assert_string_equal(v.cuda, "13.0");
    assert_false(v.cuda_is_none);
    assert_string_equal(v.git_version, "70d99e998b4955e0049d6ae4a5bc6b5e5c6ea3f5");
    assert_null(v.hip);
    torch_version_py_free(&v);
}

static void parses_cpu_and_old_forms(void **state)
{
    (void)state;
    const char *cpu = "__version__ = \"2.3.0+cpu\"\r\ncuda = None\r\n";
    struct torch_version_py v;
    assert_int_equal(torch_parse_version_py(cpu, strlen(cpu), &v), 0);
    assert_string_equal(v.version, "2.3.0+cpu");
    assert_null(v.cuda);
    assert_true(v.cuda_is_none);
    torch_version_py_free(&v);

    const char *rocm = "__version__ = '2.5.1+rocm6.2'\ncuda: Optional[str] = None\n"
                       "hip: Optional[str] = '6.2.41133-dd7f95766'\n";
    assert_int_equal(torch_parse_version_py(rocm, strlen(rocm), &v), 0);
    assert_string_equal(v.hip, "6.2.41133-dd7f95766");
    assert_null(v.cuda);
    torch_version_py_free(&v);
}

static void ignores_lookalikes_and_garbage(void **state)
{
    (void)state;
    struct torch_version_py v;
    /* Indented, longer names, unterminated strings, binary: none of them is a value. */
    const char *text = "  __version__ = '9.9'\ncuda_version = '1.0'\ncuda = '12.8\n"
                       "__version__ = '2.8.0'\n";
    assert_int_equal(torch_parse_version_py(text, strlen(text), &v), 0);
    assert_string_equal(v.version, "2.8.0");
    assert_null(v.cuda);
    torch_version_py_free(&v);

    const char bin[] = {'\x7f', 'E', 'L', 'F', '\0', '_', '_', '\n', '\xff', '\0'};
    assert_int_equal(torch_parse_version_py(bin, sizeof bin, &v), -1);
    assert_null(v.version);
    torch_version_py_free(&v);

    const char nul_inside[] = "__version__ = '2.\0'\n";
    assert_int_equal(torch_parse_version_py(nul_inside, sizeof nul_inside - 1, &v), -1);
    torch_version_py_free(&v);

    assert_int_equal(torch_parse_version_py("", 0, &v), -1);
    assert_int_equal(torch_parse_version_py(NULL, 0, &v), -1);
    /* Not NUL-terminated: the parser must stop at len. */
    const char cut[] = "__version__ = '2.1.0'";
    assert_int_equal(torch_parse_version_py(cut, sizeof cut - 2, &v), -1);
    torch_version_py_free(&v);
}

static void parses_python_helper_output(void **state)
{
    (void)state;
    const char *names[] = {"torch", "sageattention", "triton"};
    char *dirs[3] = {NULL, NULL, NULL};
    char *pyver = NULL;
    python_parse_find_output("python\t3.11.7\ntorch\t/venv/lib/python3.11/site-packages/torch\n"
                             "junk line\ntriton\t/x/triton\n",
                             names, 3, dirs, &pyver);
    assert_string_equal(pyver, "3.11.7");
    assert_string_equal(dirs[0], "/venv/lib/python3.11/site-packages/torch");
    assert_null(dirs[1]);
    assert_string_equal(dirs[2], "/x/triton");
    for (int i = 0; i < 3; i++)
        free(dirs[i]);
    free(pyver);
}

static void probes_a_given_dir_and_a_missing_python(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sb-torch-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char *torch = fs_join(tmpl, "torch");
    assert_int_equal(fs_mkdir_p(torch, 0755), 0);
    char *vp = fs_join(torch, "version.py");
    assert_int_equal(fs_write_file(vp, cu130_version_py, strlen(cu130_version_py)), 0);

    struct torch_info t;
    char *with_slash = xasprintf("%s/", torch);
    assert_int_equal(probe_torch(NULL, with_slash, &t), 0);
    assert_true(t.found);
    assert_string_equal(t.cuda, "13.0");
    assert_string_equal(t.dir, torch);
    assert_string_equal(t.site, tmpl);
    torch_info_free(&t);

    assert_int_equal(probe_torch(NULL, tmpl, &t), 0); /* the site-packages folder */
    assert_string_equal(t.dir, torch);
    torch_info_free(&t);

    assert_int_equal(probe_torch("/nonexistent/python3", NULL, &t), -1);
    assert_false(t.found);
    assert_non_null(t.error);
    assert_non_null(strstr(t.error, "/nonexistent/python3"));
    torch_info_free(&t);

    fs_remove_tree(tmpl);
    free(with_slash);
    free(vp);
    free(torch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_a_cuda_build),
        cmocka_unit_test(parses_cpu_and_old_forms),
        cmocka_unit_test(ignores_lookalikes_and_garbage),
        cmocka_unit_test(parses_python_helper_output),
        cmocka_unit_test(probes_a_given_dir_and_a_missing_python),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
