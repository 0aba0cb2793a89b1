/* The archs the bundled kernels are built for, and turning `--arch` into a list of them.
 * Pure functions over data: the GPUs present and the nvcc's version come in as arguments. */
#ifndef SB_BUILD_ARCH_H
#define SB_BUILD_ARCH_H

#include "../../kernels/archs/sa_archs.h"
#include "probe/arch.h"
#include "util/version.h"

#include <stddef.h>

/* The kernels' archs are the rows of kernels/archs/archs.def with kernel families; an index i
 * below is a row of that table. Row i when the kernels are built for it, else NULL. */
const struct sa_arch *build_arch_at(int i);

/* "<command>sm_120a   (RTX 50; sm_89: RTX 40; sm_90: H100/H200<tail>)": the --arch to suggest
 * when there is no GPU to go by, with the table's product names. Heap string. */
char *build_arch_examples(const char *command, const char *tail);

#define BUILD_MAX_ARCHS 16

/* A set of rows of the table, kept in table order so equal requests give equal lists. */
struct arch_list {
    int n;
    int idx[BUILD_MAX_ARCHS];
};

/* A GPU as the probe saw it: what `native` maps from. */
struct gpu_cc {
    int major;
    int minor;
};

/* The row for a user's spelling: exact name, or the one variant the table has for that base
 * ("sm_120" → sm_120a, "12.0" → sm_120a, "sm_90" stays sm_90). -1 when the kernels have none. */
int build_arch_find(const char *spelling);
/* The row `native` picks for a GPU: exact compute capability, else the newest portable row it
 * runs on (8.7 → sm_86); -1 when none runs on it. 9.0 → sm_90 (the portable family). */
int build_arch_for_cc(int major, int minor);

/* Why a spec was refused: a spelling no arch has (a usage error), or `native` on a machine whose
 * GPUs give no arch (none found, or none the kernels know). */
enum { ARCH_SPEC_BAD = -1, ARCH_SPEC_NO_GPU = -2 };

/* Parses "sm_120a,sm_90", "native", "all" or a mix (',' ';' or blanks between). `native` uses
 * gpus[0..ngpus). On success returns 0 and appends one line per remark (a GPU with no row, the
 * sm_90a hint) to *notes (heap, may stay NULL); on failure returns ARCH_SPEC_BAD or
 * ARCH_SPEC_NO_GPU with *error (heap). */
int build_arch_parse_spec(const char *spec, const struct gpu_cc *gpus, int ngpus,
                          struct arch_list *out, char **notes, char **error);

/* Why this nvcc cannot build row i (NULL when it can): nvcc's own floors and drops
 * (probe/arch.h) and then the kernels' floor (the table's kernels_nvcc). listed may be NULL.
 * Heap string. */
char *build_arch_refusal(int i, const struct version *nvcc_release, const char *const *listed,
                         size_t nlisted);
/* The fix to print for a refusal of row i by nvcc_release: which toolkit to fetch, and, when
 * buildable (the asked archs this nvcc can build) is not empty, the --arch that keeps those.
 * Heap string. */
char *build_arch_fix(int i, const struct version *nvcc_release, const struct arch_list *buildable);

/* "sm_90;sm_120a" (sep ";") or "sm_90,sm_120a" (sep ","). Heap string. */
char *build_arch_join(const struct arch_list *l, const char *sep);

#endif
