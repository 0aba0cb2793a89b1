/* Exit statuses shared by every command; documented in man/sagebuild.1 (EXIT STATUS). */
#ifndef SB_EXITCODES_H
#define SB_EXITCODES_H

enum sb_exit {
    SB_EXIT_OK = 0,        /* everything passed */
    SB_EXIT_WARN = 1,      /* finished, with warnings only */
    SB_EXIT_ERROR = 2,     /* a blocking problem was found or an operation failed */
    SB_EXIT_SKIPPED = 77,  /* nothing could be tested here (selftest with no GPU) */
    SB_EXIT_USAGE = 64,    /* bad command line */
    SB_EXIT_INTERNAL = 70, /* a bug, or a command that is not built yet */
};

#endif
