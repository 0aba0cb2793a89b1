/* Exhaustive checks of the reference's number formats (fp16, bf16, E4M3, int8) against an
 * independent oracle: the nearest value in the sorted table of every finite value of the
 * format, ties to the even bit pattern, with each format's overflow rule. Every value of each
 * format, every midpoint between neighbours and the floats one ulp either side of it are
 * tested, plus a sweep over all float bit patterns; fp16 is also compared with the compiler's
 * _Float16 where it has one. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sa_check.h"
#include "sa_convert.h"

struct format {
    const char *name;
    int bits;                  /* 16 or 8 */
    unsigned sign_mask;        /* 0x8000 or 0x80 */
    float (*decode)(unsigned); /* bit pattern -> value */
    unsigned (*encode)(float); /* value -> bit pattern (the code under test) */
    int saturates;             /* overflow clamps to max finite (E4M3 satfinite) */
    unsigned inf_bits;         /* +inf pattern when not saturating */
};

static float dec_f16(unsigned h)
{
    return sa_f16_to_f32((uint16_t)h);
}
static unsigned enc_f16(float x)
{
    return sa_f32_to_f16(x);
}
static float dec_bf16(unsigned h)
{
    return sa_bf16_to_f32((uint16_t)h);
}
static unsigned enc_bf16(float x)
{
    return sa_f32_to_bf16(x);
}
static float dec_e4m3(unsigned e)
{
    return sa_e4m3_to_f32((uint8_t)e);
}
static unsigned enc_e4m3(float x)
{
    return sa_f32_to_e4m3(x);
}

static const struct format formats[] = {
    {"fp16", 16, 0x8000u, dec_f16, enc_f16, 0, 0x7c00u},
    {"bf16", 16, 0x8000u, dec_bf16, enc_bf16, 0, 0x7f80u},
    {"e4m3", 8, 0x80u, dec_e4m3, enc_e4m3, 1, 0},
};

/* The positive finite values of a format, ascending, with their bit patterns. */
struct table {
    double *value;
    unsigned *pattern;
    int n;
};

static int is_nan_pattern(const struct format *f, unsigned pat)
{
    return isnan(f->decode(pat));
}

static struct table build_table(const struct format *f)
{
    struct table t = {0};
    unsigned count = 1u << (f->bits - 1);
    t.value = malloc(sizeof(double) * count);
    t.pattern = malloc(sizeof(unsigned) * count);
    for (unsigned pat = 0; pat < count; pat++) {
        double v = f->decode(pat);
        if (isnan(v) || isinf(v))
            continue;
        /* Positive patterns are ordered like their values: check it while building. */
        if (t.n > 0)
            CHECK(v > t.value[t.n - 1], "%s: pattern %#x not above its predecessor", f->name, pat);
        t.value[t.n] = v;
        t.pattern[t.n] = pat;
        t.n++;
    }
    return t;
}

/* The oracle: round |x| to the table, ties to the even pattern, with the overflow rule. */
static unsigned oracle(const struct format *f, const struct table *t, double x)
{
    unsigned sign = signbit(x) ? f->sign_mask : 0u;
    double ax = fabs(x);
    double max = t->value[t->n - 1];
    double half_ulp_max = (max - t->value[t->n - 2]) / 2.0;
    if (f->saturates && ax >= max)
        return sign | t->pattern[t->n - 1];
    if (!f->saturates && ax >= max + half_ulp_max)
        return sign | f->inf_bits;
    int lo = 0, hi = t->n - 1;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (t->value[mid] <= ax)
            lo = mid;
        else
            hi = mid;
    }
    if (ax >= max)
        return sign | t->pattern[t->n - 1];
    double dlo = ax - t->value[lo], dhi = t->value[hi] - ax;
    unsigned pick;
    if (dlo < dhi)
        pick = t->pattern[lo];
    else if (dhi < dlo)
        pick = t->pattern[hi];
    else
        pick = (t->pattern[lo] & 1u) ? t->pattern[hi] : t->pattern[lo];
    return sign | pick;
}

static void check_value(const struct format *f, const struct table *t, float x)
{
    unsigned got = f->encode(x), want = oracle(f, t, x);
    CHECK(got == want, "%s(%a) = %#x, want %#x", f->name, (double)x, got, want);
}

static void check_format(const struct format *f)
{
    struct table t = build_table(f);
    CHECK(t.n > 100, "%s: only %d finite values", f->name, t.n);
    unsigned all = 1u << f->bits;
    /* Every pattern: decode then encode gives it back (NaNs: a NaN comes back). */
    for (unsigned pat = 0; pat < all; pat++) {
        float v = f->decode(pat);
        if (is_nan_pattern(f, pat)) {
            CHECK(is_nan_pattern(f, f->encode(v)), "%s: NaN %#x did not stay NaN", f->name, pat);
            continue;
        }
        if (f->saturates || !isinf(v))
            CHECK(f->encode(v) == pat, "%s: %#x -> %a -> %#x", f->name, pat, (double)v,
                  f->encode(v));
    }
    /* Every midpoint between neighbours (exact in float: these formats have <= 11 significant
     * bits), and the floats just below and above it; both signs. */
    for (int i = 0; i + 1 < t.n; i++) {
        float mid = (float)((t.value[i] + t.value[i + 1]) / 2.0);
        CHECK((double)mid == (t.value[i] + t.value[i + 1]) / 2.0, "%s: midpoint inexact", f->name);
        float probes[3] = {nextafterf(mid, 0.0f), mid, nextafterf(mid, INFINITY)};
        for (int k = 0; k < 3; k++) {
            check_value(f, &t, probes[k]);
            check_value(f, &t, -probes[k]);
        }
    }
    /* Around the top: the overflow/saturation boundary, and infinities. */
    double max = t.value[t.n - 1], step = max - t.value[t.n - 2];
    for (int k = -4; k <= 8; k++) {
        float x = (float)(max + k * step / 4.0);
        check_value(f, &t, x);
        check_value(f, &t, -x);
        check_value(f, &t, nextafterf(x, INFINITY));
    }
    check_value(f, &t, INFINITY);
    check_value(f, &t, -INFINITY);
    check_value(f, &t, FLT_MAX);
    check_value(f, &t, FLT_TRUE_MIN);
    check_value(f, &t, -FLT_TRUE_MIN);
    CHECK(is_nan_pattern(f, f->encode(NAN)), "%s: NaN not kept", f->name);
    /* A sweep over the float bit patterns (a prime stride reaches every exponent and many
     * mantissas). */
    for (uint64_t u = 0; u < (1ull << 32); u += 65521) {
        uint32_t bits = (uint32_t)u;
        float x;
        memcpy(&x, &bits, sizeof x);
        if (!isnan(x))
            check_value(f, &t, x);
    }
    free(t.value);
    free(t.pattern);
}

#ifdef __FLT16_MAX__
/* The compiler's own float -> _Float16 conversion (round to nearest even) over every 127th
 * float bit pattern: an oracle written by someone else. */
static void check_fp16_against_compiler(void)
{
    long mismatches = 0;
    for (uint64_t u = 0; u < (1ull << 32); u += 127) {
        uint32_t bits = (uint32_t)u;
        float x;
        memcpy(&x, &bits, sizeof x);
        if (isnan(x))
            continue;
        _Float16 h = (_Float16)x;
        uint16_t want;
        memcpy(&want, &h, sizeof want);
        if (sa_f32_to_f16(x) != want && mismatches++ < 5)
            fprintf(stderr, "fp16(%a): %#x, compiler %#x\n", (double)x, sa_f32_to_f16(x), want);
    }
    CHECK(mismatches == 0, "%ld float->fp16 conversions differ from _Float16", mismatches);
    for (unsigned pat = 0; pat < 65536; pat++) {
        uint16_t p16 = (uint16_t)pat;
        _Float16 h;
        memcpy(&h, &p16, sizeof h);
        float want = (float)h, got = sa_f16_to_f32(p16);
        CHECK((isnan(want) && isnan(got)) || memcmp(&want, &got, sizeof got) == 0,
              "fp16 %#x decodes to %a, compiler %a", pat, (double)got, (double)want);
    }
}
#endif

static void check_known_values(void)
{
    CHECK(sa_f32_to_f16(1.0f) == 0x3c00, "fp16(1)");
    CHECK(sa_f32_to_f16(65504.0f) == 0x7bff, "fp16(65504)");
    CHECK(sa_f32_to_f16(65519.0f) == 0x7bff, "fp16(65519)");
    CHECK(sa_f32_to_f16(65520.0f) == 0x7c00, "fp16(65520) overflows");
    CHECK(sa_f32_to_f16(5.9604645e-8f) == 0x0001, "fp16 smallest subnormal");
    CHECK(sa_f32_to_f16(2.9802322e-8f) == 0x0000, "fp16: half the smallest subnormal ties to 0");
    CHECK(sa_f32_to_bf16(1.0f) == 0x3f80, "bf16(1)");
    CHECK(sa_f32_to_bf16(3.3895314e38f) == 0x7f7f, "bf16 max");
    CHECK(sa_f32_to_bf16(FLT_MAX) == 0x7f80, "bf16(FLT_MAX) overflows to inf");
    CHECK(sa_f32_to_e4m3(448.0f) == 0x7e, "e4m3(448)");
    CHECK(sa_f32_to_e4m3(1000.0f) == 0x7e, "e4m3 saturates");
    CHECK(sa_f32_to_e4m3(-INFINITY) == 0xfe, "e4m3(-inf) saturates");
    CHECK(sa_f32_to_e4m3(1.0f) == 0x38, "e4m3(1)");
    CHECK(sa_e4m3_to_f32(0x01) == 0x1p-9f, "e4m3 smallest subnormal");
    CHECK(sa_f32_to_int8(2.5f) == 2 && sa_f32_to_int8(3.5f) == 4 && sa_f32_to_int8(-2.5f) == -2,
          "int8 rounds half to even");
    CHECK(sa_f32_to_int8(127.4f) == 127 && sa_f32_to_int8(-300.0f) == -127, "int8 clamps to 127");
    CHECK(sa_round_mantissa(1.0f + 0x1p-20f, 13) == 1.0f, "FP22 drops bit 20");
    CHECK(sa_round_mantissa(1.0f + 0x1p-13f, 13) == 1.0f + 0x1p-13f, "FP22 keeps bit 13");
    CHECK(sa_round_mantissa(1.0f + 0x1p-14f, 13) == 1.0f, "FP22 tie to even (down)");
    CHECK(sa_round_mantissa(1.0f + 0x3p-14f, 13) == 1.0f + 0x1p-12f, "FP22 tie to even (up)");
}

int main(void)
{
    check_known_values();
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        check_format(&formats[i]);
#ifdef __FLT16_MAX__
    check_fp16_against_compiler();
#else
    printf("test_sa_convert: no _Float16 in this compiler; compiler cross-check skipped\n");
#endif
    return sa_check_report("test_sa_convert");
}
