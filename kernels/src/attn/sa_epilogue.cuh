/* Epilogue: normalise O by the row sum (and undo V's FP8 scale), store it in the caller's dtype
 * and layout with bounds on rows and head-dim columns, write the natural-log LSE, and raise the
 * caller's non-finite flag when a stored O element is NaN or +-inf. */
#ifndef SA_EPILOGUE_CUH
#define SA_EPILOGUE_CUH

#include "sa_softmax.cuh"
#include "sa_tile.cuh"

template <bool BF16> __device__ __forceinline__ void sa_store1(void *p, float x)
{
    if (BF16)
        *(__nv_bfloat16 *)p = __float2bfloat16_rn(x);
    else
        *(__half *)p = __float2half_rn(x);
}

/* Whether a 16-bit fp16/bf16 pattern is NaN or +-inf: its exponent bits are all ones. Tested
 * on what is stored, so a finite fp32 value that rounds to inf counts too. */
template <bool BF16> __device__ __forceinline__ bool sa_bits_nonfinite(uint32_t bits16)
{
    const uint32_t exp_mask = BF16 ? 0x7f80u : 0x7c00u;
    return (bits16 & exp_mask) == exp_mask;
}

template <int MODE, int D, bool BF16>
__device__ __forceinline__ void sa_epilogue(const sa_attn_args &a, float o[SA_MT][D / 8][4],
                                            sa_row_state &st, const float row_scale[SA_MT][2],
                                            int b, int h, int row0, int lane)
{
    using T = sa_tile<MODE, D>;
    const int tq = lane % 4;
    const size_t bh = (size_t)b * a.hq + h;
    const size_t bhk = (size_t)b * a.hkv + h / a.group;
    char *ob = (char *)a.o + (b * a.o_b + h * a.o_h) * 2;
    bool nonfinite = false;
#pragma unroll
    for (int mt = 0; mt < SA_MT; ++mt) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            float sum = st.sum[mt][hh];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            const int row = row0 + mt * 16 + 8 * hh;
            if (row >= a.lq)
                continue;
            /* sum is of P as it entered P·V, scaled by 2^P_LOG2 like O: their ratio is exact. */
            const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
            char *orow = ob + (int64_t)row * a.o_t * 2;
#pragma unroll
            for (int nt = 0; nt < D / 8; ++nt) {
                const int col = nt * 8 + 2 * tq;
                if (col >= a.d)
                    continue;
                float x0 = o[mt][nt][2 * hh] * inv, x1 = o[mt][nt][2 * hh + 1] * inv;
                if (T::PV_FP8) {
                    const float2 vs = *(const float2 *)(a.vscale + bhk * D + col);
                    x0 *= vs.x;
                    x1 *= vs.y;
                }
                const uint32_t packed = sa_pack2<BF16>(x0, x1);
                if (col + 1 < a.d) {
                    *(uint32_t *)(orow + col * 2) = packed;
                    nonfinite |= sa_bits_nonfinite<BF16>(packed >> 16);
                } else {
                    sa_store1<BF16>(orow + col * 2, x0);
                }
                nonfinite |= sa_bits_nonfinite<BF16>(packed & 0xffffu);
            }
            if (a.lse && tq == 0) {
                float l = -INFINITY;
                if (sum > 0.0f) {
                    l = (st.max[mt][hh] * row_scale[mt][hh] + log2f(sum) - T::P_LOG2) * SA_LN2;
                    if (a.qkm)
                        l += a.qkm[bh * a.lq + row];
                }
                a.lse[bh * a.lq + row] = l;
            }
        }
    }
    /* Every lane reaches this point (rows and columns out of bounds only skip stores), so the
     * vote is over the whole warp: one store per warp that wrote a non-finite element. */
    if (a.nonfinite && __any_sync(0xffffffffu, nonfinite) && lane == 0)
        atomicExch(a.nonfinite, 1);
}

#endif
