/* Thin wrappers over the PTX instructions the kernels use: cp.async, ldmatrix, mma.sync, ex2,
 * fp8 conversion. Each is one instruction, so the kernels read like the algorithm. */
#ifndef SA_PTX_CUH
#define SA_PTX_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "../sa_internal.h"

#define SA_DEVICE __device__ __forceinline__

SA_DEVICE uint32_t sa_smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* Special registers read with volatile asm: the read is neither merged with the kernel's first
 * read nor hoisted above the main loop (see sa_epilogue_fresh_ids in sa_mainloop.cuh). */
#define SA_SREG_READER(name, reg)                                                                  \
    SA_DEVICE int name(void)                                                                       \
    {                                                                                              \
        int v;                                                                                     \
        asm volatile("mov.u32 %0, " reg ";\n" : "=r"(v));                                          \
        return v;                                                                                  \
    }
SA_SREG_READER(sa_fresh_tid_x, "%%tid.x")
SA_SREG_READER(sa_fresh_ctaid_x, "%%ctaid.x")
SA_SREG_READER(sa_fresh_nctaid_x, "%%nctaid.x")
SA_SREG_READER(sa_fresh_ctaid_y, "%%ctaid.y")
SA_SREG_READER(sa_fresh_ctaid_z, "%%ctaid.z")
#undef SA_SREG_READER

/* 16-byte async copy; bytes past src_bytes (0..16) are zero-filled in shared memory. */
SA_DEVICE void sa_cp_async16(uint32_t dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes));
}
/* The same copy of 16 bytes that all lie in the source. */
SA_DEVICE void sa_cp_async16_whole(uint32_t dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
SA_DEVICE void sa_cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}
template <int N> SA_DEVICE void sa_cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

SA_DEVICE void sa_ldmatrix_x4(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
SA_DEVICE void sa_ldmatrix_x4_trans(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

/* D += A·B, INT8 16x8x32 -> s32. */
SA_DEVICE void sa_mma_s8(int c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* D += A·B, 16x8x16 fp16 or bf16 -> f32. */
template <bool BF16>
SA_DEVICE void sa_mma_f16(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    if (BF16) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
}

/* D += A·B, E4M3 16x8x32 -> f32. Only where the ISA has it (sm_89+). */
SA_DEVICE void sa_mma_e4m3(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    (void)c, (void)a, (void)b0, (void)b1;
    __trap();
#endif
}

/* D += A·B, E4M3 16x8x32 -> f32 through the block-scaled MMA (kind::mxf8f6f4, one UE8M0 scale
 * per 32 k-elements of each row of A and column of B) with every scale byte 0x7F = 2^0: the
 * product is the plain E4M3 one whatever the byte/thread selectors pick, and on sm_120a/121a
 * this form runs at the full tensor rate where the plain one runs at half (issue 9). Where
 * the ISA has no block-scaled mma.sync it is the ordinary E4M3 MMA: the same arithmetic. */
#define SA_UE8M0_ONE_X4 0x7F7F7F7Fu
SA_DEVICE void sa_mma_e4m3_bs(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
#if defined(__CUDA_ARCH_FEAT_SM120_ALL) || defined(__CUDA_ARCH_FEAT_SM121_ALL)
    asm volatile("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32."
                 "e4m3.e4m3.f32.ue8m0 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3}, "
                 "%10, {0, 0}, %10, {0, 0};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1),
                   "r"(SA_UE8M0_ONE_X4));
#else
    sa_mma_e4m3(c, a, b0, b1);
#endif
}

/* D += A·B, E4M3 16x8x32 with an FP16 accumulator (c: two f16x2, the rows g and g+8 of the
 * fragment). sm_89+ (sm_90 has no FP8 mma.sync: ptxas emulates it with two f16 HMMA that
 * accumulate in FP16 as well). */
SA_DEVICE void sa_mma_e4m3_f16acc(uint32_t c[2], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890 && SA_HAS_E4M3_F16ACC
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%0,%1}, {%2,%3,%4,%5}, "
                 "{%6,%7}, {%0,%1};\n"
                 : "+r"(c[0]), "+r"(c[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    (void)c, (void)a, (void)b0, (void)b1;
    __trap();
#endif
}

/* D += A·B, fp16 16x8x16 with an FP16 accumulator (c as in sa_mma_e4m3_f16acc). */
SA_DEVICE void sa_mma_f16_f16acc(uint32_t c[2], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, "
                 "{%6,%7}, {%0,%1};\n"
                 : "+r"(c[0]), "+r"(c[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* An f16x2 register as two floats (low half first). */
SA_DEVICE float2 sa_half2_to_float2(uint32_t h)
{
    return __half22float2(*reinterpret_cast<const __half2 *>(&h));
}

/* lo += low half of h, hi += high half, in fp32 (the f16 -> f32 widening is exact). sm_100 and
 * newer add an f16 to an f32 in one instruction (PTX add.f32.f16, SASS FHADD with a half
 * selector): half the instructions of widening first (HADD2.F32) and adding (FADD), with the
 * same result bit for bit. */
SA_DEVICE void sa_add_half2_to_f32(float &lo, float &hi, uint32_t h)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
    asm("{.reg .f16 l, u;\n"
        " mov.b32 {l, u}, %2;\n"
        " add.rn.f32.f16 %0, l, %0;\n"
        " add.rn.f32.f16 %1, u, %1;}\n"
        : "+f"(lo), "+f"(hi)
        : "r"(h));
#else
    const float2 f = sa_half2_to_float2(h);
    lo += f.x;
    hi += f.y;
#endif
}

/* Two floats -> two E4M3 bytes (lo in the low byte), round to nearest, saturating. */
SA_DEVICE uint16_t sa_pack_e4m3x2(float lo, float hi)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    uint16_t r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(r) : "f"(hi), "f"(lo));
    return r;
#else
    (void)lo, (void)hi;
    return 0;
#endif
}

SA_DEVICE float sa_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* N FP32 FMAs in the four independent chains of `sink` (issue-bound, not latency-bound), which
 * the kernel carries across its main loop and reads once after it (sa_test_extra_alu_sink_used):
 * dead code to the compiler otherwise. Only for SA_TEST_EXTRA_ALU* (sa_internal.h); with N = 0
 * nothing is emitted. */
template <int N> SA_DEVICE void sa_test_extra_alu(float (&sink)[4], float seed)
{
#pragma unroll
    for (int i = 0; i < N; ++i)
        asm volatile("fma.rn.f32 %0, %0, %1, %1;\n" : "+f"(sink[i % 4]) : "f"(seed));
}
/* True only for a NaN payload no arithmetic produces (hardware NaNs are canonical): keeps the
 * extra instructions alive without changing any result. */
SA_DEVICE bool sa_test_extra_alu_sink_used(const float (&sink)[4])
{
    return __float_as_uint(sink[0]) == 0x7fc0deadu || __float_as_uint(sink[1]) == 0x7fc0deadu ||
           __float_as_uint(sink[2]) == 0x7fc0deadu || __float_as_uint(sink[3]) == 0x7fc0deadu;
}

/* int32 -> fp32 without I2F: an integer accumulator that started at SA_INT_FLOAT_BIAS
 * (the bits of 1.5*2^23) and gained x, |x| < 2^22, reads as the float 1.5*2^23 + x exactly.
 * The INT8 Q·Kᵀ mma starts its accumulators there, so the bias costs no instruction. */
#define SA_INT_FLOAT_BIAS 0x4B400000
SA_DEVICE float sa_biased_int_to_float(int biased)
{
    return __int_as_float(biased) - 12582912.0f;
}

template <bool BF16> SA_DEVICE uint32_t sa_pack2(float lo, float hi)
{
    if (BF16) {
        __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&h);
    } else {
        __half2 h = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&h);
    }
}

template <bool BF16> SA_DEVICE float sa_to_float(uint16_t bits)
{
    if (BF16)
        return __bfloat162float(__ushort_as_bfloat16(bits));
    return __half2float(__ushort_as_half(bits));
}

/* round-to-nearest-even(z) & 0xff for |z| < 2^22 (z + 1.5 * 2^23 has ulp 1 and the integer in
 * its low mantissa bits), and 0 for a NaN z, as __float2int_rn gives (NaN -> 256 -> 0): one FADD
 * and one FMNMX instead of F2I (16 per clock per SM) and a clamp. With a finite inv = RN(127 /
 * amax) and |x| <= amax, z = RN(x inv) is within 127 (1 + 2^-24)^2 of 0, so it rounds to within
 * +-127 and the old clamp to +-127 never acted; a NaN x, or an infinite x (then amax = inf and
 * inv = 0), gives a NaN z, 0 both ways. An infinite inv (amax < 127 / FLT_MAX, only bf16 gets
 * there) makes z infinite: the caller keeps F2I and the clamp for that row. */
SA_DEVICE uint32_t sa_rint_byte(float z)
{
    return __float_as_uint(__fadd_rn(fminf(z, 256.0f), 12582912.0f));
}

/* The low bytes of a, b, c, d as one word (a in byte 0). */
SA_DEVICE uint32_t sa_pack_low_bytes(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    return __byte_perm(__byte_perm(a, b, 0x0040), __byte_perm(c, d, 0x0040), 0x5410);
}

#endif
