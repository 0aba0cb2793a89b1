#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "doctor/fixes.h"
#include "doctor/rules.h"

#include <stdlib.h>
#include <string.h>

static struct version v(const char *s)
{
    struct version out;
    version_parse(s, &out);
    return out;
}

static void judges_cuda_mismatch_as_torch(void **state)
{
    (void)state;
    struct version t130 = v("13.0"), n128 = v("12.8"), n130 = v("13.0"), t129 = v("12.9");
    struct version none = {{0, 0, 0, 0}, 0};
    assert_int_equal(rule_cuda_mismatch(&t130, &n128), 2);
    assert_int_equal(rule_cuda_mismatch(&t129, &n128), 1);
    assert_int_equal(rule_cuda_mismatch(&t130, &n130), 0);
    assert_int_equal(rule_cuda_mismatch(&none, &n130), -1);
    assert_int_equal(rule_cuda_mismatch(NULL, &n130), -1);
}

static void picks_torch_wheel_indexes(void **state)
{
    (void)state;
    assert_string_equal(rule_torch_index_tag(13000), "cu130");
    assert_string_equal(rule_torch_index_tag(13020), "cu130");
    assert_string_equal(rule_torch_index_tag(12080), "cu128");
    assert_string_equal(rule_torch_index_tag(12070), "cu126");
    assert_string_equal(rule_torch_index_tag(12000), "cu118");
    assert_null(rule_torch_index_tag(11070));
    struct version c = v("12.9");
    assert_string_equal(rule_torch_index_tag_exact(&c), "cu129");
    c = v("12.7");
    assert_null(rule_torch_index_tag_exact(&c));
}

static void knows_driver_floors(void **state)
{
    (void)state;
    struct version c130 = v("13.0"), c128 = v("12.8"), none = {{0, 0, 0, 0}, 0};
    assert_int_equal(rule_driver_runs_cuda(13000, "580.65.06", &c130), 1);
    assert_int_equal(rule_driver_runs_cuda(12080, "570.124.06", &c130), 0);
    /* Minor-version compatibility: a 12.2 driver runs 12.8 code. */
    assert_int_equal(rule_driver_runs_cuda(12020, "535.104.05", &c128), 1);
    assert_int_equal(rule_driver_runs_cuda(11080, "520.61.05", &c128), 0);
    /* A branch below 580 cannot run 13.x even if the CUDA number were unknown. */
    assert_int_equal(rule_driver_runs_cuda(0, "575.51.03", &c130), 0);
    assert_int_equal(rule_driver_runs_cuda(0, NULL, &c130), -1);
    assert_int_equal(rule_driver_runs_cuda(13000, "580.65.06", &none), -1);
}

static void knows_which_wheels_cover_which_gpus(void **state)
{
    (void)state;
    struct version c126 = v("12.6"), c128 = v("12.8"), c130 = v("13.0");
    assert_int_equal(rule_torch_covers_cc(&c126, 12, 0), 0);
    assert_int_equal(rule_torch_covers_cc(&c126, 9, 0), 1);
    assert_int_equal(rule_torch_covers_cc(&c128, 12, 0), 1);
    assert_int_equal(rule_torch_covers_cc(&c130, 10, 0), 1);
    assert_int_equal(rule_torch_covers_cc(&c130, 7, 0), 0);
    assert_int_equal(rule_torch_covers_cc(&c126, 0, 0), -1);
}

static const struct arch_entry *find(const struct arch_entries *l, const char *text)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->e[i].text, text))
            return &l->e[i];
    return NULL;
}

static void reads_arch_lists_as_torch_and_sage_do(void **state)
{
    (void)state;
    struct arch_entries l;
    rule_parse_arch_list("8.9 9.0a;12.0+PTX", "2.11.0", &l);
    assert_int_equal(l.n, 3);
    assert_false(find(&l, "8.9")->torch_rejects);
    assert_false(find(&l, "9.0a")->torch_rejects);
    assert_false(find(&l, "9.0a")->sage_unsupported); /* sage strips the 'a' */
    assert_true(find(&l, "12.0+PTX")->arch.ptx);
    rule_arch_entries_free(&l);

    /* torch splits on ';' only: a comma list is one unknown arch to it; sage reads it. */
    rule_parse_arch_list("8.9,12.0", NULL, &l);
    assert_int_equal(l.n, 2);
    assert_true(l.e[0].torch_rejects && l.e[1].torch_rejects);
    assert_false(l.e[0].sage_unsupported || l.e[1].sage_unsupported);
    rule_arch_entries_free(&l);

    /* sage's spellings that torch rejects, and names only torch knows. */
    rule_parse_arch_list("sm_120a;89;Ampere", "2.8.0", &l);
    assert_true(find(&l, "sm_120a")->torch_rejects);
    assert_false(find(&l, "sm_120a")->sage_unsupported);
    assert_true(find(&l, "89")->torch_rejects);
    assert_false(find(&l, "89")->sage_unsupported);
    assert_non_null(find(&l, "8.0"));
    assert_non_null(find(&l, "8.6+PTX"));
    assert_true(find(&l, "8.0")->sage_unsupported); /* a name is nothing to sage */
    rule_arch_entries_free(&l);

    /* 12.1 arrived in torch 2.8; 7.5 is real but not SageAttention's; garbage parses to nothing. */
    rule_parse_arch_list("12.1;7.5;banana", "2.7.1", &l);
    assert_true(find(&l, "12.1")->torch_rejects);
    assert_false(find(&l, "7.5")->torch_rejects);
    assert_true(find(&l, "7.5")->sage_unsupported);
    assert_false(find(&l, "banana")->parsed);
    rule_arch_entries_free(&l);
    rule_parse_arch_list("12.1", "2.8.0", &l);
    assert_false(l.e[0].torch_rejects);
    rule_arch_entries_free(&l);

    rule_parse_arch_list(" ; ", NULL, &l);
    assert_int_equal(l.n, 0);
    rule_arch_entries_free(&l);
    rule_parse_arch_list(NULL, NULL, &l);
    assert_int_equal(l.n, 0);
}

static void maps_gpus_to_sage_modules(void **state)
{
    (void)state;
    assert_string_equal(rule_sage_module_for_cc(8, 6), "_qattn_sm80");
    assert_string_equal(rule_sage_module_for_cc(8, 9), "_qattn_sm89");
    assert_string_equal(rule_sage_module_for_cc(12, 0), "_qattn_sm89");
    assert_string_equal(rule_sage_module_for_cc(9, 0), "_qattn_sm90");
    assert_null(rule_sage_module_for_cc(10, 0));
    assert_null(rule_sage_module_for_cc(7, 5));
}

static void reads_wheel_local_tags(void **state)
{
    (void)state;
    char *cuda, *torch;
    rule_parse_wheel_local_tag("2.2.0+cu128torch2.7.1", &cuda, &torch);
    assert_string_equal(cuda, "12.8");
    assert_string_equal(torch, "2.7.1");
    free(cuda);
    free(torch);
    rule_parse_wheel_local_tag("2.2.0.post3+cu130torch2.9.0.", &cuda, &torch);
    assert_string_equal(cuda, "13.0");
    assert_string_equal(torch, "2.9.0");
    free(cuda);
    free(torch);
    rule_parse_wheel_local_tag("2.2.0", &cuda, &torch);
    assert_null(cuda);
    assert_null(torch);
    rule_parse_wheel_local_tag(NULL, &cuda, &torch);
    assert_null(cuda);
    rule_parse_wheel_local_tag("1.0+cu1", &cuda, &torch);
    assert_null(cuda);
}

static void recognises_pip_runtime_dirs(void **state)
{
    (void)state;
    assert_true(rule_is_pip_runtime_dir("/v/lib/python3.11/site-packages/nvidia/cuda_runtime", 0));
    assert_true(rule_is_pip_runtime_dir("/usr/lib/python3/dist-packages/nvidia", 0));
    /* CUDA 13's nvcc wheel does carry bin/nvcc: that tree is a toolkit. */
    assert_false(rule_is_pip_runtime_dir("/v/lib/python3.12/site-packages/nvidia/cu13", 1));
    assert_false(rule_is_pip_runtime_dir("/usr/local/cuda", 0));
    assert_false(rule_is_pip_runtime_dir(NULL, 0));
}

static void reads_torchs_triton_pin(void **state)
{
    (void)state;
    char *pin =
        rule_torch_triton_pin("Name: torch\nRequires-Dist: triton_kernels==1.0\n"
                              "Requires-Dist: triton==3.5.0; platform_system == \"Linux\"\n");
    assert_string_equal(pin, "3.5.0");
    free(pin);
    pin = rule_torch_triton_pin("Requires-Dist: triton==3.3.1\r\n");
    assert_string_equal(pin, "3.3.1");
    free(pin);
    assert_null(rule_torch_triton_pin("Name: torch\nRequires-Dist: sympy\n"));
    assert_null(rule_torch_triton_pin("X-Requires-Dist: triton==1.0\n"));
    assert_null(rule_torch_triton_pin("Requires-Dist: triton==\n"));
    assert_null(rule_torch_triton_pin(NULL));
}

static void formats_and_quotes(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(rule_format_bytes(512, buf, sizeof buf), "512 B");
    assert_string_equal(rule_format_bytes(1536LL * 1024 * 1024, buf, sizeof buf), "1.5 GiB");
    struct version c = v("12.8");
    char *q = fix_fetch_cuda(&c);
    assert_string_equal(q, "sagebuild fetch-cuda --cuda 12.8 && eval \"$(sagebuild env)\"");
    free(q);
    q = fix_fetch_cuda(NULL);
    assert_non_null(strstr(q, "--match-torch"));
    free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(judges_cuda_mismatch_as_torch),
        cmocka_unit_test(picks_torch_wheel_indexes),
        cmocka_unit_test(knows_driver_floors),
        cmocka_unit_test(knows_which_wheels_cover_which_gpus),
        cmocka_unit_test(reads_arch_lists_as_torch_and_sage_do),
        cmocka_unit_test(maps_gpus_to_sage_modules),
        cmocka_unit_test(reads_wheel_local_tags),
        cmocka_unit_test(recognises_pip_runtime_dirs),
        cmocka_unit_test(reads_torchs_triton_pin),
        cmocka_unit_test(formats_and_quotes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
