/* sagebuild-lock.json and the env lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fetch/engine/lockfile.h"
#include "fetch/engine/postcheck.h"

static const struct lock_component comps[] = {
    {"cuda_nvcc", "13.0.88", "cuda_nvcc/x.tar.xz", "aa", 10, "http://m/cuda_nvcc/x.tar.xz"},
    {"cuda_cudart", "13.0.96", "cuda_cudart/y.tar.xz", "bb", 20, NULL},
};

static void lock_round_trip(void **state)
{
    (void)state;
    struct lock_info li = {"redist",    "13.0.2", "2025-10-09", "linux-x86_64",
                           "bundled m", "cc",     comps,        2};
    char *text = lockfile_format(&li);
    assert_non_null(strstr(text, "\"release_label\":\t\"13.0.2\""));
    assert_true(lockfile_matches(text, &li));
    char *r = lockfile_release(text);
    assert_string_equal(r, "13.0.2");
    free(r);
    /* Another hash, release, platform, or component count: not the same install. */
    struct lock_component other[2] = {comps[0], comps[1]};
    other[1].sha256 = "bd";
    struct lock_info li2 = li;
    li2.components = other;
    assert_false(lockfile_matches(text, &li2));
    li2 = li;
    li2.release = "13.0.1";
    assert_false(lockfile_matches(text, &li2));
    li2 = li;
    li2.platform = "linux-sbsa";
    assert_false(lockfile_matches(text, &li2));
    li2 = li;
    li2.ncomponents = 1;
    assert_false(lockfile_matches(text, &li2));
    li2 = li;
    li2.source = "pypi";
    assert_false(lockfile_matches(text, &li2));
    assert_false(lockfile_matches("not json", &li));
    assert_false(lockfile_matches(NULL, &li));
    assert_null(lockfile_release("{}"));
    free(text);
}

static void env_lines(void **state)
{
    (void)state;
    struct env_values v = {"/opt/cuda x", "gcc-13", "g++-13", 6, "/opt/cuda x/include/cccl"};
    char *sh = env_format(&v, ENV_SH);
    assert_non_null(strstr(sh, "export CUDA_HOME='/opt/cuda x';\n"));
    assert_non_null(strstr(sh, "export PATH='/opt/cuda x/bin'\"${PATH:+:$PATH}\";\n"));
    assert_non_null(strstr(sh, "export CC='gcc-13';\n"));
    assert_non_null(strstr(sh, "export NVCC_CCBIN='g++-13';\n"));
    assert_non_null(strstr(sh, "export MAX_JOBS='6';\n"));
    assert_non_null(strstr(sh, "export CPLUS_INCLUDE_PATH='/opt/cuda x/include/cccl'"
                               "\"${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}\";\n"));
    free(sh);
    char *fish = env_format(&v, ENV_FISH);
    assert_non_null(strstr(fish, "set -gx CUDA_HOME '/opt/cuda x';\n"));
    assert_non_null(strstr(fish, "set -gx PATH '/opt/cuda x/bin' $PATH;\n"));
    free(fish);
    struct env_values bare = {"/c", NULL, NULL, 0, NULL};
    sh = env_format(&bare, ENV_SH);
    assert_null(strstr(sh, "CC="));
    assert_null(strstr(sh, "MAX_JOBS"));
    assert_null(strstr(sh, "CPLUS_INCLUDE_PATH"));
    free(sh);
}

static void postcheck_program_and_trace(void **state)
{
    (void)state;
    assert_non_null(strstr(postcheck_source, "#include <cuda_fp16.h>"));
    assert_non_null(strstr(postcheck_source, "#include <cuda_bf16.h>"));
    assert_non_null(strstr(postcheck_source, "#include <cuda_fp8.h>"));
    assert_true(
        postcheck_trace_uses_root("/usr/lib/crt1.o\n/r/bin/..//lib64/libcudart.so\n", "/r"));
    assert_false(postcheck_trace_uses_root("/usr/local/lib64/libcudart.so\n", "/r"));
    assert_false(postcheck_trace_uses_root("/r/x.o\n", "/r")); /* no libcudart at all */
    assert_false(postcheck_trace_uses_root("/r/lib64/libcudart.so\n/usr/lib/libcudart.so\n", "/r"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lock_round_trip),
        cmocka_unit_test(env_lines),
        cmocka_unit_test(postcheck_program_and_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
