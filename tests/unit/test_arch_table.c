/* kernels/archs/archs.def is the one table of arch facts: these tests fail when a row
 * contradicts itself or when the CLI's readers of it (probe/arch.c for nvcc's floors and
 * doctor, kernel_build/arch.c for --arch) answer differently from the row. CMake's reading is
 * checked by kernels/tests/arch-table-check.sh, the self-test's by kernels/tests/test_st_logic.c,
 * the library's mode policy (fp8, auto_modes) by kernels/tests/test_mode_policy.cc. */
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

/* The per-compute-capability columns (fp8, auto_modes): the same on every row of a compute
 * capability (readers take any one), FP8 from some compute capability on and never off again
 * (a GPU the table does not know takes it from the one below), and FP8 modes listed for auto
 * only where there are FP8 tensor cores. Names are checked against the library's modes by
 * kernels/tests/test_mode_policy.cc. */
static void mode_columns_are_per_compute_capability(void **state)
{
    (void)state;
    int seen_fp8 = 0;
    for (int i = 0; i < sa_arch_count(); i++) {
        const struct sa_arch *r = sa_arch_at(i);
        assert_true(r->fp8 == 0 || r->fp8 == 1);
        assert_true(*r->auto_modes);
        assert_null(strchr(r->auto_modes, ' '));
        if (seen_fp8)
            assert_int_equal(r->fp8, 1);
        seen_fp8 |= r->fp8;
        if (!r->fp8)
            assert_null(strstr(r->auto_modes, "int8-fp8"));
        if (i > 0) {
            const struct sa_arch *p = sa_arch_at(i - 1);
            if (p->major == r->major && p->minor == r->minor) {
                assert_int_equal(p->fp8, r->fp8);
                assert_string_equal(p->auto_modes, r->auto_modes);
            }
        }
        /* the readers answer the row, for a GPU of its compute capability */
        assert_int_equal(sa_cc_has_fp8(r->major, r->minor), r->fp8);
        assert_string_equal(sa_cc_auto_modes(r->major, r->minor), r->auto_modes);
    }
    assert_true(seen_fp8);
    const struct sa_arch *oldest = sa_arch_oldest_fp8();
    assert_non_null(oldest);
    assert_int_equal(oldest->major * 10 + oldest->minor, 89);
}

/* A compute capability between the table's rows or past its newest one. */
static void unknown_compute_capabilities_take_the_plain_mode(void **state)
{
    (void)state;
    const struct {
        int major, minor, fp8;
        const char *auto_modes;
    } cases[] = {
        {3, 0, 0, "int8-fp16"}, {7, 7, 0, "int8-fp16"}, {9, 5, 1, "int8-fp8"},
        {10, 5, 1, "int8-fp8"}, {12, 2, 1, "int8-fp8"}, {13, 0, 1, "int8-fp8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int r = 0; r < sa_arch_count(); r++) /* really unknown */
            assert_false(sa_arch_at(r)->major == cases[i].major &&
                         sa_arch_at(r)->minor == cases[i].minor);
        assert_int_equal(sa_cc_has_fp8(cases[i].major, cases[i].minor), cases[i].fp8);
        assert_string_equal(sa_cc_auto_modes(cases[i].major, cases[i].minor), cases[i].auto_modes);
    }
}

/* int8-fp8-wgmma's family runs where its rows' code runs: cc 9.0 only. */
static void the_wgmma_family_runs_on_its_rows_gpus(void **state)
{
    (void)state;
    const struct sa_arch *w = sa_arch_with_family(SA_FAMILY_WGMMA);
    assert_non_null(w);
    assert_string_equal(w->name, "sm_90a");
    for (int major = 3; major <= 13; major++)
        for (int minor = 0; minor <= 9; minor++)
            assert_int_equal(sa_family_runs_on(SA_FAMILY_WGMMA, major, minor),
                             major == 9 && minor == 0);
    assert_true(sa_family_runs_on(SA_FAMILY_MMA, 8, 7)); /* sm_86 code on a Jetson Orin */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_are_consistent),
        cmocka_unit_test(sage_targets_are_one_per_compute_capability),
        cmocka_unit_test(probe_reads_the_table),
        cmocka_unit_test(build_reads_the_table),
        cmocka_unit_test(each_gpu_gets_a_row_that_runs_on_it),
        cmocka_unit_test(mode_columns_are_per_compute_capability),
        cmocka_unit_test(unknown_compute_capabilities_take_the_plain_mode),
        cmocka_unit_test(the_wgmma_family_runs_on_its_rows_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
