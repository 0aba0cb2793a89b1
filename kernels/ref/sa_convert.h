/* Number formats of the kernels, written out bit by bit so the C reference rounds exactly as the
 * GPU's conversion instructions do:
 *   fp16, bf16:  cvt.rn (round to nearest even; overflow to +-inf; NaN -> canonical 0x7fff)
 *   E4M3:        cvt.rn.satfinite (round to nearest even; +-inf and overflow clamp to +-448;
 *                NaN -> 0x7f)
 *   int8:        round to nearest even, clamped to +-127 (the kernels' Q/K quantization) */
#ifndef SA_CONVERT_H
#define SA_CONVERT_H

#include <stdint.h>

uint16_t sa_f32_to_f16(float x);
float sa_f16_to_f32(uint16_t h);
uint16_t sa_f32_to_bf16(float x);
float sa_bf16_to_f32(uint16_t h);
uint8_t sa_f32_to_e4m3(float x);
float sa_e4m3_to_f32(uint8_t e);
int8_t sa_f32_to_int8(float x);

/* x rounded to nearest even with `bits` mantissa bits kept (23 = unchanged): models a
 * reduced-precision accumulator such as the tensor cores' FP22 (13 bits). */
float sa_round_mantissa(float x, int bits);

#endif
