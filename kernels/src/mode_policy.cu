/* The mode policy of the public API (mode_policy.h) and the modes' names. Host code only. */
#include <stdio.h>

#include "mode_policy.h"
#include "sa_internal.h"

struct sa_build_caps sa_this_build(void)
{
    struct sa_build_caps caps = {SA_HAS_E4M3_F16ACC, SA_WITH_HOPPER, SA_BUILT_ARCHS};
    return caps;
}

sageattn_status sa_mode_policy(sageattn_mode requested, int cc, const struct sa_build_caps *caps,
                               sageattn_mode *out, char *msg, size_t n)
{
    if (requested == SAGEATTN_MODE_AUTO) {
        if (cc == 89 || cc == 120 || cc == 121)
            *out = caps->e4m3_f16acc ? SAGEATTN_MODE_INT8_FP8_F16ACC : SAGEATTN_MODE_INT8_FP8;
        else
            *out = (cc >= 89 && cc != 90) ? SAGEATTN_MODE_INT8_FP8 : SAGEATTN_MODE_INT8_FP16;
        return SAGEATTN_OK;
    }
    if (requested < SAGEATTN_MODE_AUTO || requested > SAGEATTN_MODE_INT8_FP8_WGMMA) {
        snprintf(msg, n, "mode %d is not a sageattn_mode", (int)requested);
        return SAGEATTN_ERR_UNSUPPORTED_MODE;
    }
    if (sa_mode_pv_fp8(requested) && cc < 89) {
        snprintf(msg, n,
                 "mode %s needs FP8 tensor cores (compute capability 8.9 or newer); this "
                 "GPU is %d.%d: use int8-fp16 or auto",
                 sageattn_mode_name(requested), cc / 10, cc % 10);
        return SAGEATTN_ERR_UNSUPPORTED_MODE;
    }
    if (requested == SAGEATTN_MODE_INT8_FP8_WGMMA && (cc != 90 || !caps->hopper)) {
        if (cc != 90)
            snprintf(msg, n,
                     "mode int8-fp8-wgmma runs on Hopper only (compute capability 9.0, sm_90a "
                     "code); this GPU is %d.%d: use int8-fp8 or auto",
                     cc / 10, cc % 10);
        else
            snprintf(msg, n,
                     "mode int8-fp8-wgmma needs a library built with sm_90a code (this one "
                     "holds %s): rebuild with sm_90a among the archs, or use auto",
                     caps->archs);
        return SAGEATTN_ERR_UNSUPPORTED_MODE;
    }
    if (requested == SAGEATTN_MODE_INT8_FP8_F16ACC && !caps->e4m3_f16acc) {
        snprintf(msg, n,
                 "mode int8-fp8-f16acc needs a library built with nvcc 12.8 or newer (the FP16-"
                 "accumulator FP8 mma.sync); use int8-fp8 or auto");
        return SAGEATTN_ERR_UNSUPPORTED_MODE;
    }
    *out = requested;
    return SAGEATTN_OK;
}

sageattn_status sa_mode_for_cc(sageattn_mode requested, int cc, sageattn_mode *out, char *msg,
                               size_t n)
{
    const struct sa_build_caps caps = sa_this_build();
    return sa_mode_policy(requested, cc, &caps, out, msg, n);
}

extern "C" const char *sageattn_mode_name(sageattn_mode m)
{
    switch (m) {
    case SAGEATTN_MODE_AUTO:
        return "auto";
    case SAGEATTN_MODE_INT8_FP16:
        return "int8-fp16";
    case SAGEATTN_MODE_INT8_FP8:
        return "int8-fp8";
    case SAGEATTN_MODE_FP16:
        return "fp16";
    case SAGEATTN_MODE_INT8_FP8_BS:
        return "int8-fp8-bs";
    case SAGEATTN_MODE_INT8_FP8_F16ACC:
        return "int8-fp8-f16acc";
    case SAGEATTN_MODE_INT8_FP16_F16ACC:
        return "int8-fp16-f16acc";
    case SAGEATTN_MODE_INT8_FP8_WGMMA:
        return "int8-fp8-wgmma";
    }
    return "unknown";
}
