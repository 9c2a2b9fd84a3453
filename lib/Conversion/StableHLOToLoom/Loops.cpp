//===- Loops.cpp - scalar integer evaluation and while unrolling ----------===//
//
// Loom's programs are straight-line: a `stablehlo.while` whose trip count
// is known at import (JAX's `fori_loop` and `scan` with constant bounds)
// is unrolled before the conversion, the loop counters becoming constants,
// so that the `dynamic_slice`s and `dynamic_update_slice`s they index
// become static slices.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::shlo_to_loom;

namespace {

/// Loops that would unroll into more ops than this stay loops (and are
/// reported): the rest of the compiler works on the unrolled program.
constexpr int64_t kMaxUnrolledOps = 200000;

/// Integer tensors of more elements than this are not evaluated.
constexpr int64_t kMaxKnownElements = 4096;

/// Bits of a static tensor of a signless integer type (i1 to i64) of at
/// most kMaxKnownElements elements; 0 for anything else.
unsigned intTensorBits(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      tensor.getNumElements() > kMaxKnownElements)
    return 0;
  auto integer = dyn_cast<IntegerType>(tensor.getElementType());
  if (!integer || !integer.isSignless() || integer.getWidth() > 64)
    return 0;
  return integer.getWidth();
}

/// `value` wrapped to `bits` (i1: 0 or 1; wider: sign-extended).
int64_t wrapTo(uint64_t value, unsigned bits) {
  if (bits == 1)
    return static_cast<int64_t>(value & 1);
  return bits >= 64 ? static_cast<int64_t>(value)
                    : llvm::SignExtend64(value, bits);
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}


using Ints = SmallVector<int64_t>;

/// `lhs op rhs` for an integer binary stablehlo op (wrapped later).
std::optional<int64_t> applyBinary(Operation *op, int64_t lhs, int64_t rhs) {
  uint64_t a = static_cast<uint64_t>(lhs), b = static_cast<uint64_t>(rhs);
  if (isa<shlo::AddOp>(op))
    return a + b;
  if (isa<shlo::SubtractOp>(op))
    return a - b;
  if (isa<shlo::MulOp>(op))
    return a * b;
  if (isa<shlo::MaxOp>(op))
    return std::max(lhs, rhs);
  if (isa<shlo::MinOp>(op))
    return std::min(lhs, rhs);
  if (isa<shlo::AndOp>(op))
    return lhs & rhs;
  if (isa<shlo::OrOp>(op))
    return lhs | rhs;
  if (isa<shlo::XorOp>(op))
    return lhs ^ rhs;
  // StableHLO divides integers toward zero.
  if (rhs == 0 || (lhs == std::numeric_limits<int64_t>::min() && rhs == -1))
    return std::nullopt;
  return lhs / rhs;
}

std::optional<Ints> evaluate(Value value, ScalarValues &known, int depth);

/// The value of `op`'s single integer tensor result, from its operands.
std::optional<Ints> evaluateOp(Operation *op, ScalarValues &known,
                               int depth) {
  if (op->getNumResults() != 1)
    return std::nullopt;
  Value result = op->getResult(0);
  unsigned bits = intTensorBits(result.getType());
  if (!bits)
    return std::nullopt;
  ArrayRef<int64_t> shape = shapeOf(result);
  int64_t n = cast<RankedTensorType>(result.getType()).getNumElements();
  auto get = [&](Value v) { return evaluate(v, known, depth + 1); };
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  // Elementwise over operands of the result's shape (or one element).
  auto map = [&](ValueRange operands,
                 auto fn) -> std::optional<Ints> {
    SmallVector<Ints> in;
    for (Value v : operands) {
      std::optional<Ints> x = get(v);
      if (!x || (static_cast<int64_t>(x->size()) != n && x->size() != 1))
        return std::nullopt;
      in.push_back(std::move(*x));
    }
    Ints out(n);
    SmallVector<int64_t> args(in.size());
    for (int64_t i = 0; i < n; ++i) {
      for (auto [k, x] : llvm::enumerate(in))
        args[k] = x.size() == 1 ? x[0] : x[i];
      std::optional<int64_t> r = fn(ArrayRef<int64_t>(args));
      if (!r)
        return std::nullopt;
      out[i] = *r;
    }
    return out;
  };
  using A = ArrayRef<int64_t>;
  using R = std::optional<int64_t>;
  std::optional<Ints> out =
      llvm::TypeSwitch<Operation *, std::optional<Ints>>(op)
          .Case([&](shlo::ConstantOp c) -> std::optional<Ints> {
            auto attr = dyn_cast<DenseIntElementsAttr>(c.getValue());
            if (!attr || attr.getNumElements() != n)
              return std::nullopt;
            Ints values;
            for (const APInt &v : attr.getValues<APInt>())
              values.push_back(bits == 1
                                   ? static_cast<int64_t>(v.getZExtValue())
                                   : v.getSExtValue());
            return values;
          })
          .Case([&](shlo::IotaOp o) -> std::optional<Ints> {
            int64_t dim = o.getIotaDimension();
            if (dim < 0 || dim >= static_cast<int64_t>(shape.size()))
              return std::nullopt;
            SmallVector<int64_t> strides = stridesOf(shape);
            Ints values(n);
            for (int64_t i = 0; i < n; ++i)
              values[i] = (i / strides[dim]) % shape[dim];
            return values;
          })
          .Case<shlo::AddOp, shlo::SubtractOp, shlo::MulOp, shlo::DivOp,
                shlo::MaxOp, shlo::MinOp, shlo::AndOp, shlo::OrOp,
                shlo::XorOp>([&](Operation *o) {
            return map(o->getOperands(),
                       [&](A a) { return applyBinary(o, a[0], a[1]); });
          })
          .Case([&](shlo::NegOp o) {
            return map(o->getOperands(), [&](A a) -> R { return 0 - u(a[0]); });
          })
          .Case([&](shlo::NotOp o) {
            return map(o->getOperands(), [&](A a) -> R {
              return bits == 1 ? int64_t(!a[0]) : ~a[0];
            });
          })
          .Case([&](shlo::ConvertOp o) -> std::optional<Ints> {
            if (!intTensorBits(o.getOperand().getType()))
              return std::nullopt;
            return map(o->getOperands(), [&](A a) -> R {
              return bits == 1 ? int64_t(a[0] != 0) : a[0];
            });
          })
          .Case([&](shlo::CompareOp o) -> std::optional<Ints> {
            unsigned width = intTensorBits(o.getLhs().getType());
            std::optional<shlo::ComparisonType> type = o.getCompareType();
            if (!width || (width == 1 && type == shlo::ComparisonType::SIGNED))
              return std::nullopt;
            bool isUnsigned =
                width == 1 || type == shlo::ComparisonType::UNSIGNED;
            uint64_t mask =
                width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
            auto less = [&](int64_t x, int64_t y) {
              return isUnsigned ? (u(x) & mask) < (u(y) & mask) : x < y;
            };
            shlo::ComparisonDirection dir = o.getComparisonDirection();
            return map(o->getOperands(), [&](A a) -> R {
              switch (dir) {
              case shlo::ComparisonDirection::EQ:
                return a[0] == a[1];
              case shlo::ComparisonDirection::NE:
                return a[0] != a[1];
              case shlo::ComparisonDirection::LT:
                return less(a[0], a[1]);
              case shlo::ComparisonDirection::LE:
                return !less(a[1], a[0]);
              case shlo::ComparisonDirection::GT:
                return less(a[1], a[0]);
              case shlo::ComparisonDirection::GE:
                return !less(a[0], a[1]);
              }
              return std::nullopt;
            });
          })
          .Case([&](shlo::SelectOp o) {
            return map(o->getOperands(),
                       [](A a) -> R { return a[0] ? a[1] : a[2]; });
          })
          .Case([&](shlo::ClampOp o) {
            return map(o->getOperands(), [](A a) -> R {
              return std::min(std::max(a[1], a[0]), a[2]);
            });
          })
          .Case([&](shlo::ReshapeOp o) { return get(o.getOperand()); })
          .Case([&](shlo::BroadcastInDimOp o) -> std::optional<Ints> {
            std::optional<Ints> x = get(o.getOperand());
            ArrayRef<int64_t> in = shapeOf(o.getOperand());
            ArrayRef<int64_t> dims = o.getBroadcastDimensions();
            if (!x || dims.size() != in.size())
              return std::nullopt;
            SmallVector<int64_t> outStrides = stridesOf(shape),
                                 inStrides = stridesOf(in);
            Ints values(n);
            for (int64_t i = 0; i < n; ++i) {
              int64_t from = 0;
              for (auto [k, d] : llvm::enumerate(dims))
                if (in[k] != 1)
                  from += ((i / outStrides[d]) % shape[d]) * inStrides[k];
              values[i] = (*x)[from];
            }
            return values;
          })
          .Case([&](shlo::SliceOp o) -> std::optional<Ints> {
            std::optional<Ints> x = get(o.getOperand());
            if (!x)
              return std::nullopt;
            SmallVector<int64_t> outStrides = stridesOf(shape),
                                 inStrides = stridesOf(shapeOf(o.getOperand()));
            ArrayRef<int64_t> starts = o.getStartIndices(),
                              steps = o.getStrides();
            Ints values(n);
            for (int64_t i = 0; i < n; ++i) {
              int64_t from = 0;
              for (size_t d = 0; d < shape.size(); ++d)
                from += (starts[d] + ((i / outStrides[d]) % shape[d]) *
                                         steps[d]) *
                        inStrides[d];
              values[i] = (*x)[from];
            }
            return values;
          })
          .Case([&](shlo::ConcatenateOp o) -> std::optional<Ints> {
            int64_t dim = o.getDimension();
            // Rows of the dimensions before `dim`, each the concatenation
            // of every input's block.
            int64_t rows = 1;
            for (int64_t d = 0; d < dim; ++d)
              rows *= shape[d];
            SmallVector<Ints> in;
            for (Value v : o.getInputs()) {
              std::optional<Ints> x = get(v);
              if (!x)
                return std::nullopt;
              in.push_back(std::move(*x));
            }
            Ints values;
            for (int64_t r = 0; r < rows; ++r)
              for (const Ints &x : in) {
                int64_t block = static_cast<int64_t>(x.size()) / rows;
                values.append(x.begin() + r * block,
                              x.begin() + (r + 1) * block);
              }
            return values;
          })
          .Case<shlo::DynamicSliceOp, shlo::DynamicUpdateSliceOp>(
              [&](Operation *o) -> std::optional<Ints> {
                auto slice = dyn_cast<shlo::DynamicSliceOp>(o);
                auto update = dyn_cast<shlo::DynamicUpdateSliceOp>(o);
                Value source = o->getOperand(0);
                ValueRange indices = slice ? slice.getStartIndices()
                                           : update.getStartIndices();
                std::optional<Ints> x = get(source);
                std::optional<Ints> patch =
                    update ? get(update.getUpdate()) : std::optional<Ints>();
                ArrayRef<int64_t> in = shapeOf(source);
                ArrayRef<int64_t> window =
                    slice ? shape : shapeOf(update.getUpdate());
                if (!x || (update && !patch) || indices.size() != in.size())
                  return std::nullopt;
                SmallVector<int64_t> starts;
                for (auto [d, index] : llvm::enumerate(indices)) {
                  std::optional<Ints> s = get(index);
                  if (!s || s->size() != 1 || window[d] > in[d])
                    return std::nullopt;
                  starts.push_back(
                      std::clamp<int64_t>((*s)[0], 0, in[d] - window[d]));
                }
                SmallVector<int64_t> windowStrides = stridesOf(window),
                                     inStrides = stridesOf(in);
                int64_t count = 1;
                for (int64_t w : window)
                  count *= w;
                Ints values = slice ? Ints(count) : *x;
                for (int64_t i = 0; i < count; ++i) {
                  int64_t at = 0;
                  for (size_t d = 0; d < in.size(); ++d)
                    at += (starts[d] + (i / windowStrides[d]) % window[d]) *
                          inStrides[d];
                  if (slice)
                    values[i] = (*x)[at];
                  else
                    values[at] = (*patch)[i];
                }
                return values;
              })
          .Default([](Operation *) { return std::nullopt; });
  if (!out || static_cast<int64_t>(out->size()) != n)
    return std::nullopt;
  for (int64_t &v : *out)
    v = wrapTo(static_cast<uint64_t>(v), bits);
  return out;
}

std::optional<Ints> evaluate(Value value, ScalarValues &known, int depth) {
  if (auto it = known.values.find(value); it != known.values.end())
    return it->second;
  if (known.unknown.contains(value) || depth > 64 ||
      !intTensorBits(value.getType()))
    return std::nullopt;
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  std::optional<Ints> result = evaluateOp(op, known, depth);
  if (result)
    known.values[value] = *result;
  else
    known.unknown.insert(value);
  return result;
}

/// A constant of the integer tensor type `type` holding `values`.
Value materialize(OpBuilder &b, Location loc, Type type,
                  ArrayRef<int64_t> values) {
  auto tensor = cast<RankedTensorType>(type);
  unsigned width = cast<IntegerType>(tensor.getElementType()).getWidth();
  SmallVector<APInt> bits;
  for (int64_t v : values)
    bits.emplace_back(width, static_cast<uint64_t>(v), /*isSigned=*/width > 1);
  return shlo::ConstantOp::create(b, loc,
                                  DenseElementsAttr::get(tensor, bits));
}

/// Unrolls `loop` when its condition is known at every iteration from the
/// loop-carried scalars (a counter from a constant to a constant bound);
/// returns why not otherwise.
std::optional<std::string> unroll(shlo::WhileOp loop) {
  Block &cond = loop.getCond().front();
  Block &body = loop.getBody().front();
  Value condition = cond.getTerminator()->getOperand(0);
  auto bodyReturn = body.getTerminator();
  unsigned n = loop.getNumOperands();
  int64_t bodyOps = 0;
  body.walk([&](Operation *) { ++bodyOps; });

  OpBuilder b(loop);
  Location loc = loop.getLoc();
  // The loop-carried values: known scalars, else values of the unrolled
  // program.
  SmallVector<std::optional<Ints>> scalars(n);
  SmallVector<Value> values(loop.getOperands());
  {
    ScalarValues outside;
    for (unsigned i = 0; i < n; ++i)
      scalars[i] = evaluate(loop->getOperand(i), outside, 0);
  }
  int64_t made = 0;
  for (int64_t iteration = 0;; ++iteration) {
    ScalarValues known;
    for (unsigned i = 0; i < n; ++i) {
      if (scalars[i]) {
        known.values[cond.getArgument(i)] = *scalars[i];
        known.values[body.getArgument(i)] = *scalars[i];
      } else {
        known.unknown.insert(cond.getArgument(i));
        known.unknown.insert(body.getArgument(i));
      }
    }
    std::optional<Ints> go = evaluate(condition, known, 0);
    if (!go)
      return "its condition is not known at import (iteration " +
             std::to_string(iteration) +
             "): Loom unrolls loops whose trip count is static (fori_loop "
             "and scan with constant bounds)";
    if (!go->front())
      break;
    made += bodyOps;
    if (made > kMaxUnrolledOps)
      return "unrolling it would make more than " +
             std::to_string(kMaxUnrolledOps) + " ops (" +
             std::to_string(iteration + 1) + "+ iterations of " +
             std::to_string(bodyOps) + ")";
    IRMapping mapping;
    auto use = [&](Value v) {
      if (mapping.contains(v))
        return mapping.lookup(v);
      if (auto it = known.values.find(v); it != known.values.end()) {
        Value c = materialize(b, loc, v.getType(), it->second);
        mapping.map(v, c);
        return c;
      }
      return v;
    };
    for (unsigned i = 0; i < n; ++i)
      if (!scalars[i])
        mapping.map(body.getArgument(i), values[i]);
    for (Operation &op : body.without_terminator()) {
      // Scalars known at import are not computed at run time.
      if (std::optional<Ints> v = evaluateOp(&op, known, 0)) {
        known.values[op.getResult(0)] = *v;
        continue;
      }
      for (Value result : op.getResults())
        known.unknown.insert(result);
      // Operands, also those of nested regions, defined outside `op`.
      op.walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (!op.isAncestor(operand.getParentBlock()->getParentOp()))
            use(operand);
      });
      b.clone(op, mapping);
    }
    for (unsigned i = 0; i < n; ++i) {
      Value next = bodyReturn->getOperand(i);
      auto it = known.values.find(next);
      scalars[i] = it == known.values.end() ? std::nullopt
                                            : std::optional<Ints>(it->second);
      values[i] = scalars[i] ? Value() : use(next);
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    Value result = scalars[i] ? materialize(b, loc, loop.getResult(i).getType(),
                                            *scalars[i])
                              : values[i];
    loop.getResult(i).replaceAllUsesWith(result);
  }
  loop.erase();
  return std::nullopt;
}

} // namespace

std::optional<SmallVector<int64_t>>
mlir::loom::shlo_to_loom::evaluateInts(Value value) {
  ScalarValues none;
  return evaluate(value, none, 0);
}

std::optional<int64_t>
mlir::loom::shlo_to_loom::evaluateScalarInt(Value value) {
  ScalarValues none;
  std::optional<Ints> v = evaluate(value, none, 0);
  if (!v || v->size() != 1)
    return std::nullopt;
  return v->front();
}

void mlir::loom::shlo_to_loom::unrollWhileLoops(ModuleOp module,
                                                UnsupportedReasons &reasons) {
  // Inner loops first: an outer body is copied with its inner loops
  // already unrolled.
  SmallVector<shlo::WhileOp> loops;
  module.walk([&](shlo::WhileOp loop) { loops.push_back(loop); });
  llvm::DenseSet<Operation *> kept;
  for (shlo::WhileOp loop : loops) {
    bool inner = false;
    loop.walk([&](shlo::WhileOp nested) {
      inner |= nested != loop && kept.contains(nested);
    });
    std::optional<std::string> why =
        inner ? std::optional<std::string>(
                    "it contains a loop Loom cannot unroll")
              : unroll(loop);
    if (why) {
      kept.insert(loop);
      reasons[loop] = *why;
    }
  }
}
