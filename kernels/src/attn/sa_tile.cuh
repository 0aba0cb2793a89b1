/* Tile traits: shared-memory geometry of one attention block for a (mode, head dim), and the
 * cp.async tile loaders. */
#ifndef SA_TILE_CUH
#define SA_TILE_CUH

#include "sa_kernels.h"
#include "sa_ptx.cuh"

/* V1: one V buffer instead of two, for GPUs whose blocks get at most ~99 KB of shared memory
 * (sm_86/89/120/121) when the 2-stage ring would not fit (fp16 mode, D=128: 102 KB). */
template <int MODE, int D, bool V1 = false> struct sa_tile {
    static constexpr bool QK_INT8 = MODE != SA_KMODE_FP16;
    static constexpr bool PV_FP8 = MODE == SA_KMODE_INT8_FP8 || MODE == SA_KMODE_INT8_FP8_BS ||
                                   MODE == SA_KMODE_INT8_FP8_F16ACC;
    /* P·V's per-tile accumulator: FP16 (fresh per 64-key tile) instead of FP32. */
    static constexpr bool PV_F16ACC =
        MODE == SA_KMODE_INT8_FP8_F16ACC || MODE == SA_KMODE_INT8_FP16_F16ACC;
    static constexpr int QK_ELEM = QK_INT8 ? 1 : 2;
    static constexpr int QK_ROW = D * QK_ELEM;   /* bytes of one Q or K row */
    static constexpr int QK_PITCH = QK_ROW + 16; /* pitch ≡ 16 (mod 128): no ldmatrix conflicts */
    static constexpr int QK_KSTEPS = QK_ROW / 32; /* 32 bytes of the reduction per mma */
    static constexpr int V_ROWS = PV_FP8 ? D : SA_CTA_K;
    static constexpr int V_ROW = PV_FP8 ? SA_CTA_K : D * 2;
    static constexpr int V_PITCH = V_ROW + 16;
    static constexpr int Q_BYTES = SA_CTA_Q * QK_PITCH;
    static constexpr int K_BYTES = SA_CTA_K * QK_PITCH;
    static constexpr int V_BYTES = V_ROWS * V_PITCH;
    static constexpr int KS_BYTES = QK_INT8 ? SA_CTA_K * 4 : 0;
    static constexpr int STAGE_BYTES = K_BYTES + V_BYTES + KS_BYTES;
    static constexpr int SMEM_BYTES =
        V1 ? Q_BYTES + 2 * (K_BYTES + KS_BYTES) + V_BYTES : Q_BYTES + 2 * STAGE_BYTES;
    /* Offsets (from the Q tile) of stage s's K tile, K scales and V tile. With two V buffers a
     * stage is [K | V | K scales]; with one, [K | K scales] x 2 then the V buffer. */
    __host__ __device__ static constexpr int k_off(int s)
    {
        return Q_BYTES + s * (V1 ? K_BYTES + KS_BYTES : STAGE_BYTES);
    }
    __host__ __device__ static constexpr int ks_off(int s)
    {
        return k_off(s) + (V1 ? K_BYTES : K_BYTES + V_BYTES);
    }
    __host__ __device__ static constexpr int v_off(int s)
    {
        return V1 ? Q_BYTES + 2 * (K_BYTES + KS_BYTES) : k_off(s) + K_BYTES;
    }
    static constexpr int NT_S = SA_CTA_K / 8; /* n-tiles of S per warp row-tile */
    static constexpr int NT_O = D / 8;        /* n-tiles of O */
    /* P leaves the softmax multiplied by 2^P_LOG2: SA_FP8_P_SCALE (448) for E4M3; 2^-6 for fp16
     * P into an FP16 accumulator (the bound in sa_internal.h); else 1. */
    static constexpr float P_LOG2 = PV_FP8                              ? 8.807354922057604f
                                    : MODE == SA_KMODE_INT8_FP16_F16ACC ? SA_F16ACC_P_LOG2
                                                                        : 0.0f;
};

/* Copies a ROWS x ROW_BYTES tile from global memory (row stride `gstride` bytes) to shared
 * memory (row pitch PITCH) with cp.async; all SA_THREADS threads take part, each moving the
 * same 16-byte column of N rows, so every address is a per-thread constant plus an immediate.
 * Unless `full`, rows at or past `rows_valid` and bytes at or past `valid_bytes` in a row
 * arrive as zeros (the source size of cp.async is clipped). */
template <int ROWS, int ROW_BYTES, int PITCH>
__device__ __forceinline__ void sa_copy_tile(uint32_t smem, const char *g, int64_t gstride,
                                             bool full, int rows_valid, int valid_bytes)
{
    constexpr int CPR = ROW_BYTES / 16;
    constexpr int RSTEP = SA_THREADS / CPR;
    constexpr int N = ROWS * CPR / SA_THREADS;
    static_assert(N >= 1 && ROWS * CPR % SA_THREADS == 0, "tile must split evenly");
    const int r0 = threadIdx.x / CPR, c = threadIdx.x % CPR;
    const uint32_t dst = smem + r0 * PITCH + c * 16;
    const char *src = g + r0 * gstride + c * 16;
    const int64_t step = RSTEP * gstride;
    if (full) {
#pragma unroll
        for (int i = 0; i < N; ++i)
            sa_cp_async16(dst + i * RSTEP * PITCH, src + i * step, 16);
    } else {
        int n = valid_bytes - c * 16;
        n = n < 0 ? 0 : (n > 16 ? 16 : n);
#pragma unroll
        for (int i = 0; i < N; ++i) {
            const int bytes = r0 + i * RSTEP < rows_valid ? n : 0;
            sa_cp_async16(dst + i * RSTEP * PITCH, bytes ? src + i * step : g, bytes);
        }
    }
}

/* The end of key tile j with one V buffer (V1): once every warp is done with P·V(j), V[j+1]'s
 * copy goes into that buffer (past the last tile an empty group, so that the main loops' group
 * counts stay the same). Two V buffers: nothing (V[j+1] was issued at the start of the tile).
 * load_v by reference: a copy of the lambda changed sm_90's fp16 D=128 one-V-buffer SASS. */
template <bool V1, class LoadV>
__device__ __forceinline__ void sa_v1_load_next(int j, int n_kt, LoadV &load_v)
{
    if (V1) {
        __syncthreads(); /* every warp is done with the V buffer */
        if (j + 1 < n_kt)
            load_v(j + 1);
        else
            sa_cp_async_commit();
    }
}

#endif
