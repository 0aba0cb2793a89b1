/* The pure decisions of sageattn-selftest, kept apart from CUDA so CPU tests cover them: which
 * arch to build for a GPU, whether a build's arch list covers it, the test matrix, and each
 * case's engineering-goal verdict (the safe bar and the recommendation are in st_judge.h, which
 * the CLI shares). */
#ifndef ST_LOGIC_H
#define ST_LOGIC_H

#include <stddef.h>
#include <stdint.h>

#include "st_judge.h" /* enum st_verdict */

#ifdef __cplusplus
extern "C" {
#endif

/* Input families of the accuracy matrix (the same as the CPU reference tests'). */
enum st_kind {
    ST_RANDOM,        /* Q, K, V ~ N(0, 1) */
    ST_K_OFFSET,      /* K + per-channel offset N(0, 1)·30 */
    ST_Q_X10,         /* Q·10 */
    ST_V_NEAR_LIMIT,  /* V reaching ±60000 */
    ST_QK_NEAR_LIMIT, /* Q and K reaching ±60000: only finiteness is judged */
    ST_LONG           /* random, but a long sequence: judged as adversarial */
};

/* The family's name as case names and the JSON spell it: "random", "k-offset", "q-x10", ... */
const char *st_kind_name(enum st_kind k);

struct st_case {
    char name[64];
    int b, hq, hkv, lq, lkv, d;
    int causal, nhd, bf16;
    int lse; /* also request and check the LSE */
    enum st_kind kind;
};

struct st_speed_shape {
    int b, h, l, d, causal;
};

/* Element strides (batch, head, token) of a [b][heads][len][pitch] tensor stored as HND
 * ([B,H,L,D]) or, with nhd, as NHD ([B,L,H,D]); pitch >= head_dim leaves a gap after each row. */
void st_strides(int64_t s[3], int heads, int len, int pitch, int nhd);

/* Fills out[] (capacity cap) with the accuracy matrix; returns the count. */
size_t st_accuracy_cases(int full, struct st_case *out, size_t cap);
size_t st_speed_shapes(int full, struct st_speed_shape *out, size_t cap);

/* "sm_90" for cc 90, "sm_120a" for 120, "sm_86" for 87: the --arch that gives SASS for this GPU
 * (the arch table's sa_arch_kernels_for_cc); "" when the kernels have no arch for it. */
void st_arch_for_cc(int cc, char *out, size_t n);
/* Whether a comma-separated arch list ("sm_90,sm_120a") holds SASS that runs on cc: sm_XY runs
 * on the same major with minor <= the GPU's; sm_XYa only on exactly X.Y (sa_arch_runs_on). */
int st_archs_cover_cc(const char *archs, int cc);

/* Mode names as the API spells them; -1 for an unknown name. Mode numbers are sageattn_mode. */
int st_mode_from_name(const char *name);

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (as nvidia-smi writes it) from the 16 bytes of
 * cudaDeviceProp.uuid; "" when they are all zero (the driver gave none). */
void st_format_uuid(const unsigned char bytes[16], char *out, size_t n);

struct st_bar {
    double cos, rel_l1, lse_abs;
};
/* The engineering goal of a mode by name (st_goal_for_mode: issue 4's for int8-fp16 and
 * int8-fp8, our own for fp16); 0 for a mode without one. */
int st_bar_for_name(const char *mode, struct st_bar *out);
/* The same for the three modes the reference tests know by number. */
struct st_bar st_bar_for_mode(int mode);

struct st_case_result {
    int skipped;     /* the library was built without this head dim: not judged */
    int api_ok;      /* sageattn_run accepted the problem */
    int coverage_ok; /* every output element written, nothing outside it */
    long nonfinite;  /* NaN/Inf among the written outputs */
    double cos, rel_l1, max_abs;
    double lse_err;               /* max |lse - ref| over rows with keys; < 0 when not checked */
    int lse_inf_ok;               /* rows without keys have -inf */
    int pass;                     /* met its goal: filled by st_judge_case */
    double goal_cos, goal_rel_l1; /* the limits st_judge_case held it to */
};

/* Judges one case against its mode's engineering goal (bar): random cases against the bar;
 * adversarial ones (every kind but ST_RANDOM) against twice the worst random rel-L1 of the same
 * mode (random_rel), except
 * ST_QK_NEAR_LIMIT, which only needs finite, complete output; adversarial cosines only have to
 * stay within 10x the random bar's distance from 1. Returns the case's verdict: FAIL for
 * missing/extra writes, NaN/Inf, API errors, or more than twice the allowed error; WARN for a
 * miss within that; PASS otherwise; a skipped case is PASS with r->pass 0. Sets r->pass. */
enum st_verdict st_judge_case(const struct st_bar *bar, const struct st_case *c,
                              struct st_case_result *r, double random_rel);

#ifdef __cplusplus
}
#endif

#endif
