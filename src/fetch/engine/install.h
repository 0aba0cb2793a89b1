/* Putting a finished tree in place: a lock beside the prefix so two runs never interleave, a
 * staging folder beside it (same file system, so the final step is a rename), and an atomic
 * swap of the new tree for the old one. Any failure before the swap leaves the old prefix
 * exactly as it was; install_release removes the staging folder. Generic: knows nothing of CUDA. */
#ifndef SB_FETCH_INSTALL_H
#define SB_FETCH_INSTALL_H

#include "fetch_error.h"

#include <signal.h>

struct install_ctx {
    char *prefix;  /* absolute */
    char *parent;  /* folder that holds the prefix */
    char *base;    /* the prefix's own name */
    int lock_fd;   /* -1 when not held */
    char *staging; /* parent/.base.staging-XXXXXX, NULL when none */
};

/* Takes the lock file parent/.base.lock (creating parent), waiting for another holder; prints
 * one line to stderr when it has to wait. Removes staging debris a killed run left behind.
 * 0, or -1 with *err (also when *cancel becomes set while waiting). */
int install_lock(const char *prefix, volatile sig_atomic_t *cancel, struct install_ctx *c,
                 struct fetch_error *err);
/* Creates the staging folder. 0 or -1 with *err. */
int install_staging(struct install_ctx *c, struct fetch_error *err);
/* Swaps staging in for the prefix (renameat2 RENAME_EXCHANGE where the file system has it, two
 * renames otherwise) and removes the old tree. 0 or -1 with *err; the old prefix survives a
 * failure. */
int install_commit(struct install_ctx *c, struct fetch_error *err);
/* Removes the staging folder, if any, releases the lock and frees c. */
void install_release(struct install_ctx *c);

/* Takes an exclusive lock on dir/.lock (creating dir), waiting with one line on stderr while
 * another process holds it: downloads into one cache never interleave. Returns the descriptor
 * to close, or -1 with *err. */
int install_lock_dir(const char *dir, volatile sig_atomic_t *cancel, struct fetch_error *err);

/* Whether name is debris of a run on prefix base ("." base ".staging-" or ".old-"). Pure. */
int install_is_debris(const char *base, const char *name);

#endif
