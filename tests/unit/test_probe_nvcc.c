#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probe/nvcc.h"
#include "util/fs.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char nvcc_13_0[] = "nvcc: NVIDIA (R) Cuda compiler driver\n"
                                "Copyright (c) 2005-2025 NVIDIA Corporation\n"
                                "Built on Wed_Aug_20_01:58:59_PM_PDT_2025\n"
                                "Cuda compilation tools, release 13.0, V13.0.88\n"
                                "Build cuda_13.0.r13.0/compiler.36424714_0\n";

static void parses_version_texts(void **state)
{
    (void)state;
    struct nvcc_version v;
    char buf[32];
    assert_int_equal(nvcc_parse_version(nvcc_13_0, &v), 0);
    assert_string_equal(version_str(&v.release, buf, sizeof buf), "13.0");
    assert_string_equal(version_str(&v.full, buf, sizeof buf), "13.0.88");
    assert_int_equal(nvcc_parse_version("Cuda compilation tools, release 12.8, V12.8.93\n", &v), 0);
    assert_int_equal(v.release.part[1], 8);
    assert_int_equal(v.full.part[2], 93);
    /* Old wording without the V part still gives the release. */
    assert_int_equal(nvcc_parse_version("Cuda compilation tools, release 9.2\n", &v), 0);
    assert_int_equal(v.full.nparts, 0);
}

static void rejects_empty_and_garbage(void **state)
{
    (void)state;
    struct nvcc_version v;
    assert_int_equal(nvcc_parse_version("", &v), -1);
    assert_int_equal(nvcc_parse_version(NULL, &v), -1);
    assert_int_equal(nvcc_parse_version("release notes: none\nrelease 13\n", &v), -1);
    assert_int_equal(nvcc_parse_version("\x01\x02release \xff", &v), -1);
    assert_int_equal(v.release.nparts, 0);
    /* torch's regex takes the first "release d.d": so do we. */
    assert_int_equal(nvcc_parse_version("release x\nrelease 12.4, V12.4.131", &v), 0);
    assert_int_equal(v.release.part[1], 4);
}

static void parses_arch_lists(void **state)
{
    (void)state;
    size_t n;
    char **l = nvcc_parse_arch_list("compute_75\ncompute_80\ncompute_120\nbogus\nsm_121a\n", &n);
    assert_int_equal(n, 4);
    assert_string_equal(l[2], "compute_120");
    assert_string_equal(l[3], "sm_121a");
    nvcc_free_arch_list(l, n);
    l = nvcc_parse_arch_list("", &n);
    assert_int_equal(n, 0);
    nvcc_free_arch_list(l, n);
    l = nvcc_parse_arch_list("nvcc fatal : Unknown option '--list-gpu-arch'", &n);
    assert_int_equal(n, 0);
    nvcc_free_arch_list(l, n);
}

static void parses_arch_names(void **state)
{
    (void)state;
    struct gpu_arch a;
    char buf[32];
    assert_int_equal(arch_parse("sm_120a", &a), 0);
    assert_int_equal(a.major, 12);
    assert_int_equal(a.minor, 0);
    assert_int_equal(a.variant, 'a');
    assert_int_equal(arch_parse("8.6+PTX", &a), 0);
    assert_true(a.ptx);
    assert_string_equal(arch_sm_name(&a, buf, sizeof buf), "sm_86");
    assert_int_equal(arch_parse("compute_90", &a), 0);
    assert_string_equal(arch_sm_name(&a, buf, sizeof buf), "sm_90");
    assert_int_equal(arch_parse("100f", &a), 0);
    assert_int_equal(a.variant, 'f');
    assert_int_equal(arch_parse("sm89", &a), 0);
    assert_int_equal(arch_number(&a), 89);
    const char *bad[] = {"",         "sm_",    "9",     "sm_9",     "12.", "12.0b",
                         "sm_120ax", "Ampere", "1.2.3", "compute_", "+PTX"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(arch_parse(bad[i], &a), -1);
}

static void knows_nvcc_floors(void **state)
{
    (void)state;
    struct gpu_arch a;
    struct version v;
    char buf[32];
    struct {
        const char *arch, *min;
    } rows[] = {{"sm_90a", "12.0"},  {"sm_90", "11.8"},   {"sm_100a", "12.8"}, {"sm_120a", "12.8"},
                {"sm_121a", "12.9"}, {"sm_120f", "12.9"}, {"sm_80", "11.0"}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        assert_int_equal(arch_parse(rows[i].arch, &a), 0);
        assert_int_equal(arch_min_nvcc(&a, &v), 0);
        assert_string_equal(version_str(&v, buf, sizeof buf), rows[i].min);
    }
    /* SageAttention's gates and sagebuild's kernels' floors, whichever is higher */
    struct {
        const char *arch, *min;
    } kernels[] = {{"sm_89", "12.4"},   {"sm_90", "12.4"},   {"sm_90a", "12.4"},
                   {"sm_80", "12.0"},   {"sm_87", "12.0"},   {"sm_100", "12.8"},
                   {"sm_120a", "12.8"}, {"sm_120f", "12.9"}, {"sm_121a", "12.9"}};
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        assert_int_equal(arch_parse(kernels[i].arch, &a), 0);
        assert_int_equal(arch_min_nvcc_for_kernels(&a, &v), 0);
        assert_string_equal(version_str(&v, buf, sizeof buf), kernels[i].min);
    }
    arch_parse("sm_75", &a);
    assert_int_equal(arch_min_nvcc_for_kernels(&a, &v), -1);
    arch_parse("sm_103", &a);
    assert_int_equal(arch_min_nvcc_for_kernels(&a, &v), -1);
    arch_parse("sm_89a", &a);
    assert_false(arch_variant_valid(&a));
    assert_int_equal(arch_min_nvcc(&a, &v), -1);
    arch_parse("sm_70", &a);
    assert_int_equal(arch_dropped_in(&a, &v), 0);
    assert_int_equal(v.part[0], 13);
    arch_parse("sm_75", &a);
    assert_int_equal(arch_dropped_in(&a, &v), -1);
}

static void judges_what_an_nvcc_can_build(void **state)
{
    (void)state;
    const char *listed13[] = {"compute_75", "compute_80",  "compute_86",  "compute_89",
                              "compute_90", "compute_100", "compute_120", "compute_121"};
    struct version v13, v128, v124;
    version_parse("13.0", &v13);
    version_parse("12.8", &v128);
    version_parse("12.4", &v124);
    struct gpu_arch a;
    char *why;

    arch_parse("sm_120a", &a); /* listed as compute_120, accepted as sm_120a */
    assert_null(arch_nvcc_refusal(&a, &v13, listed13, 8));
    assert_null(arch_nvcc_refusal(&a, &v128, NULL, 0));
    why = arch_nvcc_refusal(&a, &v124, NULL, 0);
    assert_non_null(strstr(why, "needs nvcc >= 12.8"));
    free(why);

    arch_parse("sm_70", &a);
    why = arch_nvcc_refusal(&a, &v13, listed13, 8);
    assert_non_null(strstr(why, "dropped in 13.0"));
    free(why);

    arch_parse("sm_87", &a); /* known, old enough, but not in this (trimmed) list */
    why = arch_nvcc_refusal(&a, &v13, listed13, 8);
    assert_non_null(strstr(why, "--list-gpu-arch"));
    free(why);

    arch_parse("sm_95", &a);
    why = arch_nvcc_refusal(&a, &v13, NULL, 0);
    assert_non_null(why);
    free(why);
}

static void maps_gpus_to_kernel_archs(void **state)
{
    (void)state;
    char buf[32];
    struct gpu_arch a = arch_for_kernels(12, 0);
    assert_string_equal(arch_sm_name(&a, buf, sizeof buf), "sm_120a");
    a = arch_for_kernels(8, 9);
    assert_string_equal(arch_sm_name(&a, buf, sizeof buf), "sm_89");
    a = arch_for_kernels(9, 0);
    assert_true(arch_runs_on(&a, 9, 0));
    assert_false(arch_runs_on(&a, 10, 0));
    struct gpu_arch b;
    arch_parse("sm_80", &b);
    assert_true(arch_runs_on(&b, 8, 6));
    assert_false(arch_runs_on(&b, 9, 0));
    arch_parse("sm_120a", &b);
    assert_false(arch_runs_on(&b, 12, 1));
}

/* A shell script standing in for nvcc: output, silence and a hang. */
static char *fake_nvcc(const char *dir, const char *body)
{
    char *path = fs_join(dir, "nvcc");
    char *text = xasprintf("#!/bin/sh\n%s\n", body);
    fs_write_file(path, text, strlen(text));
    chmod(path, 0755);
    free(text);
    return path;
}

static void runs_fake_nvccs(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sb-nvcc-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    struct nvcc_info n;

    char *p = fake_nvcc(tmpl, "case $1 in --version) echo 'Cuda compilation tools, release 12.8, "
                              "V12.8.93';; --list-gpu-arch) echo compute_120;; esac");
    assert_int_equal(probe_nvcc(p, 2000, &n), 0);
    assert_int_equal(n.version.release.part[1], 8);
    assert_int_equal(n.narchs, 1);
    nvcc_info_free(&n);
    free(p);

    p = fake_nvcc(tmpl, "exit 0");
    assert_int_equal(probe_nvcc(p, 2000, &n), -1);
    assert_true(n.found);
    assert_non_null(strstr(n.error, "printed nothing"));
    nvcc_info_free(&n);
    free(p);

    p = fake_nvcc(tmpl, "sleep 30");
    assert_int_equal(probe_nvcc(p, 300, &n), -1);
    assert_non_null(strstr(n.error, "timed out"));
    assert_true(n.elapsed_ms < 5000);
    nvcc_info_free(&n);
    free(p);

    char *missing = fs_join(tmpl, "nope/nvcc");
    assert_int_equal(probe_nvcc(missing, 300, &n), -1);
    assert_false(n.found);
    nvcc_info_free(&n);
    free(missing);
    fs_remove_tree(tmpl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_version_texts),
        cmocka_unit_test(rejects_empty_and_garbage),
        cmocka_unit_test(parses_arch_lists),
        cmocka_unit_test(parses_arch_names),
        cmocka_unit_test(knows_nvcc_floors),
        cmocka_unit_test(judges_what_an_nvcc_can_build),
        cmocka_unit_test(maps_gpus_to_kernel_archs),
        cmocka_unit_test(runs_fake_nvccs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
