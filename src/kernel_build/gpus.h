/* The compute capabilities of the GPUs present, as `--arch native` needs them (probe/gpu.h runs
 * the driver in a child with a timeout). */
#ifndef SB_BUILD_GPUS_H
#define SB_BUILD_GPUS_H

#include "arch.h"

/* Fills gpus[0..max) and returns how many there are; when none, *why (optional, heap) says
 * what the probe saw (no driver, cuInit failed, ...) or stays NULL. */
int build_gpus_present(struct gpu_cc *gpus, int max, char **why);

#endif
