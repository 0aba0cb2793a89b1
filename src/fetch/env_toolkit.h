/* `sagebuild env` with nothing fetched: the toolkit torch's own rules find (CUDA_HOME,
 * CUDA_PATH, the nvcc on PATH, /usr/local/cuda), used when the doctor finds that it fits, as
 * `sagebuild all` decides whether to fetch. */
#ifndef SB_FETCH_ENV_TOOLKIT_H
#define SB_FETCH_ENV_TOOLKIT_H

struct env_toolkit {
    char *prefix; /* the toolkit torch's rules find; NULL when none */
    char *rule;   /* how it was found: "$CUDA_HOME", "nvcc on PATH", ... */
    int fits;     /* the doctor's toolkit checks found nothing a fetch would fix */
    char *why;    /* when it does not fit (or was not found): what is wrong */
    char *fix;    /* and what to run */
};

/* Finds the toolkit and runs `sagebuild doctor toolkit --json` on it (this binary, in a child
 * process with a timeout), against the torch of python (env --python; NULL: the doctor's default,
 * $SAGEBUILD_PYTHON, else python3). Always fills *t; free with env_toolkit_free. */
void env_toolkit_probe(const char *python, struct env_toolkit *t);
void env_toolkit_free(struct env_toolkit *t);

#endif
