//===- VecMath.h - Vectorisable float transcendentals ------------*- C++ -*-===//
//
// exp, tanh, erf, log and rsqrt on float, written branch-free (selects,
// integer bit operations and polynomials only) so that a loop calling them
// vectorises: the emitted elementwise kernels (GELU, SiLU, ...) and the
// runtime's softmax and cross-entropy use these instead of libm's scalar
// calls. Header-only and inline for that reason.
//
// Results are deterministic: the same input gives the same bits on any
// number of threads, vectorised or not (the programs are built with ISO C++
// flags, so no multiply-add is fused behind our back).
//
// Accuracy, measured against libm in double over a dense sweep of the float
// range (test/Unit/VecMathTest.cpp checks these bounds; units in the last
// place of the correctly rounded float result):
//
//   exp    <= 2 ulp          (overflow to inf above 88.7228, 0 below -103.97)
//   tanh   <= 2 ulp
//   erf    <= 2 ulp
//   log    <= 1.5 ulp        (NaN below 0, -inf at 0, subnormals handled)
//   rsqrt  <= 1.5 ulp        (1 / sqrt: two correctly rounded operations)
//
// NaN in gives NaN out for all of them; infinities give the limits.
//
// The polynomial coefficients are least-squares Chebyshev fits computed for
// this file (with mpmath; the fitting script is not kept); exp uses its Taylor
// series after a Cody-Waite reduction by ln 2, log the atanh series of
// (m - 1) / (m + 1).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_VECMATH_H
#define LOOM_RUNTIME_VECMATH_H

#include <cmath>
#include <cstdint>

namespace loom {
namespace rt {
namespace vm {

namespace detail {

inline int32_t bits(float x) { return __builtin_bit_cast(int32_t, x); }
inline float fromBits(int32_t b) { return __builtin_bit_cast(float, b); }
/// |x|.
inline float absf(float x) { return fromBits(bits(x) & 0x7fffffff); }
/// |magnitude| with the sign of `sign`.
inline float withSign(float magnitude, float sign) {
  return fromBits((bits(magnitude) & 0x7fffffff) |
                  (bits(sign) & static_cast<int32_t>(0x80000000u)));
}

} // namespace detail

/// e^x.
inline float exp(float x) {
  using namespace detail;
  // Clamp (NaN goes to the low end here and is restored at the end) so the
  // exponent arithmetic stays in range; 89 overflows to inf and -104
  // underflows to 0 by the computation itself.
  float c = x > -104.0f ? x : -104.0f;
  c = c < 89.0f ? c : 89.0f;
  // n = round(c / ln 2) by the 1.5 * 2^23 trick (round to nearest even).
  const float shifter = 12582912.0f;
  float t = c * 1.44269504088896341f + shifter;
  float n = t - shifter;
  // r = c - n ln 2 in two steps: n * ln2Hi is exact (n has at most 8
  // significant bits, ln2Hi 15), so |r| <= ln2/2 carries ~2^-32 error.
  float r = c - n * 0.693145751953125f;
  r = r - n * 1.42860682030941723e-6f;
  // e^r by its Taylor series to r^7 (truncation < 6e-9 relative).
  float p = 1.98412698412698413e-4f;
  p = p * r + 1.38888888888888889e-3f;
  p = p * r + 8.33333333333333333e-3f;
  p = p * r + 4.16666666666666667e-2f;
  p = p * r + 1.66666666666666667e-1f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // p * 2^n as two factors 2^(n/2) so subnormal results and n = 128 work.
  int32_t k = static_cast<int32_t>(n);
  int32_t k1 = k >> 1, k2 = k - k1;
  float result = p * fromBits((k1 + 127) << 23) * fromBits((k2 + 127) << 23);
  return x != x ? x : result;
}

/// tanh(x).
inline float tanh(float x) {
  using namespace detail;
  float a = absf(x);
  // Small |x|: x + x^3 P(x^2), P fitted on [0, 0.625^2].
  float z = x * x;
  float p = 0.00229274482f;
  p = p * z - 0.00834394526f;
  p = p * z + 0.0217689183f;
  p = p * z - 0.0539592579f;
  p = p * z + 0.133333042f;
  p = p * z - 0.333333343f;
  float small = x + x * z * p;
  // Otherwise 1 - 2 / (e^(2|x|) + 1) (>= 0.55, so no cancellation); e = inf
  // gives 1.
  float e = vm::exp(a + a);
  float large = withSign(1.0f - 2.0f / (e + 1.0f), x);
  return a < 0.625f ? small : large;
}

/// erf(x).
inline float erf(float x) {
  using namespace detail;
  float a = absf(x);
  // Small |x|: x + x Q(x^2), Q(z) = erf(x)/x - 1 fitted on [0, 1] (x is
  // exact, the correction is < 0.16 x).
  float z = x * x;
  float q = -9.66704465e-06f;
  q = q * z + 0.000112659589f;
  q = q * z - 0.000848408032f;
  q = q * z + 0.00522103161f;
  q = q * z - 0.0268654302f;
  q = q * z + 0.112837821f;
  q = q * z - 0.376126379f;
  q = q * z + 0.128379166f;
  float small = x + x * q;
  // Otherwise 1 - e^(-x^2) R(1/|x|), R(u) = erfc(1/u) e^(1/u^2) fitted in
  // v = u - 0.625 on u in [0.25, 1]; erf rounds to 1 from |x| = 3.92 on, so
  // |x| is capped at 4 (which also makes inf and NaN harmless here).
  float b = a < 4.0f ? a : 4.0f;
  float v = 1.0f / b - 0.625f;
  float r = -0.0328922085f;
  r = r * v + 0.0260340143f;
  r = r * v + 0.00445590075f;
  r = r * v - 0.0269273445f;
  r = r * v + 0.0432424061f;
  r = r * v - 0.0469422974f;
  r = r * v + 0.0233294535f;
  r = r * v + 0.0437669121f;
  r = r * v - 0.172394753f;
  r = r * v + 0.382283777f;
  r = r * v + 0.305952996f;
  float large = withSign(1.0f - vm::exp(-(b * b)) * r, x);
  float result = a < 1.0f ? small : large;
  return x != x ? x : result;
}

/// log(x) (natural).
inline float log(float x) {
  using namespace detail;
  // Subnormals: scale by 2^23 first.
  bool tiny = x < 1.17549435e-38f;
  float s = tiny ? x * 8388608.0f : x;
  int32_t b = bits(s);
  int32_t e = ((b >> 23) & 0xff) - 127 - (tiny ? 23 : 0);
  // s = m 2^e, m in [1, 2), then in [sqrt(1/2), sqrt(2)).
  float m = fromBits((b & 0x007fffff) | 0x3f800000);
  bool high = m > 1.41421356f;
  m = high ? m * 0.5f : m;
  e = high ? e + 1 : e;
  // log m = log(1 + f), f = m - 1 exact, |f| < 0.415: with s = f / (2 + f),
  // log(1 + f) = 2 atanh(s) = f - (f^2/2 - s (f^2/2 + R(s^2))), R the atanh
  // series 2s^2/3 + 2s^4/5 + ... to s^10 (truncation < 7e-9 relative); f
  // carries the leading bits exactly.
  float f = m - 1.0f;
  float s2 = f / (2.0f + f);
  float w = s2 * s2;
  float r = 0.222222222f;
  r = r * w + 0.285714286f;
  r = r * w + 0.4f;
  r = r * w + 0.666666667f;
  r = r * w;
  float hf = 0.5f * f * f;
  // + e ln 2, with e * ln2Hi exact.
  float ef = static_cast<float>(e);
  float result = ef * 0.693145751953125f +
                 (f - (hf - (s2 * (hf + r) + ef * 1.42860682030941723e-6f)));
  result = x == 0.0f ? -__builtin_huge_valf() : result;
  result = x < 0.0f ? __builtin_nanf("") : result;
  result = x == __builtin_huge_valf() ? x : result;
  return x != x ? x : result;
}

/// 1 / sqrt(x) (sqrt and division vectorise as they are).
inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }

} // namespace vm
} // namespace rt
} // namespace loom

#endif // LOOM_RUNTIME_VECMATH_H
