/* Build resources: cores, available memory, free disk, ninja, and the MAX_JOBS that keeps
 * parallel nvcc from running the machine out of memory (reference/doctor-checks.md §5 #8). */
#ifndef SB_PROBE_RESOURCES_H
#define SB_PROBE_RESOURCES_H

struct resources {
    int cores;                 /* usable by this process (affinity), at least 1 */
    long long mem_total_kb;    /* /proc/meminfo MemTotal; -1 unknown */
    long long mem_avail_kb;    /* MemAvailable; -1 unknown */
    char *disk_path;           /* where free space was measured */
    long long disk_free_bytes; /* -1 unknown */
    char *ninja_path;          /* NULL when ninja is not on PATH */
    char *ninja_version;       /* "1.11.1"; NULL when it did not answer */
    char *ninja_error;
};

/* nvcc on attention kernels peaks at about 3–5 GB per compile job (flash-attention's issues and
 * MAX_JOBS formula, doctor-checks.md §5 #8); 4 is the middle the suggestion uses. */
#define RESOURCES_GB_PER_JOB 4.0

/* Pure: parses /proc/meminfo text. 0 when MemAvailable was found. */
int resources_parse_meminfo(const char *text, long long *avail_kb, long long *total_kb);
/* Pure: floor(mem_avail_gb / gb_per_job) clamped to [1, cores]. */
int resources_max_jobs(double mem_avail_gb, double gb_per_job, int cores);

/* Probes everything; disk_path is the folder whose file system is measured (NULL: "."). */
void probe_resources(const char *disk_path, struct resources *out);
void resources_free(struct resources *r);

#endif
