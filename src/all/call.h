/* The last stage of `sagebuild all --python PY`: a real call through the installed package on
 * each GPU, next to torch's SDPA on the same inputs, for speed and accuracy. The script runs in
 * PY; these pure functions read its lines and say what they mean. */
#ifndef SB_ALL_CALL_H
#define SB_ALL_CALL_H

/* The script: prints one JSON object per line: {"skipped": why} when there is no torch or no
 * GPU for torch, {"import_error": why} when `import sageattention` raised, else per GPU
 * {"gpu","name","cc","shape":[B,H,L,D],"version","sage_ms",
 * "sdpa_ms","sage_cos","sage_rel_l1","sdpa_cos","sdpa_rel_l1","finite"} or {"gpu","name",
 * "error"} when the call raised. */
extern const char all_call_script[];

#define CALL_MAX_GPUS 16

struct call_gpu {
    int index;
    char *name, *cc;
    char *error; /* the exception the call raised */
    int b, h, l, d;
    double sage_ms, sdpa_ms;
    double sage_cos, sage_rel_l1, sdpa_cos, sdpa_rel_l1;
    int finite;
};

struct call_report {
    char *skipped;      /* why nothing ran (no torch, no GPU for torch) */
    char *import_error; /* `import sageattention` raised this */
    char *version;      /* sageattention.__version__ as imported */
    struct call_gpu gpus[CALL_MAX_GPUS];
    int ngpus;
};

/* 0, or -1 with *error (heap) when no line of the output is ours. */
int all_parse_call(const char *text, struct call_report *out, char **error);
void all_call_report_free(struct call_report *r);

/* The accuracy a real call must reach against the fp32 reference (the self-test's safe bar). */
#define CALL_MIN_COS 0.999
#define CALL_MAX_REL_L1 0.05

enum call_verdict { CALL_OK = 0, CALL_WARN, CALL_FAIL };
/* One line for a GPU, saying plainly which is faster ("SDPA is 1.31x faster than sageattn on
 * this GPU"), and its verdict: FAIL when the call raised or returned non-finite values, WARN
 * when below the accuracy bar. Heap line. */
char *all_call_line(const struct call_gpu *g, enum call_verdict *verdict);

#endif
