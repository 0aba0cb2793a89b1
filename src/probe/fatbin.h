/* The GPU code a shared library carries, read from its ELF `.nv_fatbin` section without
 * cuobjdump: each fat binary there (magic 0xBA55ED50) holds entries that are SASS (a cubin for one
 * sm_XY) or PTX (for compute_XY, which the driver can JIT-compile for that arch and newer ones).
 * Pure: bytes in, a list out; every offset is bounds-checked, so any bytes are safe to give. */
#ifndef SB_PROBE_FATBIN_H
#define SB_PROBE_FATBIN_H

#include <stddef.h>

#define FATBIN_MAGIC 0xBA55ED50u

enum fatbin_kind { FATBIN_PTX = 1, FATBIN_SASS = 2 };

struct fatbin_image {
    int kind;     /* FATBIN_PTX or FATBIN_SASS */
    int major;    /* 12 for sm_120 */
    int minor;    /* 0 */
    char variant; /* '\0', 'a' (arch-specific) or 'f' (family) */
    int compressed;
};

struct fatbin_list {
    struct fatbin_image *v;
    int n;
    int nfatbins; /* fat binaries found in the section */
};

/* Reads the fat binaries in a `.nv_fatbin` section's bytes. 0, or -1 with *error (heap) when
 * the bytes are not fat binaries or one is cut short (what was read before stays in out). */
int fatbin_parse(const unsigned char *data, size_t len, struct fatbin_list *out, char **error);
/* Finds `.nv_fatbin` in a 64-bit little-endian ELF file's bytes and reads it. 0 (out->n is 0
 * when the file has no such section: no GPU code), or -1 with *error (heap). */
int fatbin_from_elf(const unsigned char *data, size_t len, struct fatbin_list *out, char **error);
void fatbin_list_free(struct fatbin_list *l);

/* "sm_80 sm_90a" (SASS) or "compute_90" (PTX): the distinct archs of one kind, sorted; "" when
 * none. Heap. */
char *fatbin_archs(const struct fatbin_list *l, int kind);

enum fatbin_fit {
    FATBIN_FIT_NONE = 0, /* "no kernel image is available for execution on the device" */
    FATBIN_FIT_PTX,      /* only through the driver's JIT from PTX (slow first call) */
    FATBIN_FIT_SASS,     /* a cubin runs on it as it is */
};
/* Whether an image can run on a GPU of compute capability major.minor: SASS for the same major
 * and a minor not above the GPU's ('a' only on exactly its arch, 'f' within its major); PTX on
 * its arch and newer ones ('a' PTX only on its arch, 'f' within its major). */
enum fatbin_fit fatbin_image_fit(const struct fatbin_image *im, int major, int minor);
/* The best fit of any image in l; *which (optional) gets that image. */
enum fatbin_fit fatbin_fit(const struct fatbin_list *l, int major, int minor,
                           struct fatbin_image *which);
/* "sm_90a" / "compute_120f" for one image, into buf. */
const char *fatbin_image_name(const struct fatbin_image *im, char *buf, size_t len);

#endif
