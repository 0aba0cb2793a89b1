/* CPU checks of the public API's argument validation (src/api_validate.cu, host code only):
 * which params struct sizes are accepted, that fields past the caller's struct_size are never
 * read, and that the non-finite flag and only_if_nonzero reach the kernels' problem only when
 * the caller set them (only_if_nonzero with mode fp16 only), and the ABI 1.2 fields (context,
 * recompute_nonfinite, which needs the flag) likewise. */
#include <stdint.h>
#include <string.h>

#include "api_validate.h"
#include "mode_policy.h"
#include "sa_check.h"

static char storage[4][1 << 12] __attribute__((aligned(256)));

/* A valid HND problem whose q, k, v and o point into `storage`. */
static void valid_params(sageattn_params *p)
{
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->batch = 1;
    p->num_q_heads = 2;
    p->num_kv_heads = 1;
    p->q_len = 8;
    p->kv_len = 8;
    p->head_dim = 64;
    p->q = storage[0];
    p->k = storage[1];
    p->v = storage[2];
    p->o = storage[3];
    for (int64_t *s : {p->q_stride, p->o_stride}) {
        s[2] = 64;
        s[1] = 64 * 8;
        s[0] = 64 * 8 * 2;
    }
    for (int64_t *s : {p->k_stride, p->v_stride}) {
        s[2] = 64;
        s[1] = 64 * 8;
        s[0] = 64 * 8;
    }
}

static sageattn_status validate(const sageattn_params *p, struct sa_problem *out, char *msg)
{
    return sa_validate(p, msg, 512, out);
}

int main()
{
    char msg[512];
    struct sa_problem prob;
    sageattn_params p;
    int flag = 0;

    /* The 1.0 struct ends where nonfinite_flag begins; 184 bytes on LP64, where every library
     * of ABI 1.0 was built. Inserting a field before the marker would break old callers. */
    CHECK(SAGEATTN_PARAMS_V1_SIZE == 184 || sizeof(void *) != 8, "V1 size %u",
          SAGEATTN_PARAMS_V1_SIZE);
    CHECK(SAGEATTN_PARAMS_V11_SIZE == 200 || sizeof(void *) != 8, "V1.1 size %u",
          SAGEATTN_PARAMS_V11_SIZE);
    CHECK(sizeof(sageattn_params) > SAGEATTN_PARAMS_V11_SIZE, "the 1.2 struct is larger");

    valid_params(&p);
    p.nonfinite_flag = &flag;
    CHECK(validate(&p, &prob, msg) == SAGEATTN_OK, "1.1 struct refused: %s", msg);
    CHECK(prob.nonfinite_flag == &flag, "the flag did not reach the problem");

    /* A 1.0 caller: whatever lies past its struct is not its memory and must be ignored. */
    p.struct_size = SAGEATTN_PARAMS_V1_SIZE;
    memset(&p.nonfinite_flag, 0x5a, sizeof p.nonfinite_flag);
    memset(&p.only_if_nonzero, 0x5a, sizeof p.only_if_nonzero);
    CHECK(validate(&p, &prob, msg) == SAGEATTN_OK, "1.0 struct refused: %s", msg);
    CHECK(prob.nonfinite_flag == NULL, "a 1.0 struct's flag was read from beyond struct_size");
    CHECK(prob.only_if_nonzero == NULL, "a 1.0 struct's only_if_nonzero was read");

    /* The header's setters extend a 1.0 struct: the fields they do not set become zero. */
    p.struct_size = SAGEATTN_PARAMS_V1_SIZE;
    sageattn_params_set_nonfinite_flag(&p, &flag);
    CHECK(p.struct_size == sizeof p && p.only_if_nonzero == NULL, "extend left garbage");
    CHECK(validate(&p, &prob, msg) == SAGEATTN_OK && prob.nonfinite_flag == &flag, "%s", msg);

    /* only_if_nonzero: fp16 mode only, 4-byte aligned, passed through. */
    valid_params(&p);
    p.only_if_nonzero = &flag;
    for (sageattn_mode m : {SAGEATTN_MODE_AUTO, SAGEATTN_MODE_INT8_FP16, SAGEATTN_MODE_INT8_FP8}) {
        p.mode = m;
        CHECK(validate(&p, &prob, msg) == SAGEATTN_ERR_UNSUPPORTED_MODE, "mode %d accepted", m);
        CHECK(strstr(msg, "only_if_nonzero needs mode fp16") != NULL, "message: %s", msg);
    }
    p.mode = SAGEATTN_MODE_FP16;
    CHECK(validate(&p, &prob, msg) == SAGEATTN_OK && prob.only_if_nonzero == &flag, "%s", msg);
    p.only_if_nonzero = (const int *)((const char *)&flag + 2);
    CHECK(validate(&p, &prob, msg) == SAGEATTN_ERR_MISALIGNED, "misaligned only_if accepted");

    /* A 1.1 caller: context and recompute_nonfinite lie beyond its struct. */
    valid_params(&p);
    p.nonfinite_flag = &flag;
    p.struct_size = SAGEATTN_PARAMS_V11_SIZE;
    memset(&p.context, 0x5a, sizeof p.context);
    p.recompute_nonfinite = 1;
    CHECK(validate(&p, &prob, msg) == SAGEATTN_OK, "1.1 struct refused: %s", msg);
    CHECK(prob.nonfinite_flag == &flag, "a 1.1 struct's flag was lost");
    CHECK(prob.ctx == NULL && prob.recompute_nonfinite == 0,
          "a 1.1 struct's context or recompute_nonfinite was read from beyond struct_size");

    /* 1.2: the context reaches the problem; recompute_nonfinite needs the flag it reads. */
    valid_params(&p);
    sageattn_context *const fake_ctx = (sageattn_context *)storage[0];
    sageattn_params_set_context(&p, fake_ctx);
    CHECK(validate(&p, &prob, msg) == SAGEATTN_OK && prob.ctx == fake_ctx, "context: %s", msg);
    p.recompute_nonfinite = 1;
    CHECK(validate(&p, &prob, msg) == SAGEATTN_ERR_NULL_POINTER, "recompute without a flag");
    CHECK(strstr(msg, "recompute_nonfinite needs nonfinite_flag") != NULL, "message: %s", msg);
    p.recompute_nonfinite = 0;
    sageattn_params_set_recompute_nonfinite(&p, &flag);
    CHECK(validate(&p, &prob, msg) == SAGEATTN_OK && prob.recompute_nonfinite == 1 &&
              prob.nonfinite_flag == &flag && prob.ctx == fake_ctx,
          "recompute: %s", msg);
    p.struct_size = SAGEATTN_PARAMS_V1_SIZE;
    sageattn_params_set_recompute_nonfinite(&p, &flag);
    CHECK(p.struct_size == sizeof p && p.context == NULL && p.only_if_nonzero == NULL,
          "the 1.2 setter left garbage past a 1.0 struct");

    const uint32_t bad_sizes[] = {0,
                                  8,
                                  SAGEATTN_PARAMS_V1_SIZE - 4,
                                  SAGEATTN_PARAMS_V1_SIZE + 4,
                                  SAGEATTN_PARAMS_V11_SIZE + 4,
                                  (uint32_t)sizeof(sageattn_params) + 8};
    for (uint32_t size : bad_sizes) {
        valid_params(&p);
        p.struct_size = size;
        CHECK(validate(&p, &prob, msg) == SAGEATTN_ERR_ABI, "struct_size %u accepted", size);
        CHECK(strstr(msg, "struct_size") != NULL, "message for %u: %s", size, msg);
    }

    valid_params(&p);
    p.nonfinite_flag = (int *)((char *)&flag + 1);
    CHECK(validate(&p, &prob, msg) == SAGEATTN_ERR_MISALIGNED, "misaligned flag accepted");
    CHECK(strstr(msg, "nonfinite_flag") != NULL, "message: %s", msg);

    valid_params(&p);
    CHECK(validate(&p, &prob, msg) == SAGEATTN_OK && prob.nonfinite_flag == NULL, "no flag: %s",
          msg);

    /* int8-fp8-wgmma: a valid mode value, but only for cc 9.0 in a library with sm_90a code
     * (this test compiles api_validate.cu without SA_WITH_HOPPER, as a library without it);
     * auto never picks it. */
    valid_params(&p);
    p.mode = SAGEATTN_MODE_INT8_FP8_WGMMA;
    CHECK(validate(&p, &prob, msg) == SAGEATTN_OK, "wgmma mode value rejected: %s", msg);
    sageattn_mode resolved = SAGEATTN_MODE_AUTO;
    CHECK(sa_mode_for_cc(SAGEATTN_MODE_INT8_FP8_WGMMA, 89, &resolved, msg, sizeof msg) ==
                  SAGEATTN_ERR_UNSUPPORTED_MODE &&
              strstr(msg, "runs only on compute capability 9.0 (sm_90a code") != NULL,
          "wgmma on 8.9: %s", msg);
    CHECK(sa_mode_for_cc(SAGEATTN_MODE_INT8_FP8_WGMMA, 90, &resolved, msg, sizeof msg) ==
                  SAGEATTN_ERR_UNSUPPORTED_MODE &&
              strstr(msg, "sm_90a") != NULL,
          "wgmma without sm_90a code: %s", msg);
    CHECK(sa_mode_for_cc(SAGEATTN_MODE_AUTO, 90, &resolved, msg, sizeof msg) == SAGEATTN_OK &&
              resolved == SAGEATTN_MODE_INT8_FP16,
          "auto on 9.0 is int8-fp16");
    return sa_check_report("test_sa_validate");
}
