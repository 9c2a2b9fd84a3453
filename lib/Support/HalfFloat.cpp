//===- HalfFloat.cpp - float16 and bfloat16 conversions -------------------===//

#include "loom/Support/HalfFloat.h"
#include "loom/Runtime/BFloat16.h"

#include <cmath>
#include <cstring>

namespace loom {

namespace {
uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// `mantissa >> shift`, rounded to nearest with ties to even.
uint32_t shiftRightRounded(uint32_t mantissa, unsigned shift) {
  uint32_t kept = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (kept & 1)))
    ++kept;
  return kept;
}
} // namespace

uint16_t floatToHalfBits(float value) {
  uint32_t bits = bitsOf(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000) // NaN: keep the top payload bits, set quiet.
    return sign | 0x7e00 | static_cast<uint16_t>((magnitude >> 13) & 0x3ff);
  if (magnitude == 0x7f800000)
    return sign | 0x7c00;
  int exponent = static_cast<int>(magnitude >> 23) - 127;
  uint32_t mantissa = magnitude & 0x7fffff;
  if (exponent > 15)
    return sign | 0x7c00;
  if (exponent >= -14) {
    // Normal in f16. A carry out of the mantissa moves into the exponent,
    // and past the largest exponent into infinity (0x7c00): both correct.
    uint32_t half = (static_cast<uint32_t>(exponent + 15) << 10) |
                    (mantissa >> 13);
    uint32_t rest = mantissa & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
      ++half;
    return sign | static_cast<uint16_t>(half);
  }
  if (exponent >= -25) {
    // Subnormal in f16: value = m * 2^-24 with the implicit bit made explicit.
    uint32_t full = mantissa | 0x800000;
    unsigned shift = static_cast<unsigned>(-1 - exponent); // 14 .. 24
    return sign | static_cast<uint16_t>(shiftRightRounded(full, shift));
  }
  return sign; // Rounds to zero.
}

float halfBitsToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31)
    return floatOf(sign | 0x7f800000 | (mantissa << 13));
  return floatOf(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

// One bf16 rounding for the compiler and the generated programs (the
// runtime's header-only type; HalfFloatTest checks it against APFloat).
uint16_t floatToBFloat16Bits(float value) { return rt::bf16::round(value); }

float bfloat16BitsToFloat(uint16_t bits) {
  rt::bf16 value;
  value.bits = bits;
  return value;
}

} // namespace loom
