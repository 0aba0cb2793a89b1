/* The unpack budget: generous for NVIDIA's archives, bounded for everything else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fetch/engine/unpack_budget.h"

static void real_archives_fit(void **state)
{
    (void)state;
    /* Sizes from redistrib_13.0.2.json and what they unpack to (the toolkit installed here). */
    struct {
        long long size, unpacked, entries;
    } real[] = {
        {991284, 14146381, 1802},  /* cuda_cccl: all headers, the densest */
        {26657716, 116352904, 13}, /* cuda_nvcc */
        {43645408, 140061693, 12}, /* libnvvm */
        {79800, 943946, 33},       /* cuda_crt */
        {1487960, 7240316, 101},   /* cuda_cudart */
    };
    for (size_t i = 0; i < sizeof real / sizeof *real; i++) {
        struct unpack_budget b;
        unpack_budget_for(real[i].size, &b);
        assert_true(b.bytes >= 3 * real[i].unpacked);
        assert_true(b.entries >= 3 * real[i].entries);
    }
}

static void floors_ceilings_and_unknown(void **state)
{
    (void)state;
    struct unpack_budget b;
    unpack_budget_for(469 * 1024, &b); /* the 3 GiB bomb of the review */
    assert_true(b.bytes == UNPACK_FLOOR_BYTES);
    assert_true(b.entries == UNPACK_FLOOR_ENTRIES);
    unpack_budget_for(0, &b);
    assert_true(b.bytes == UNPACK_FLOOR_BYTES);
    unpack_budget_for(100LL << 20, &b);
    assert_true(b.bytes == 100LL * UNPACK_RATIO << 20);
    unpack_budget_for(LLONG_MAX, &b); /* no overflow */
    assert_true(b.bytes == UNPACK_CEILING_BYTES);
    assert_true(b.entries == UNPACK_CEILING_ENTRIES);
    unpack_budget_for(-1, &b);
    assert_true(b.bytes == UNPACK_CEILING_BYTES);
    assert_true(b.entries == UNPACK_CEILING_ENTRIES);
}

static void refusal_names_archive_and_budget(void **state)
{
    (void)state;
    struct unpack_budget b;
    unpack_budget_for(480256, &b);
    char *m = unpack_budget_refusal(&b, 480256, "x.tar.xz", 0);
    assert_non_null(strstr(m, "x.tar.xz (469.0 KiB) unpacks to more than 64.0 MiB, its budget"));
    assert_non_null(strstr(m, "at most 16.0 GiB"));
    free(m);
    m = unpack_budget_refusal(&b, 480256, "x.tar.xz", 1);
    assert_non_null(strstr(m, "has more than 16384 entries"));
    free(m);
    m = unpack_budget_refusal(&b, -1, "w.whl", 0);
    assert_non_null(strstr(m, "size unknown"));
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real_archives_fit),
        cmocka_unit_test(floors_ceilings_and_unknown),
        cmocka_unit_test(refusal_names_archive_and_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
