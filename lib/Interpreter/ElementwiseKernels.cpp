//===- ElementwiseKernels.cpp - Elementwise loom ops ----------------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace loom {
namespace interp {

std::string checkSameShape(const Tensor &a, const Tensor &b, const char *what) {
  if (a.shape == b.shape)
    return "";
  return std::string(what) + " have different shapes at run time: " +
         formatShape(a.shape) + " and " + formatShape(b.shape) +
         " (elementwise ops need one shape; insert loom.broadcast)";
}

std::string checkDim(int64_t dim, int64_t rank, const char *what) {
  if (dim >= 0 && dim < rank)
    return "";
  return std::string(what) + " " + std::to_string(dim) +
         " is out of range for rank " + std::to_string(rank);
}

namespace {

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// The y with erf(y) = x. Starts from the closed-form inverse of
/// Winitzki's approximation erf(y)^2 ~ 1 - exp(-y^2 (4/pi + a y^2) /
/// (1 + a y^2)), a = 0.147 (relative error below 2e-3), then takes Newton
/// steps on erf(y) - |x|, written as (1 - |x|) - erfc(y) in the tail so the
/// residual keeps its digits; each step squares the relative error, so four
/// reach double precision. Differences from a correctly rounded inverse are
/// those of std::erf/std::erfc, amplified by 1 / erf'(y) near |x| = 1.
double erfInv(double x) {
  double ax = std::fabs(x);
  if (std::isnan(x) || ax > 1.0)
    return std::numeric_limits<double>::quiet_NaN();
  if (ax == 1.0)
    return std::copysign(std::numeric_limits<double>::infinity(), x);
  constexpr double kA = 0.147;
  constexpr double kPi = 3.14159265358979323846;
  double l = std::log1p(-ax) + std::log1p(ax); // log(1 - x^2)
  double t = 2.0 / (kPi * kA) + 0.5 * l;
  double y = std::sqrt(std::sqrt(t * t - l / kA) - t);
  for (int step = 0; step < 4; ++step) {
    double residual =
        ax > 0.5 ? (1.0 - ax) - std::erfc(y) : std::erf(y) - ax;
    double slope = 2.0 / std::sqrt(kPi) * std::exp(-y * y);
    if (slope == 0.0)
      break;
    y -= residual / slope;
  }
  return std::copysign(y, x);
}

double applyFloat(UnaryKind kind, double x) {
  switch (kind) {
  case UnaryKind::Neg:
    return -x;
  case UnaryKind::Abs:
    return std::fabs(x);
  case UnaryKind::Exp:
    return std::exp(x);
  case UnaryKind::Log:
    return std::log(x);
  case UnaryKind::Sqrt:
    return std::sqrt(x);
  case UnaryKind::Rsqrt:
    return 1.0 / std::sqrt(x);
  case UnaryKind::Tanh:
    return std::tanh(x);
  case UnaryKind::Cos:
    return std::cos(x);
  case UnaryKind::Sin:
    return std::sin(x);
  case UnaryKind::Sigmoid:
    return sigmoid(x);
  case UnaryKind::Erf:
    return std::erf(x);
  case UnaryKind::ErfInv:
    return erfInv(x);
  case UnaryKind::Relu:
    return std::isnan(x) ? x : (x > 0.0 ? x : 0.0);
  case UnaryKind::Silu:
    return x * sigmoid(x);
  case UnaryKind::GeluErf:
    return 0.5 * x * (1.0 + std::erf(x / kSqrt2));
  case UnaryKind::GeluTanh:
    return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
  }
  return x;
}

// Integer arithmetic in uint64_t: wraps instead of overflowing.
int64_t wrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
int64_t wrappingSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
int64_t wrappingMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

/// Integer `base ^ exponent`, wrapping; false for 0 to a negative power.
bool integerPow(int64_t base, int64_t exponent, int64_t &result) {
  if (exponent < 0) {
    if (base == 0)
      return false;
    // 1 / base^|e| rounded toward zero.
    result = base == 1 ? 1 : base == -1 ? (exponent % 2 ? -1 : 1) : 0;
    return true;
  }
  result = 1;
  while (exponent > 0) {
    if (exponent & 1)
      result = wrappingMul(result, base);
    base = wrappingMul(base, base);
    exponent >>= 1;
  }
  return true;
}

double applyFloat(BinaryKind kind, double a, double b) {
  switch (kind) {
  case BinaryKind::Add:
    return a + b;
  case BinaryKind::Sub:
    return a - b;
  case BinaryKind::Mul:
    return a * b;
  case BinaryKind::Div:
    return a / b;
  case BinaryKind::Pow:
    return std::pow(a, b);
  case BinaryKind::Max:
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<double>::quiet_NaN();
    return a > b ? a : b;
  case BinaryKind::Min:
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<double>::quiet_NaN();
    return a < b ? a : b;
  case BinaryKind::GeluGradErf: {
    // b * (Phi(a) + a phi(a))
    double cdf = 0.5 * (1.0 + std::erf(a / kSqrt2));
    double pdf = std::exp(-0.5 * a * a) * (0.5 * kSqrt2OverPi); // 1/sqrt(2 pi)
    return b * (cdf + a * pdf);
  }
  case BinaryKind::GeluGradTanh: {
    // b * ((1 + t) / 2 + a (1 - t^2) k (1 + 3c a^2) / 2)
    double t = std::tanh(kSqrt2OverPi * (a + 0.044715 * a * a * a));
    double inner = kSqrt2OverPi * (1.0 + 3.0 * 0.044715 * a * a);
    return b * (0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * inner);
  }
  }
  return a;
}

/// Integer op; an error for division by zero.
std::string applyInt(BinaryKind kind, int64_t a, int64_t b, int64_t &r) {
  switch (kind) {
  case BinaryKind::Add:
    r = wrappingAdd(a, b);
    return "";
  case BinaryKind::Sub:
    r = wrappingSub(a, b);
    return "";
  case BinaryKind::Mul:
    r = wrappingMul(a, b);
    return "";
  case BinaryKind::Div:
    if (b == 0)
      return "integer division by zero";
    // INT64_MIN / -1 overflows: it wraps to INT64_MIN.
    r = (b == -1) ? wrappingSub(0, a) : a / b;
    return "";
  case BinaryKind::Pow:
    if (!integerPow(a, b, r))
      return "integer 0 raised to a negative power";
    return "";
  case BinaryKind::Max:
    r = a > b ? a : b;
    return "";
  case BinaryKind::Min:
    r = a < b ? a : b;
    return "";
  case BinaryKind::GeluGradErf:
  case BinaryKind::GeluGradTanh:
    return "gelu_grad of integers";
  }
  return "";
}

template <typename T> bool compareValues(CompareKind kind, T a, T b) {
  switch (kind) {
  case CompareKind::Eq:
    return a == b;
  case CompareKind::Ne:
    return !(a == b);
  case CompareKind::Lt:
    return a < b;
  case CompareKind::Le:
    return a <= b;
  case CompareKind::Gt:
    return a > b;
  case CompareKind::Ge:
    return a >= b;
  }
  return false;
}

/// `value` truncated toward zero and saturated to the range of `kind`.
int64_t floatToInt(ElementKind kind, double value) {
  if (kind == ElementKind::I1)
    return value != 0.0; // NaN != 0 holds.
  if (std::isnan(value))
    return 0;
  double t = std::trunc(value);
  int64_t lo = kind == ElementKind::I32 ? std::numeric_limits<int32_t>::min()
                                        : std::numeric_limits<int64_t>::min();
  int64_t hi = kind == ElementKind::I32 ? std::numeric_limits<int32_t>::max()
                                        : std::numeric_limits<int64_t>::max();
  // 2^63 is exactly representable; anything >= it saturates.
  if (t <= static_cast<double>(lo))
    return lo;
  if (t >= static_cast<double>(hi))
    return hi;
  return static_cast<int64_t>(t);
}

std::string elementIndex(ArrayRef<int64_t> shape, int64_t linear) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] ? linear % shape[d] : 0;
    linear = shape[d] ? linear / shape[d] : 0;
  }
  return formatShape(index);
}

} // namespace

std::string unary(UnaryKind kind, const Tensor &x, Tensor &out) {
  out = Tensor::zeros(x.kind, x.shape);
  if (x.isFloat()) {
    for (size_t i = 0; i < x.floats.size(); ++i)
      out.floats[i] = roundTo(x.kind, applyFloat(kind, x.floats[i]));
    return "";
  }
  if (kind != UnaryKind::Neg && kind != UnaryKind::Abs)
    return std::string("expects a floating-point operand, got ") +
           getKindName(x.kind);
  for (size_t i = 0; i < x.ints.size(); ++i) {
    int64_t v = x.ints[i];
    bool negate = kind == UnaryKind::Neg || v < 0;
    out.ints[i] = wrapTo(x.kind, negate ? wrappingSub(0, v) : v);
  }
  return "";
}

std::string binary(BinaryKind kind, const Tensor &lhs, const Tensor &rhs,
                   Tensor &out) {
  if (std::string err = checkSameShape(lhs, rhs, "the operands"); !err.empty())
    return err;
  if (lhs.kind != rhs.kind)
    return "operand element types differ";
  out = Tensor::zeros(lhs.kind, lhs.shape);
  if (lhs.isFloat()) {
    for (size_t i = 0; i < lhs.floats.size(); ++i)
      out.floats[i] =
          roundTo(lhs.kind, applyFloat(kind, lhs.floats[i], rhs.floats[i]));
    return "";
  }
  for (size_t i = 0; i < lhs.ints.size(); ++i) {
    int64_t r = 0;
    if (std::string err = applyInt(kind, lhs.ints[i], rhs.ints[i], r);
        !err.empty())
      return err + " at element " +
             elementIndex(lhs.shape, static_cast<int64_t>(i)) + " (" +
             std::to_string(lhs.ints[i]) + ", " + std::to_string(rhs.ints[i]) +
             ")";
    out.ints[i] = wrapTo(lhs.kind, r);
  }
  return "";
}

std::string compare(CompareKind kind, const Tensor &lhs, const Tensor &rhs,
                    Tensor &out) {
  if (std::string err = checkSameShape(lhs, rhs, "the operands"); !err.empty())
    return err;
  if (lhs.kind != rhs.kind)
    return "operand element types differ";
  out = Tensor::zeros(ElementKind::I1, lhs.shape);
  for (int64_t i = 0, e = lhs.size(); i < e; ++i)
    out.ints[i] = lhs.isFloat()
                      ? compareValues<float>(kind, lhs.floats[i], rhs.floats[i])
                      : compareValues<int64_t>(kind, lhs.ints[i], rhs.ints[i]);
  return "";
}

std::string select(const Tensor &pred, const Tensor &onTrue,
                   const Tensor &onFalse, Tensor &out) {
  if (std::string err = checkSameShape(onTrue, onFalse, "the choices");
      !err.empty())
    return err;
  if (std::string err = checkSameShape(pred, onTrue, "the predicate and choices");
      !err.empty())
    return err;
  if (pred.kind != ElementKind::I1 || onTrue.kind != onFalse.kind)
    return "expects an i1 predicate and choices of one element type";
  out = onFalse;
  for (int64_t i = 0, e = pred.size(); i < e; ++i) {
    if (!pred.ints[i])
      continue;
    if (out.isFloat())
      out.floats[i] = onTrue.floats[i];
    else
      out.ints[i] = onTrue.ints[i];
  }
  return "";
}

std::string convert(const Tensor &x, ElementKind to, Tensor &out) {
  out = Tensor::zeros(to, x.shape);
  for (int64_t i = 0, e = x.size(); i < e; ++i) {
    if (x.isFloat() && out.isFloat())
      out.floats[i] = roundTo(to, x.floats[i]);
    else if (x.isFloat())
      out.ints[i] = floatToInt(to, x.floats[i]);
    else if (out.isFloat())
      // int64 -> float rounds to nearest (once, for f32).
      out.floats[i] = roundTo(to, static_cast<float>(x.ints[i]));
    else
      out.ints[i] = wrapTo(to, x.ints[i]);
  }
  return "";
}

} // namespace interp
} // namespace loom
} // namespace mlir
