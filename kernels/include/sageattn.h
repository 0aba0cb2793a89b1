/* libsageattn: SageAttention-style quantized attention (INT8 Q·Kᵀ, FP16 or FP8 P·V) behind a
 * plain C ABI. The library never touches the network or the file system, keeps no global
 * mutable state (what it learns about a device lives in a caller-owned sageattn_context, ABI
 * 1.2), and may be called from several host threads and streams at once.
 *
 * Shapes: Q is [batch][num_q_heads][q_len][head_dim], K and V are
 * [batch][num_kv_heads][kv_len][head_dim], O like Q — but only logically: every tensor is given
 * by a base pointer and three element strides (batch, head, token), so HND ([B,H,L,D]), NHD
 * ([B,L,H,D]) and other views work without copies. The last dimension must be contiguous.
 *
 * Causal masking with q_len != kv_len is aligned to the bottom-right corner (as FlashAttention
 * does): query i sees keys j <= i + (kv_len - q_len). */
#ifndef SAGEATTN_H
#define SAGEATTN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Changes only when an old caller would break. Fields appended to sageattn_params do not change it:
 * the caller's struct_size says which fields it knows (1.0: SAGEATTN_PARAMS_V1_SIZE; 1.1
 * (SAGEATTN_PARAMS_V11_SIZE) adds nonfinite_flag and only_if_nonzero; 1.2 adds context and
 * recompute_nonfinite), and a library older than the caller's struct answers SAGEATTN_ERR_ABI.
 * New functions do not change it either (1.3 adds sageattn_cc_has_fp8): a caller that may load
 * an older library looks them up (dlsym) before calling. The minor version is the library's
 * VERSION (libsageattn.so.1.3.0, sageattn.pc). */
#define SAGEATTN_ABI_VERSION 1

typedef enum sageattn_status {
    SAGEATTN_OK = 0,
    SAGEATTN_ERR_NULL_POINTER = 1,         /* a required pointer is NULL */
    SAGEATTN_ERR_MISALIGNED = 2,           /* a pointer or stride breaks 16-byte row alignment */
    SAGEATTN_ERR_BAD_SHAPE = 3,            /* a size is <= 0, or heads do not divide for GQA */
    SAGEATTN_ERR_BAD_STRIDE = 4,           /* a stride is negative or rows overlap */
    SAGEATTN_ERR_UNSUPPORTED_HEAD_DIM = 5, /* head_dim outside 1..128 */
    SAGEATTN_ERR_UNSUPPORTED_DTYPE = 6,
    SAGEATTN_ERR_UNSUPPORTED_MODE = 7, /* e.g. int8-fp8 on a GPU without FP8 tensor cores */
    SAGEATTN_ERR_NO_CODE_FOR_GPU = 8,  /* the library was not built for this GPU's arch */
    SAGEATTN_ERR_WORKSPACE_TOO_SMALL = 9,
    SAGEATTN_ERR_CUDA = 10,    /* a CUDA call failed; the message names it */
    SAGEATTN_ERR_ABI = 11,     /* struct_size does not match this library */
    SAGEATTN_ERR_CONTEXT = 12, /* params.context belongs to another device than the current */
} sageattn_status;

/* Facts about one device that the library would otherwise query on every call (compute
 * capability, SM count, shared-memory limits, whether it holds code for the device), read
 * once, plus which kernels already had their shared-memory attribute set on that device.
 * Caller-owned (ABI 1.2): create one per device, pass it in sageattn_params.context, destroy it
 * when done. Calls on several threads may share one (its kernel record is lock-free). It
 * belongs to the device's primary CUDA context: after cudaDeviceReset, create a new one. */
typedef struct sageattn_context sageattn_context;

typedef enum sageattn_mode {
    SAGEATTN_MODE_AUTO = 0,      /* the best mode for the GPU (see sageattn_resolve_mode) */
    SAGEATTN_MODE_INT8_FP16 = 1, /* INT8 Q·Kᵀ, FP16 P·V, FP32 accumulation: the accurate one */
    SAGEATTN_MODE_INT8_FP8 = 2,  /* INT8 Q·Kᵀ, FP8 P·V, two-level accumulation: sm_89+ */
    SAGEATTN_MODE_FP16 = 3,      /* no quantization (FlashAttention-2 style): baseline, fallback */
    /* Values 4.. are P·V variants for GPUs whose tensor cores halve the rate of FP32
     * accumulation (GeForce RTX 40/50). Never renumbered; names by sageattn_mode_name(). */
    SAGEATTN_MODE_INT8_FP8_BS = 4,      /* "int8-fp8-bs": int8-fp8's arithmetic (FP32 accumulation)
                                           through the block-scaled E4M3 MMA with unit scales, full
                                           rate on sm_120a/121a; elsewhere (cc >= 8.9) the ordinary
                                           E4M3 MMA, i.e. the same numbers as int8-fp8 */
    SAGEATTN_MODE_INT8_FP8_F16ACC = 5,  /* "int8-fp8-f16acc": SageAttention2++'s scheme: E4M3 P·V
                                           with an FP16 accumulator inside each 64-key tile, FP32
                                           across tiles; V scaled so no partial sum can exceed
                                           the FP16 range. cc >= 8.9 */
    SAGEATTN_MODE_INT8_FP16_F16ACC = 6, /* "int8-fp16-f16acc": int8-fp16 with an FP16 accumulator
                                           inside each 64-key tile, FP32 across tiles (fp16
                                           inputs; bf16 inputs run int8-fp16's FP32 form) */
    SAGEATTN_MODE_INT8_FP8_WGMMA = 7,   /* "int8-fp8-wgmma": int8-fp8's arithmetic on Hopper's
                                           warpgroup MMA (INT8 wgmma Q·Kᵀ, E4M3 wgmma P·V with a
                                           fresh fp32 accumulator per 64-key tile). cc 9.0 only,
                                           and only in a library built with sm_90a code */
} sageattn_mode;

typedef enum sageattn_dtype {
    SAGEATTN_DTYPE_FP16 = 0,
    SAGEATTN_DTYPE_BF16 = 1,
} sageattn_dtype;

typedef struct sageattn_params {
    uint32_t struct_size; /* which fields the caller filled: SAGEATTN_PARAMS_V1_SIZE or more */
    int batch;
    int num_q_heads;
    int num_kv_heads; /* divides num_q_heads (GQA/MQA) */
    int q_len;
    int kv_len;
    int head_dim;         /* 1..128; 64 and 128 run natively, others are zero-padded */
    sageattn_dtype dtype; /* of Q, K, V and O alike */
    const void *q;
    const void *k;
    const void *v;
    void *o;
    int64_t q_stride[3]; /* element strides for batch, head, token */
    int64_t k_stride[3];
    int64_t v_stride[3];
    int64_t o_stride[3];
    float *lse;     /* optional, [batch][num_q_heads][q_len] natural-log sum-exp, contiguous */
    float sm_scale; /* 0 means 1/sqrt(head_dim) */
    int causal;
    sageattn_mode mode;
    /* ---- end of the ABI 1.0 fields (SAGEATTN_PARAMS_V1_SIZE); read only when struct_size
     * covers them, so callers built against an older header keep working ---- */
    /* Optional device pointer: the kernels store 1 here when an element they write to o is NaN
     * or +-inf (the library never clears it; the caller zeroes it before the call). */
    int *nonfinite_flag;
    /* Optional device pointer, mode fp16 only: the call computes nothing unless *only_if_nonzero
     * != 0 when its kernel runs. With a quantized call's nonfinite_flag it queues that call's
     * fp16 recompute on the same stream without the host waiting for the flag. */
    const int *only_if_nonzero;
    /* ---- end of the ABI 1.1 fields (SAGEATTN_PARAMS_V11_SIZE) ---- */
    /* Optional (ABI 1.2): the device's sageattn_context (sageattn_context_create); the call then
     * takes the device facts from it instead of querying the driver, and sets each kernel's
     * shared-memory attribute once per context instead of per launch. NULL: as in ABI 1.1. */
    sageattn_context *context;
    /* Optional (ABI 1.2), with nonfinite_flag and a quantized mode: after the call's kernels,
     * the same call queues its fp16-mode recompute into the same o (and lse) on the same stream,
     * which computes only if *nonfinite_flag != 0 when it runs (ABI 1.1's only_if_nonzero pair
     * in one call: one validation, one extra launch, no host wait). Ignored in mode fp16. */
    int recompute_nonfinite;
} sageattn_params;

/* struct_size of the ABI 1.0 struct (no nonfinite_flag). */
#define SAGEATTN_PARAMS_V1_SIZE ((uint32_t)offsetof(sageattn_params, nonfinite_flag))
/* struct_size of the ABI 1.1 struct (no context). */
#define SAGEATTN_PARAMS_V11_SIZE ((uint32_t)offsetof(sageattn_params, context))

/* Fills the ABI 1.0 fields of p: zeros, struct_size = SAGEATTN_PARAMS_V1_SIZE and
 * HND-contiguous strides for the given shape. It writes only those bytes, so a program built
 * against an older sageattn.h may call it; the setters below turn on the newer fields. */
void sageattn_params_init(sageattn_params *p, int batch, int num_q_heads, int num_kv_heads,
                          int q_len, int kv_len, int head_dim);

/* Makes the fields after the ABI 1.0 ones valid in p (initialised by sageattn_params_init):
 * zeroes the ones past p->struct_size and sets struct_size to this header's struct. */
static inline void sageattn_params_extend(sageattn_params *p)
{
    if (p->struct_size < SAGEATTN_PARAMS_V1_SIZE)
        return; /* not initialised: sageattn_run answers SAGEATTN_ERR_ABI */
    for (size_t i = p->struct_size; i < sizeof(sageattn_params); i++)
        ((unsigned char *)p)[i] = 0;
    p->struct_size = (uint32_t)sizeof(sageattn_params);
}

/* Sets the non-finite output flag (ABI 1.1) of p, initialised by sageattn_params_init. */
static inline void sageattn_params_set_nonfinite_flag(sageattn_params *p, int *device_flag)
{
    sageattn_params_extend(p);
    p->nonfinite_flag = device_flag;
}

/* Makes the fp16-mode call p conditional on *device_flag != 0 (ABI 1.1). */
static inline void sageattn_params_set_only_if_nonzero(sageattn_params *p, const int *device_flag)
{
    sageattn_params_extend(p);
    p->only_if_nonzero = device_flag;
}

/* Runs p with the device facts of ctx (ABI 1.2; ctx from sageattn_context_create). */
static inline void sageattn_params_set_context(sageattn_params *p, sageattn_context *ctx)
{
    sageattn_params_extend(p);
    p->context = ctx;
}

/* Makes the quantized call p raise *device_flag on a non-finite output and, in the same call,
 * queue its fp16 recompute that computes only if the flag is up (ABI 1.2). */
static inline void sageattn_params_set_recompute_nonfinite(sageattn_params *p, int *device_flag)
{
    sageattn_params_extend(p);
    p->nonfinite_flag = device_flag;
    p->recompute_nonfinite = 1;
}

/* Reads the facts of `device` once (ABI 1.2) into a new context: *out is NULL on failure, e.g.
 * SAGEATTN_ERR_NO_CODE_FOR_GPU when the library holds no code for it. Touches the device (as
 * any call does) but keeps the current device unchanged. */
sageattn_status sageattn_context_create(int device, sageattn_context **out);
/* Frees ctx (NULL is fine) once no call that uses it is running on the host. Kernels already
 * queued do not use it. */
void sageattn_context_destroy(sageattn_context *ctx);

/* Workspace (device memory) that sageattn_run needs for p on `device`. */
sageattn_status sageattn_workspace_size(const sageattn_params *p, int device, size_t *bytes);

/* Runs attention on `stream` (a cudaStream_t; NULL is the legacy default stream) on the current
 * device. Validates every argument before launching anything. Asynchronous like a kernel launch.
 * Kernel launches per call: int8-fp16 and its f16acc variant 3 when kv_len <= 256, else 4
 * (K statistics, their finalization, Q and K quantization in one launch, attention), the FP8
 * modes one more (V to FP8), fp16 1; recompute_nonfinite adds 1. */
sageattn_status sageattn_run(const sageattn_params *p, void *workspace, size_t workspace_bytes,
                             void *stream);

/* The mode AUTO picks on `device`, or the mode itself when given one the device supports.
 * Returns SAGEATTN_OK or why the mode cannot run there. */
sageattn_status sageattn_resolve_mode(sageattn_mode requested, int device, sageattn_mode *out);

/* ABI 1.3: 1 when GPUs of compute capability cc_major.cc_minor have FP8 tensor cores, which the
 * FP8 P·V modes (int8-fp8 and its variants) need, else 0 (those modes are then refused), from
 * the arch table the library was built with. Needs no GPU and no CUDA call. */
int sageattn_cc_has_fp8(int cc_major, int cc_minor);

const char *sageattn_status_string(sageattn_status s);
/* "auto" "int8-fp16" "int8-fp8" "fp16" "int8-fp8-bs" "int8-fp8-f16acc" "int8-fp16-f16acc"
 * "int8-fp8-wgmma";
 * "unknown" for any other value. */
const char *sageattn_mode_name(sageattn_mode m);
/* A detailed message about the last failure on this host thread ("" if none). */
const char *sageattn_last_error(void);
/* The SASS archs compiled into this library, e.g. "sm_90,sm_120a". */
const char *sageattn_built_archs(void);
int sageattn_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif
