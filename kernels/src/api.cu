/* The public C API of libsageattn (sageattn.h): argument validation, mode choice, device
 * checks, the caller-owned device contexts and messages. The only state of the library's own is
 * each host thread's last error message. */
#include <stdio.h>
#include <string.h>

#include <new>

#include "../archs/sa_archs.h"
#include "api_validate.h"
#include "mode_policy.h"
#include "sa_context.h"
#include "sa_internal.h"

#define SA_MSG_BYTES 512

static __thread char sa_last_message[SA_MSG_BYTES];

static sageattn_status sa_set(sageattn_status s, const char *msg)
{
    snprintf(sa_last_message, sizeof(sa_last_message), "%s", s == SAGEATTN_OK ? "" : msg);
    return s;
}

static sageattn_status sa_cuda_fail(cudaError_t e, const char *what)
{
    char msg[SA_MSG_BYTES];
    snprintf(msg, sizeof(msg), "%s failed: %s (%s)", what, cudaGetErrorString(e),
             cudaGetErrorName(e));
    return sa_set(SAGEATTN_ERR_CUDA, msg);
}

/* Compute capability and SM count of `device`, and whether the library has code for it. */
static sageattn_status sa_device_info(int device, int *cc, int *num_sms)
{
    int major = 0, minor = 0;
    cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(num_sms, cudaDevAttrMultiProcessorCount, device);
    if (e != cudaSuccess)
        return sa_cuda_fail(e, "reading the device's attributes");
    *cc = major * 10 + minor;
    int current = 0;
    e = cudaGetDevice(&current);
    if (e != cudaSuccess)
        return sa_cuda_fail(e, "cudaGetDevice");
    if (current != device && (e = cudaSetDevice(device)) != cudaSuccess)
        return sa_cuda_fail(e, "cudaSetDevice");
    const cudaError_t code = sa_check_code_for_device();
    if (current != device)
        cudaSetDevice(current);
    if (code == cudaErrorNoKernelImageForDevice || code == cudaErrorInvalidDeviceFunction) {
        char msg[SA_MSG_BYTES];
        const struct sa_arch *arch = sa_arch_at(sa_arch_kernels_for_cc(major, minor));
        if (arch)
            snprintf(msg, sizeof(msg),
                     "this library holds no code for this GPU (compute capability %d.%d); it was "
                     "built for %s: rebuild with sagebuild build --arch %s",
                     major, minor, SA_BUILT_ARCHS, arch->name);
        else
            snprintf(msg, sizeof(msg),
                     "this library holds no code for this GPU (compute capability %d.%d); it was "
                     "built for %s, and the kernels have no arch for this GPU",
                     major, minor, SA_BUILT_ARCHS);
        return sa_set(SAGEATTN_ERR_NO_CODE_FOR_GPU, msg);
    }
    if (code != cudaSuccess)
        return sa_cuda_fail(code, "looking up the attention kernel");
    return SAGEATTN_OK;
}

/* The device facts of a call: from its context (ABI 1.2) when it has one for this device, else
 * asked of the driver (and the library's code checked) on every call. */
static sageattn_status sa_call_device(const struct sa_problem *prob, int device, int *cc,
                                      int *num_sms)
{
    const struct sageattn_context *ctx = prob->ctx;
    if (!ctx)
        return sa_device_info(device, cc, num_sms);
    if (ctx->device != device) {
        char msg[SA_MSG_BYTES];
        snprintf(msg, sizeof(msg),
                 "params.context was made for device %d but this call runs on device %d: use "
                 "that device's context (one sageattn_context_create per device)",
                 ctx->device, device);
        return sa_set(SAGEATTN_ERR_CONTEXT, msg);
    }
    *cc = ctx->cc;
    *num_sms = ctx->num_sms;
    return SAGEATTN_OK;
}

/* The native head dims this build holds, e.g. "64,128" (SA_WITH_D64 / SA_WITH_D128). */
#define SA_BUILT_HEAD_DIMS (SA_WITH_D64 && SA_WITH_D128 ? "64,128" : SA_WITH_D64 ? "64" : "128")

/* Validates p for `device` and resolves it into a problem for the kernels. */
static sageattn_status sa_prepare(const sageattn_params *p, int device, struct sa_problem *prob)
{
    char msg[SA_MSG_BYTES];
    sageattn_status s = sa_validate(p, msg, sizeof(msg), prob);
    if (s != SAGEATTN_OK)
        return sa_set(s, msg);
    /* A head dim up to 64 runs padded to 128 when only 128 was built; nothing runs above 64
     * when only 64 was built. */
    if (prob->d_pad > 64 && !SA_WITH_D128) {
        snprintf(msg, sizeof(msg),
                 "head_dim %d needs the head_dim 128 kernels, but this library was built with "
                 "head dims %s only (head_dim <= 64): rebuild with sagebuild build --head-dims "
                 "64,128",
                 p->head_dim, SA_BUILT_HEAD_DIMS);
        return sa_set(SAGEATTN_ERR_UNSUPPORTED_HEAD_DIM, msg);
    }
    s = sa_call_device(prob, device, &prob->cc, &prob->num_sms);
    if (s != SAGEATTN_OK)
        return s;
    s = sa_mode_for_cc(p->mode, prob->cc, &prob->mode, msg, sizeof(msg));
    if (s != SAGEATTN_OK)
        return sa_set(s, msg);
    sa_last_message[0] = '\0'; /* what sa_set(OK) does, without formatting */
    return SAGEATTN_OK;
}

/* The launch error of a call as a status. */
static sageattn_status sa_launch_status(cudaError_t le, const struct sa_problem *prob)
{
    if (le == cudaErrorNoKernelImageForDevice || le == cudaErrorInvalidDeviceFunction) {
        char msg[SA_MSG_BYTES];
        snprintf(msg, sizeof(msg), "no code for compute capability %d.%d in this library (%s)",
                 prob->cc / 10, prob->cc % 10, SA_BUILT_ARCHS);
        return sa_set(SAGEATTN_ERR_NO_CODE_FOR_GPU, msg);
    }
    return sa_cuda_fail(le, "launching the attention kernels");
}

extern "C" {

void sageattn_params_init(sageattn_params *p, int batch, int num_q_heads, int num_kv_heads,
                          int q_len, int kv_len, int head_dim)
{
    if (!p)
        return;
    /* Only the 1.0 fields: the caller may have been built against the 1.0 header. */
    memset(p, 0, SAGEATTN_PARAMS_V1_SIZE);
    p->struct_size = SAGEATTN_PARAMS_V1_SIZE;
    p->batch = batch;
    p->num_q_heads = num_q_heads;
    p->num_kv_heads = num_kv_heads;
    p->q_len = q_len;
    p->kv_len = kv_len;
    p->head_dim = head_dim;
    p->dtype = SAGEATTN_DTYPE_FP16;
    p->mode = SAGEATTN_MODE_AUTO;
    const int64_t d = head_dim;
    p->q_stride[2] = p->o_stride[2] = d;
    p->q_stride[1] = p->o_stride[1] = d * q_len;
    p->q_stride[0] = p->o_stride[0] = d * q_len * num_q_heads;
    p->k_stride[2] = p->v_stride[2] = d;
    p->k_stride[1] = p->v_stride[1] = d * kv_len;
    p->k_stride[0] = p->v_stride[0] = d * kv_len * num_kv_heads;
}

sageattn_status sageattn_workspace_size(const sageattn_params *p, int device, size_t *bytes)
{
    if (!bytes)
        return sa_set(SAGEATTN_ERR_NULL_POINTER, "bytes is NULL");
    *bytes = 0;
    struct sa_problem prob;
    const sageattn_status s = sa_prepare(p, device, &prob);
    if (s != SAGEATTN_OK)
        return s;
    *bytes = sa_workspace_bytes(&prob);
    return SAGEATTN_OK;
}

sageattn_status sageattn_run(const sageattn_params *p, void *workspace, size_t workspace_bytes,
                             void *stream)
{
    int device = 0;
    const cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess)
        return sa_cuda_fail(e, "cudaGetDevice");
    struct sa_problem prob;
    sageattn_status s = sa_prepare(p, device, &prob);
    if (s != SAGEATTN_OK)
        return s;
    const size_t need = sa_workspace_bytes(&prob);
    char msg[SA_MSG_BYTES];
    if (need > 0 && !workspace) {
        snprintf(msg, sizeof(msg), "workspace is NULL but mode %s needs %zu bytes",
                 sageattn_mode_name(prob.mode), need);
        return sa_set(SAGEATTN_ERR_NULL_POINTER, msg);
    }
    if (workspace_bytes < need) {
        snprintf(msg, sizeof(msg), "workspace has %zu bytes but this call needs %zu",
                 workspace_bytes, need);
        return sa_set(SAGEATTN_ERR_WORKSPACE_TOO_SMALL, msg);
    }
    if (need > 0 && ((uintptr_t)workspace & 255u) != 0)
        return sa_set(SAGEATTN_ERR_MISALIGNED, "workspace must be 256-byte aligned");
    cudaError_t le = sa_launch(&prob, workspace, (cudaStream_t)stream);
    if (le == cudaSuccess && prob.recompute_nonfinite && prob.mode != SAGEATTN_MODE_FP16) {
        /* The fp16 recompute of this very problem, queued behind it: its kernel reads the
         * flag the quantized kernels may have raised and computes only if it is up. fp16 runs
         * on every GPU the library has code for and needs no workspace. */
        struct sa_problem again = prob;
        again.mode = SAGEATTN_MODE_FP16;
        again.only_if_nonzero = prob.nonfinite_flag;
        again.nonfinite_flag = NULL;
        le = sa_launch(&again, NULL, (cudaStream_t)stream);
    }
    return le == cudaSuccess ? SAGEATTN_OK : sa_launch_status(le, &prob);
}

sageattn_status sageattn_context_create(int device, sageattn_context **out)
{
    if (!out)
        return sa_set(SAGEATTN_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    int cc = 0, num_sms = 0, optin = 0, per_sm = 0;
    sageattn_status s = sa_device_info(device, &cc, &num_sms);
    if (s != SAGEATTN_OK)
        return s;
    cudaError_t e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
    if (e != cudaSuccess)
        return sa_cuda_fail(e, "reading the device's shared memory limits");
    sageattn_context *ctx = new (std::nothrow) sageattn_context;
    if (!ctx)
        return sa_set(SAGEATTN_ERR_CUDA, "out of host memory for a sageattn_context");
    ctx->device = device;
    ctx->cc = cc;
    ctx->num_sms = num_sms;
    ctx->smem_optin = optin;
    ctx->smem_per_sm = per_sm;
    for (int i = 0; i < SA_CONTEXT_FUNCS; ++i)
        ctx->funcs[i].store(nullptr, std::memory_order_relaxed);
    *out = ctx;
    return sa_set(SAGEATTN_OK, "");
}

void sageattn_context_destroy(sageattn_context *ctx)
{
    delete ctx;
}

sageattn_status sageattn_resolve_mode(sageattn_mode requested, int device, sageattn_mode *out)
{
    if (!out)
        return sa_set(SAGEATTN_ERR_NULL_POINTER, "out is NULL");
    int cc = 0, num_sms = 0;
    const sageattn_status s = sa_device_info(device, &cc, &num_sms);
    if (s != SAGEATTN_OK)
        return s;
    char msg[SA_MSG_BYTES];
    return sa_set(sa_mode_for_cc(requested, cc, out, msg, sizeof(msg)), msg);
}

const char *sageattn_status_string(sageattn_status s)
{
    switch (s) {
    case SAGEATTN_OK:
        return "ok";
    case SAGEATTN_ERR_NULL_POINTER:
        return "a required pointer is NULL";
    case SAGEATTN_ERR_MISALIGNED:
        return "a pointer or stride breaks 16-byte row alignment";
    case SAGEATTN_ERR_BAD_SHAPE:
        return "bad shape or scale";
    case SAGEATTN_ERR_BAD_STRIDE:
        return "bad stride";
    case SAGEATTN_ERR_UNSUPPORTED_HEAD_DIM:
        return "unsupported head_dim";
    case SAGEATTN_ERR_UNSUPPORTED_DTYPE:
        return "unsupported dtype";
    case SAGEATTN_ERR_UNSUPPORTED_MODE:
        return "mode not supported on this GPU";
    case SAGEATTN_ERR_NO_CODE_FOR_GPU:
        return "the library holds no code for this GPU";
    case SAGEATTN_ERR_WORKSPACE_TOO_SMALL:
        return "workspace too small";
    case SAGEATTN_ERR_CUDA:
        return "CUDA error";
    case SAGEATTN_ERR_ABI:
        return "params struct does not match this library";
    case SAGEATTN_ERR_CONTEXT:
        return "params.context is another device's";
    }
    return "unknown status";
}

const char *sageattn_last_error(void)
{
    return sa_last_message;
}

const char *sageattn_built_archs(void)
{
    return SA_BUILT_ARCHS;
}

int sageattn_abi_version(void)
{
    return SAGEATTN_ABI_VERSION;
}

} /* extern "C" */
