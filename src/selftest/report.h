/* The JSON that sageattn-selftest prints (kernel-contracts.md), read into structs, checked, and
 * summed up into verdicts. Pure: text in, data out. */
#ifndef SB_SELFTEST_REPORT_H
#define SB_SELFTEST_REPORT_H

#include <stddef.h>

#define SELFTEST_SCHEMA 1

enum st_verdict { ST_PASS = 0, ST_WARN, ST_FAIL, ST_UNSUPPORTED };

struct st_case {
    char *name;
    char *kind; /* "random" or "adversarial" */
    int b, hq, hkv, lq, lkv, d;
    int causal;
    char *layout, *dtype;
    double cos, rel_l1, max_abs;
    double lse_max_err; /* NAN when the case has no log-sum-exp output */
    long nonfinite;     /* NaN or Inf elements in the output */
    int coverage_ok, pass;
    char *error; /* the API's message when the call itself failed */
};

struct st_speed {
    int b, h, l, d;
    int causal;
    double ms, tops;
    double speedup_vs_fp16; /* < 0 when absent */
};

struct st_mode {
    char *mode; /* "int8-fp16", "int8-fp8", "fp16" */
    int supported;
    char *reason;
    enum st_verdict verdict;
    int has_accuracy;
    double worst_cos, worst_rel_l1;
    double bar_cos, bar_rel_l1; /* the accuracy bar the verdict used; NAN when not given */
    int nan_or_inf;
    struct st_case *cases;
    int ncases;
    struct st_speed *speed;
    int nspeed;
};

struct st_device {
    int index;
    char *name;
    char *cc; /* "9.0" */
    int has_code;
    char *build_hint;
    char *error; /* the program could not test this GPU (context creation failed, ...) */
    struct st_mode *modes;
    int nmodes;
    char *recommended_mode;
};

struct st_report {
    int abi;
    char *archs;   /* the archs the library holds, "sm_90,sm_120a" */
    char *skipped; /* "no GPU: ..." or NULL */
    struct st_device *devices;
    int ndevices;
};

/* Parses the program's stdout. 0, or -1 with *error (heap) saying what is wrong. */
int selftest_parse(const char *text, size_t len, struct st_report *out, char **error);
void selftest_report_free(struct st_report *r);

const char *st_verdict_name(enum st_verdict v);
/* The worst verdict of a device's supported modes (ST_UNSUPPORTED when none ran). */
enum st_verdict st_device_verdict(const struct st_device *d);
/* The fastest speed row of a mode, or NULL. */
const struct st_speed *st_mode_best_speed(const struct st_mode *m);
int st_mode_failed_cases(const struct st_mode *m);

/* The exit status for a parsed report and the program's own exit code: 77 skipped, 2 when a
 * mode failed, a GPU has no code or could not be tested, 1 warnings, 0 all pass; a worse child
 * status wins. */
int selftest_exit_status(const struct st_report *r, int child_exit);

/* The `sagebuild build --arch` line for a GPU without code: the device's own hint, else one
 * made from its compute capability. Heap string, NULL when no arch fits. */
char *st_device_build_hint(const struct st_device *d);

#endif
