#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kernel_build/arch.h"

static const char *name_of(int i)
{
    const struct sa_arch *k = build_arch_at(i);
    return k ? k->name : "(none)";
}

static char *parse_joined(const char *spec, const struct gpu_cc *gpus, int n, char **notes)
{
    struct arch_list l;
    char *err = NULL, *nt = NULL;
    if (build_arch_parse_spec(spec, gpus, n, &l, &nt, &err) < 0) {
        char *e = malloc(strlen(err) + 8);
        strcpy(e, "ERROR: ");
        strcat(e, err);
        free(err);
        return e;
    }
    if (notes)
        *notes = nt;
    else
        free(nt);
    return build_arch_join(&l, ",");
}

static void finds_spellings(void **state)
{
    (void)state;
    assert_string_equal(name_of(build_arch_find("sm_120a")), "sm_120a");
    assert_string_equal(name_of(build_arch_find("sm_120")), "sm_120a");
    assert_string_equal(name_of(build_arch_find("12.0")), "sm_120a");
    assert_string_equal(name_of(build_arch_find("120a")), "sm_120a");
    assert_string_equal(name_of(build_arch_find("sm_90")), "sm_90");
    assert_string_equal(name_of(build_arch_find("sm_90a")), "sm_90a");
    assert_string_equal(name_of(build_arch_find("8.9")), "sm_89");
    assert_string_equal(name_of(build_arch_find("sm_100")), "sm_100a");
    assert_int_equal(build_arch_find("sm_120f"), -1); /* another target, not ours */
    assert_int_equal(build_arch_find("sm_75"), -1);
    assert_int_equal(build_arch_find("sm_89a"), -1);
    assert_int_equal(build_arch_find("garbage"), -1);
    assert_int_equal(build_arch_find(""), -1);
    assert_int_equal(build_arch_find(NULL), -1);
}

static void maps_compute_capability(void **state)
{
    (void)state;
    assert_string_equal(name_of(build_arch_for_cc(12, 0)), "sm_120a");
    assert_string_equal(name_of(build_arch_for_cc(12, 1)), "sm_121a");
    assert_string_equal(name_of(build_arch_for_cc(10, 0)), "sm_100a");
    assert_string_equal(name_of(build_arch_for_cc(9, 0)), "sm_90"); /* the portable family */
    assert_string_equal(name_of(build_arch_for_cc(8, 9)), "sm_89");
    assert_string_equal(name_of(build_arch_for_cc(8, 7)), "sm_86"); /* binary compatible */
    assert_string_equal(name_of(build_arch_for_cc(8, 0)), "sm_80");
    assert_int_equal(build_arch_for_cc(7, 5), -1);
    assert_int_equal(build_arch_for_cc(10, 3), -1); /* sm_100a SASS runs only on 10.0 */
    assert_int_equal(build_arch_for_cc(11, 0), -1);
}

static void parses_lists_native_and_all(void **state)
{
    (void)state;
    char *s = parse_joined("sm_120a,sm_90", NULL, 0, NULL);
    assert_string_equal(s, "sm_90,sm_120a"); /* table order, so equal asks give equal lists */
    free(s);
    s = parse_joined(" sm_90 ; sm_90 ,8.9", NULL, 0, NULL);
    assert_string_equal(s, "sm_89,sm_90");
    free(s);
    s = parse_joined("all", NULL, 0, NULL);
    assert_string_equal(s, "sm_80,sm_86,sm_89,sm_90,sm_100a,sm_120a,sm_121a");
    free(s);
    s = parse_joined("ALL,sm_90a", NULL, 0, NULL);
    assert_string_equal(s, "sm_80,sm_86,sm_89,sm_90,sm_90a,sm_100a,sm_120a,sm_121a");
    free(s);

    struct gpu_cc gpus[] = {{12, 0}, {9, 0}, {12, 0}, {7, 5}};
    char *notes = NULL;
    s = parse_joined("native", gpus, 4, &notes);
    assert_string_equal(s, "sm_90,sm_90a,sm_120a");
    assert_non_null(notes);
    assert_non_null(strstr(notes, "GPU 3 (compute capability 7.5)"));
    assert_non_null(strstr(notes, "GPU 1 (9.0): building sm_90 (the portable kernels) and sm_90a"));
    free(notes);
    free(s);
}

static void rejects_bad_specs(void **state)
{
    (void)state;
    char *s = parse_joined("sm_75", NULL, 0, NULL);
    assert_non_null(strstr(s, "ERROR: unknown or unsupported arch 'sm_75'"));
    assert_non_null(strstr(s, "sm_121a")); /* lists what is accepted */
    free(s);
    s = parse_joined("", NULL, 0, NULL);
    assert_non_null(strstr(s, "ERROR: --arch is empty"));
    free(s);
    s = parse_joined(",,", NULL, 0, NULL);
    assert_non_null(strstr(s, "ERROR"));
    free(s);
    s = parse_joined("native", NULL, 0, NULL);
    assert_non_null(strstr(s, "no NVIDIA GPU"));
    assert_non_null(strstr(s, "--arch sm_120a (RTX 50) or --arch sm_89 (RTX 40)"));
    free(s);
    struct gpu_cc old[] = {{7, 5}};
    s = parse_joined("native", old, 1, NULL);
    assert_non_null(strstr(s, "ERROR: --arch native: none of this machine's GPUs"));
    free(s);
}

static struct version ver(const char *s)
{
    struct version v;
    assert_int_equal(version_parse_strict(s, &v), 0);
    return v;
}

/* A bad spelling is the user's to fix (a usage error); `native` without a GPU the kernels know
 * is about the machine: the caller tells them apart by the return, never by the message. */
static void says_why_a_spec_failed(void **state)
{
    (void)state;
    struct arch_list l;
    char *err = NULL, *nt = NULL;
    struct gpu_cc old[] = {{7, 5}};
    assert_int_equal(build_arch_parse_spec("sm_75", NULL, 0, &l, &nt, &err), ARCH_SPEC_BAD);
    free(err);
    assert_int_equal(build_arch_parse_spec("", NULL, 0, &l, &nt, &err), ARCH_SPEC_BAD);
    free(err);
    assert_int_equal(build_arch_parse_spec("native", NULL, 0, &l, &nt, &err), ARCH_SPEC_NO_GPU);
    free(err);
    assert_int_equal(build_arch_parse_spec("sm_90,native", old, 1, &l, &nt, &err),
                     ARCH_SPEC_NO_GPU);
    free(err);
    free(nt);
}

static void refuses_what_nvcc_cannot_build(void **state)
{
    (void)state;
    struct version v128 = ver("12.8"), v126 = ver("12.6"), v130 = ver("13.0"), v123 = ver("12.3"),
                   v124 = ver("12.4");
    int sm120 = build_arch_find("sm_120a"), sm121 = build_arch_find("sm_121a");
    int sm89 = build_arch_find("sm_89"), sm90 = build_arch_find("sm_90");
    assert_null(build_arch_refusal(sm120, &v128, NULL, 0));
    assert_null(build_arch_refusal(sm120, &v130, NULL, 0));
    char *r = build_arch_refusal(sm120, &v126, NULL, 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "12.8"));
    free(r);
    r = build_arch_refusal(sm121, &v128, NULL, 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "12.9"));
    free(r);
    /* the kernels' own gate: FP8 mma.sync on sm_89 needs 12.4 although nvcc knows sm_89 */
    r = build_arch_refusal(sm89, &v123, NULL, 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "12.4"));
    free(r);
    /* ... and on sm_90, where ptxas emulates it: PTX ISA 8.4 either way (archs.def) */
    r = build_arch_refusal(sm90, &v123, NULL, 0);
    assert_non_null(r);
    assert_non_null(strstr(r, "sm_90 needs nvcc >= 12.4"));
    free(r);
    assert_null(build_arch_refusal(sm90, &v124, NULL, 0));
    assert_null(build_arch_refusal(sm89, &v124, NULL, 0));
    /* what nvcc --list-gpu-arch says counts too */
    const char *listed[] = {"compute_80", "compute_90"};
    r = build_arch_refusal(sm120, &v130, listed, 2);
    assert_non_null(r);
    assert_non_null(strstr(r, "list-gpu-arch"));
    free(r);
    const char *listed_ok[] = {"compute_90", "compute_120"};
    assert_null(build_arch_refusal(sm120, &v130, listed_ok, 2));
}

static void examples_name_products_from_the_table(void **state)
{
    (void)state;
    char *s = build_arch_examples("sagebuild build --arch ", "; see --help");
    assert_string_equal(s, "sagebuild build --arch sm_120a   (RTX 50; sm_89: RTX 40; sm_90: "
                           "H100/H200; see --help)");
    free(s);
    s = build_arch_examples("", "");
    assert_string_equal(s, "sm_120a   (RTX 50; sm_89: RTX 40; sm_90: H100/H200)");
    free(s);
}

static void fix_names_toolkit_and_remaining_archs(void **state)
{
    (void)state;
    struct version v128 = ver("12.8");
    struct arch_list ok = {0};
    ok.idx[ok.n++] = build_arch_find("sm_120a");
    char *fix = build_arch_fix(build_arch_find("sm_121a"), &v128, &ok);
    assert_non_null(strstr(fix, "sagebuild fetch-cuda --cuda 12.9"));
    assert_non_null(strstr(fix, "--arch sm_120a"));
    free(fix);
    fix = build_arch_fix(build_arch_find("sm_121a"), &v128, NULL);
    assert_null(strstr(fix, "--arch"));
    free(fix);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finds_spellings),
        cmocka_unit_test(maps_compute_capability),
        cmocka_unit_test(parses_lists_native_and_all),
        cmocka_unit_test(rejects_bad_specs),
        cmocka_unit_test(says_why_a_spec_failed),
        cmocka_unit_test(refuses_what_nvcc_cannot_build),
        cmocka_unit_test(examples_name_products_from_the_table),
        cmocka_unit_test(fix_names_toolkit_and_remaining_archs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
