/* Running the accuracy matrix and the speed shapes on one GPU through the public API. */
#ifndef ST_RUN_H
#define ST_RUN_H

#include "st_report.h"

struct st_options {
    int full;
    int modes[ST_MAX_MODES]; /* sageattn_mode values to test, in order */
    int nmodes;
};

/* Fills d (index already set) for the current device; never exits. */
void st_run_device(const struct st_options *o, struct st_device_out *d);

#endif
