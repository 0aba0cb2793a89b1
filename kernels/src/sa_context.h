/* sageattn_context (ABI 1.2): the facts of one device that a call would otherwise ask the driver
 * for each time, and the record of kernels whose shared-memory attribute is already set there.
 * Host C++ only (the kernels' launch code and api.cu); the C reference never sees it.
 *
 * Why a caller-owned object and not a process-wide cache: the header promises no global mutable
 * state, and the facts are only valid for the CUDA context they were read in (cudaDeviceReset
 * drops every function attribute). The caller decides the lifetime; calls that pass no context
 * keep asking the driver, as before. */
#ifndef SA_CONTEXT_H
#define SA_CONTEXT_H

#include <atomic>

#include "sa_internal.h"

/* Slots of the kernel record: more than the attention kernels one library holds (modes x head
 * dims x dtypes x V-buffer forms < 64). A full record only means the attribute is set again. */
#define SA_CONTEXT_FUNCS 128

struct sageattn_context {
    int device;
    int cc; /* major*10+minor */
    int num_sms;
    int smem_optin;  /* cudaDevAttrMaxSharedMemoryPerBlockOptin */
    int smem_per_sm; /* cudaDevAttrMaxSharedMemoryPerMultiprocessor */
    /* Kernels (host stubs) whose cudaFuncAttributeMaxDynamicSharedMemorySize is set on this
     * device: an open-addressing set that threads fill without a lock. Two threads may both
     * set one kernel's attribute the first time (the same value: harmless); a pointer is
     * published only after its attribute is set. */
    std::atomic<const void *> funcs[SA_CONTEXT_FUNCS];
};

/* Sets kernel `func`'s dynamic shared memory limit to `smem` bytes on the current device, once
 * per context (every time when ctx is NULL). */
cudaError_t sa_set_smem_once(struct sageattn_context *ctx, const void *func, int smem);

/* The current device's opt-in per-block and per-SM shared memory: from ctx, else the driver. */
cudaError_t sa_smem_limits(const struct sageattn_context *ctx, int *optin, int *per_sm);

#endif
