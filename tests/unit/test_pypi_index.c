/* The PyPI simple-API parsers: PEP 503 HTML (relative hrefs, <base>, fragments, entities,
 * data-yanked, odd markup) and PEP 691 JSON; URL resolution, name normalisation, index lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fetch/sources/pypi_index.h"
#include "util/strbuf.h"
#include "util/url.h"

#define SHA_A "56fe502eb77625a12f25172caa3cdddb4e4c8ba2c8c17dba44b164761b380f03"
#define SHA_B "7F82250D7782AA23B6CFE765ECC7DB554BD3C2870C43F3D1821F1D18AEBF0548"

static void check_resolve(const char *base, const char *href, const char *want)
{
    char *got = pypi_url_resolve(base, href);
    assert_string_equal(got, want);
    free(got);
}

static void url_resolution(void **state)
{
    (void)state;
    const char *b = "https://mirror.example/simple/nvidia-cuda-nvcc/";
    check_resolve(b, "../../packages/a/b/x.whl#sha256=00",
                  "https://mirror.example/packages/a/b/x.whl");
    check_resolve(b, "x.whl", "https://mirror.example/simple/nvidia-cuda-nvcc/x.whl");
    check_resolve(b, "./x.whl?a=1", "https://mirror.example/simple/nvidia-cuda-nvcc/x.whl?a=1");
    check_resolve(b, "/files/x.whl", "https://mirror.example/files/x.whl");
    check_resolve(b, "//cdn.example/x.whl", "https://cdn.example/x.whl");
    check_resolve(b, "https://files.pythonhosted.org/p/x.whl#sha256=ab",
                  "https://files.pythonhosted.org/p/x.whl");
    /* ".." never climbs above the host. */
    check_resolve("http://127.0.0.1:8000/simple/p/", "../../../../x.whl",
                  "http://127.0.0.1:8000/x.whl");
    /* A page URL without its trailing slash: its last part is replaced. */
    check_resolve("http://h/simple/p", "x.whl", "http://h/simple/x.whl");
    check_resolve("http://h", "x.whl", "http://h/x.whl");
}

static void normalisation(void **state)
{
    (void)state;
    char *n = pypi_normalize("Nvidia_CUDA.nvcc");
    assert_string_equal(n, "nvidia-cuda-nvcc");
    free(n);
    n = pypi_normalize("nvidia--_.cuda");
    assert_string_equal(n, "nvidia-cuda");
    free(n);
    char *u = pypi_project_url("https://pypi.org/simple///", "nvidia_nvvm");
    assert_string_equal(u, "https://pypi.org/simple/nvidia-nvvm/");
    free(u);
}

static void entities(void **state)
{
    (void)state;
    const char *s = "a&amp;b&lt;&#62;&#x41;&quot;&bogus;&#;&";
    char *u = pypi_html_unescape(s, strlen(s));
    assert_string_equal(u, "a&b<>A\"&bogus;&#;&");
    free(u);
}

static void html_page(void **state)
{
    (void)state;
    const char *page =
        "<!DOCTYPE html><html><body><h1>Links for nvidia-cuda-nvcc</h1>\n"
        "<!-- <a href=\"commented.whl\">commented.whl</a> -->\n"
        "<a href=\"../../packages/71/8b/nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64."
        "manylinux_2_17_x86_64.whl#sha256=" SHA_A "\" data-requires-python=\"&gt;=3\">"
        "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl</a><br/"
        ">\n"
        "<A HREF='https://files.example/y.whl#SHA256=" SHA_B "' data-yanked>\n"
        "  nvidia_cuda_nvcc-13.0.48-py3-none-manylinux_2_27_aarch64.whl  </A>\n"
        "<a href=x.tar.gz#md5=abc>nvidia_cuda_nvcc-13.0.88.tar.gz</a>\n"
        "<a data-x='>' href=\"q.whl?x=1&amp;y=2\"><span>markup</span></a>\n"
        "<a>no href</a><a href=\"\">empty</a>\n"
        "<a href=\"trunc";
    struct pypi_listing l;
    pypi_parse_html(page, strlen(page), "https://m.example/simple/nvidia-cuda-nvcc/", &l);
    assert_int_equal(l.nfiles, 4);
    assert_string_equal(
        l.files[0].filename,
        "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl");
    assert_string_equal(l.files[0].url,
                        "https://m.example/packages/71/8b/nvidia_cuda_nvcc-13.0.88-py3-none-"
                        "manylinux2014_x86_64.manylinux_2_17_x86_64.whl");
    assert_string_equal(l.files[0].sha256, SHA_A);
    assert_false(l.files[0].yanked);
    assert_int_equal(l.files[0].size, -1);
    /* Upper-case tag, single quotes, whitespace around the text, hash name in capitals. */
    assert_string_equal(l.files[1].filename,
                        "nvidia_cuda_nvcc-13.0.48-py3-none-manylinux_2_27_aarch64.whl");
    assert_string_equal(l.files[1].url, "https://files.example/y.whl");
    assert_string_equal(l.files[1].sha256,
                        "7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548");
    assert_true(l.files[1].yanked);
    /* A non-sha256 fragment gives no hash. */
    assert_string_equal(l.files[2].sha256, "");
    /* Markup inside the anchor: the name comes from the URL; '>' inside a quoted value and
     * an entity in the href are handled. */
    assert_string_equal(l.files[3].filename, "q.whl");
    assert_string_equal(l.files[3].url, "https://m.example/simple/nvidia-cuda-nvcc/q.whl?x=1&y=2");
    pypi_listing_free(&l);
}

static void html_base_href(void **state)
{
    (void)state;
    const char *page = "<html><head><base href=\"/mirror/files/\"></head>"
                       "<a href=\"x-1.0-py3-none-any.whl\">x-1.0-py3-none-any.whl</a>";
    struct pypi_listing l;
    pypi_parse_html(page, strlen(page), "http://h:1/simple/x/", &l);
    assert_int_equal(l.nfiles, 1);
    assert_string_equal(l.files[0].url, "http://h:1/mirror/files/x-1.0-py3-none-any.whl");
    pypi_listing_free(&l);
}

static void html_garbage(void **state)
{
    (void)state;
    static const char *const pages[] = {"",         "<",           "<a",
                                        "<a href=", "<a href='x'", "<!--",
                                        "<<<>>>",   "<a href=x>",  "\0<a href=x>y</a>"};
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        struct pypi_listing l;
        pypi_parse_html(pages[i], strlen(pages[i]), NULL, &l);
        assert_true(l.nfiles <= 1);
        pypi_listing_free(&l);
    }
}

static void json_page(void **state)
{
    (void)state;
    const char *doc =
        "{\"meta\":{\"api-version\":\"1.1\",\"_last-serial\":1},\"name\":\"nvidia-nvvm\","
        "\"versions\":[\"13.0.88\"],\"files\":["
        "{\"filename\":\"nvidia_nvvm-13.0.88-py3-none-manylinux2010_x86_64.whl\","
        "\"url\":\"../../packages/n.whl\",\"hashes\":{\"sha256\":\"" SHA_A "\"},"
        "\"requires-python\":\">=3\",\"yanked\":false,\"size\":61601415},"
        "{\"filename\":\"nvidia_nvvm-13.0.48-py3-none-manylinux2010_x86_64.whl\","
        "\"url\":\"https://f.example/o.whl\",\"hashes\":{\"md5\":\"00\"},"
        "\"yanked\":\"broken build\"},"
        "{\"filename\":\"bad\",\"url\":7},{\"url\":\"u\"},3,"
        "{\"filename\":\"z.whl\",\"url\":\"z.whl\",\"hashes\":{\"sha256\":\"short\"},"
        "\"yanked\":true,\"size\":-4}]}";
    struct pypi_listing l;
    char *err = NULL;
    assert_int_equal(
        pypi_parse_json(doc, strlen(doc), "https://m.example/simple/nvidia-nvvm/", &l, &err), 0);
    assert_int_equal(l.nfiles, 3);
    assert_string_equal(l.files[0].url, "https://m.example/packages/n.whl");
    assert_string_equal(l.files[0].sha256, SHA_A);
    assert_int_equal(l.files[0].size, 61601415);
    assert_false(l.files[0].yanked);
    assert_string_equal(l.files[1].sha256, "");
    assert_true(l.files[1].yanked); /* a reason string means yanked */
    assert_int_equal(l.files[1].size, -1);
    assert_string_equal(l.files[2].sha256, "");
    assert_true(l.files[2].yanked);
    assert_int_equal(l.files[2].size, -1);
    pypi_listing_free(&l);
}

static void json_refusals(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "not json",
        "[1,2]",
        "{\"files\":[]}",
        "{\"meta\":{\"api-version\":\"2.0\"},\"files\":[]}",
        "{\"meta\":{\"api-version\":1},\"files\":[]}",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        struct pypi_listing l;
        char *err = NULL;
        assert_int_equal(pypi_parse_json(docs[i], strlen(docs[i]), "http://h/", &l, &err), -1);
        assert_non_null(err);
        free(err);
    }
}

static void content_types(void **state)
{
    (void)state;
    assert_true(pypi_is_json_type("application/vnd.pypi.simple.v1+json"));
    assert_true(pypi_is_json_type(" application/vnd.pypi.simple.v1+JSON; charset=utf-8"));
    assert_false(pypi_is_json_type("application/vnd.pypi.simple.v1+html"));
    assert_false(pypi_is_json_type("text/html"));
    assert_false(pypi_is_json_type("application/vnd.pypi.simple.v1+jsonx"));
    assert_false(pypi_is_json_type(NULL));
}

static void index_lists(void **state)
{
    (void)state;
    char *cli[] = {"http://a/simple/", "http://b/simple,http://a/simple"};
    int n = 0;
    char **l = pypi_index_urls(cli, 2, "http://c/simple\nhttp://b/simple/", "http://d/simple", &n);
    assert_int_equal(n, 4);
    assert_string_equal(l[0], "http://a/simple");
    assert_string_equal(l[1], "http://b/simple");
    assert_string_equal(l[2], "http://c/simple");
    assert_string_equal(l[3], "http://d/simple");
    assert_null(l[4]);
    for (int i = 0; i < n; i++)
        free(l[i]);
    free(l);
    l = pypi_index_urls(NULL, 0, "", NULL, &n);
    assert_int_equal(n, 1);
    assert_string_equal(l[0], PYPI_DEFAULT_INDEX);
    free(l[0]);
    free(l);
}

static void check_redact(const char *url, const char *want)
{
    char *got = url_redact(url);
    assert_string_equal(got, want);
    free(got);
}

static void redaction(void **state)
{
    (void)state;
    check_redact("https://user:s3cr@t@art.example:8443/simple/?a=b@c",
                 "https://user:***@art.example:8443/simple/?a=b@c");
    check_redact("https://token@host/simple", "https://token@host/simple");
    check_redact("https://host/simple/a:b@c", "https://host/simple/a:b@c");
    check_redact("/just/a/path", "/just/a/path");
    assert_null(url_redact(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(url_resolution), cmocka_unit_test(normalisation),
        cmocka_unit_test(entities),       cmocka_unit_test(html_page),
        cmocka_unit_test(html_base_href), cmocka_unit_test(html_garbage),
        cmocka_unit_test(json_page),      cmocka_unit_test(json_refusals),
        cmocka_unit_test(content_types),  cmocka_unit_test(index_lists),
        cmocka_unit_test(redaction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
