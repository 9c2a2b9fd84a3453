//===- HalfFloat.h - float16 and bfloat16 conversions -----------*- C++ -*-===//
//
// Conversions between float and the bit patterns of IEEE binary16 (f16) and
// bfloat16 (bf16). float -> 16 bits rounds to nearest, ties to even;
// overflow gives infinity; NaN stays a (quiet) NaN. 16 bits -> float is
// exact. Dependency-free (standard C++ only) so that the runtime can use it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_HALFFLOAT_H
#define LOOM_SUPPORT_HALFFLOAT_H

#include <cstdint>

namespace loom {

uint16_t floatToHalfBits(float value);
float halfBitsToFloat(uint16_t bits);

uint16_t floatToBFloat16Bits(float value);
float bfloat16BitsToFloat(uint16_t bits);

/// `value` rounded to the nearest f16 / bf16, as a float.
inline float roundToHalf(float value) {
  return halfBitsToFloat(floatToHalfBits(value));
}
inline float roundToBFloat16(float value) {
  return bfloat16BitsToFloat(floatToBFloat16Bits(value));
}

} // namespace loom

#endif // LOOM_SUPPORT_HALFFLOAT_H
