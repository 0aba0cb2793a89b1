/* Fuzz target: the simple-index parsers (PEP 503 HTML, PEP 691 JSON) and the wheel choice made
 * from what they return must never crash or leak on any page a mirror could send. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fetch/sources/pypi_index.h"
#include "fetch/sources/pypi_wheel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void choose_from(const struct pypi_listing *l)
{
    static const struct pypi_want wants[] = {
        {"nvidia-cuda-nvcc", "13.0.88", "x86_64", 2, 36},
        {"nvidia_nvvm", "13.0.88", "aarch64", 0, 0},
        {"x", "1", "x86_64", 2, 5},
    };
    for (size_t i = 0; i < sizeof wants / sizeof wants[0]; i++) {
        char *why = NULL;
        int yanked = 0;
        if (pypi_choose(l, &wants[i], &yanked, &why) < 0)
            free(why);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct pypi_listing l;
    pypi_parse_html(text, size, "https://mirror.example/simple/nvidia-cuda-nvcc/", &l);
    choose_from(&l);
    pypi_listing_free(&l);
    char *err = NULL;
    if (pypi_parse_json(text, size, "http://127.0.0.1:1/simple/x/", &l, &err) == 0) {
        choose_from(&l);
        pypi_listing_free(&l);
    } else {
        free(err);
    }
    return 0;
}
