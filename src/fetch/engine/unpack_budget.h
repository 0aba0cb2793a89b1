/* How much one archive may unpack to, judged from its size before a byte of it is trusted: a
 * mirror chooses the compression ratio, and one normal-sized archive of a single repeated byte
 * can otherwise fill the disk. Pure.
 *
 * NVIDIA's redist archives unpack to 3.3 (libnvvm) to 14.3 (cuda_cccl, all headers) times their
 * size, with at least 539 compressed bytes per entry (cuda_cccl 13.0.85: 991 284 bytes, 1 802
 * entries, 14.1 MB unpacked). The budget allows UNPACK_RATIO times the size and one entry per
 * UNPACK_BYTES_PER_ENTRY bytes, never less than the floors (small archives of headers), never
 * more than the ceilings (whatever the manifest claims). */
#ifndef SB_FETCH_UNPACK_BUDGET_H
#define SB_FETCH_UNPACK_BUDGET_H

#define UNPACK_RATIO 50LL
#define UNPACK_FLOOR_BYTES (64LL << 20)
#define UNPACK_CEILING_BYTES (16LL << 30)
#define UNPACK_BYTES_PER_ENTRY 32LL
#define UNPACK_FLOOR_ENTRIES 16384LL
#define UNPACK_CEILING_ENTRIES (1LL << 20)

struct unpack_budget {
    long long bytes;   /* total size of the files, holes included */
    long long entries; /* headers of any kind */
};

/* The budget of an archive of archive_size bytes (< 0: unknown, the ceilings apply). */
void unpack_budget_for(long long archive_size, struct unpack_budget *b);

/* The error for an archive that went over its budget (entries set: too many entries, else too
 * many bytes), naming the archive, its size and the budget with how it was derived. Heap. */
char *unpack_budget_refusal(const struct unpack_budget *b, long long archive_size,
                            const char *archive, int entries);

#endif
