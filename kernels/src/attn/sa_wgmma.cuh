/* sm_90a warpgroup instructions (wgmma, bulk copies, mbarrier) for the int8-fp8-wgmma kernel
 * (attn_hopper.cu). Compiled only for compute_90a (the file's only target): wgmma and the
 * arch-specific features exist nowhere else. Operand lists are spelled out because inline asm
 * takes no arrays. */
#ifndef SA_WGMMA_CUH
#define SA_WGMMA_CUH

#include <stdint.h>

#define SA_WG_DEVICE __device__ __forceinline__

/* Shared-memory matrix descriptor, no swizzle ("interleave"): the operand is made of 8-row x
 * 16-byte core matrices, each 128 contiguous bytes; lbo = bytes between core matrices adjacent
 * along K, sbo = bytes between core matrices adjacent along M (A) or N (B). */
SA_WG_DEVICE uint64_t sa_wg_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((smem_addr & 0x3FFFFu) >> 4) | ((uint64_t)(lbo >> 4) << 16) |
           ((uint64_t)(sbo >> 4) << 32);
}

SA_WG_DEVICE void sa_wg_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
SA_WG_DEVICE void sa_wg_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> SA_WG_DEVICE void sa_wg_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/* Keeps the compiler from moving reads or writes of an accumulator register across the
 * asynchronous wgmma that owns it (the register is "used and redefined" here). */
SA_WG_DEVICE void sa_wg_touch(int32_t &r)
{
    asm volatile("" : "+r"(r)::"memory");
}
SA_WG_DEVICE void sa_wg_touch(float &r)
{
    asm volatile("" : "+f"(r)::"memory");
}
/* r *= a in place (the same register in and out). A multiply of a carried wgmma accumulator that
 * only some paths execute, written in C, makes ptxas serialize every wgmma of the kernel (C7513:
 * the compiler's select leaves non-wgmma definitions of the accumulator on the merge path); tied
 * in place it does not. Only after the wgmma that accumulate into r have been waited for. */
SA_WG_DEVICE void sa_wg_scale(float &r, float a)
{
    asm volatile("mul.f32 %0, %0, %1;\n" : "+f"(r) : "f"(a));
}
/* Keeps a register that an in-flight wgmma reads as its A operand alive (unchanged) up to this
 * point, so that nothing else is allocated to it before the wgmma.wait_group that precedes. */
SA_WG_DEVICE void sa_wg_keep(uint32_t r)
{
    asm volatile("" ::"r"(r) : "memory");
}
/* sa_wg_keep of every register of P's A fragments (N k32 steps of 4). */
template <int N> SA_WG_DEVICE void sa_wg_keep(const uint32_t (&p)[N][4])
{
#pragma unroll
    for (int kk = 0; kk < N; ++kk)
#pragma unroll
        for (int i = 0; i < 4; ++i)
            sa_wg_keep(p[kk][i]);
}
/* D(64x64 int32) += A(64x32 int8, shared) * B(32x64 int8, shared, K-major). */
SA_WG_DEVICE void sa_wg_qk_s8(int32_t d[32], uint64_t a_desc, uint64_t b_desc)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%"
                 "22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]),
                   "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]),
                   "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]),
                   "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
                   "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]),
                   "+r"(d[30]), "+r"(d[31])
                 : "l"(a_desc), "l"(b_desc), "r"(1));
}
/* D(64x64 int32) += A(64x32 int8, registers: the mma.sync m16n8k32 A fragment of each warp's 16
 * rows) * B(32x64 int8, shared, K-major). */
SA_WG_DEVICE void sa_wg_qk_s8_ra(int32_t d[32], const uint32_t a[4], uint64_t b_desc)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%"
                 "22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]),
                   "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]),
                   "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]),
                   "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
                   "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]),
                   "+r"(d[30]), "+r"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1));
}
/* D(64x64 fp32) = A(64x32 E4M3, registers) * B(32x64 E4M3, shared, K-major) (+ D when
 * accumulate != 0). */
SA_WG_DEVICE void sa_wg_pv_e4m3_n64(float d[32], const uint32_t a[4], uint64_t b_desc,
                                    int accumulate)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%"
                 "22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
                   "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                   "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(accumulate));
}
/* D(64x8 fp32) = A(64x32 E4M3, registers) * B(32x8 E4M3, shared, K-major) (+ D when
 * accumulate != 0): P against one n8 group of E4M3 ones, i.e. P's row sums. */
SA_WG_DEVICE void sa_wg_pv_e4m3_n8(float d[4], const uint32_t a[4], uint64_t b_desc, int accumulate)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(accumulate));
}
/* D(64x128 fp32) = A(64x32 E4M3, registers) * B(32x128 E4M3, shared, K-major) (+ D when
 * accumulate != 0). */
SA_WG_DEVICE void sa_wg_pv_e4m3_n128(float d[64], const uint32_t a[4], uint64_t b_desc,
                                     int accumulate)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%"
                 "22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%"
                 "42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%"
                 "62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
                   "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                   "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
                   "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
                   "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
                   "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(accumulate));
}

/* D(64x136 fp32) = A(64x32 E4M3, registers) * B(32x136 E4M3, shared, K-major) (+ D when
 * accumulate != 0): the P·V of a 128-channel Vᵀ tile plus one n8 group of E4M3 ones, whose
 * columns receive P's row sums (attn_hopper.cu, warp-specialized kernel). */
SA_WG_DEVICE void sa_wg_pv_e4m3_n136(float d[68], const uint32_t a[4], uint64_t b_desc,
                                     int accumulate)
{
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %73, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n136k32.f32.e4m3.e4m3 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%"
        "24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%"
        "46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67}, "
        "{%68,%69,%70,%71}, %72, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(accumulate));
}

/* D(64x72 fp32) = A(64x32 E4M3, registers) * B(32x72 E4M3, shared, K-major) (+ D when
 * accumulate != 0): the P·V of a 64-channel Vᵀ tile plus one n8 group of E4M3 ones, whose
 * columns receive P's row sums (attn_hopper.cu, warp-specialized kernel). */
SA_WG_DEVICE void sa_wg_pv_e4m3_n72(float d[36], const uint32_t a[4], uint64_t b_desc,
                                    int accumulate)
{
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %41, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n72k32.f32.e4m3.e4m3 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%"
        "24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35}, {%36,%37,%38,%39}, %40, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(accumulate));
}

/* Warp specialization: register budgets per warpgroup (every thread of the warpgroup executes
 * it; the block's entry count must be known to ptxas, i.e. __launch_bounds__ with a minimum of
 * blocks per SM) and named barriers between warpgroups (count = threads taking part). */
template <int N> SA_WG_DEVICE void sa_wg_regs_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> SA_WG_DEVICE void sa_wg_regs_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
SA_WG_DEVICE void sa_named_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
SA_WG_DEVICE void sa_named_arrive(int id, int threads)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
/* Generic-proxy writes to shared memory made visible to the async proxy (wgmma, bulk copies). */
SA_WG_DEVICE void sa_fence_proxy_async_smem()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
/* Four 8x8 b16 matrices from the mma accumulator layout into shared memory: register i holds
 * this lane's pair (row lane / 4, columns 2 (lane % 4), +1) of matrix i, and lane l gives the
 * address of row l % 8 of matrix l / 8 (16 bytes each). */
SA_WG_DEVICE void sa_stmatrix_x4(uint32_t addr, const uint32_t (&r)[4])
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
                 "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}
/* Shared -> global copy of `bytes` (a multiple of 16, both addresses 16-byte aligned) by the
 * copy engine, in this thread's bulk group; sa_bulk_s2g_wait_read: until every such copy of
 * this thread has read its source (before the shared memory is reused or the block exits). */
SA_WG_DEVICE void sa_bulk_s2g(void *dst, uint32_t src, uint32_t bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n"
                 "cp.async.bulk.commit_group;\n" ::"l"(dst),
                 "r"(src), "r"(bytes)
                 : "memory");
}
SA_WG_DEVICE void sa_bulk_s2g_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
/* One arrival (no transaction bytes) on a shared-memory mbarrier: a consumer releasing a stage. */
SA_WG_DEVICE void sa_mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* mbarrier and bulk copies (the copy engine; 1-D, no tensor map: the pre-pass writes each tile
 * contiguously in the wgmma operand layout). */
SA_WG_DEVICE void sa_mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
SA_WG_DEVICE void sa_mbar_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
SA_WG_DEVICE void sa_mbar_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}
SA_WG_DEVICE void sa_mbar_wait(uint32_t bar, uint32_t parity)
{
    asm volatile("{\n.reg .pred done;\nSA_MBAR_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra SA_MBAR_WAIT;\n}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}
/* Global -> shared copy of `bytes` (a multiple of 16, both addresses 16-byte aligned) that
 * completes as transaction bytes on `bar`. */
SA_WG_DEVICE void sa_bulk_g2s(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                 "%2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

#endif
