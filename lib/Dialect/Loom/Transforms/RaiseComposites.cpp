//===- RaiseComposites.cpp - Spelled-out GELU, SiLU, RMSNorm as one op ----===//
//
// Implements -loom-raise-composites (see Passes.td for the contract):
// the GELU, SiLU and RMSNorm formulas that exporters write out in
// elementwise ops and reductions become loom.gelu, loom.silu and
// loom.rms_norm, whose gradients need only their input (and scale). Each
// candidate is read as a monomial, a constant times a product of factors
// (through mul, div by a constant and small integer powers), so the
// orders and groupings different exporters use all match.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMRAISECOMPOSITES
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

/// The value of a splat floating-point constant (possibly broadcast).
std::optional<double> splatValue(Value value) {
  if (auto broadcast = value.getDefiningOp<BroadcastOp>())
    value = broadcast.getOperand();
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// Whether `got` is `want` to f32 precision (exporters write the
/// coefficients as f32 constants, some computed: sqrt(2 / pi)).
bool near(double got, double want) {
  return std::abs(got - want) <= 1e-6 * std::abs(want);
}

/// A constant times a product of factors (values that are not a product).
struct Monomial {
  double coefficient = 1.0;
  SmallVector<Value, 4> factors;
};

/// Largest power expanded into factors (x^3 of the tanh GELU).
constexpr int64_t kMaxPower = 4;

void collect(Value value, Monomial &into, int depth = 0) {
  if (std::optional<double> c = splatValue(value)) {
    into.coefficient *= *c;
    return;
  }
  Operation *def = value.getDefiningOp();
  // Products of products; the depth bounds the walk on long chains.
  if (def && depth < 8) {
    if (auto mul = dyn_cast<MulOp>(def)) {
      collect(mul.getLhs(), into, depth + 1);
      collect(mul.getRhs(), into, depth + 1);
      return;
    }
    if (auto div = dyn_cast<DivOp>(def)) {
      std::optional<double> d = splatValue(div.getRhs());
      if (d && *d != 0.0) {
        collect(div.getLhs(), into, depth + 1);
        into.coefficient /= *d;
        return;
      }
    }
    if (auto pow = dyn_cast<PowOp>(def)) {
      std::optional<double> n = splatValue(pow.getRhs());
      if (n && *n >= 1 && *n <= kMaxPower && *n == std::floor(*n)) {
        for (int64_t i = 0; i < static_cast<int64_t>(*n); ++i)
          collect(pow.getLhs(), into, depth + 1);
        return;
      }
    }
  }
  into.factors.push_back(value);
}

Monomial monomial(Value value) {
  Monomial m;
  collect(value, m);
  return m;
}

/// Whether `m` is `coefficient` times `x` to the power `power`.
bool isMonomial(const Monomial &m, double coefficient, Value x,
                int64_t power) {
  return near(m.coefficient, coefficient) &&
         static_cast<int64_t>(m.factors.size()) == power &&
         llvm::all_of(m.factors, [&](Value v) { return v == x; });
}

/// For `1 + f(t)` (an add of a splat 1 and the result of an op of type
/// OpT): that op.
template <typename OpT>
OpT onePlus(Value value) {
  auto add = value.getDefiningOp<AddOp>();
  if (!add)
    return nullptr;
  for (auto [one, other] : {std::pair(add.getLhs(), add.getRhs()),
                            std::pair(add.getRhs(), add.getLhs())}) {
    std::optional<double> c = splatValue(one);
    if (c && *c == 1.0)
      if (auto op = other.template getDefiningOp<OpT>())
        return op;
  }
  return nullptr;
}

/// For `1 / sqrt(s)` (a div of a splat 1 by a sqrt, or an rsqrt): s.
Value reciprocalSqrtOf(Value value) {
  if (auto rsqrt = value.getDefiningOp<RsqrtOp>())
    return rsqrt.getOperand();
  auto div = value.getDefiningOp<DivOp>();
  std::optional<double> one = div ? splatValue(div.getLhs()) : std::nullopt;
  auto sqrt = div ? div.getRhs().getDefiningOp<SqrtOp>() : nullptr;
  return one && *one == 1.0 && sqrt ? sqrt.getOperand() : Value();
}

/// An RMS norm of `x` over its trailing dimensions from `axis`, with
/// `epsilon` and an optional `scale` (the parameter of the normalised
/// shape).
struct RmsNorm {
  Value x, scale;
  int64_t axis;
  double epsilon;
};

/// Whether `value` is `x * broadcast(1 / sqrt(mean(x^2) + eps))` over
/// trailing dimensions (a statistic kept with size-1 dimensions, broadcast
/// back), times a broadcast scale when `m` has a third factor.
std::optional<RmsNorm> matchRmsNorm(const Monomial &m, Type type) {
  if (!near(m.coefficient, 1.0) || m.factors.size() < 2 ||
      m.factors.size() > 3)
    return std::nullopt;
  for (Value factor : m.factors) {
    auto broadcast = factor.getDefiningOp<BroadcastOp>();
    if (!broadcast)
      continue;
    Value s = reciprocalSqrtOf(broadcast.getOperand());
    auto sum = s ? s.getDefiningOp<AddOp>() : nullptr;
    if (!sum)
      continue;
    for (auto [meanValue, eps] : {std::pair(sum.getLhs(), sum.getRhs()),
                                  std::pair(sum.getRhs(), sum.getLhs())}) {
      auto mean = meanValue.getDefiningOp<ReduceMeanOp>();
      std::optional<double> epsilon = splatValue(eps);
      if (!mean || !epsilon || !mean.getKeepdims())
        continue;
      auto xType = dyn_cast<RankedTensorType>(mean.getOperand().getType());
      if (!xType || xType != type)
        continue;
      // Reduced over the trailing dimensions [axis, rank), broadcast back
      // in place.
      int64_t rank = xType.getRank(), axis = rank - mean.getDims().size();
      if (axis <= 0 || axis >= rank ||
          !llvm::equal(mean.getDims(), llvm::seq<int64_t>(axis, rank)) ||
          !llvm::equal(broadcast.getDims(), llvm::seq<int64_t>(0, rank)))
        continue;
      Monomial squares = monomial(mean.getOperand());
      Value x = squares.factors.empty() ? Value() : squares.factors[0];
      if (!x || !isMonomial(squares, 1.0, x, 2))
        continue;
      SmallVector<Value, 2> rest;
      for (Value other : m.factors)
        if (other != factor)
          rest.push_back(other);
      auto xAt = llvm::find(rest, x);
      if (xAt == rest.end())
        continue;
      rest.erase(xAt);
      RmsNorm norm{x, Value(), axis, *epsilon};
      if (rest.empty())
        return norm;
      // The scale: a value of the normalised shape broadcast along the
      // leading dimensions.
      auto scaled = rest[0].getDefiningOp<BroadcastOp>();
      auto scaleType =
          scaled ? dyn_cast<RankedTensorType>(scaled.getOperand().getType())
                 : nullptr;
      if (!scaleType ||
          scaleType.getShape() != xType.getShape().drop_front(axis) ||
          !llvm::equal(scaled.getDims(), llvm::seq<int64_t>(axis, rank)))
        continue;
      norm.scale = scaled.getOperand();
      return norm;
    }
  }
  return std::nullopt;
}

/// The value `x` of which `root` computes one of the recognised
/// activations, and which one.
enum class Activation { GeluErf, GeluTanh, Silu };

std::optional<std::pair<Value, Activation>> match(MulOp root) {
  Monomial m = monomial(root.getResult());
  if (m.factors.size() != 2)
    return std::nullopt;
  for (auto [x, other] : {std::pair(m.factors[0], m.factors[1]),
                          std::pair(m.factors[1], m.factors[0])}) {
    if (x.getType() != root.getType())
      continue;
    // x * sigmoid(x).
    if (auto sigmoid = other.getDefiningOp<SigmoidOp>();
        sigmoid && sigmoid.getOperand() == x && near(m.coefficient, 1.0))
      return std::pair(x, Activation::Silu);
    if (!near(m.coefficient, 0.5))
      continue;
    // 0.5 x (1 + erf(x / sqrt 2)).
    if (auto erf = onePlus<ErfOp>(other);
        erf && isMonomial(monomial(erf.getOperand()),
                          llvm::numbers::inv_sqrt2, x, 1))
      return std::pair(x, Activation::GeluErf);
    // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
    auto tanh = onePlus<TanhOp>(other);
    if (!tanh)
      continue;
    Monomial inner = monomial(tanh.getOperand());
    auto sum = inner.factors.size() == 1
                   ? inner.factors[0].getDefiningOp<AddOp>()
                   : nullptr;
    if (!sum ||
        !near(inner.coefficient,
              llvm::numbers::sqrt2 * llvm::numbers::inv_sqrtpi))
      continue;
    for (auto [linear, cubic] : {std::pair(sum.getLhs(), sum.getRhs()),
                                 std::pair(sum.getRhs(), sum.getLhs())})
      if (linear == x && isMonomial(monomial(cubic), 0.044715, x, 3))
        return std::pair(x, Activation::GeluTanh);
  }
  return std::nullopt;
}

struct LoomRaiseCompositesPass
    : public mlir::loom::impl::LoomRaiseCompositesBase<
          LoomRaiseCompositesPass> {
  void runOnOperation() override {
    // Outermost products first (program order puts a formula's final mul
    // last, so walk backwards): a raised formula's inner muls are then
    // dead, not raised on their own.
    SmallVector<MulOp> muls;
    getOperation().walk([&](MulOp mul) { muls.push_back(mul); });
    llvm::SmallPtrSet<Operation *, 16> erased;
    for (MulOp mul : llvm::reverse(muls)) {
      if (erased.contains(mul))
        continue;
      OpBuilder builder(mul);
      Value raised;
      if (std::optional<RmsNorm> norm =
              matchRmsNorm(monomial(mul.getResult()), mul.getType())) {
        raised = RmsNormOp::create(
            builder, mul.getLoc(), mul.getType(), norm->x, norm->scale,
            builder.getI64IntegerAttr(norm->axis),
            builder.getF64FloatAttr(norm->epsilon));
        replace(mul, raised, erased);
        continue;
      }
      std::optional<std::pair<Value, Activation>> found = match(mul);
      if (!found)
        continue;
      auto [x, kind] = *found;
      if (kind == Activation::Silu)
        raised = SiluOp::create(builder, mul.getLoc(), x);
      else
        raised = GeluOp::create(builder, mul.getLoc(), x,
                                kind == Activation::GeluTanh
                                    ? GeluApproximation::tanh
                                    : GeluApproximation::none);
      replace(mul, raised, erased);
    }
  }

  /// Replaces `mul`, the formula's last op, by `raised`, and erases the
  /// formula's ops nothing else reads.
  static void replace(MulOp mul, Value raised,
                      llvm::SmallPtrSetImpl<Operation *> &erased) {
    // Discardable attributes (layer marks, pipeline stages) stay.
    for (NamedAttribute attr : mul->getDiscardableAttrs())
      raised.getDefiningOp()->setAttr(attr.getName(), attr.getValue());
    mul.getResult().replaceAllUsesWith(raised);
    eraseDeadChain(mul, erased);
  }

  /// Erases `op` and the ops feeding it that nothing else reads, adding
  /// them to `erased`.
  static void eraseDeadChain(Operation *op,
                             llvm::SmallPtrSetImpl<Operation *> &erased) {
    SmallVector<Operation *> worklist{op};
    while (!worklist.empty()) {
      Operation *dead = worklist.pop_back_val();
      if (!dead->use_empty() || !isa<LoomDialect>(dead->getDialect()))
        continue;
      SmallVector<Operation *> operands;
      for (Value operand : dead->getOperands())
        if (Operation *def = operand.getDefiningOp())
          operands.push_back(def);
      erased.insert(dead);
      dead->erase();
      for (Operation *def : operands)
        if (!llvm::is_contained(worklist, def))
          worklist.push_back(def);
    }
  }
};

} // namespace
