/* The modes' names (sageattn.h): plain C, so that the library, the C reference and the CPU tests
 * all read this one list. */
#include "sageattn.h"

const char *sageattn_mode_name(sageattn_mode m)
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
