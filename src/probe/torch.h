/* Finding torch without importing it (an import takes seconds and may crash): ask the python
 * where the package lives, or take a given folder, then read the generated torch/version.py. */
#ifndef SB_PROBE_TORCH_H
#define SB_PROBE_TORCH_H

#include <stddef.h>

/* What torch/version.py says. Every string is a heap copy or NULL when absent. */
struct torch_version_py {
    char *version;     /* __version__ = '2.11.0+cu130' */
    char *cuda;        /* cuda = '13.0'; NULL when the file says None or has no cuda line */
    int cuda_is_none;  /* the file said cuda = None (a CPU or ROCm build) */
    char *git_version; /* git_version = '...' */
    char *hip;         /* hip = '6.2...' (ROCm builds) */
};

/* Pure parser over the file's text (any bytes, not necessarily NUL-terminated). Returns 0 when
 * __version__ was found, -1 otherwise; out is filled as far as it could be either way. */
int torch_parse_version_py(const char *text, size_t len, struct torch_version_py *out);
void torch_version_py_free(struct torch_version_py *v);

struct torch_info {
    int found;     /* torch/version.py was read and has a __version__ */
    char *dir;     /* the torch package folder */
    char *site;    /* the folder holding it (site-packages), where sageattention/nvidia live */
    char *version; /* "2.11.0+cu130" */
    char *cuda;    /* "13.0", or NULL for a CPU/ROCm build */
    char *git_version;
    char *hip;
    char *python;         /* the interpreter asked, NULL when torch_dir was given */
    char *python_version; /* "3.11.7", when the python was asked */
    char *error;          /* why found is 0: python missing, timed out, torch not installed, ... */
};

#define TORCH_PROBE_TIMEOUT_MS 5000

/* Locates torch: torch_dir when given (the folder that holds version.py, or the site-packages
 * folder that holds torch/), else asks python (NULL:
 * "python3") for importlib.util.find_spec("torch") with a timeout. Returns 0 when found. */
int probe_torch(const char *python, const char *torch_dir, struct torch_info *out);
void torch_info_free(struct torch_info *t);

/* Asks python where top-level packages live without importing them (find_spec). dirs[i] is the
 * package folder (or module file) for names[i], or NULL when it is not installed. The python
 * version goes to *python_version when asked. Returns 0 when the python ran, -1 with *error set
 * otherwise. Heap strings. */
int python_find_packages(const char *python, const char *const *names, int n, char **dirs,
                         char **python_version, char **error, int timeout_ms);
/* Pure: reads the "name\tpath" lines python_find_packages' helper prints. */
void python_parse_find_output(const char *text, const char *const *names, int n, char **dirs,
                              char **python_version);

#endif
