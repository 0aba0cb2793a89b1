/* kernels/archs/archs.def is the one table of arch facts: these tests fail when a row
 * contradicts itself or when the CLI's readers of it (probe/arch.c for nvcc's floors and
 * doctor, kernel_build/arch.c for --arch) answer differently from the row. CMake's reading is
 * checked by kernels/tests/arch-table-check.sh, the self-test's by kernels/tests/test_st_logic.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/archs/sa_archs.h"
#include "kernel_build/arch.h"
#include "probe/arch.h"
#include "util/version.h"

static struct version ver(const char *s)
{
    struct version v;
    assert_int_equal(version_parse_strict(s, &v), 0);
    return v;
}

/* The release one minor below v (12.4 -> 12.3, 13.0 -> 12.9). */
static struct version just_below(struct version v)
{
    if (v.part[1] > 0) {
        v.part[1]--;
    } else {
        v.part[0]--;
        v.part[1] = 9;
    }
    return v;
}

static int variant_rank(char v)
{
    return v == '\0' ? 0 : v == 'a' ? 1 : 2;
}

static void rows_are_consistent(void **state)
{
    (void)state;
    assert_true(sa_arch_count() > 0);
    for (int i = 0; i < sa_arch_count(); i++) {
        const struct sa_arch *r = sa_arch_at(i);
        struct gpu_arch a;
        char name[32];
        assert_int_equal(arch_parse(r->name, &a), 0);
        assert_int_equal(a.major, r->major);
        assert_int_equal(a.minor, r->minor);
        assert_int_equal(a.variant, r->variant);
        assert_string_equal(arch_sm_name(&a, name, sizeof name), r->name);
        assert_int_equal(sa_arch_index(r->name), i); /* names are unique */
        if (i > 0) { /* ascending: list_add and the `all` order rely on it */
            const struct sa_arch *p = sa_arch_at(i - 1);
            int pn = p->major * 10 + p->minor, n = r->major * 10 + r->minor;
            assert_true(pn < n || (pn == n && variant_rank(p->variant) < variant_rank(r->variant)));
        }
        struct version since = ver(r->nvcc_since), v;
        if (*r->nvcc_dropped)
            assert_true(version_cmp(&since, (v = ver(r->nvcc_dropped), &v)) < 0);
        if (!sa_arch_has_kernels(r)) {
            assert_string_equal(r->kernels_nvcc, "");
            assert_string_equal(r->kernels_why, "");
            assert_int_equal(r->code, 0);
            assert_int_equal(r->in_all, 0);
            continue;
        }
        assert_int_equal(r->families & ~(SA_FAMILY_MMA | SA_FAMILY_WGMMA), 0);
        assert_true(r->code == SA_CODE_SASS || r->code == SA_CODE_PTX);
        assert_true(*r->products);
        struct version floor = ver(r->kernels_nvcc);
        int cmp = version_cmp(&floor, &since);
        assert_true(cmp >= 0);                           /* never below nvcc's own floor */
        assert_int_equal(cmp > 0, *r->kernels_why != 0); /* a higher floor says why */
    }
}

static void sage_targets_are_one_per_compute_capability(void **state)
{
    (void)state;
    for (int i = 0; i < sa_arch_count(); i++)
        for (int j = i + 1; j < sa_arch_count(); j++) {
            const struct sa_arch *a = sa_arch_at(i), *b = sa_arch_at(j);
            if (a->major == b->major && a->minor == b->minor)
                assert_false(a->sage_code && b->sage_code);
        }
}

/* probe/arch.c: nvcc's floors, drops and variants, and doctor's kernel gates. */
static void probe_reads_the_table(void **state)
{
    (void)state;
    for (int i = 0; i < sa_arch_count(); i++) {
        const struct sa_arch *r = sa_arch_at(i);
        struct gpu_arch a;
        struct version v, want;
        char b1[32], b2[32];
        arch_parse(r->name, &a);
        assert_true(arch_variant_valid(&a));
        assert_int_equal(arch_min_nvcc(&a, &v), 0);
        assert_string_equal(version_str(&v, b1, sizeof b1), r->nvcc_since);
        if (*r->nvcc_dropped) {
            assert_int_equal(arch_dropped_in(&a, &v), 0);
            assert_string_equal(version_str(&v, b1, sizeof b1), r->nvcc_dropped);
        } else {
            assert_int_equal(arch_dropped_in(&a, &v), -1);
        }
        /* nvcc at the row's floor takes it, one release below does not */
        want = ver(r->nvcc_since);
        if (!*r->nvcc_dropped || version_cmp(&want, (v = ver(r->nvcc_dropped), &v)) < 0)
            assert_null(arch_nvcc_refusal(&a, &want, NULL, 0));
        struct version below = just_below(want);
        char *why = arch_nvcc_refusal(&a, &below, NULL, 0);
        assert_non_null(why);
        assert_non_null(strstr(why, version_str(&want, b2, sizeof b2)));
        free(why);
        /* doctor's gate is never below the kernels' floor of the row */
        if (sa_arch_has_kernels(r)) {
            assert_int_equal(arch_min_nvcc_for_kernels(&a, &v), 0);
            want = ver(r->kernels_nvcc);
            assert_true(version_cmp(&v, &want) >= 0);
        }
        if (r->sage_code) {
            struct gpu_arch k = arch_for_kernels(r->major, r->minor);
            assert_string_equal(arch_sm_name(&k, b1, sizeof b1), r->name);
        }
    }
    struct gpu_arch a;
    arch_parse("sm_89a", &a); /* a variant the table does not have */
    assert_false(arch_variant_valid(&a));
}

/* kernel_build/arch.c: which archs --arch accepts, `all`, and the floors it refuses below. */
static void build_reads_the_table(void **state)
{
    (void)state;
    int nkernel = 0;
    char *all = NULL;
    struct arch_list l;
    char *notes = NULL, *err = NULL;
    assert_int_equal(build_arch_parse_spec("all", NULL, 0, &l, &notes, &err), 0);
    all = build_arch_join(&l, ",");
    char want_all[256] = "";
    for (int i = 0; i < sa_arch_count(); i++) {
        const struct sa_arch *r = sa_arch_at(i);
        if (!sa_arch_has_kernels(r)) {
            assert_null(build_arch_at(i));
            continue;
        }
        nkernel++;
        assert_ptr_equal(build_arch_at(i), r);
        assert_int_equal(build_arch_find(r->name), i);
        if (r->in_all)
            snprintf(want_all + strlen(want_all), sizeof want_all - strlen(want_all), "%s%s",
                     *want_all ? "," : "", r->name);
        struct version floor = ver(r->kernels_nvcc), below = just_below(floor);
        assert_null(build_arch_refusal(i, &floor, NULL, 0));
        char *why = build_arch_refusal(i, &below, NULL, 0), b[32];
        assert_non_null(why);
        assert_non_null(strstr(why, version_str(&floor, b, sizeof b)));
        free(why);
        char *fix = build_arch_fix(i, &below, NULL);
        assert_non_null(strstr(fix, b)); /* the toolkit to fetch is the floor */
        free(fix);
    }
    assert_string_equal(all, want_all);
    assert_true(nkernel <= BUILD_MAX_ARCHS);
    free(all);
    free(notes);
}

/* `native`, the self-test's hint and install's coverage check pick by one rule. */
static void each_gpu_gets_a_row_that_runs_on_it(void **state)
{
    (void)state;
    for (int major = 3; major <= 13; major++)
        for (int minor = 0; minor <= 9; minor++) {
            int i = build_arch_for_cc(major, minor);
            assert_int_equal(i, sa_arch_kernels_for_cc(major, minor));
            if (i < 0)
                continue;
            const struct sa_arch *r = build_arch_at(i);
            assert_non_null(r);
            struct gpu_arch a = {r->major, r->minor, r->variant, 0};
            assert_true(arch_runs_on(&a, major, minor));
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_are_consistent),
        cmocka_unit_test(sage_targets_are_one_per_compute_capability),
        cmocka_unit_test(probe_reads_the_table),
        cmocka_unit_test(build_reads_the_table),
        cmocka_unit_test(each_gpu_gets_a_row_that_runs_on_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
