//===- BFloat16.h - The bf16 element type of generated programs -*- C++ -*-===//
//
// bf16 is the top half of an IEEE f32: same exponent range, 8 bits of
// significand. Generated code (CPU, CUDA and emulated CUDA) stores bf16
// buffers as loom::rt::bf16 and computes in float: a load widens exactly,
// a store rounds to nearest, ties to even (as CUDA's __float2bfloat16_rn
// and PyTorch's float->bfloat16 do), and NaN stays a quiet NaN.
//
// Generated loops hold bf16 values as floats (exactly) and read and write
// the buffers' `bits` through toFloat and round: a loop that copies the
// struct itself is not vectorised by GCC (an aggregate copy per element;
// 7x slower for a GELU over bf16 buffers).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_BFLOAT16_H
#define LOOM_RUNTIME_BFLOAT16_H

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__) // emulated CUDA is host code
#define LOOM_BF16_HD __host__ __device__
#else
#define LOOM_BF16_HD
#endif

namespace loom {
namespace rt {

struct bf16 {
  uint16_t bits = 0;

  bf16() = default;
  /// Rounds to nearest, ties to even.
  LOOM_BF16_HD bf16(float value) : bits(round(value)) {}
  LOOM_BF16_HD operator float() const { return toFloat(bits); }

  /// The float whose top half is `bits` (exact).
  static LOOM_BF16_HD float toFloat(uint16_t bits) {
    return fromWord(static_cast<uint32_t>(bits) << 16);
  }
  /// `value` rounded to the nearest bf16, as a float (exact): the one
  /// rounding (round takes its top half). The bits stay in place and NaN
  /// is found by a float compare: few vector operations per element in the
  /// generated loops, which round every bf16 op's result.
  static LOOM_BF16_HD float roundToFloat(float value) {
    const uint32_t u = word(value);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    const uint32_t quiet = (u | 0x00400000u) & 0xffff0000u;
    return fromWord(value != value ? quiet : rounded);
  }

  /// The bits of `exact`, a float that is already a bf16 value (its low
  /// half zero: a loaded bf16, or roundToFloat's result): its top half,
  /// which is what round gives for it, without rounding again (the
  /// generated loops store every bf16 result this way).
  static LOOM_BF16_HD uint16_t bitsOf(float exact) {
    return static_cast<uint16_t>(word(exact) >> 16);
  }

  /// The bits of `value` rounded to the nearest bf16 (ties to even; a NaN
  /// keeps its sign and is made quiet).
  static LOOM_BF16_HD uint16_t round(float value) {
    return bitsOf(roundToFloat(value));
  }

private:
  /// A float's 32 bits, and the float of 32 bits.
  static LOOM_BF16_HD uint32_t word(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
  }
  static LOOM_BF16_HD float fromWord(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
};

static_assert(sizeof(bf16) == 2, "bf16 buffers are two bytes per element");

} // namespace rt
} // namespace loom

#endif // LOOM_RUNTIME_BFLOAT16_H
