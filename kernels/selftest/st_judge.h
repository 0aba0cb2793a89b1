/* The self-test's judgements over plain numbers and mode names, shared by sageattn-selftest
 * (kernels/selftest) and `sagebuild selftest` (src/selftest), which reads the program's JSON:
 *   - safe: one absolute accuracy bar for every mode on every case (README.md says why these
 *     numbers); the recommendation and the exit status follow it;
 *   - goal: each mode's engineering bar (issue 4), reported as notes only;
 *   - the recommendation: the fastest safe mode at the speed shape that matters.
 * No CUDA and no library calls: modes are names, and a mode is quantized unless it is "fp16". */
#ifndef ST_JUDGE_H
#define ST_JUDGE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A verdict, as the program's JSON and the CLI spell it: "pass", "warn", "fail", "unsupported".
 * A mode's comes from the safe judgement (pass safe, warn inaccurate, fail broken). */
enum st_verdict { ST_PASS = 0, ST_WARN = 1, ST_FAIL = 2, ST_UNSUPPORTED = 3 };
const char *st_verdict_name(enum st_verdict v);
/* The verdict a name spells: 0, or -1 (and *out untouched) for a name that is none. */
int st_verdict_from_name(const char *name, enum st_verdict *out);

/* The safe bar. */
#define ST_SAFE_COS 0.999
#define ST_SAFE_REL_L1 0.05
#define ST_SAFE_LSE_ABS 0.05
/* Past these a mode is broken, not merely imprecise: twice the safe bar's error. */
#define ST_BROKEN_COS 0.998
#define ST_BROKEN_REL_L1 0.1

/* What one case measured, as both sides know it. */
struct st_figures {
    int api_ok;      /* the library accepted and ran the problem */
    int coverage_ok; /* every output written, nothing outside it */
    long nonfinite;  /* NaN/Inf among the outputs */
    double cos, rel_l1;
    double lse_err;  /* max |lse - ref|; < 0 or NaN: not checked */
    int lse_inf_ok;  /* rows without keys gave -inf */
    int finite_only; /* Q and K near the fp16 limit: only finite, complete output is judged */
};

enum st_safety { ST_SAFE = 0, ST_INACCURATE = 1, ST_BROKEN = 2 };

/* Judges one case against the safe bar; when not ST_SAFE, why (n bytes) says what was off,
 * e.g. "cos 0.99850 < 0.999". */
enum st_safety st_judge_safe(const struct st_figures *f, char *why, size_t n);

/* A mode's engineering goal: cos and rel-L1 on random inputs, LSE error. */
struct st_goal {
    double cos, rel_l1, lse_abs;
};
/* The goal of a mode by name: int8-fp16* and int8-fp8* (variants share their family's goal),
 * fp16. Returns 0 (and leaves *out) for a mode without one. */
int st_goal_for_mode(const char *mode, struct st_goal *out);

int st_mode_is_quantized(const char *mode);

struct st_shape {
    int b, h, l, d, causal;
};
/* The speed shape the recommendation is made at: D=128, not causal, the longest L; failing
 * that the longest L at any D (non-causal first). -1 when n is 0. */
int st_key_shape(const struct st_shape *s, int n);

/* One mode as the recommendation sees it. */
struct st_candidate {
    const char *mode;
    int safe;
    double tops; /* at the key shape; NaN or <= 0: not measured */
};

struct st_choice {
    int mode;      /* index into the candidates, -1 for none */
    int runner_up; /* index, -1 for none */
    char reason[400];
};

/* The fastest safe quantized mode that is faster than fp16 at the key shape; else fp16 when it
 * is safe; else none. The runner-up is the next safe mode by speed. A mode slower than fp16 (or
 * with no fp16 figure to compare with) is never chosen. key (may be NULL) names the shape in
 * the reason. */
void st_choose(const struct st_candidate *c, int n, const struct st_shape *key,
               struct st_choice *out);

#ifdef __cplusplus
}
#endif

#endif
