/* Where CUDA toolkits are found. fetch-cuda installs each release as <data>/cuda-<release>
 * (<data>: $XDG_DATA_HOME/sagebuild, else ~/.local/share/sagebuild); `build` and `env` use one
 * of those before the toolkit torch's own rules find (probe/cuda_home.h).
 *
 * Of several fetched toolkits, the one matching torch's CUDA (major.minor) wins, the newest
 * patch release among them; only when none matches (or torch is absent) does the newest win.
 * torch refuses to build an extension with an nvcc of another major version and warns on
 * another minor one, the driver is known to run torch's CUDA but perhaps not a newer one, and
 * fetch-cuda fetches torch's CUDA by default: a second, newer toolkit fetched to try something
 * must not silently become the one every build uses. */
#ifndef SB_TOOLCHAIN_TOOLKIT_H
#define SB_TOOLCHAIN_TOOLKIT_H

#define TOOLKIT_FETCHED_PREFIX "cuda-"

enum toolkit_pick_rule {
    TOOLKIT_PICK_NONE,     /* no name is a fetched toolkit */
    TOOLKIT_PICK_ONLY,     /* one candidate */
    TOOLKIT_PICK_TORCH,    /* the newest of those matching torch's CUDA */
    TOOLKIT_PICK_NEWEST,   /* none matches torch's CUDA: the newest */
    TOOLKIT_PICK_NO_TORCH, /* torch's CUDA unknown: the newest */
};

/* Pure: of folder names, the fetched toolkit to use (index), or -1. A name counts when it is
 * "cuda-" and a release of at least two parts ("cuda-13.0.2"; not "cuda-13" or
 * "cuda-13.0.2.staging"). torch_cuda: torch.version.cuda ("13.0"), NULL when unknown. */
int toolkit_pick_fetched(const char *const *names, int n, const char *torch_cuda,
                         enum toolkit_pick_rule *rule);
/* A phrase for the rule, for notes: "matches torch's CUDA", ... */
const char *toolkit_pick_rule_text(enum toolkit_pick_rule rule);

/* <data>/cuda-<release> (heap), or NULL without a home. */
char *toolkit_fetched_prefix(const char *release);

/* The fetched toolkit to use under data_dir (NULL: $XDG_DATA_HOME/sagebuild): candidates must hold
 * an executable bin/nvcc (a half-written staging folder or an unrelated cuda-* folder must not win
 * by its name); the torch of `python` (toolkit_torch_cuda) is asked for its CUDA only when there
 * are two or more. Heap path or NULL; *rule (may be NULL) says why. */
char *toolkit_find_fetched(const char *data_dir, const char *python, enum toolkit_pick_rule *rule);

/* Pure: the python whose torch decides: flag_python (a --python PY), else env_python
 * ($SAGEBUILD_PYTHON) when set and not empty, else "python3". doctor, fetch-cuda, env and build
 * all follow this one rule, so that within `all --python PY` every stage reads the same torch. */
const char *toolkit_python_pick(const char *flag_python, const char *env_python);
/* toolkit_python_pick(flag_python, $SAGEBUILD_PYTHON). */
const char *toolkit_python(const char *flag_python);

/* torch's CUDA version ("13.0") from the version.py of the torch that `python` (NULL:
 * $SAGEBUILD_PYTHON, else python3: toolkit_python) finds, without importing it; NULL when there
 * is none, with *note (may be NULL) saying why. */
char *toolkit_torch_cuda(const char *python, char **note);

#endif
