//===- VecMathTest.cpp - loom/Runtime/VecMath.h against libm --------------===//
//
// Each function over a dense sweep of the float range (every 97th bit
// pattern, both signs, ~44 million inputs, plus every float in a band
// around the points where the implementations switch formulas) against
// libm in double, in units in the last place of the float result. The
// bounds are the ones VecMath.h documents; the test fails if any input
// exceeds them, or if a special value (NaN, inf, 0) comes out wrong.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/VecMath.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace vm = loom::rt::vm;

namespace {

float fromBits(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

/// |got - want| in units in the last place of a float near `want`
/// (subnormal spacing below FLT_MIN; inf counts as 2^128).
double ulpError(float got, double want) {
  const double big = std::ldexp(1.0, 128);
  double g = std::isinf(got) ? std::copysign(big, got) : got;
  double w = std::isinf(want) ? std::copysign(big, want) : want;
  if (w > big)
    w = big;
  if (w < -big)
    w = -big;
  int e = w == 0.0 ? -126 : std::max(std::ilogb(w), -126);
  return std::fabs(g - w) / std::ldexp(1.0, e - 23);
}

struct Worst {
  double ulps = 0;
  float at = 0;
  long special = 0; // inputs whose NaN-ness or infinity came out wrong
  float specialAt = 0;
};

template <typename F, typename Ref>
void check(Worst &w, float x, F f, Ref ref) {
  float got = f(x);
  double want = ref(static_cast<double>(x));
  if (std::isnan(want) || std::isnan(got)) {
    if (std::isnan(want) != std::isnan(got)) {
      ++w.special;
      w.specialAt = x;
    }
    return;
  }
  // A float result rounds `want` to inf only past FLT_MAX + half an ulp.
  float wantF = static_cast<float>(want);
  if (std::isinf(wantF) && std::isinf(got) && (wantF > 0) == (got > 0))
    return;
  double e = ulpError(got, want);
  if (e > w.ulps) {
    w.ulps = e;
    w.at = x;
  }
}

template <typename F, typename Ref>
Worst sweep(F f, Ref ref, std::initializer_list<float> switchPoints) {
  Worst w;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 97)
    check(w, fromBits(static_cast<uint32_t>(b)), f, ref);
  // Every float within 2^16 bit patterns of each switch point (and its
  // negative), where an off-by-one in a select would show.
  for (float p : switchPoints)
    for (float s : {p, -p}) {
      uint32_t c;
      std::memcpy(&c, &s, sizeof c);
      for (uint32_t d = 0; d < (1u << 17); ++d)
        check(w, fromBits(c - (1u << 16) + d), f, ref);
    }
  // The special values.
  for (float x : {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max()})
    check(w, x, f, ref);
  return w;
}

void report(const char *name, const Worst &w, double bound) {
  std::printf("%s: max %.3f ulp at %.9g (bound %g)\n", name, w.ulps, w.at,
              bound);
  EXPECT_LE(w.ulps, bound) << name << " at x = " << w.at;
  EXPECT_EQ(w.special, 0) << name << ": wrong NaN at x = " << w.specialAt;
}

TEST(VecMath, Exp) {
  Worst w = sweep([](float x) { return vm::exp(x); },
                  [](double x) { return std::exp(x); },
                  {88.7228394f, 103.972084f, 87.3365479f, 0.34657359f});
  report("exp", w, 2.0);
}

TEST(VecMath, Tanh) {
  Worst w = sweep([](float x) { return vm::tanh(x); },
                  [](double x) { return std::tanh(x); },
                  {0.625f, 9.0f, 1e-4f});
  report("tanh", w, 2.0);
}

TEST(VecMath, Erf) {
  Worst w = sweep([](float x) { return vm::erf(x); },
                  [](double x) { return std::erf(x); },
                  {1.0f, 3.92f, 4.0f, 1e-4f});
  report("erf", w, 2.0);
}

TEST(VecMath, Log) {
  Worst w = sweep([](float x) { return vm::log(x); },
                  [](double x) { return std::log(x); },
                  {1.0f, 1.41421356f, 0.70710678f, 1.17549435e-38f});
  report("log", w, 1.5);
}

TEST(VecMath, Rsqrt) {
  Worst w = sweep([](float x) { return vm::rsqrt(x); },
                  [](double x) { return 1.0 / std::sqrt(x); },
                  {1.0f, 1.17549435e-38f});
  report("rsqrt", w, 1.5);
}

// The exact values the kernels rely on.
TEST(VecMath, ExactPoints) {
  EXPECT_EQ(vm::exp(0.0f), 1.0f);
  EXPECT_EQ(vm::exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(vm::log(1.0f), 0.0f);
  EXPECT_EQ(vm::tanh(0.0f), 0.0f);
  EXPECT_EQ(vm::erf(0.0f), 0.0f);
  EXPECT_EQ(vm::tanh(20.0f), 1.0f);
  EXPECT_EQ(vm::erf(-5.0f), -1.0f);
}

} // namespace
