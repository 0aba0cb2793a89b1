/* fetch-cuda's PyPI source: the CUDA >= 13 compiler toolkit from NVIDIA's wheels on any PyPI
 * mirror. The redist manifest still decides the component versions (13.0.2 → nvcc 13.0.88,
 * cudart 13.0.96, cccl 13.0.85, ...); this file turns that plan into wheels, and then into the
 * same prefix the redist path makes. Wheel layout (shared/reference/cuda-redist.md §7, checked
 * on the 13.0.2 wheels): everything under nvidia/cu13/{bin,include,lib}, cicc and libdevice
 * under nvidia/cu13/nvvm/, libnvvm.so.4 in nvidia/cu13/lib, CCCL under include/cccl, and only
 * versioned shared libraries (a zip has no symlinks). */
#ifndef SB_FETCH_PYPI_SOURCE_H
#define SB_FETCH_PYPI_SOURCE_H

#include "fetch/engine/download.h"
#include "fetch/engine/pipeline.h"
#include "pypi_index.h"
#include "resolve.h"
#include "util/strbuf.h"

/* The wheel project for a redist component ("cuda_cudart" → "nvidia-cuda-runtime",
 * "libnvvm" → "nvidia-nvvm", "cuda_nvdisasm" → "nvidia-cuda-nvdisasm"). Heap string, or NULL
 * when NVIDIA publishes no wheel for it. Pure. */
char *pypi_project_for(const char *component);

/* NULL when a release can come from PyPI, else why not (heap): before CUDA 13 the nvcc wheel
 * (nvidia-cuda-nvcc-cu12) holds ptxas alone. Pure. */
char *pypi_release_refusal(const char *release);

/* Where an entry of a wheel goes in the toolkit prefix: nvidia/cuNN/X → X (NN >= 13, its
 * .metadata/ dropped), NAME.dist-info/X → dist-info/NAME.dist-info/X (so the doctor can tell
 * which wheels made the prefix), anything else is left out (NULL). Heap string. Pure; the
 * signature is unpack_opts.map's. */
char *pypi_map_entry(void *unused, const char *rel);

/* The development name of a versioned shared library ("libcudart.so.13" → "libcudart.so",
 * "libnvvm.so.4.0.0" → "libnvvm.so"), or NULL when name is not one. Heap. Pure. */
char *pypi_dev_link_name(const char *name);

/* Makes a merged wheel tree match the redist layout, in place: lib/libX.so → libX.so.N where
 * only the versioned file came (torch links -lcudart), nvvm/lib64/libnvvm.so* and
 * nvvm/include/nvvm.h where the libnvvm archive has them. One log line per change. 0 or -1. */
int pypi_layout_fixup(const char *root, struct strbuf *log, char **err);

struct pypi_request {
    char *const *indexes; /* tried in order, per project */
    int nindexes;
    const char *arch;             /* "x86_64" / "aarch64" */
    int glibc_major, glibc_minor; /* 0: do not judge manylinux tags by glibc */
    const struct dl_opts *dl;
    /* Offline (dl->offline): wheels are looked for here instead, by file name; their hash is
     * taken from the file (the cache holds only verified files). NULL-terminated. */
    const char *const *local_dirs;
};

/* What the PyPI plan adds to a fetch_plan: per item, the URLs to try. */
struct pypi_plan {
    char ***urls; /* one NULL-terminated list per item */
    char **notes; /* per item: a warning (yanked, no hash) or NULL */
    int n;
};
void pypi_plan_free(struct pypi_plan *p);

/* Rewrites plan (made by resolve_plan from the manifest) into wheels: each item keeps its
 * component name, and gets the wheel's version, "pypi/<wheel file>" as relative_path (its
 * place in the cache), the sha256 and size the index publishes, and its URL in out. Fails,
 * naming the project, the version and what the indexes list instead, when an index has no
 * fitting wheel or publishes no sha256 for it. 0 or -1 with *err. */
int pypi_resolve_plan(struct fetch_plan *plan, const struct pypi_request *rq, struct pypi_plan *out,
                      char **err);

/* The pipeline hooks for wheels (strip 0, pypi_map_entry, pypi_layout_fixup, per-item URLs
 * from p). */
void pypi_pipeline_source(const struct pypi_plan *p, struct pipeline_source *src);

/* One GET of a simple-API page: Accept prefers JSON (PEP 691), redirects are followed, and the
 * page's final URL (for relative links) and Content-Type come back. 0 or -1 with *err. */
int pypi_get_page(const char *url, const struct dl_opts *o, char **body, size_t *len,
                  char **content_type, char **final_url, char **err);

#endif
