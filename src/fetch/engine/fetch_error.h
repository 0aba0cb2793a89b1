/* What went wrong in fetch-cuda, as a kind the command can act on (the fix it prints) and a
 * message for the user. The kind is set where the failure happens, so rewording a message never
 * changes the fix. Generic like the rest of the engine: nothing here knows about CUDA. */
#ifndef SB_FETCH_ERROR_H
#define SB_FETCH_ERROR_H

enum fetch_error_kind {
    FETCH_ERR_NONE = 0, /* no failure: what a zeroed result holds */
    FETCH_ERR_OTHER,    /* the message says what to change; there is no general fix */
    /* Every URL of an archive was tried and none delivered it verified: unreachable, an HTTP
     * error, too slow, or the wrong bytes. */
    FETCH_ERR_UNDELIVERED,
    FETCH_ERR_NO_MANIFEST,    /* no mirror had the release's manifest */
    FETCH_ERR_OFFLINE,        /* --offline, and a file that is needed is not here */
    FETCH_ERR_NOT_FOUND,      /* the release or wheel asked for is not offered where looked */
    FETCH_ERR_MISMATCH,       /* a file the user gave (--from) is not the one the manifest names */
    FETCH_ERR_UNSAFE_ARCHIVE, /* an archive entry was refused, or it unpacks past its budget */
    FETCH_ERR_DISK,           /* the disk is full, or a file-size limit or quota was hit */
    FETCH_ERR_POSTCHECK,      /* the new toolkit failed its compile-and-link check */
    FETCH_ERR_INTERRUPTED,    /* SIGINT or SIGTERM */
};
#define FETCH_ERR_KINDS (FETCH_ERR_INTERRUPTED + 1)

struct fetch_error {
    enum fetch_error_kind kind;
    char *message; /* heap; NULL while nothing failed */
};

/* Records a failure, replacing any earlier one. Returns -1, so a failing step can end with
 * `return fetch_fail(err, ...)`. */
int fetch_fail(struct fetch_error *e, enum fetch_error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A failed system call: ": <strerror(errnum)>" follows the message, and errnum sets the kind
 * (fetch_error_kind_of_errno). Returns -1. */
int fetch_fail_errno(struct fetch_error *e, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Records a failure whose message was made elsewhere (heap, taken over). Returns -1. */
int fetch_fail_with(struct fetch_error *e, enum fetch_error_kind kind, char *message);
void fetch_error_free(struct fetch_error *e);

/* Pure: FETCH_ERR_DISK for the errors a full disk, a file-size limit (RLIMIT_FSIZE) or a quota
 * give, FETCH_ERR_OTHER for any other errno. */
enum fetch_error_kind fetch_error_kind_of_errno(int errnum);

/* Pure: of two failures at once (several archives failed), the kind whose fix is shown: a
 * source that delivered nothing first (another source or --from gets every archive), then a
 * file that is not here, then the disk; among the rest, a. */
enum fetch_error_kind fetch_error_kind_leading(enum fetch_error_kind a, enum fetch_error_kind b);

#endif
