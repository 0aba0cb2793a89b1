/* The PyPI "simple" repository API, as any PyPI mirror (pypi.org, university mirrors, devpi,
 * Artifactory, a folder served by a static web server) speaks it: the HTML form of PEP 503 and
 * the JSON form of PEP 691, parsed into one list of files. Pure: text in, data out; no I/O.
 *
 * Facts used (PEP 503, 592, 658, 691, 700): a project page lists one anchor per file, its text
 * the file name; the href may be relative to the page (or to a <base href>) and may end in a
 * "#<hashname>=<hex>" fragment; "data-yanked" marks a yanked file. The JSON form has
 * files[].{filename,url,hashes{},yanked (bool or reason string),size (PEP 700)}. */
#ifndef SB_FETCH_PYPI_INDEX_H
#define SB_FETCH_PYPI_INDEX_H

#include <stddef.h>

#define PYPI_DEFAULT_INDEX "https://pypi.org/simple"
/* What we send as Accept: JSON preferred, HTML accepted (PEP 691 content negotiation). */
#define PYPI_ACCEPT                                                                                \
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "             \
    "text/html;q=0.01"

struct pypi_file {
    char *filename;  /* the last path part, as the index names it */
    char *url;       /* absolute, without the fragment */
    char sha256[65]; /* lowercase hex, "" when the index publishes none */
    int yanked;
    long long size; /* bytes, -1 when unknown (HTML never says) */
};

struct pypi_listing {
    struct pypi_file *files;
    int nfiles;
    int cap; /* grows geometrically: a page may list 100 000 links */
};

void pypi_listing_free(struct pypi_listing *l);

/* PEP 503 HTML. base_url is the page's own URL (after redirects): relative hrefs resolve
 * against it, or against the page's <base href>. Never fails on odd markup: anchors it cannot
 * read are skipped. */
void pypi_parse_html(const char *text, size_t len, const char *base_url, struct pypi_listing *out);

/* PEP 691 JSON. 0, or -1 with *err (heap) when the text is not a simple-API JSON document or
 * its major api-version is not 1. */
int pypi_parse_json(const char *text, size_t len, const char *base_url, struct pypi_listing *out,
                    char **err);

/* Whether a Content-Type names the JSON form (application/vnd.pypi.simple.v1+json). */
int pypi_is_json_type(const char *content_type);

/* PEP 503 name normalisation: lowercase, runs of '-', '_' and '.' become one '-'. Heap. */
char *pypi_normalize(const char *name);

/* The project page under an index base ("https://pypi.org/simple" or ".../simple/"):
 * base + "/" + normalized name + "/". Heap. */
char *pypi_project_url(const char *index_url, const char *project);

/* href resolved against base (RFC 3986 §5.2 for the forms indexes use: absolute with a
 * scheme, "//host/...", "/path", and relative with "." and ".." parts). The fragment of href is
 * dropped. Heap string. */
char *pypi_url_resolve(const char *base, const char *href);

/* Decodes the HTML character references indexes use (&amp; &lt; &gt; &quot; &#39; &#NN;
 * &#xHH;) in n bytes of s. Heap. */
char *pypi_html_unescape(const char *s, size_t n);

/* The index list: command-line URLs, then SAGEBUILD_INDEX_URLS (space, comma or newline
 * separated), then PIP_INDEX_URL, then the public index when none was given. Duplicates and
 * trailing slashes dropped. NULL-terminated heap array of *n heap strings. */
char **pypi_index_urls(char *const *cli, int ncli, const char *sagebuild_env, const char *pip_env,
                       int *n);

#endif
