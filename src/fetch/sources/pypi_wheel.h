/* Choosing a wheel from an index listing: file names (PEP 427/491), platform tags (manylinux,
 * PEP 600), versions (the PEP 440 subset NVIDIA uses) and the rule that picks one file for a
 * component version the redist manifest names. Pure functions. */
#ifndef SB_FETCH_PYPI_WHEEL_H
#define SB_FETCH_PYPI_WHEEL_H

#include "pypi_index.h"

struct wheel_name {
    char *project; /* as the file spells it: "nvidia_cuda_nvcc" */
    char *version; /* "13.0.88" */
    char *build;   /* build tag, NULL when none */
    char *python;  /* compressed tag sets: "py3", "none", */
    char *abi;
    char *platform; /* "manylinux2014_x86_64.manylinux_2_17_x86_64" */
};

/* name-version(-build)?-python-abi-platform.whl. 0, or -1 when filename is not a wheel. */
int wheel_name_parse(const char *filename, struct wheel_name *w);
void wheel_name_free(struct wheel_name *w);

#define PEP440_MAX_PARTS 8

struct pep440 {
    int release[PEP440_MAX_PARTS];
    int nrelease;
    int pre;   /* a pre-release or development release (never chosen) */
    long post; /* post-release number, -1 when none */
};

/* Parses a version ("13.0.88", "13.3.5.0.6", "13.0.85.post1", "v1.2rc1", "1.0+local"). 0 or -1. */
int pep440_parse(const char *s, struct pep440 *v);
/* Orders final releases: release parts (missing ones are 0), then post-release. Pre-releases
 * sort before the release they lead to. <0, 0, >0. */
int pep440_cmp(const struct pep440 *a, const struct pep440 *b);

/* Whether a wheel of version `have` carries the component version `want` from a redist
 * manifest: the same release parts, optionally followed by more parts or a post-release
 * ("13.0.85" serves 13.0.85; so do "13.0.85.1" and "13.0.85.post1"; "13.0.850" does not).
 * Pre-releases never serve. */
int pypi_version_serves(const char *have, const char *want);

/* The wheel machine name for a redist platform: linux-x86_64 → x86_64, linux-sbsa and
 * linux-aarch64 → aarch64; NULL for others. */
const char *pypi_arch_for_platform(const char *redist_platform);

/* How well a wheel's platform tag set fits a Linux machine of this arch with this glibc
 * (0.0: do not check glibc): 2 for a manylinux tag it can run, 1 for "any", 0 for no fit. */
int wheel_platform_score(const char *platform_tags, const char *arch, int glibc_major,
                         int glibc_minor);

struct pypi_want {
    const char *project; /* "nvidia-cuda-nvcc" */
    const char *version; /* the manifest's component version */
    const char *arch;    /* "x86_64" */
    int glibc_major, glibc_minor;
};

/* The file of listing l to download for w: wheels of that project that fit the platform and
 * serve the version; not yanked before yanked, the exact version before later builds of it,
 * then the newest, then a manylinux tag before "any", then the file name. Returns its index,
 * or -1 with *why (heap) saying what the index offers instead. *yanked (optional) is set
 * when the choice was yanked (PEP 592 lets an exact pin use one). */
int pypi_choose(const struct pypi_listing *l, const struct pypi_want *w, int *yanked, char **why);

#endif
