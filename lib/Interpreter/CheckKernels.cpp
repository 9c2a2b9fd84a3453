//===- CheckKernels.cpp - The `check` ops of StableHLO's test data --------===//
//
// Executes the ops of the `check` dialect (loom/Dialect/StableHLO/IR/
// CheckOps.td), which the StableHLO importer keeps in its output, with the
// semantics of the StableHLO reference interpreter's check dialect
// (openxla/stablehlo, stablehlo/tests/CheckOps.cpp):
//
// * expect_eq, expect_eq_const: exact equality. Integers compare by value;
//   floats compare bitwise in their element type, except that any two NaNs
//   are equal (NaN payloads are implementation-defined).
// * expect_almost_eq, expect_almost_eq_const: per element, as
//   stablehlo/reference/Element.cpp areApproximatelyEqual(f, g, tolerance):
//   equal values (and two NaNs) match; a NaN or an infinity matches nothing
//   else; values of different signs do not match; otherwise the match is
//   `|f - g| <= tolerance`, an ABSOLUTE tolerance. Its default is 0.0001
//   (stablehlo/reference/Element.h: "equal within a set tolerance (default
//   0.0001)") for the ops, and 0.001 for expect_almost_eq when it comes from
//   `stablehlo.custom_call @check.expect_almost_eq` (the importer's only
//   source of it), which the StableHLO test driver evaluates with
//   `evalExpectAlmostEqOp(lhs, rhs, APFloat(0.001))`
//   (stablehlo/tests/CheckOps.cpp's custom-call fallback). The op's
//   `tolerance` attribute overrides both.
// * expect_close: the ULP distance in the element type is within
//   [min_ulp_difference, max_ulp_difference], default [0, 3] (the StableHLO
//   test driver's `evalExpectCloseOp(lhs, rhs, 0, 3)` for
//   `custom_call @check.expect_close`); bitwise-equal values and two NaNs
//   are 0 apart, a non-finite value is infinitely far from anything else.
//   Integer and i1 tensors (which the reference does not accept) compare
//   exactly.
//
// A failed check is reported at the op with the first mismatching index,
// both values and the number of mismatches, counted, and execution goes on
// (so that every failed check of a function is reported).
//
//===----------------------------------------------------------------------===//

#include "loom/Interpreter/Interpreter.h"

#include "Kernels.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace mlir {
namespace loom {
namespace interp {

namespace {

/// The bits of `v`, a value of the float kind `kind`, in that kind's format.
uint64_t floatBits(ElementKind kind, float v) {
  uint32_t bits32;
  std::memcpy(&bits32, &v, sizeof(bits32));
  switch (kind) {
  case ElementKind::BF16:
    return bits32 >> 16; // bf16 values are exactly the top half of an f32
  case ElementKind::F16: {
    APFloat f(v);
    bool lost;
    f.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven, &lost);
    return f.bitcastToAPInt().getZExtValue();
  }
  default:
    return bits32;
  }
}

uint64_t signBit(ElementKind kind) {
  return kind == ElementKind::F32 ? uint64_t(1) << 31 : uint64_t(1) << 15;
}

/// The ULP distance of `a` and `b` in the float kind `kind` (StableHLO's
/// ULPDifference).
uint64_t ulpDifference(ElementKind kind, float a, float b) {
  uint64_t fa = floatBits(kind, a), fb = floatBits(kind, b);
  if (fa == fb)
    return 0;
  if (std::isfinite(a) && std::isfinite(b)) {
    uint64_t sign = signBit(kind);
    uint64_t ma = fa & ~sign, mb = fb & ~sign;
    if ((fa & sign) != (fb & sign))
      return ma + mb;
    return ma > mb ? ma - mb : mb - ma;
  }
  if (std::isnan(a) && std::isnan(b))
    return 0;
  return std::numeric_limits<uint64_t>::max();
}

/// StableHLO's areApproximatelyEqual(f, g, tolerance).
bool almostEqual(float f, float g, double tolerance) {
  if (f == g)
    return true;
  if (std::isnan(f) || std::isnan(g))
    return std::isnan(f) && std::isnan(g);
  if (!std::isfinite(f) || !std::isfinite(g))
    return false;
  if (std::signbit(f) != std::signbit(g))
    return false;
  return std::fabs(static_cast<double>(f) - static_cast<double>(g)) <=
         tolerance;
}

bool exactlyEqual(ElementKind kind, float a, float b) {
  if (std::isnan(a) && std::isnan(b))
    return true;
  return floatBits(kind, a) == floatBits(kind, b);
}

std::string formatIndex(ArrayRef<int64_t> shape, int64_t linear) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return formatShape(index);
}

std::string formatValue(const Tensor &t, int64_t i) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (t.isFloat())
    os << llvm::format("%.9g", static_cast<double>(t.floats[i]));
  else if (t.kind == ElementKind::I1)
    os << (t.ints[i] ? "true" : "false");
  else
    os << t.ints[i];
  return s;
}

enum class CheckKind { Eq, AlmostEq, Close };

struct CheckSpec {
  CheckKind kind = CheckKind::Eq;
  double tolerance = 0;
  uint64_t minUlp = 0, maxUlp = 0;
};

/// "" when `actual` passes against `expected`, else what differs.
std::string compareTensors(const CheckSpec &spec, const Tensor &actual,
                           const Tensor &expected) {
  if (actual.kind != expected.kind || actual.shape != expected.shape)
    return "compares " + actual.typeString() + " with " +
           expected.typeString() + "; the check needs equal types";
  bool exact = spec.kind == CheckKind::Eq || !actual.isFloat();
  int64_t first = -1, count = 0;
  uint64_t firstUlp = 0, worstUlp = 0;
  for (int64_t i = 0, e = actual.size(); i < e; ++i) {
    bool ok;
    uint64_t ulp = 0;
    if (!actual.isFloat()) {
      ok = actual.ints[i] == expected.ints[i];
    } else if (exact) {
      ok = exactlyEqual(actual.kind, actual.floats[i], expected.floats[i]);
    } else if (spec.kind == CheckKind::AlmostEq) {
      ok = almostEqual(actual.floats[i], expected.floats[i], spec.tolerance);
    } else {
      ulp = ulpDifference(actual.kind, actual.floats[i], expected.floats[i]);
      ok = ulp >= spec.minUlp && ulp <= spec.maxUlp;
    }
    if (ok)
      continue;
    if (first < 0) {
      first = i;
      firstUlp = ulp;
    }
    worstUlp = std::max(worstUlp, ulp);
    ++count;
  }
  if (first < 0)
    return "";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "failed: at index " << formatIndex(actual.shape, first) << " the value "
     << formatValue(actual, first) << " is not ";
  if (exact)
    os << "equal to";
  else if (spec.kind == CheckKind::AlmostEq)
    os << "within " << llvm::format("%g", spec.tolerance) << " of";
  else
    os << "within [" << spec.minUlp << ", " << spec.maxUlp << "] ULPs of";
  os << " the expected " << formatValue(expected, first);
  if (!exact && spec.kind == CheckKind::Close) {
    auto ulps = [](uint64_t u) {
      return u == std::numeric_limits<uint64_t>::max() ? std::string("inf")
                                                       : std::to_string(u);
    };
    os << " (" << ulps(firstUlp) << " ULPs apart; worst " << ulps(worstUlp)
       << ")";
  }
  os << "; " << count << " of " << actual.size() << " elements of "
     << actual.typeString() << " differ";
  return s;
}

template <typename T> std::optional<T> attrValue(Operation *op, StringRef name);
template <> std::optional<double> attrValue(Operation *op, StringRef name) {
  if (auto a = op->getAttrOfType<FloatAttr>(name))
    return a.getValueAsDouble();
  return std::nullopt;
}
template <> std::optional<int64_t> attrValue(Operation *op, StringRef name) {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getInt();
  return std::nullopt;
}

} // namespace

LogicalResult Interpreter::executeCheck(Operation *op,
                                        ArrayRef<const Tensor *> in) {
  StringRef name = op->getName().stripDialect();
  bool isConst = name.consume_back("_const");
  CheckSpec spec;
  if (name == "expect_eq") {
    spec.kind = CheckKind::Eq;
  } else if (name == "expect_almost_eq") {
    spec.kind = CheckKind::AlmostEq;
    // See the file comment: 1e-4 for the ops (Element.h), 1e-3 for the
    // custom call, which the importer turns into expect_almost_eq.
    spec.tolerance = attrValue<double>(op, "tolerance")
                         .value_or(isConst ? 1e-4 : 1e-3);
    if (!(spec.tolerance >= 0))
      return withCallStack(op->emitOpError()
                           << "has a negative or NaN tolerance");
  } else if (name == "expect_close" && !isConst) {
    spec.kind = CheckKind::Close;
    int64_t minUlp = attrValue<int64_t>(op, "min_ulp_difference").value_or(0);
    int64_t maxUlp = attrValue<int64_t>(op, "max_ulp_difference").value_or(3);
    if (minUlp < 0 || maxUlp < minUlp)
      return withCallStack(op->emitOpError()
                           << "has the ULP range [" << minUlp << ", " << maxUlp
                           << "]; it needs 0 <= min_ulp_difference <= "
                              "max_ulp_difference");
    spec.minUlp = static_cast<uint64_t>(minUlp);
    spec.maxUlp = static_cast<uint64_t>(maxUlp);
  } else {
    return withCallStack(op->emitOpError()
                         << "is not supported by the interpreter (it runs "
                            "check.expect_eq, expect_almost_eq, expect_close, "
                            "expect_eq_const and expect_almost_eq_const)");
  }

  Tensor expectedConst;
  const Tensor *expected = nullptr;
  if (isConst) {
    auto value = op->getAttrOfType<ElementsAttr>("value");
    if (in.size() != 1 || !value)
      return withCallStack(op->emitOpError()
                           << "needs one operand and a `value` attribute");
    if (std::string err = constant(value, expectedConst); !err.empty())
      return withCallStack(op->emitOpError() << err);
    expected = &expectedConst;
  } else {
    if (in.size() != 2)
      return withCallStack(op->emitOpError() << "needs two operands, has "
                                             << in.size());
    expected = in[1];
  }

  std::string mismatch = compareTensors(spec, *in[0], *expected);
  if (mismatch.empty()) {
    ++checksPassed;
    return success();
  }
  ++checksFailed;
  (void)withCallStack(op->emitError()
                      << "'" << op->getName() << "' " << mismatch);
  // A type mismatch is malformed IR: stop. A failed comparison: go on.
  if (StringRef(mismatch).starts_with("compares "))
    return failure();
  return success();
}

} // namespace interp
} // namespace loom
} // namespace mlir
