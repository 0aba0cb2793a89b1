/* Host-side declarations shared by the launch code (launch.cu) and the kernel files: the
 * workspace layout, the arguments of the attention kernel, and one launcher per kernel family. */
#ifndef SA_KERNELS_H
#define SA_KERNELS_H

#include "../sa_context.h"
#include "../sa_internal.h"

/* Kernel families (template MODE). 3..5 differ from 1..2 only in P·V's instruction and its
 * accumulator: 3 = int8-fp8 through the block-scaled E4M3 MMA with unit scales (sm_120a/121a;
 * the ordinary E4M3 MMA elsewhere), 4 = E4M3 P·V with an FP16 accumulator per key tile
 * (int8-fp8-f16acc), 5 = fp16 P·V with an FP16 accumulator per key tile (int8-fp16-f16acc,
 * fp16 inputs only: bf16 runs family 1). */
enum sa_kernel_mode {
    SA_KMODE_FP16 = 0,
    SA_KMODE_INT8_FP16 = 1,
    SA_KMODE_INT8_FP8 = 2,
    SA_KMODE_INT8_FP8_BS = 3,
    SA_KMODE_INT8_FP8_F16ACC = 4,
    SA_KMODE_INT8_FP16_F16ACC = 5
};

/* Byte offsets into the workspace; 0-sized parts are unused by the mode. */
struct sa_ws_layout {
    int lq_pad; /* q_len rounded up to SA_CTA_Q */
    int lk_pad; /* kv_len rounded up to SA_CTA_K */
    int nchunk; /* kv-sequence chunks of the statistics pass */
    size_t q8, qscale, qkm, k8, kscale, kpart, km, vpart, vscale, vt;
    /* V smoothed (smooth_v: sa_smooth_v, in a library with Hopper code): V's chunk minima (vpart
     * then holds its chunk maxima), chunk sums and channel means */
    int smooth_v;
    size_t vmin, vsum, vmean;
    /* K by rank groups (rank_groups: sa_rank_groups, in a library with Hopper code): each head's
     * key at each position, int [b][hkv][lk_pad] (sa_krank_kernel) */
    int rank_groups;
    size_t kperm;
    size_t total;
};

/* Rows of K (and V) that one block of the statistics pass reduces. 512 since round 42
 * (bench/results/h200-a203af2-statrows42.md: with K read only for its mean's sample, 256-row
 * blocks spent a larger share in their end-of-block reduction; the statistics kernel 62.1 -> 51.9
 * us at D=128 L=1K B=16 H=32, DRAM 58 -> 69 %, whole calls -0.7 to -1.0 % there). */
#ifndef SA_STAT_ROWS /* a build may override it (-D) to measure another */
#define SA_STAT_ROWS 512
#endif

void sa_ws_plan(const struct sa_problem *p, struct sa_ws_layout *w);

struct sa_attn_args {
    const void *q;       /* int8 [.., d_pad] (workspace) or the caller's fp16/bf16 */
    const float *qscale; /* int8 modes: [b][hq][lq_pad], includes sm_scale*log2e */
    const void *k;       /* int8 (workspace) or the caller's fp16/bf16 */
    const float *kscale; /* int8 modes: [b][hkv][lk_pad] */
    const void *v;       /* caller's fp16/bf16, or e4m3 V^T tiles [b][hkv][lk_pad/64][d_pad][64] */
    const float *vscale; /* fp8: [b][hkv][d_pad] */
    const float *vmean;  /* V smoothed (sa_smooth_v): [b][hkv][d_pad], added to O; or NULL */
    void *o;
    float *lse;            /* optional [b][hq][lq] */
    int *nonfinite;        /* optional: set to 1 by any warp that wrote a NaN/inf to o */
    const int *only_if;    /* optional, fp16 mode: every block exits at once if *only_if == 0 */
    const float *qkm;      /* int8 modes with lse: sm_scale * q.kmean, [b][hq][lq] */
    int64_t q_b, q_h, q_t; /* byte strides */
    int64_t k_b, k_h, k_t;
    int64_t v_b, v_h, v_t; /* fp8: unused (layout fixed by lk_pad) */
    int64_t o_b, o_h, o_t; /* element strides */
    int lq, lkv, hq, hkv, group, d;
    int lq_pad, lk_pad;
    int causal;
    float score_scale; /* sm_scale * log2e */
    /* int8-fp8-wgmma when its kernel quantizes Q itself (sa_hopper_quantizes_q): the caller's
     * fp16/bf16 Q and its byte strides; NULL when the pre-pass quantized Q into q/qscale. */
    const void *q_src;
    int64_t qsrc_b, qsrc_h, qsrc_t;
};

/* How one attention kernel is launched: host-side facts, never a kernel argument. */
struct sa_launch_cfg {
    int batch;
    cudaStream_t stream;
    bool probe; /* nothing runs: the result says whether the library holds code for the device */
    struct sageattn_context *ctx; /* the device's limits and kernel record; NULL: ask the driver */
    bool pdl; /* launched as a programmatic dependent of the pre-pass (sa_launch_k) */
};

/* Programmatic dependent launch (int8-fp8-wgmma's call, SA_PDL): each kernel of the call after
 * its first is launched while its predecessor still runs; it waits (griddepcontrol.wait: the
 * predecessor complete, its writes visible) before it reads anything the call wrote or writes
 * anything the call reads, and each pre-pass kernel lets its dependent launch once all its own
 * blocks have started (griddepcontrol.launch_dependents; the finalize step before its wait, so
 * that the rank kernel's copies of K overlap the statistics). The chain is transitive: a kernel's
 * predecessor completed only after its own wait, so every earlier kernel of the call has too.
 * Without the launch attribute both instructions do nothing; before sm_90 they are left out. */
#ifdef __CUDACC__
__device__ __forceinline__ void sa_pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void sa_pdl_launch_dependents()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
/* A pre-pass kernel's start: the call's previous kernel complete, then the next one free to
 * launch (once every block of this one has started). */
__device__ __forceinline__ void sa_pdl_enter()
{
    sa_pdl_wait();
    sa_pdl_launch_dependents();
}
/* kernel<<<grid, block, smem, stream>>>(args), as a programmatic dependent of the stream's
 * previous kernel when pdl. */
template <typename... P, typename... A>
static inline void sa_launch_k(bool pdl, void (*kernel)(P...), dim3 grid, dim3 block, size_t smem,
                               cudaStream_t stream, const A &...args)
{
    if (!pdl) {
        kernel<<<grid, block, smem, stream>>>(args...);
        return;
    }
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    (void)cudaLaunchKernelEx(&cfg, kernel, args...); /* errors: cudaGetLastError, as <<<>>> */
}
#endif

/* Attention kernels, one function per mode (attn_<mode>.cu); each dispatches on the padded
 * head dim and the dtype. */
cudaError_t sa_attn_dispatch_fp16(int d_pad, int bf16, const struct sa_attn_args *a,
                                  const struct sa_launch_cfg *l);
cudaError_t sa_attn_dispatch_int8_fp16(int d_pad, int bf16, const struct sa_attn_args *a,
                                       const struct sa_launch_cfg *l);
cudaError_t sa_attn_dispatch_int8_fp8(int d_pad, int bf16, const struct sa_attn_args *a,
                                      const struct sa_launch_cfg *l);
cudaError_t sa_attn_dispatch_int8_fp8_bs(int d_pad, int bf16, const struct sa_attn_args *a,
                                         const struct sa_launch_cfg *l);
cudaError_t sa_attn_dispatch_int8_fp8_f16acc(int d_pad, int bf16, const struct sa_attn_args *a,
                                             const struct sa_launch_cfg *l);
/* fp16 inputs only (bf16 has no MMA with an FP16 accumulator: the caller runs int8_fp16). */
cudaError_t sa_attn_dispatch_int8_fp16_f16acc(int d_pad, const struct sa_attn_args *a,
                                              const struct sa_launch_cfg *l);

/* int8-fp8-wgmma (attn_hopper.cu, sm_90a only; absent unless SA_WITH_HOPPER). */
cudaError_t sa_attn_dispatch_int8_fp8_wgmma(int d_pad, int bf16, const struct sa_attn_args *a,
                                            const struct sa_launch_cfg *l);
/* 1 when int8-fp8-wgmma's kernel for p quantizes Q from the caller's tensor itself (then the
 * pre-pass leaves Q out and the kernel gets sa_attn_args.q_src). */
int sa_hopper_quantizes_q(const struct sa_problem *p, int d_pad);

/* Pre-pass launchers (quant.cu); with_q 0: Q is left to the attention kernel; pdl: every kernel
 * after the first launched as a programmatic dependent (sa_launch_k). */
cudaError_t sa_quant_launch(const struct sa_problem *p, int d_pad, const struct sa_ws_layout *w,
                            char *ws, int with_q, bool pdl, cudaStream_t stream);
/* The head dim the kernels use for p: p->d_pad, or 128 when the build left 64 out. */
int sa_kernel_dpad(const struct sa_problem *p);

#endif
