/* fetch-cuda's PyPI source: the CUDA >= 13 compiler toolkit from NVIDIA's wheels on any PyPI
 * mirror. The redist manifest still decides the component versions (13.0.2 → nvcc 13.0.88,
 * cudart 13.0.96, cccl 13.0.85, ...); this file turns that plan into wheels, and then into the
 * same prefix the redist path makes. Wheel layout (checked on the 13.0.2 wheels): everything under
 * nvidia/cu13/{bin,include,lib}, cicc and libdevice under nvidia/cu13/nvvm/, libnvvm.so.4 in
 * nvidia/cu13/lib, CCCL under include/cccl, and only versioned shared libraries (a zip has no
 * symlinks). */
#ifndef SB_FETCH_PYPI_SOURCE_H
#define SB_FETCH_PYPI_SOURCE_H

#include "source.h"
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
int pypi_layout_fixup(const char *root, struct strbuf *log, struct fetch_error *err);

/* The source itself (source.h): the redist manifest's plan (no NVIDIA site for it unless a
 * --mirror names it), each archive rewritten into the wheel of that component version from the
 * first index that has one (its sha256 and size as the index publishes them, "pypi/<wheel>" as
 * its place in the cache), unpacked with pypi_map_entry and fixed up with pypi_layout_fixup. */
extern const struct fetch_source pypi_source;

#endif
