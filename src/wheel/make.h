/* A wheel from a build folder: the drop-in's Python sources, the build's libsageattn.so and
 * build-record.json, and its recommendation.json when that was written for this very library.
 * Shared by `sagebuild wheel` and `sagebuild install`. */
#ifndef SB_WHEEL_MAKE_H
#define SB_WHEEL_MAKE_H

#include "wheel/pack.h"

struct wheel_made {
    struct wheel_written w;
    char *version;        /* the distribution version */
    char *archs;          /* from the build record, NULL when it has none */
    char *package_dir;    /* where the Python sources came from */
    char *library_sha256; /* of the libsageattn.so packed */
    int recommendation;   /* recommendation.json went in */
    char *note;           /* why it did not, when the build folder had one; NULL otherwise */
    char *error, *fix;
};

/* The drop-in's sources: $SAGEBUILD_DATADIR/python/sageattention, <prefix>/share/sagebuild/
 * python/sageattention when installed, share/python/sageattention in the source tree. Heap or
 * NULL. */
char *wheel_find_package_dir(void);

/* Packs build_dir's library into out_dir. 0, or -1 with m->error and m->fix set. */
int wheel_make(const char *build_dir, const char *out_dir, struct wheel_made *m);
void wheel_made_free(struct wheel_made *m);

/* The machine name for the wheel's platform tag (uname). Heap. */
char *wheel_machine(void);

#endif
