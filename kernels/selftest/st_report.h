/* What sageattn-selftest found, and its two renderings: the JSON of the contract
 * (notes/kernel-contracts.md, schema 1) and a human table. */
#ifndef ST_REPORT_H
#define ST_REPORT_H

#include <stdio.h>

#include "st_judge.h"
#include "st_logic.h"

#ifdef __cplusplus
extern "C" {
#endif

struct st_case_out {
    struct st_case c;
    struct st_case_result r;
    char error[200];       /* the API's message when sageattn_run refused or failed */
    enum st_safety safety; /* against the safe bar (st_judge.h) */
    char unsafe_why[120];  /* what was off, when not ST_SAFE */
};

struct st_speed_out {
    struct st_speed_shape s;
    int ok;
    double ms, tops, speedup_vs_fp16; /* speedup < 0: no fp16 figure to compare with */
};

#define ST_MAX_CASES 64
#define ST_MAX_SPEED 16
#define ST_MAX_MODES 8 /* sageattn_mode values a run may test (AUTO excluded) */

struct st_mode_out {
    int mode; /* sageattn_mode */
    int supported;
    char reason[256];
    enum st_verdict verdict; /* from the safe judgement: pass safe, warn inaccurate, fail broken */
    int safe;                /* safe to use: every case within the safe bar */
    char unsafe_why[300];    /* a reason not tied to one case ("no case ran", a CUDA error) */
    int goal;                /* engineering goal: 1 met, 0 missed, -1 the mode has none */
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
    char uuid[48];       /* "GPU-..." or "" */
    char build_hint[64]; /* "" when has_code, or when the kernels have no arch for the GPU */
    char error[256];     /* a CUDA failure that stopped this device's tests, else "" */
    struct st_mode_out modes[ST_MAX_MODES];
    int nmodes;
    int recommended; /* sageattn_mode, or -1 */
    int runner_up;   /* sageattn_mode, or -1 */
    int key_speed;   /* the speed[] slot the recommendation compared, or -1 */
    char reason[400];
};

struct st_report {
    const char *archs;
    int abi;
    const char *skipped; /* NULL, or "no GPU: ..." */
    struct st_device_out *devices;
    int ndevices;
};

/* Judges every case of a mode, safe and goal, and sums them up: worst figures, safe, verdict,
 * goal. stopped: the device's tests ended early (a CUDA error), so nothing is proven safe. */
void st_summarize_mode(struct st_mode_out *m, const char *stopped);
/* Summarizes every mode of d, then the recommendation (st_choose at st_key_shape). */
void st_judge_device(struct st_device_out *d);
/* The process exit code: 77 skipped; 2 a GPU without code or stopped by an error, a broken
 * mode, or no safe mode on a GPU; 1 a mode outside the safe bar; 0 otherwise. A missed
 * engineering goal alone is 0. */
int st_exit_code(const struct st_report *r);

void st_write_json(FILE *f, const struct st_report *r);
void st_write_table(FILE *f, const struct st_report *r);

#ifdef __cplusplus
}
#endif

#endif
