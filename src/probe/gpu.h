/* The NVIDIA driver and the GPUs, without linking CUDA: libcuda.so.1 (and NVML for the driver
 * string) are dlopen()ed in a forked child with a timeout, as conda does, so a missing driver, a
 * machine with no GPU, a hanging or crashing libcuda are all ordinary results.
 *
 * SAGEBUILD_FAKE_GPUS replaces the probe (tests, and `build`/`selftest` dry runs):
 *   "none"                                      no driver
 *   "580.65.06"                                 a driver and no GPU
 *   "580.65.06;NVIDIA GeForce RTX 5090:12.0"    a driver and one GPU (more: ';'-separated)
 *   "575.51.03/12.9;NVIDIA H200:9.0"            the CUDA version the driver supports, explicitly
 * SAGEBUILD_LIBCUDA / SAGEBUILD_LIBNVML name other libraries to dlopen (tests). */
#ifndef SB_PROBE_GPU_H
#define SB_PROBE_GPU_H

#include <stddef.h>

struct gpu_device {
    char *name;
    int cc_major; /* compute capability, 12.0 for an RTX 5090 */
    int cc_minor;
};

struct gpu_info {
    int fake;                    /* from SAGEBUILD_FAKE_GPUS */
    int libcuda_loaded;          /* dlopen(libcuda.so.1) worked */
    int cuda_driver_version;     /* cuDriverGetVersion: 13000 = CUDA 13.0; 0 unknown */
    char *driver_version;        /* "580.65.06" from NVML, else the kernel module, else NULL */
    char *kernel_module_version; /* /proc/driver/nvidia/version, NULL when absent */
    int init_result;             /* cuInit's CUresult (0 success; 100 no device) */
    int count;
    struct gpu_device *devices;
    int crashed; /* the child died on a signal (a broken libcuda) */
    int timed_out;
    char *error; /* one line on what went wrong; NULL when the probe ran cleanly */
    long elapsed_ms;
};

#define GPU_PROBE_TIMEOUT_MS 5000

/* Returns 0 when the probe ran (even if it found no driver), -1 when it crashed or timed out.
 * NVML is asked for the driver string only when /proc/driver/nvidia/version is absent. */
int probe_gpu(int timeout_ms, struct gpu_info *out);
void gpu_info_free(struct gpu_info *g);

/* Pure: parses a SAGEBUILD_FAKE_GPUS value (format above). 0, or -1 for a malformed value. */
int gpu_parse_fake(const char *spec, struct gpu_info *out);
/* Pure: reads the child's line protocol (see gpu.c) into out; partial output is kept. */
void gpu_parse_child_output(const char *text, struct gpu_info *out);
/* Pure: the newest CUDA a driver branch supports (CUDA release notes' driver table), encoded
 * 1000*major + 10*minor; 0 when the string is not a driver version or predates CUDA 11. */
int gpu_driver_max_cuda(const char *driver_version);
/* Pure: the version from /proc/driver/nvidia/version's text ("... Kernel Module  580.65.06 ...").
 */
char *gpu_parse_kernel_module_version(const char *text);
/* The oldest driver a CUDA major needs (minor-version compatibility): 13 → 580, 12 → 525,
 * 11 → 450; 0 when unknown. */
int gpu_min_driver_for_cuda_major(int cuda_major);

#endif
