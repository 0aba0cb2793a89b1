#include "sa_convert.h"

#include <math.h>
#include <string.h>

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float bits_f32(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* value >> shift rounded to nearest, ties to even (shift >= 1). */
static uint32_t shift_rne(uint32_t value, int shift)
{
    if (shift >= 32)
        return 0;
    uint32_t q = value >> shift;
    uint32_t rem = value & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return q;
}

uint16_t sa_f32_to_f16(float x)
{
    uint32_t u = f32_bits(x);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t ax = u & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return 0x7fff;
    if (ax >= 0x477ff000u) /* 65520 = 65504 + half an ulp and above: ties go to even = inf */
        return sign | 0x7c00u;
    uint32_t exp = ax >> 23;
    uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
    if (exp < 113) { /* below 2^-14: an fp16 subnormal, in units of 2^-24 */
        if (exp == 0)
            return sign; /* fp32 subnormals are far below half the smallest fp16 subnormal */
        return sign | (uint16_t)shift_rne(mant, (int)(126 - exp));
    }
    /* Normal: a mantissa carry correctly bumps the exponent. */
    uint32_t q = ((exp - 112) << 10) + shift_rne(ax & 0x7fffffu, 13);
    return sign | (uint16_t)q;
}

float sa_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f)
        return bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        float v = ldexpf((float)mant, -24);
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t sa_f32_to_bf16(float x)
{
    uint32_t u = f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fff;
    /* Adding 0x7fff plus the kept lsb rounds to nearest even; a carry out of the largest
     * finite value lands exactly on inf, as the hardware does. */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float sa_bf16_to_f32(uint16_t h)
{
    return bits_f32((uint32_t)h << 16);
}

uint8_t sa_f32_to_e4m3(float x)
{
    uint32_t u = f32_bits(x);
    uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
    uint32_t ax = u & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return 0x7f;
    if (ax >= 0x43e00000u) /* >= 448 (and inf): saturate to the largest finite value */
        return sign | 0x7eu;
    uint32_t exp = ax >> 23;
    if (exp < 121) { /* below 2^-6: subnormal, in units of 2^-9 */
        if (exp == 0)
            return sign;
        return sign | (uint8_t)shift_rne((ax & 0x7fffffu) | 0x800000u, (int)(141 - exp));
    }
    uint32_t q = ((exp - 120) << 3) + shift_rne(ax & 0x7fffffu, 20);
    if (q > 0x7eu) /* (448, 464) would round past 448: satfinite clamps */
        q = 0x7eu;
    return sign | (uint8_t)q;
}

float sa_e4m3_to_f32(uint8_t e)
{
    uint32_t exp = (e >> 3) & 0xfu;
    uint32_t mant = e & 7u;
    float v;
    if (exp == 0xf && mant == 7)
        return NAN;
    if (exp == 0)
        v = ldexpf((float)mant, -9);
    else
        v = ldexpf((float)(8u + mant), (int)exp - 10);
    return (e & 0x80u) ? -v : v;
}

int8_t sa_f32_to_int8(float x)
{
    if (!(x == x))
        return 0;
    if (x >= 127.0f)
        return 127;
    if (x <= -127.0f)
        return -127;
    /* nearbyintf rounds half to even in the default rounding mode. */
    return (int8_t)nearbyintf(x);
}

float sa_round_mantissa(float x, int bits)
{
    if (bits >= 23 || !isfinite(x))
        return x;
    uint32_t u = f32_bits(x);
    int drop = 23 - bits;
    uint32_t half = 1u << (drop - 1);
    uint32_t lsb = (u >> drop) & 1u;
    u += half - 1u + lsb;
    u &= ~((1u << drop) - 1u);
    return bits_f32(u);
}
