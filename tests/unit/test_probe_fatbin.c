#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "probe/fatbin.h"
#include "util/fs.h"

/* Builders for fixture bytes in the layout nvcc 13 writes (the flag values are those of real
 * entries: 0x11 plain, 0x100011 sm_90a, 0x1200011 sm_100f, 0x8011 compressed PTX). */
struct buf {
    unsigned char b[4096];
    size_t n;
};
static void put(struct buf *b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        b->b[b->n++] = (unsigned char)(v >> (8 * i));
}
static void entry(struct buf *b, int kind, int arch, uint64_t flags, uint32_t payload)
{
    put(b, (uint64_t)kind, 2);
    put(b, 0x101, 2);
    put(b, 64, 4);
    put(b, payload, 8);
    put(b, 0, 4);
    put(b, 0, 4);
    put(b, 8, 2);
    put(b, 1, 2);
    put(b, (uint64_t)arch, 4);
    put(b, 0, 4);
    put(b, 0, 4);
    put(b, flags, 8);
    put(b, 0, 8);
    put(b, 0, 8);
    for (uint32_t i = 0; i < payload; i++)
        b->b[b->n++] = 0xcc;
}
/* A fat binary header whose size field is filled in by end_fatbin. */
static size_t begin_fatbin(struct buf *b)
{
    size_t at = b->n;
    put(b, FATBIN_MAGIC, 4);
    put(b, 1, 2);
    put(b, 16, 2);
    put(b, 0, 8);
    return at;
}
static void end_fatbin(struct buf *b, size_t at)
{
    uint64_t size = b->n - at - 16;
    for (int i = 0; i < 8; i++)
        b->b[at + 8 + i] = (unsigned char)(size >> (8 * i));
}

static struct buf sample(void)
{
    struct buf b = {.n = 0};
    size_t f = begin_fatbin(&b);
    entry(&b, 2, 89, 0x11, 24);
    entry(&b, 2, 90, 0x100011, 8);
    entry(&b, 2, 100, 0x1200011, 0);
    end_fatbin(&b, f);
    f = begin_fatbin(&b);
    entry(&b, 1, 120, 0x8011, 16);
    entry(&b, 2, 89, 0x11, 8); /* the same arch again in another fat binary */
    end_fatbin(&b, f);
    put(&b, 0, 8); /* padding */
    return b;
}

static void reads_entries_of_every_fatbin(void **state)
{
    (void)state;
    struct buf b = sample();
    struct fatbin_list l;
    char *err = NULL;
    assert_int_equal(fatbin_parse(b.b, b.n, &l, &err), 0);
    assert_null(err);
    assert_int_equal(l.nfatbins, 2);
    assert_int_equal(l.n, 5);
    assert_int_equal(l.v[1].variant, 'a');
    assert_int_equal(l.v[2].variant, 'f');
    assert_int_equal(l.v[3].kind, FATBIN_PTX);
    assert_true(l.v[3].compressed);
    char *s = fatbin_archs(&l, FATBIN_SASS);
    assert_string_equal(s, "sm_89 sm_90a sm_100f");
    free(s);
    s = fatbin_archs(&l, FATBIN_PTX);
    assert_string_equal(s, "compute_120");
    free(s);
    fatbin_list_free(&l);
}

static void refuses_cut_or_foreign_bytes(void **state)
{
    (void)state;
    struct buf b = sample();
    struct fatbin_list l;
    char *err = NULL;
    /* Cut inside the second fat binary: the first's entries stay, with an error. */
    assert_int_equal(fatbin_parse(b.b, 16 + 64 * 3 + 32 + 40, &l, &err), -1);
    assert_non_null(err);
    assert_int_equal(l.n, 3);
    free(err);
    fatbin_list_free(&l);
    unsigned char junk[64];
    memset(junk, 0x41, sizeof junk);
    assert_int_equal(fatbin_parse(junk, sizeof junk, &l, &err), -1);
    assert_non_null(strstr(err, "magic"));
    free(err);
    fatbin_list_free(&l);
    assert_int_equal(fatbin_parse(junk, 0, &l, &err), -1);
    free(err);
    fatbin_list_free(&l);
    /* An entry claiming more bytes than there are. */
    struct buf c = {.n = 0};
    size_t f = begin_fatbin(&c);
    entry(&c, 2, 90, 0x11, 0);
    end_fatbin(&c, f);
    c.b[16 + 8] = 0xff; /* payload size */
    assert_int_equal(fatbin_parse(c.b, c.n, &l, &err), -1);
    assert_int_equal(l.n, 0);
    free(err);
    fatbin_list_free(&l);
}

static void which_images_run_on_which_gpus(void **state)
{
    (void)state;
    struct fatbin_image sass89 = {FATBIN_SASS, 8, 9, 0, 0}, sass80 = {FATBIN_SASS, 8, 0, 0, 0};
    struct fatbin_image sass90a = {FATBIN_SASS, 9, 0, 'a', 0};
    struct fatbin_image sass120f = {FATBIN_SASS, 12, 0, 'f', 0};
    struct fatbin_image ptx80 = {FATBIN_PTX, 8, 0, 0, 0}, ptx90a = {FATBIN_PTX, 9, 0, 'a', 0};
    /* SASS: same major, minor not above the GPU's */
    assert_int_equal(fatbin_image_fit(&sass89, 12, 0), FATBIN_FIT_NONE); /* 4090 code, 5090 */
    assert_int_equal(fatbin_image_fit(&sass89, 8, 9), FATBIN_FIT_SASS);
    assert_int_equal(fatbin_image_fit(&sass80, 8, 6), FATBIN_FIT_SASS);
    assert_int_equal(fatbin_image_fit(&sass89, 8, 6), FATBIN_FIT_NONE);
    assert_int_equal(fatbin_image_fit(&sass90a, 9, 0), FATBIN_FIT_SASS);
    assert_int_equal(fatbin_image_fit(&sass90a, 10, 0), FATBIN_FIT_NONE);
    assert_int_equal(fatbin_image_fit(&sass120f, 12, 1), FATBIN_FIT_SASS);
    assert_int_equal(fatbin_image_fit(&sass120f, 10, 0), FATBIN_FIT_NONE);
    /* PTX: JIT for the same arch and newer ones; an 'a' PTX only for its arch */
    assert_int_equal(fatbin_image_fit(&ptx80, 12, 0), FATBIN_FIT_PTX);
    assert_int_equal(fatbin_image_fit(&ptx80, 7, 5), FATBIN_FIT_NONE);
    assert_int_equal(fatbin_image_fit(&ptx90a, 12, 0), FATBIN_FIT_NONE);
    assert_int_equal(fatbin_image_fit(&ptx90a, 9, 0), FATBIN_FIT_PTX);

    struct fatbin_image v[] = {sass89, ptx80};
    struct fatbin_list l = {v, 2, 1};
    struct fatbin_image which;
    assert_int_equal(fatbin_fit(&l, 8, 9, &which), FATBIN_FIT_SASS);
    assert_int_equal(which.minor, 9);
    assert_int_equal(fatbin_fit(&l, 12, 0, &which), FATBIN_FIT_PTX);
    assert_int_equal(which.kind, FATBIN_PTX);
    l.n = 1;
    assert_int_equal(fatbin_fit(&l, 12, 0, NULL), FATBIN_FIT_NONE);
    char name[32];
    assert_string_equal(fatbin_image_name(&ptx90a, name, sizeof name), "compute_90a");
}

/* A minimal ELF64 with a section table: [0] null, [1] .nv_fatbin, [2] .shstrtab. */
static size_t make_elf(unsigned char *out, const unsigned char *section, size_t len,
                       const char *name)
{
    char strtab[64] = {0};
    size_t name_len = strlen(name);
    memcpy(strtab + 1, name, name_len);
    memcpy(strtab + 1 + name_len + 1, ".shstrtab", 10);
    size_t strtab_len = 1 + name_len + 1 + 10;
    memset(out, 0, 64);
    memcpy(out, "\177ELF\2\1\1", 7);
    size_t sec_off = 64, str_off = sec_off + len, sh_off = (str_off + strtab_len + 7) / 8 * 8;
    memcpy(out + sec_off, section, len);
    memcpy(out + str_off, strtab, strtab_len);
    struct buf h = {.n = 0};
    put(&h, sh_off, 8);
    memcpy(out + 0x28, h.b, 8);
    out[0x3a] = 64;
    out[0x3c] = 3;
    out[0x3e] = 2;
    unsigned char *sh = out + sh_off;
    memset(sh, 0, 3 * 64);
    struct buf s1 = {.n = 0};
    put(&s1, 1, 4);
    put(&s1, 1, 4);
    put(&s1, 2, 8);
    put(&s1, 0, 8);
    put(&s1, sec_off, 8);
    put(&s1, len, 8);
    memcpy(sh + 64, s1.b, s1.n);
    struct buf s2 = {.n = 0};
    put(&s2, 1 + name_len + 1, 4);
    put(&s2, 3, 4);
    put(&s2, 0, 8);
    put(&s2, 0, 8);
    put(&s2, str_off, 8);
    put(&s2, strtab_len, 8);
    memcpy(sh + 128, s2.b, s2.n);
    return sh_off + 3 * 64;
}

static void finds_the_section_in_an_elf(void **state)
{
    (void)state;
    struct buf b = sample();
    static unsigned char elf[8192];
    size_t n = make_elf(elf, b.b, b.n, ".nv_fatbin");
    struct fatbin_list l;
    char *err = NULL;
    assert_int_equal(fatbin_from_elf(elf, n, &l, &err), 0);
    assert_null(err);
    assert_int_equal(l.n, 5);
    fatbin_list_free(&l);
    /* No such section: no GPU code, not an error. */
    n = make_elf(elf, b.b, b.n, ".rodata");
    assert_int_equal(fatbin_from_elf(elf, n, &l, &err), 0);
    assert_int_equal(l.n, 0);
    fatbin_list_free(&l);
    /* A section table past the end of the file. */
    n = make_elf(elf, b.b, b.n, ".nv_fatbin");
    assert_int_equal(fatbin_from_elf(elf, n - 100, &l, &err), -1);
    free(err);
    fatbin_list_free(&l);
    assert_int_equal(fatbin_from_elf((const unsigned char *)"#!/bin/sh\n", 10, &l, &err), -1);
    assert_string_equal(err, "not an ELF file");
    free(err);
    elf[4] = 1; /* 32-bit */
    assert_int_equal(fatbin_from_elf(elf, 4096, &l, &err), -1);
    free(err);
}

/* The real thing: a .nv_fatbin that nvcc 13.0 wrote for -gencode sm_100a, sm_120a, compute_90a
 * (PTX), compute_120f (PTX) and sm_86, kept as an ELF by objcopy --only-section=.nv_fatbin. */
static void reads_what_nvcc_wrote(void **state)
{
    (void)state;
    size_t len = 0;
    char *data =
        fs_read_file("tests/fuzz/corpus/fuzz_fatbin/nvcc13-sass-ptx-variants.elf", 1 << 20, &len);
    if (!data) {
        skip(); /* run from the repository root (make unit-test does) */
    }
    struct fatbin_list l;
    char *err = NULL;
    assert_int_equal(fatbin_from_elf((const unsigned char *)data, len, &l, &err), 0);
    char *sass = fatbin_archs(&l, FATBIN_SASS), *ptx = fatbin_archs(&l, FATBIN_PTX);
    assert_string_equal(sass, "sm_86 sm_100a sm_120a");
    assert_string_equal(ptx, "compute_90a compute_120f");
    assert_int_equal(fatbin_fit(&l, 12, 0, NULL), FATBIN_FIT_SASS);
    assert_int_equal(fatbin_fit(&l, 8, 9, NULL), FATBIN_FIT_SASS); /* sm_86 runs on 8.9 */
    assert_int_equal(fatbin_fit(&l, 12, 1, NULL), FATBIN_FIT_PTX); /* compute_120f */
    assert_int_equal(fatbin_fit(&l, 9, 0, NULL), FATBIN_FIT_PTX);  /* compute_90a */
    assert_int_equal(fatbin_fit(&l, 10, 3, NULL), FATBIN_FIT_NONE);
    free(sass);
    free(ptx);
    fatbin_list_free(&l);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_entries_of_every_fatbin),
        cmocka_unit_test(refuses_cut_or_foreign_bytes),
        cmocka_unit_test(which_images_run_on_which_gpus),
        cmocka_unit_test(finds_the_section_in_an_elf),
        cmocka_unit_test(reads_what_nvcc_wrote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
