#include "probe/fatbin.h"
#include "../../kernels/archs/sa_archs.h"
#include "util/strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Layout (little-endian), as nvcc 12/13 write it:
 *   fat binary header, 16 bytes: u32 magic, u16 version, u16 header size, u64 size of entries
 *   entry header (header size given in it, 64 bytes or more): u16 kind, u16 version, u32 header
 *   size, u64 payload size, u32 compressed size, u32 options offset, u16 code minor, u16 code
 *   major, u32 arch (10*major + minor), u32 name offset, u32 name size, u64 flags, ...
 * Flags seen: 0x1 64-bit, 0x10 Linux host, 0x2000 / 0x8000 compressed payload, 0x100000 an 'a'
 * arch (sm_90a), 0x200000 an 'f' arch (sm_100f). */
#define FATBIN_HEADER_SIZE 16
#define ENTRY_MIN_HEADER 48
#define FLAG_COMPRESSED_OLD 0x2000u
#define FLAG_COMPRESSED 0x8000u
#define FLAG_ARCH_A 0x100000u
#define FLAG_ARCH_F 0x200000u
#define MAX_IMAGES 4096

static uint16_t rd16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void add_image(struct fatbin_list *l, const struct fatbin_image *im)
{
    if (l->n % 16 == 0)
        l->v = xrealloc(l->v, (size_t)(l->n + 16) * sizeof *l->v);
    l->v[l->n++] = *im;
}

/* One fat binary at data[0..len): its entries into out. Returns its total size, or 0 with
 * *error set. */
static size_t parse_one(const unsigned char *data, size_t len, struct fatbin_list *out,
                        char **error)
{
    uint16_t hsize = rd16(data + 6);
    uint64_t fsize = rd64(data + 8);
    if (hsize < FATBIN_HEADER_SIZE || hsize > len || fsize > len - hsize) {
        *error = xasprintf("a fat binary's header says %u + %llu bytes, %zu are there", hsize,
                           (unsigned long long)fsize, len);
        return 0;
    }
    size_t end = hsize + (size_t)fsize;
    for (size_t e = hsize; e < end;) {
        if (end - e < ENTRY_MIN_HEADER) {
            *error = xasprintf("an entry header at %zu is cut short", e);
            return 0;
        }
        const unsigned char *h = data + e;
        uint32_t ehsize = rd32(h + 4);
        uint64_t psize = rd64(h + 8);
        if (ehsize < ENTRY_MIN_HEADER || ehsize > end - e || psize > end - e - ehsize) {
            *error = xasprintf("an entry at %zu says %u + %llu bytes, %zu are left", e, ehsize,
                               (unsigned long long)psize, end - e);
            return 0;
        }
        uint16_t kind = rd16(h);
        uint32_t arch = rd32(h + 28);
        uint64_t flags = rd64(h + 40);
        if ((kind == FATBIN_PTX || kind == FATBIN_SASS) && arch >= 10 && arch < 10000 &&
            out->n < MAX_IMAGES) {
            struct fatbin_image im = {
                .kind = kind,
                .major = (int)(arch / 10),
                .minor = (int)(arch % 10),
                .variant = flags & FLAG_ARCH_A   ? 'a'
                           : flags & FLAG_ARCH_F ? 'f'
                                                 : '\0',
                .compressed = (flags & (FLAG_COMPRESSED | FLAG_COMPRESSED_OLD)) != 0,
            };
            add_image(out, &im);
        }
        e += ehsize + (size_t)psize;
    }
    out->nfatbins++;
    return end;
}

int fatbin_parse(const unsigned char *data, size_t len, struct fatbin_list *out, char **error)
{
    memset(out, 0, sizeof *out);
    *error = NULL;
    size_t p = 0;
    while (p < len) {
        /* Fat binaries follow each other, aligned to 8 bytes with zero padding between. */
        if (len - p < FATBIN_HEADER_SIZE) {
            for (; p < len && data[p] == 0; p++)
                ;
            if (p < len)
                *error = xasprintf("%zu stray bytes at the end", len - p);
            break;
        }
        uint32_t magic = rd32(data + p);
        if (magic == 0) {
            p += 8 - p % 8;
            continue;
        }
        if (magic != FATBIN_MAGIC) {
            *error = xasprintf("no fat binary at offset %zu (magic 0x%08x)", p, magic);
            break;
        }
        size_t used = parse_one(data + p, len - p, out, error);
        if (!used)
            break;
        p += used;
    }
    if (!*error && out->nfatbins == 0)
        *error = xstrdup("the section holds no fat binary");
    return *error ? -1 : 0;
}

int fatbin_from_elf(const unsigned char *data, size_t len, struct fatbin_list *out, char **error)
{
    memset(out, 0, sizeof *out);
    *error = NULL;
    if (len < 64 || memcmp(data, "\177ELF", 4)) {
        *error = xstrdup("not an ELF file");
        return -1;
    }
    if (data[4] != 2 || data[5] != 1) {
        *error = xstrdup("not a 64-bit little-endian ELF file");
        return -1;
    }
    uint64_t shoff = rd64(data + 0x28);
    uint16_t shentsize = rd16(data + 0x3a), shnum = rd16(data + 0x3c), shstrndx = rd16(data + 0x3e);
    if (shnum == 0)
        return 0; /* no section table: nothing to read */
    if (shentsize < 64 || shoff > len || (uint64_t)shnum * shentsize > len - shoff ||
        shstrndx >= shnum) {
        *error = xstrdup("the ELF section table lies outside the file");
        return -1;
    }
    const unsigned char *names = data + shoff + (size_t)shstrndx * shentsize;
    uint64_t stroff = rd64(names + 0x18), strsize = rd64(names + 0x20);
    if (stroff > len || strsize > len - stroff) {
        *error = xstrdup("the ELF section names lie outside the file");
        return -1;
    }
    static const char want[] = ".nv_fatbin";
    for (uint16_t i = 0; i < shnum; i++) {
        const unsigned char *sh = data + shoff + (size_t)i * shentsize;
        uint32_t name = rd32(sh);
        uint32_t type = rd32(sh + 4);
        uint64_t off = rd64(sh + 0x18), size = rd64(sh + 0x20);
        if (name >= strsize || strsize - name < sizeof want ||
            memcmp(data + stroff + name, want, sizeof want))
            continue;
        if (type == 8 /* SHT_NOBITS */ || size == 0)
            return 0;
        if (off > len || size > len - off) {
            *error = xstrdup("the .nv_fatbin section lies outside the file");
            return -1;
        }
        return fatbin_parse(data + off, (size_t)size, out, error);
    }
    return 0;
}

void fatbin_list_free(struct fatbin_list *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

const char *fatbin_image_name(const struct fatbin_image *im, char *buf, size_t len)
{
    snprintf(buf, len, "%s_%d%d%s", im->kind == FATBIN_PTX ? "compute" : "sm", im->major, im->minor,
             im->variant == 'a'   ? "a"
             : im->variant == 'f' ? "f"
                                  : "");
    return buf;
}

static int image_order(const void *a, const void *b)
{
    const struct fatbin_image *x = a, *y = b;
    int ax = x->major * 10 + x->minor, ay = y->major * 10 + y->minor;
    if (ax != ay)
        return ax < ay ? -1 : 1;
    return (x->variant > y->variant) - (x->variant < y->variant);
}

char *fatbin_archs(const struct fatbin_list *l, int kind)
{
    struct fatbin_image *v = xcalloc((size_t)l->n + 1, sizeof *v);
    int n = 0;
    for (int i = 0; i < l->n; i++)
        if (l->v[i].kind == kind)
            v[n++] = l->v[i];
    qsort(v, (size_t)n, sizeof *v, image_order);
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < n; i++) {
        if (i && !image_order(&v[i - 1], &v[i]))
            continue;
        char name[32];
        sb_addf(&sb, "%s%s", sb.len ? " " : "", fatbin_image_name(&v[i], name, sizeof name));
    }
    free(v);
    return sb_detach(&sb);
}

enum fatbin_fit fatbin_image_fit(const struct fatbin_image *im, int major, int minor)
{
    /* SASS by the arch table's rule (sa_arch_runs_on); PTX is JIT-compiled for the same or a
     * newer GPU, but an 'a' or 'f' PTX only for its own arch or family. */
    if (im->kind == FATBIN_SASS)
        return sa_arch_runs_on(im->major, im->minor, im->variant, major, minor) ? FATBIN_FIT_SASS
                                                                                : FATBIN_FIT_NONE;
    int exact = im->major == major && im->minor == minor;
    if (im->variant == 'a' && !exact)
        return FATBIN_FIT_NONE;
    if (im->variant == 'f' && (im->major != major || im->minor > minor))
        return FATBIN_FIT_NONE;
    int newer_or_same = major > im->major || (major == im->major && minor >= im->minor);
    return newer_or_same ? FATBIN_FIT_PTX : FATBIN_FIT_NONE;
}

enum fatbin_fit fatbin_fit(const struct fatbin_list *l, int major, int minor,
                           struct fatbin_image *which)
{
    enum fatbin_fit best = FATBIN_FIT_NONE;
    for (int i = 0; i < l->n; i++) {
        enum fatbin_fit f = fatbin_image_fit(&l->v[i], major, minor);
        if (f > best) {
            best = f;
            if (which)
                *which = l->v[i];
        }
    }
    return best;
}
