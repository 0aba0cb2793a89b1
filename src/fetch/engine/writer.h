/* Write-behind for extraction: the thread that decompresses hands each block to this writer
 * thread, so decompression (the slow, single-threaded part of xz) never waits for write(2),
 * page-cache copies or file closing. Bounded: at most WRITER_DEPTH blocks are in flight, so
 * memory stays flat whatever the archive size. */
#ifndef SB_FETCH_WRITER_H
#define SB_FETCH_WRITER_H

#include "fetch_error.h"

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define WRITER_DEPTH 16

struct writer;

/* NULL when no thread could be started: the caller then writes synchronously. */
struct writer *writer_start(void);
/* Queues len bytes (copied) for fd at offset off. -1 once any earlier operation failed. */
int writer_data(struct writer *w, int fd, long long off, const void *buf, size_t len,
                const char *name);
/* Queues the end of a file: truncate to size (sparse tails), chmod, mtime (when set), close. */
int writer_close(struct writer *w, int fd, long long size, mode_t mode, time_t mtime, int has_mtime,
                 const char *name);
/* Drains the queue and stops the thread. 0, or -1 with *err naming the first failure. */
int writer_finish(struct writer *w, struct fetch_error *err);

#endif
