/* Mirror and index URLs are checked before anything is planned or printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "util/url.h"

static void accept(const char *url)
{
    char *why = NULL;
    if (url_check(url, &why) != 0)
        fail_msg("'%s' refused: %s", url, why);
    assert_null(why);
}

/* Refused, with a reason that contains `says`. */
static void refuse(const char *url, const char *says)
{
    char *why = NULL;
    if (url_check(url, &why) == 0)
        fail_msg("'%s' accepted", url);
    assert_non_null(why);
    if (!strstr(why, says))
        fail_msg("'%s': reason '%s' does not say '%s'", url, why, says);
    free(why);
}

static void accepts_what_downloads_can_use(void **state)
{
    (void)state;
    accept("https://developer.download.nvidia.com/compute/cuda/redist/");
    accept("http://127.0.0.1:8080/ok/");
    accept("HTTPS://Mirror.Example");
    accept("https://user:token@artifactory.example/cuda");
    accept("http://[::1]:9000/redist");
    accept("file:///srv/mirror");
}

static void refuses_what_is_not_a_url(void **state)
{
    (void)state;
    refuse("not-a-url", "no scheme");
    refuse("mirror.example/cuda", "no scheme");
    refuse("/srv/mirror", "file:///DIR");
    refuse("", "no scheme");
    refuse("a/b://c", "no scheme");
    refuse("ftp://mirror.example/cuda", "'ftp' is not supported");
    refuse("https://", "no host");
    refuse("https:///cuda", "no host");
    refuse("http://:8080/x", "no host");
    refuse("https://user@/x", "no host");
    refuse("http://[]/x", "no host");
    refuse("https://mirror example/x", "space");
    refuse("file://srv/mirror", "absolute path");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accepts_what_downloads_can_use),
        cmocka_unit_test(refuses_what_is_not_a_url),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
