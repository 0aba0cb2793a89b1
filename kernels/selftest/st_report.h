/* What sageattn-selftest found, and its two renderings: the JSON of the contract
 * (notes/kernel-contracts.md, schema 1) and a human table. */
#ifndef ST_REPORT_H
#define ST_REPORT_H

#include <stdio.h>

#include "st_logic.h"

#ifdef __cplusplus
extern "C" {
#endif

struct st_case_out {
    struct st_case c;
    struct st_case_result r;
    char error[200]; /* the API's message when sageattn_run refused or failed */
};

struct st_speed_out {
    struct st_speed_shape s;
    int ok;
    double ms, tops, speedup_vs_fp16; /* speedup < 0: no fp16 figure to compare with */
};

#define ST_MAX_CASES 64
#define ST_MAX_SPEED 16

struct st_mode_out {
    int mode; /* sageattn_mode */
    int supported;
    char reason[256];
    enum st_verdict verdict;
    double worst_cos, worst_rel_l1;
    int nan_or_inf;
    struct st_case_out cases[ST_MAX_CASES];
    size_t ncases;
    struct st_speed_out speed[ST_MAX_SPEED];
    size_t nspeed;
};

struct st_device_out {
    int index;
    char name[256];
    int cc;
    int has_code;
    char build_hint[64]; /* "" when has_code */
    char error[256];     /* a CUDA failure that stopped this device's tests, else "" */
    struct st_mode_out modes[3];
    int nmodes;
    int recommended; /* sageattn_mode, or -1 */
};

struct st_report {
    const char *archs;
    int abi;
    const char *skipped; /* NULL, or "no GPU: ..." */
    struct st_device_out *devices;
    int ndevices;
};

/* Worst figures and verdict of a mode from its judged cases. */
void st_summarize_mode(struct st_mode_out *m);
/* The fastest mode that passes (else warns), by speed-up on the first speed shape; -1 if none. */
int st_recommend(const struct st_device_out *d);
/* The process exit code: 77 skipped; 2 any failure or a GPU without code; 1 warnings; 0. */
int st_exit_code(const struct st_report *r);

void st_write_json(FILE *f, const struct st_report *r);
void st_write_table(FILE *f, const struct st_report *r);

#ifdef __cplusplus
}
#endif

#endif
