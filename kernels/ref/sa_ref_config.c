/* The one place the reference reads the kernels' constants, so it follows kernel-core's
 * choices (src/sa_internal.h) without copies. */
#include <math.h>
#include <stddef.h>

#include "sa_internal.h"
#include "sa_ref.h"

void sa_ref_config_default(struct sa_ref_config *cfg, sageattn_mode mode)
{
    cfg->mode = mode;
    cfg->q_quant_rows = SA_Q_QUANT_ROWS;
    cfg->k_quant_rows = SA_K_QUANT_ROWS;
    /* rank groups from SA_H_RANK_MIN_KV keys (sa_rank_groups; the reference asks the call) */
    cfg->k_lane_groups = mode == SAGEATTN_MODE_INT8_FP8_WGMMA && SA_H_RANK_GROUPS ? 2 : 0;
    cfg->k_rank_window = SA_H_RANK_WINDOW;
    cfg->k_rank_min_kv = SA_H_RANK_MIN_KV;
    cfg->k_rank_min_kv_causal = SA_H_RANK_MIN_KV_CAUSAL;
    cfg->smooth_k = 1;
    cfg->smooth_v = mode == SAGEATTN_MODE_INT8_FP8_WGMMA;
    cfg->fold_log2e = 1;
    cfg->k_tile = SA_CTA_K;
    cfg->fp8_p_scale = SA_FP8_P_SCALE;
    cfg->p_headroom = mode == SAGEATTN_MODE_INT8_FP8_WGMMA && SA_H_SPEC ? SA_H_HEADROOM : 0.0f;
    cfg->p_headroom_min_kv = SA_H_SPEC_MIN_KV;
    cfg->p_headroom_from_key = SA_H_SPEC_MIN_KEY;
    cfg->fp8_v_scale_max = SA_FP8_V_SCALE_MAX;
    cfg->tile_acc_bits = 23;
    cfg->two_level = 1;
    cfg->tile_acc_fp16 = 0;
    cfg->acc_group = 1;
    cfg->f16_p_scale = 1.0f;
    cfg->stats = NULL;
    if (mode == SAGEATTN_MODE_INT8_FP8_F16ACC) {
        cfg->fp8_v_scale_max = SA_FP8_F16ACC_V_SCALE_MAX;
        cfg->tile_acc_fp16 = 1;
        cfg->acc_group = 32; /* one E4M3 mma: k = 32 */
    } else if (mode == SAGEATTN_MODE_INT8_FP16_F16ACC) {
        cfg->tile_acc_fp16 = 1;
        cfg->acc_group = 16; /* one fp16 mma: k = 16 */
        cfg->f16_p_scale = exp2f(SA_F16ACC_P_LOG2);
    }
}
