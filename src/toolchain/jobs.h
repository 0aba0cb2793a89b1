/* How many nvcc jobs to run at once: MAX_JOBS for `sagebuild env` and the doctor's advice, and
 * `sagebuild build`'s -j. One rule so that every command suggests the same number. Pure. */
#ifndef SB_TOOLCHAIN_JOBS_H
#define SB_TOOLCHAIN_JOBS_H

/* nvcc on attention kernels peaks at about 3-5 GB per compile job (flash-attention's issues and
 * MAX_JOBS formula); 4 is the middle. */
#define TOOLCHAIN_GIB_PER_JOB 4.0

/* floor(mem_avail_gib / gib_per_job) clamped to [1, cores] (cores below 1 count as 1). */
int toolchain_max_jobs(double mem_avail_gib, double gib_per_job, int cores);

/* The jobs for this machine: one per core, no more than the available memory holds at
 * TOOLCHAIN_GIB_PER_JOB each, at least 1. mem_avail_kb <= 0 means unknown: the cores decide. */
int toolchain_jobs(int cores, long long mem_avail_kb);

#endif
