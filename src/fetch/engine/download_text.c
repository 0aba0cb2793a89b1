/* Small synchronous GETs (manifests, directory listings) with the same timeouts and TLS rules
 * as the archive downloads. */
#include "download.h"
#include "util/strbuf.h"
#include "util/url.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct text_sink {
    struct strbuf buf;
    size_t max;
    int too_big;
};

static size_t on_text(char *data, size_t size, size_t nmemb, void *ud)
{
    struct text_sink *s = ud;
    size_t n = size * nmemb;
    if (s->buf.len + n > s->max) {
        s->too_big = 1;
        return 0;
    }
    sb_add(&s->buf, data, n);
    return n;
}

int dl_get_page(const char *url, size_t max, const char *accept, const struct dl_opts *o,
                struct dl_page *page, char **err)
{
    dl_global_init();
    memset(page, 0, sizeof *page);
    if (o->cancel && *o->cancel) {
        *err = xstrdup("interrupted");
        return -1;
    }
    CURL *e = curl_easy_init();
    if (!e) {
        *err = xstrdup("libcurl could not start a transfer");
        return -1;
    }
    struct text_sink sink = {STRBUF_INIT, max, 0};
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *headers = NULL;
    if (accept) {
        char *h = xasprintf("Accept: %s", accept);
        headers = curl_slist_append(NULL, h);
        free(h);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    }
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_text);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, ""); /* listings and manifests compress well */
    dl_setup_easy(e, o);
    CURLcode rc = curl_easy_perform(e);
    char *eff = NULL;
    curl_easy_getinfo(e, CURLINFO_EFFECTIVE_URL, &eff);
    int ret = 0;
    if (rc != CURLE_OK) {
        char what[CURL_ERROR_SIZE + 160];
        if (sink.too_big)
            snprintf(what, sizeof what, "larger than %zu bytes", max);
        else
            dl_describe_failure(e, rc, o, errbuf, what, sizeof what);
        /* Index and mirror URLs may carry credentials: never print them. */
        char *shown = url_redact(url), *shown_eff = eff ? url_redact(eff) : NULL;
        *err = eff && strcmp(eff, url)
                   ? xasprintf("%s: redirected to %s, which failed: %s", shown, shown_eff, what)
                   : xasprintf("%s: %s", shown, what);
        free(shown);
        free(shown_eff);
        sb_free(&sink.buf);
        ret = -1;
    } else {
        char *ct = NULL;
        curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &ct);
        page->content_type = ct ? xstrdup(ct) : NULL;
        page->final_url = xstrdup(eff ? eff : url);
        page->len = sink.buf.len;
        page->body = sb_detach(&sink.buf);
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(e);
    return ret;
}

void dl_page_free(struct dl_page *page)
{
    free(page->body);
    free(page->content_type);
    free(page->final_url);
    memset(page, 0, sizeof *page);
}

int dl_get_text(const char *url, size_t max, const struct dl_opts *o, char **body, size_t *len,
                char **err)
{
    struct dl_page page;
    *body = NULL;
    if (dl_get_page(url, max, NULL, o, &page, err) < 0)
        return -1;
    if (len)
        *len = page.len;
    *body = page.body;
    page.body = NULL;
    dl_page_free(&page);
    return 0;
}
