/* Build resources: cores, available memory, free disk, ninja (the jobs they allow:
 * toolchain/jobs.h). */
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

/* Pure: parses /proc/meminfo text. 0 when MemAvailable was found. */
int resources_parse_meminfo(const char *text, long long *avail_kb, long long *total_kb);

/* Probes everything; disk_path is the folder whose file system is measured (NULL: "."). */
void probe_resources(const char *disk_path, struct resources *out);
void resources_free(struct resources *r);

#endif
