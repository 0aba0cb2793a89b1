/* What `sagebuild install` decides from facts: what the target python said about itself, what
 * an install would replace, whether an existing build has code for the GPUs present. Pure. */
#ifndef SB_INSTALL_DECIDE_H
#define SB_INSTALL_DECIDE_H

#include "kernel_build/arch.h"

/* What the target interpreter says about itself (install_probe_script prints it). */
struct py_facts {
    char *version;       /* "3.11.7" */
    char *executable;    /* sys.executable */
    char *machine;       /* platform.machine() */
    char *platform;      /* sys.platform */
    char *pip;           /* pip's version, NULL when pip is missing */
    char *torch;         /* torch's version, NULL when not installed */
    char *sage_version;  /* the installed sageattention distribution, NULL when none */
    char *sage_location; /* where its dist-info lives (site-packages), NULL when none */
};

/* The script the interpreter runs (python -c): "key\tvalue" lines, nothing imported but the
 * standard library (importlib.metadata reads dist-info; no package is imported). */
extern const char install_probe_script[];
/* Reads its output. 0 when at least the python version was there, -1 otherwise. */
int install_parse_probe(const char *text, struct py_facts *out);
void py_facts_free(struct py_facts *f);

/* Why this python cannot take a wheel made on this machine (NULL when it can): another OS, or
 * another machine than the wheel's tag, or no pip. Heap. */
char *install_python_refusal(const struct py_facts *f, const char *our_machine);

enum replacement {
    REPLACE_NOTHING = 0, /* no sageattention installed */
    REPLACE_OURS,        /* an earlier drop-in of ours */
    REPLACE_UPSTREAM,    /* the upstream SageAttention (compiled for one torch) */
};
/* What installing would replace, from the installed version (NULL: none), and a sentence for
 * the user (heap, NULL for REPLACE_NOTHING). */
enum replacement install_replacement(const char *installed, const char *ours, char **sentence);

/* Whether a build holding `archs` ("sm_90,sm_120a") runs on every GPU in gpus; *missing (heap,
 * optional) lists those it does not ("NVIDIA GeForce RTX 5090 (sm_120)"), NULL when all run.
 * names may be NULL (then GPUs are named by index). */
int install_build_covers(const char *archs, const struct gpu_cc *gpus, const char *const *names,
                         int ngpus, char **missing);

/* The verification script: imports sageattention and prints its __version__, __file__, the
 * installed distribution's __init__.py and whether importing it initialised CUDA through torch. */
extern const char install_verify_script[];
struct import_facts {
    char *version;
    char *file;
    char *dist_file;      /* where the installed distribution's __init__.py is, NULL when unknown */
    int cuda_initialized; /* 1 when torch's CUDA was initialised by the import */
    int torch_imported;
};
int install_parse_verify(const char *text, struct import_facts *out);
void import_facts_free(struct import_facts *f);

#endif
