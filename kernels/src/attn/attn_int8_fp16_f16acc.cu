/* Instantiates the attention kernel of one mode (one file per mode so that they compile in
 * parallel). fp16 inputs only: bf16 has no MMA with an FP16 accumulator. */
#include "sa_mainloop.cuh"

cudaError_t sa_attn_dispatch_int8_fp16_f16acc(int d_pad, const sa_attn_args *a,
                                              const sa_launch_cfg *l)
{
    return sa_attn_dispatch<SA_KMODE_INT8_FP16_F16ACC>(d_pad, 0, a, l);
}
