//===- HalfFloatTest.cpp - f16/bf16 conversions against APFloat -----------===//

#include "loom/Support/HalfFloat.h"

#include "llvm/ADT/APFloat.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace loom;

namespace {

float floatOf(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// `value` rounded to `semantics` by APFloat (to nearest, ties to even).
uint16_t apfloatBits(float value, const llvm::fltSemantics &semantics) {
  llvm::APFloat f(value);
  bool lost;
  f.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}

/// Floats worth checking: every exponent with edge and random mantissas,
/// plus random bit patterns.
std::vector<float> sampleFloats() {
  std::vector<float> values;
  std::mt19937 rng(1);
  auto random = [&] { return static_cast<uint32_t>(rng()); };
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t exponent = 0; exponent < 255; ++exponent)
      for (uint32_t mantissa :
           {0u, 1u, 0x1000u, 0x1001u, 0x0fffu, 0x2000u, 0x3000u, 0x7fffu,
            0x8000u, 0x8001u, 0x18000u, 0x7fffffu, random() & 0x7fffffu,
            random() & 0x7fffffu})
        values.push_back(floatOf(sign << 31 | exponent << 23 | mantissa));
  for (int i = 0; i < 200000; ++i)
    values.push_back(floatOf(random()));
  return values;
}

} // namespace

TEST(HalfFloatTest, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float f = halfBitsToFloat(static_cast<uint16_t>(bits));
    llvm::APFloat reference(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
    if (reference.isNaN()) {
      EXPECT_TRUE(std::isnan(f)) << bits;
      EXPECT_EQ(floatToHalfBits(f) & 0x7e00, 0x7e00) << bits; // quiet NaN
      continue;
    }
    EXPECT_EQ(f, reference.convertToFloat()) << bits;
    EXPECT_EQ(floatToHalfBits(f), bits) << bits;
  }
}

TEST(HalfFloatTest, FloatToHalfMatchesAPFloat) {
  for (float value : sampleFloats()) {
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(value))));
      continue;
    }
    ASSERT_EQ(floatToHalfBits(value), apfloatBits(value, llvm::APFloat::IEEEhalf()))
        << value;
  }
}

TEST(HalfFloatTest, FloatToBFloat16MatchesAPFloat) {
  for (float value : sampleFloats()) {
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(bfloat16BitsToFloat(floatToBFloat16Bits(value))));
      continue;
    }
    ASSERT_EQ(floatToBFloat16Bits(value), apfloatBits(value, llvm::APFloat::BFloat()))
        << value;
  }
}

TEST(HalfFloatTest, KnownValues) {
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7c00); // rounds up to inf
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -25)), 0x0000); // tie to even: 0
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(floatToBFloat16Bits(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16Bits(1.00390625f), 0x3f80); // tie to even
  EXPECT_EQ(floatToBFloat16Bits(1.01171875f), 0x3f82); // tie to even (up)
  EXPECT_TRUE(std::isfinite(roundToBFloat16(3.38e38f))); // below the largest bf16
  EXPECT_EQ(roundToBFloat16(3.4e38f), INFINITY);      // above its rounding limit
}
