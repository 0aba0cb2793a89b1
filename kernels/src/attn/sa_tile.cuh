/* Tile traits: shared-memory geometry of one attention block for a (mode, head dim), and the
 * cp.async tile loaders. */
#ifndef SA_TILE_CUH
#define SA_TILE_CUH

#include "sa_kernels.h"
#include "sa_ptx.cuh"

template <int MODE, int D> struct sa_tile {
    static constexpr bool QK_INT8 = MODE != SA_KMODE_FP16;
    static constexpr bool PV_FP8 = MODE == SA_KMODE_INT8_FP8;
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
    static constexpr int SMEM_BYTES = Q_BYTES + 2 * STAGE_BYTES;
    static constexpr int NT_S = SA_CTA_K / 8; /* n-tiles of S per warp row-tile */
    static constexpr int NT_O = D / 8;        /* n-tiles of O */
};

/* Copies `rows` rows of `row_bytes` bytes (a multiple of 16) from global (row stride
 * `gstride` bytes) to shared (pitch `pitch`). Rows at or past `row_limit`, and bytes at or past
 * `valid_bytes` in a row, arrive as zeros. All SA_THREADS threads take part. */
__device__ __forceinline__ void sa_load_rows(uint32_t smem, int pitch, const char *g,
                                             int64_t gstride, int rows, int row_bytes,
                                             int row_limit, int valid_bytes)
{
    const int chunks_per_row = row_bytes / 16;
    const int total = rows * chunks_per_row;
    for (int i = threadIdx.x; i < total; i += SA_THREADS) {
        const int r = i / chunks_per_row;
        const int c = i - r * chunks_per_row;
        int n = valid_bytes - c * 16;
        n = n < 0 ? 0 : (n > 16 ? 16 : n);
        if (r >= row_limit)
            n = 0;
        const char *src = n > 0 ? g + (int64_t)r * gstride + c * 16 : g;
        sa_cp_async16(smem + r * pitch + c * 16, src, n);
    }
}

#endif
