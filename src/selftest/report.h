/* The JSON that sageattn-selftest prints (kernels/selftest/README.md), read into structs,
 * checked, and summed up: per mode the safe judgement and the engineering goal, per GPU the
 * recommended mode. The judging rules are the program's own (st_judge.h, one C file both
 * compile); figures from an older program without them are judged here by the same rules.
 * Pure: text in, data out. */
#ifndef SB_SELFTEST_REPORT_H
#define SB_SELFTEST_REPORT_H

#include <stddef.h>

/* Shared with kernels/selftest (the path keeps the kernels' other headers out of reach). */
#include "../../kernels/selftest/st_judge.h"

#define SELFTEST_SCHEMA 1

struct selftest_case {
    char *name;
    char *kind;   /* "random" or "adversarial" */
    char *family; /* "random", "k-offset", "q-x10", "qk-near-max", ... */
    int b, hq, hkv, lq, lkv, d;
    int causal;
    char *layout, *dtype;
    double cos, rel_l1, max_abs;
    double lse_max_err;    /* NAN when the case has no log-sum-exp output */
    long nonfinite;        /* NaN or Inf elements in the output */
    int coverage_ok, pass; /* pass: met its mode's engineering goal */
    int skipped;           /* a head dim the build left out: not judged */
    int safe;
    char *unsafe_reason;
    char *error; /* the API's message when the call itself failed */
};

struct st_speed {
    int b, h, l, d;
    int causal;
    double ms, tops;
    double speedup_vs_fp16; /* < 0 when absent */
};

struct st_mode {
    char *mode; /* "int8-fp16", "int8-fp8", "fp16", or a variant such as "int8-fp8-..." */
    int supported;
    char *reason;
    enum st_verdict verdict; /* from the safe judgement: pass, warn (inaccurate), fail (broken) */
    int safe;
    char **unsafe_reasons;
    int nunsafe;
    int goal; /* engineering goal: 1 met, 0 missed, -1 none for this mode */
    char **goal_notes;
    int ngoal_notes;
    int has_accuracy;
    double worst_cos, worst_rel_l1;
    double bar_cos, bar_rel_l1; /* the accuracy bar the verdict used; NAN when not given */
    int nan_or_inf;
    struct selftest_case *cases;
    int ncases;
    struct st_speed *speed;
    int nspeed;
};

/* What the recommendation compared: the speed shape and each mode's TOPS there. */
struct st_recommendation {
    char *mode;      /* NULL: none */
    char *runner_up; /* NULL: none */
    char *reason;
    int has_shape;
    struct st_shape shape;
    double *tops; /* per mode of the device, NAN when not measured there */
};

struct st_device {
    int index;
    char *name;
    char *cc;   /* "9.0" */
    char *uuid; /* "GPU-..." or NULL */
    int has_code;
    char *build_hint;
    char *error; /* the program could not test this GPU (context creation failed, ...) */
    struct st_mode *modes;
    int nmodes;
    char *recommended_mode; /* = rec.mode */
    struct st_recommendation rec;
};

struct selftest_report {
    int abi;
    char *archs;   /* the archs the library holds, "sm_90,sm_120a" */
    char *skipped; /* "no GPU: ..." or NULL */
    struct st_device *devices;
    int ndevices;
    int judged_here; /* an older program gave figures only: safe and goal were derived here */
};

/* Parses the program's stdout. 0, or -1 with *error (heap) saying what is wrong. */
int selftest_parse(const char *text, size_t len, struct selftest_report *out, char **error);
void selftest_report_free(struct selftest_report *r);

/* "met", "missed", "none". */
const char *st_goal_name(int goal);
/* The worst verdict of a device's supported modes (ST_UNSUPPORTED when none ran). */
enum st_verdict st_device_verdict(const struct st_device *d);
/* The fastest speed row of a mode, or NULL. */
const struct st_speed *st_mode_best_speed(const struct st_mode *m);
int st_mode_failed_cases(const struct st_mode *m);

int st_device_any_safe(const struct st_device *d);
/* The index of a mode by name in d, or -1. */
int st_device_mode_index(const struct st_device *d, const char *mode);

/* The exit status for a parsed report and the program's own exit code: 77 skipped; 2 when a
 * mode is broken, a GPU has no code or could not be tested, or no mode is safe on a GPU; 1 when
 * a mode is outside the safe bar; 0 otherwise (a missed engineering goal is only a note). A
 * worse child status wins, unless the judgements were derived here (an older program's status
 * follows its older rules). */
int selftest_exit_status(const struct selftest_report *r, int child_exit);

/* The `sagebuild build --arch` line for a GPU without code: the device's own hint, else one
 * made from its compute capability. Heap string, NULL when no arch fits. */
char *st_device_build_hint(const struct st_device *d);

#endif
