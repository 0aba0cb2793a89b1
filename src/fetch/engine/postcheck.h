/* Proof that a fetched tree is a working toolkit: nvcc compiles a .cu that includes the fp16,
 * bf16 and fp8 headers and links it against the tree's own libcudart, with a host compiler
 * inside the limit of that toolkit's crt/host_config.h (chosen by toolchain/host.h). */
#ifndef SB_FETCH_POSTCHECK_H
#define SB_FETCH_POSTCHECK_H

#include "fetch_error.h"
#include "util/strbuf.h"

/* The test program, so the unit tests can check what it covers. */
extern const char postcheck_source[];

#define POSTCHECK_TIMEOUT_MS 180000

/* Compiles and links the test program with root/bin/nvcc (-ccbin cxx) in a temporary folder,
 * with the linker tracing its inputs so a libcudart from anywhere but root counts as a failure.
 * FETCH_ERR_NONE when it passed; else log says why, and the kind is FETCH_ERR_DISK when the
 * test program could not even be written for lack of space ($TMPDIR full), FETCH_ERR_POSTCHECK
 * otherwise. */
enum fetch_error_kind postcheck_compile(const char *root, const char *cxx, struct strbuf *log);

/* Pure: whether the linker trace (ld -t output) shows libcudart taken from root. */
int postcheck_trace_uses_root(const char *trace, const char *root);

#endif
