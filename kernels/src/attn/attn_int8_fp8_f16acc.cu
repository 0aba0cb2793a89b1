/* Instantiates the attention kernel of one mode (one file per mode so that they compile in
 * parallel). */
#include "sa_mainloop.cuh"

cudaError_t sa_attn_dispatch_int8_fp8_f16acc(int d_pad, int bf16, const sa_attn_args *a,
                                             const sa_launch_cfg *l)
{
    return sa_attn_dispatch<SA_KMODE_INT8_FP8_F16ACC>(d_pad, bf16, a, l);
}
