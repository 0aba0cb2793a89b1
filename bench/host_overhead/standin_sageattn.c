/* A stand-in for libsageattn's C ABI (1.2) that launches nothing: it checks struct_size and the
 * sizes as the real library does first, answers a workspace size and returns. The drop-in
 * package's host time per call (Python, ctypes, torch tensor ops) is measured against it on a
 * machine without a GPU (bench/host_overhead/measure.py); the real library adds its own host
 * time (validation, device attributes, kernel launches: the "raw ABI" figure on the GPU).
 * sageattn_mode_name is the library's own (kernels/src/mode_names.c, linked in by measure.py),
 * so the package discovers the same modes by name as it does from the real library. */
#include <stddef.h>
#include <stdint.h>

#include <sageattn.h>

static sageattn_status check(const sageattn_params *p)
{
    if (!p)
        return SAGEATTN_ERR_NULL_POINTER;
    if (p->struct_size != SAGEATTN_PARAMS_V1_SIZE && p->struct_size != SAGEATTN_PARAMS_V11_SIZE &&
        p->struct_size != sizeof(sageattn_params))
        return SAGEATTN_ERR_ABI;
    if (p->batch <= 0 || p->num_q_heads <= 0 || p->num_kv_heads <= 0 || p->q_len <= 0 ||
        p->kv_len <= 0 || p->head_dim <= 0)
        return SAGEATTN_ERR_BAD_SHAPE;
    return SAGEATTN_OK;
}

sageattn_status sageattn_workspace_size(const sageattn_params *p, int device, size_t *bytes)
{
    (void)device;
    *bytes = 0;
    const sageattn_status s = check(p);
    if (s != SAGEATTN_OK)
        return s;
    if (p->mode != SAGEATTN_MODE_FP16)
        *bytes = (size_t)p->batch *
                 (size_t)(p->num_q_heads * p->q_len + 2 * p->num_kv_heads * p->kv_len) * 136u;
    return SAGEATTN_OK;
}

sageattn_status sageattn_run(const sageattn_params *p, void *workspace, size_t workspace_bytes,
                             void *stream)
{
    (void)workspace;
    (void)workspace_bytes;
    (void)stream;
    return check(p);
}

/* The context is an opaque handle to the caller; the stand-in's holds nothing. */
struct sageattn_context {
    int device;
};

static struct sageattn_context standin_context;

sageattn_status sageattn_context_create(int device, sageattn_context **out)
{
    standin_context.device = device;
    *out = &standin_context;
    return SAGEATTN_OK;
}

void sageattn_context_destroy(sageattn_context *ctx)
{
    (void)ctx;
}

sageattn_status sageattn_resolve_mode(sageattn_mode requested, int device, sageattn_mode *out)
{
    (void)device;
    *out = requested == SAGEATTN_MODE_AUTO ? SAGEATTN_MODE_INT8_FP16 : requested;
    return SAGEATTN_OK;
}

const char *sageattn_status_string(sageattn_status s)
{
    return s == SAGEATTN_OK ? "ok" : "stand-in error";
}

const char *sageattn_last_error(void)
{
    return "";
}

const char *sageattn_built_archs(void)
{
    return "sm_90";
}

int sageattn_abi_version(void)
{
    return SAGEATTN_ABI_VERSION;
}
