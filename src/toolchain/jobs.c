#include "toolchain/jobs.h"

int toolchain_max_jobs(double mem_avail_gib, double gib_per_job, int cores)
{
    if (cores < 1)
        cores = 1;
    if (!(gib_per_job > 0) || !(mem_avail_gib >= 0))
        return 1;
    double jobs = mem_avail_gib / gib_per_job;
    if (jobs >= cores)
        return cores;
    return jobs < 1 ? 1 : (int)jobs;
}

int toolchain_jobs(int cores, long long mem_avail_kb)
{
    if (mem_avail_kb <= 0)
        return cores > 0 ? cores : 1;
    return toolchain_max_jobs((double)mem_avail_kb / (1024.0 * 1024.0), TOOLCHAIN_GIB_PER_JOB,
                              cores);
}
