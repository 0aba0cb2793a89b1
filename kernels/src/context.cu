/* The kernel record and shared-memory limits of a sageattn_context (sa_context.h). */
#include "sa_context.h"

/* The record's home slot of a kernel stub address (stubs are at least 16-byte apart). */
static unsigned sa_func_slot(const void *func)
{
    const uint64_t x = (uint64_t)(uintptr_t)func >> 4;
    return (unsigned)((x * 0x9E3779B97F4A7C15ull) >> 32) % SA_CONTEXT_FUNCS;
}

/* Whether func is in the record; *free_slot: the first empty slot on its probe path, or -1. */
static bool sa_func_known(const struct sageattn_context *ctx, const void *func, int *free_slot)
{
    *free_slot = -1;
    const unsigned home = sa_func_slot(func);
    for (unsigned i = 0; i < SA_CONTEXT_FUNCS; ++i) {
        const unsigned at = (home + i) % SA_CONTEXT_FUNCS;
        const void *seen = ctx->funcs[at].load(std::memory_order_acquire);
        if (seen == func)
            return true;
        if (!seen) {
            *free_slot = (int)at;
            return false;
        }
    }
    return false;
}

/* Publishes func (its attribute is set). A slot another thread filled meanwhile moves the
 * search on; a full record publishes nothing (the attribute is then set on every launch). */
static void sa_func_publish(struct sageattn_context *ctx, const void *func, int slot)
{
    for (unsigned i = 0; slot >= 0 && i < SA_CONTEXT_FUNCS; ++i) {
        const void *expected = nullptr;
        if (ctx->funcs[slot].compare_exchange_strong(expected, func, std::memory_order_release,
                                                     std::memory_order_acquire) ||
            expected == func)
            return;
        if (sa_func_known(ctx, func, &slot))
            return;
    }
}

cudaError_t sa_set_smem_once(struct sageattn_context *ctx, const void *func, int smem)
{
    int slot = -1;
    if (ctx && sa_func_known(ctx, func, &slot))
        return cudaSuccess;
    const cudaError_t e =
        cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e == cudaSuccess && ctx)
        sa_func_publish(ctx, func, slot);
    return e;
}

cudaError_t sa_smem_limits(const struct sageattn_context *ctx, int *optin, int *per_sm)
{
    if (ctx) {
        *optin = ctx->smem_optin;
        *per_sm = ctx->smem_per_sm;
        return cudaSuccess;
    }
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
    return e;
}
