/* Small synchronous GETs (manifests, directory listings) with the same timeouts and TLS rules
 * as the archive downloads. */
#include "fetch/download.h"
#include "util/strbuf.h"

#include <curl/curl.h>
#include <stdio.h>
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

int dl_get_text(const char *url, size_t max, const struct dl_opts *o, char **body, size_t *len,
                char **err)
{
    dl_global_init();
    *body = NULL;
    CURL *e = curl_easy_init();
    if (!e) {
        *err = xstrdup("libcurl could not start a transfer");
        return -1;
    }
    struct text_sink sink = {STRBUF_INIT, max, 0};
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_text);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    dl_setup_easy(e, o);
    CURLcode rc = curl_easy_perform(e);
    int ret = 0;
    if (rc != CURLE_OK) {
        long http = 0;
        char *eff = NULL;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &http);
        curl_easy_getinfo(e, CURLINFO_EFFECTIVE_URL, &eff);
        char what[CURL_ERROR_SIZE + 32];
        if (rc == CURLE_HTTP_RETURNED_ERROR)
            snprintf(what, sizeof what, "HTTP %ld", http);
        else if (sink.too_big)
            snprintf(what, sizeof what, "larger than %zu bytes", max);
        else
            snprintf(what, sizeof what, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
        *err = eff && strcmp(eff, url)
                   ? xasprintf("%s: redirected to %s, which failed: %s", url, eff, what)
                   : xasprintf("%s: %s", url, what);
        sb_free(&sink.buf);
        ret = -1;
    } else {
        if (len)
            *len = sink.buf.len;
        *body = sb_detach(&sink.buf);
    }
    curl_easy_cleanup(e);
    return ret;
}
