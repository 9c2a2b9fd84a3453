//===- Elementwise.cpp - ONNX elementwise ops -----------------------------===//
//
// Unary, binary (numpy broadcasting made explicit) and variadic arithmetic,
// comparisons, the boolean ops (Not, And, Or, Xor), IsNaN/IsInf, Mod, Where,
// Cast, Gelu, Identity and Dropout. Ops that existing loom ops express
// exactly are imported as those: And/Or are selects on i1, Xor and IsNaN
// comparisons, IsInf a comparison of |x| with infinity, Sum/Mean chains of
// adds, integer Mod a division and corrections.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"

#include <limits>
#include <type_traits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

template <typename OpTy>
static LogicalResult importUnary(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  return im.defineResult(node, 0, im.create<OpTy>(im.nodeLoc(node), *x));
}

template <typename OpTy>
static LogicalResult importBinary(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0), y = im.input(node, 1);
  if (failed(x) || failed(y))
    return failure();
  Type xt = im.typeOf(*x).getElementType(), yt = im.typeOf(*y).getElementType();
  if (std::is_same_v<OpTy, PowOp> && xt != yt) {
    // Pow alone lets the exponent have a type of its own (x ** 2 with an
    // integer 2); loom.pow takes it in the base's type.
    if (!isa<FloatType>(xt))
      return im.nodeError(node) << "an integer base (" << xt << ") with a "
                                << yt << " exponent is not supported";
    y = ConvertOp::create(im.b, im.nodeLoc(node), im.typeOf(*y).clone(xt), *y)
            .getResult();
    yt = xt;
  }
  if (failed(sameElementType(im.nodeError(node), xt, yt)))
    return failure();
  auto pair = im.broadcastPair(node, *x, *y);
  if (failed(pair))
    return failure();
  return im.defineResult(
      node, 0, im.create<OpTy>(im.nodeLoc(node), pair->first, pair->second));
}

/// Folds the inputs of a variadic node with `OpTy`, broadcasting as it goes.
template <typename OpTy>
static FailureOr<Value> variadic(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> acc = im.input(node, 0);
  if (failed(acc))
    return failure();
  Value result = *acc;
  for (int k = 1; k < node.input_size(); ++k) {
    FailureOr<Value> y = im.input(node, k);
    if (failed(y) || failed(sameElementType(im.nodeError(node),
                                            im.typeOf(result).getElementType(),
                                            im.typeOf(*y).getElementType())))
      return failure();
    auto pair = im.broadcastPair(node, result, *y);
    if (failed(pair))
      return failure();
    FailureOr<OpTy> op =
        im.create<OpTy>(im.nodeLoc(node), pair->first, pair->second);
    if (failed(op))
      return failure();
    result = *op;
  }
  return result;
}

template <typename OpTy>
static LogicalResult importVariadic(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> result = variadic<OpTy>(im, node);
  if (failed(result))
    return failure();
  im.define(node, 0, *result);
  return success();
}

template <ComparisonDirection direction>
static LogicalResult importCompare(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0), y = im.input(node, 1);
  if (failed(x) || failed(y) ||
      failed(sameElementType(im.nodeError(node), im.typeOf(*x).getElementType(),
                             im.typeOf(*y).getElementType())))
    return failure();
  auto pair = im.broadcastPair(node, *x, *y);
  if (failed(pair))
    return failure();
  return im.defineResult(node, 0,
                         im.create<CompareOp>(im.nodeLoc(node), direction,
                                              pair->first, pair->second));
}

static LogicalResult importNot(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  if (!im.typeOf(*x).getElementType().isInteger(1))
    return im.nodeError(node) << "the operand must be bool, not "
                              << im.typeOf(*x).getElementType();
  Value zero = im.splat(0, im.typeOf(*x), im.nodeLoc(node));
  return im.defineResult(node, 0,
                         im.create<CompareOp>(im.nodeLoc(node),
                                              ComparisonDirection::eq, *x,
                                              zero));
}

/// Checks that `v` is a bool tensor, as ONNX's logical ops require.
static LogicalResult requireBool(Importer &im, const onnx::NodeProto &node,
                                 Value v) {
  if (im.typeOf(v).getElementType().isInteger(1))
    return success();
  return im.nodeError(node) << "the operands must be bool, not "
                            << im.typeOf(v).getElementType();
}

enum class Logical { And, Or, Xor };

/// And(x, y) = x ? y : false, Or(x, y) = x ? true : y, Xor(x, y) = x != y.
template <Logical kind>
static LogicalResult importLogical(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0), y = im.input(node, 1);
  if (failed(x) || failed(y) || failed(requireBool(im, node, *x)) ||
      failed(requireBool(im, node, *y)))
    return failure();
  auto pair = im.broadcastPair(node, *x, *y);
  if (failed(pair))
    return failure();
  Location loc = im.nodeLoc(node);
  auto [a, b] = *pair;
  if (kind == Logical::Xor)
    return im.defineResult(
        node, 0, im.create<CompareOp>(loc, ComparisonDirection::ne, a, b));
  Value constant =
      im.splat(kind == Logical::Or ? 1 : 0, im.typeOf(a), loc);
  return im.defineResult(
      node, 0,
      kind == Logical::And ? im.create<SelectOp>(loc, a, b, constant)
                           : im.create<SelectOp>(loc, a, constant, b));
}

/// The float operand of IsNaN/IsInf (ONNX allows only floats).
static FailureOr<Value> floatOperand(Importer &im,
                                     const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  if (!isa<FloatType>(im.typeOf(*x).getElementType())) {
    im.nodeError(node) << "the operand must be floating-point, not "
                       << im.typeOf(*x).getElementType();
    return failure();
  }
  return x;
}

/// IsNaN(x) = x != x (NaN is the only value unequal to itself).
static LogicalResult importIsNaN(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = floatOperand(im, node);
  if (failed(x))
    return failure();
  return im.defineResult(node, 0,
                         im.create<CompareOp>(im.nodeLoc(node),
                                              ComparisonDirection::ne, *x,
                                              *x));
}

/// IsInf(x): |x| == inf, x == inf or x == -inf as detect_positive and
/// detect_negative ask; false everywhere when neither is set.
static LogicalResult importIsInf(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = floatOperand(im, node);
  if (failed(x))
    return failure();
  bool positive = im.intAttr(node, "detect_positive", 1) != 0;
  bool negative = im.intAttr(node, "detect_negative", 1) != 0;
  Location loc = im.nodeLoc(node);
  RankedTensorType type = im.typeOf(*x);
  if (!positive && !negative) {
    im.define(node, 0, im.splat(0, type.clone(im.b.getI1Type()), loc));
    return success();
  }
  double inf = std::numeric_limits<double>::infinity();
  Value operand = *x;
  if (positive && negative)
    operand = AbsOp::create(im.b, loc, operand);
  Value limit = im.splat(positive ? inf : -inf, type, loc);
  return im.defineResult(
      node, 0,
      im.create<CompareOp>(loc, ComparisonDirection::eq, operand, limit));
}

/// Mean(x...) = Sum(x...) / n (floats only, as in ONNX).
static LogicalResult importMean(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> sum = variadic<AddOp>(im, node);
  if (failed(sum))
    return failure();
  if (!isa<FloatType>(im.typeOf(*sum).getElementType()))
    return im.nodeError(node) << "the operands must be floating-point, not "
                              << im.typeOf(*sum).getElementType();
  if (node.input_size() == 1) {
    im.define(node, 0, *sum);
    return success();
  }
  Location loc = im.nodeLoc(node);
  Value n = im.splat(node.input_size(), im.typeOf(*sum), loc);
  return im.defineResult(node, 0, im.create<DivOp>(loc, *sum, n));
}

/// Integer Mod: with truncating division q = x / y, fmod = 1 is C's
/// remainder x - q * y (the sign of x), fmod = 0 Python's (the sign of y):
/// the remainder plus y where it is non-zero and its sign differs from y's.
static LogicalResult importMod(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0), y = im.input(node, 1);
  if (failed(x) || failed(y) ||
      failed(sameElementType(im.nodeError(node), im.typeOf(*x).getElementType(),
                             im.typeOf(*y).getElementType())))
    return failure();
  Type et = im.typeOf(*x).getElementType();
  bool fmod = im.intAttr(node, "fmod", 0) != 0;
  if (isa<FloatType>(et))
    return im.nodeError(node)
           << "Mod of floating-point operands (" << et
           << ") is not supported: Loom has no exact fmod";
  if (et.isInteger(1))
    return im.nodeError(node) << "the operands must be numbers, not " << et;
  auto pair = im.broadcastPair(node, *x, *y);
  if (failed(pair))
    return failure();
  Location loc = im.nodeLoc(node);
  auto [a, b] = *pair;
  Value q = DivOp::create(im.b, loc, a, b);
  Value r = SubOp::create(im.b, loc, a, MulOp::create(im.b, loc, q, b));
  if (!fmod) {
    Value zero = im.splat(0, im.typeOf(a), loc);
    Value rNegative =
        CompareOp::create(im.b, loc, ComparisonDirection::lt, r, zero);
    Value bNegative =
        CompareOp::create(im.b, loc, ComparisonDirection::lt, b, zero);
    Value signsDiffer = CompareOp::create(im.b, loc, ComparisonDirection::ne,
                                          rNegative, bNegative);
    Value nonZero =
        CompareOp::create(im.b, loc, ComparisonDirection::ne, r, zero);
    Value fix = SelectOp::create(im.b, loc, nonZero, signsDiffer,
                                 im.splat(0, im.typeOf(signsDiffer), loc));
    r = SelectOp::create(im.b, loc, fix, AddOp::create(im.b, loc, r, b), r);
  }
  im.define(node, 0, r);
  return success();
}

static LogicalResult importReciprocal(Importer &im,
                                      const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  if (!isa<FloatType>(im.typeOf(*x).getElementType()))
    return im.nodeError(node) << "the operand must be floating-point, not "
                              << im.typeOf(*x).getElementType();
  Value one = im.splat(1.0, im.typeOf(*x), im.nodeLoc(node));
  return im.defineResult(node, 0, im.create<DivOp>(im.nodeLoc(node), one, *x));
}

static LogicalResult importGelu(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  std::string approx = im.stringAttr(node, "approximate", "none");
  if (approx != "none" && approx != "tanh")
    return im.nodeError(node)
           << "approximate = '" << approx << "' is not one of 'none', 'tanh'";
  return im.defineResult(node, 0,
                         im.create<GeluOp>(im.nodeLoc(node), *x,
                                           approx == "tanh"
                                               ? GeluApproximation::tanh
                                               : GeluApproximation::none));
}

static LogicalResult importWhere(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> c = im.input(node, 0), x = im.input(node, 1),
                   y = im.input(node, 2);
  if (failed(c) || failed(x) || failed(y) ||
      failed(sameElementType(im.nodeError(node), im.typeOf(*x).getElementType(),
                             im.typeOf(*y).getElementType())))
    return failure();
  if (!im.typeOf(*c).getElementType().isInteger(1))
    return im.nodeError(node) << "the condition must be bool, not "
                              << im.typeOf(*c).getElementType();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(im.typeOf(*c).getShape(), im.typeOf(*x).getShape());
  if (succeeded(shape))
    shape = broadcastShapes(*shape, im.typeOf(*y).getShape());
  if (failed(shape))
    return im.nodeError(node)
           << "condition and branch shapes "
           << formatDims(im.typeOf(*c).getShape()) << ", "
           << formatDims(im.typeOf(*x).getShape()) << " and "
           << formatDims(im.typeOf(*y).getShape()) << " do not broadcast";
  Location loc = im.nodeLoc(node);
  return im.defineResult(node, 0,
                         im.create<SelectOp>(loc,
                                             im.broadcastTo(*c, *shape, loc),
                                             im.broadcastTo(*x, *shape, loc),
                                             im.broadcastTo(*y, *shape, loc)));
}

/// Defines output 0 of `node` as `x` converted to the element type `to`
/// (`x` itself when it has it).
static void defineConverted(Importer &im, const onnx::NodeProto &node, Value x,
                            Type to) {
  if (im.typeOf(x).getElementType() != to)
    x = ConvertOp::create(im.b, im.nodeLoc(node), im.typeOf(x).clone(to), x);
  im.define(node, 0, x);
}

static LogicalResult importCast(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  int64_t to = im.intAttr(node, "to", 0);
  Type elementType = convertElementType(to, im.ctx);
  if (!elementType)
    return im.nodeError(node) << "cast to " << onnxTypeName(to)
                              << " is not supported (Loom has float32, "
                                 "float16, bfloat16, int64, int32, bool)";
  defineConverted(im, node, *x, elementType);
  return success();
}

/// CastLike(x, like): Cast to the element type of `like` (the dynamo
/// exporter's way of typing scalar constants). A known `x` stays known.
static LogicalResult importCastLike(Importer &im,
                                    const onnx::NodeProto &node) {
  Type to = im.inputElementType(node, 1);
  if (!to)
    return failure();
  if (const ConstTensor *c = im.constInput(node, 0)) {
    if (std::optional<ConstTensor> cast = castConstTensor(*c, to)) {
      im.defineConst(node, 0, std::move(*cast));
      return success();
    }
  }
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  if (to.isF64())
    return im.nodeError(node) << "casts a run-time value to float64, which "
                                 "Loom does not support";
  defineConverted(im, node, *x, to);
  return success();
}

static LogicalResult importIdentity(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  im.define(node, 0, *x);
  return success();
}

static LogicalResult importDropout(Importer &im, const onnx::NodeProto &node) {
  // Dropout is the identity in this release (inference-mode semantics);
  // the mask output must not be used. In training mode with a non-zero
  // ratio that changes what the model computes: say so.
  if (failed(im.requireUnused(node, 1, "the dropout mask")))
    return failure();
  if (im.hasInput(node, 2)) {
    const ConstTensor *training = im.constInput(node, 2);
    const ConstTensor *ratio = im.constInput(node, 1);
    double r = !im.hasInput(node, 1)         ? 0.5
               : ratio && ratio->size() == 1 ? ratio->asDouble(0)
                                             : -1;
    if (!training || training->size() != 1)
      emitWarning(im.nodeLoc(node))
          << nodeLabel(node)
          << ": training_mode is computed at run time; imported as the "
             "identity (inference mode): Loom has no dropout yet";
    else if (training->asInt(0) && r != 0)
      emitWarning(im.nodeLoc(node))
          << nodeLabel(node) << ": imported as the identity: Loom has no "
          << "dropout yet, so training-mode dropout with ratio "
          << (r < 0 ? std::string("(run-time)") : formatNumber(r))
          << " is not applied (export with dropout p=0 to silence this)";
  }
  return importIdentity(im, node);
}

void onnx_import::registerElementwiseHandlers(HandlerRegistry &registry) {
  registry.add({
      {"Add", importBinary<AddOp>},
      {"Sub", importBinary<SubOp>},
      {"Mul", importBinary<MulOp>},
      {"Div", importBinary<DivOp>},
      {"Pow", importBinary<PowOp>},
      {"Max", importVariadic<MaxOp>},
      {"Min", importVariadic<MinOp>},
      {"Neg", importUnary<NegOp>},
      {"Abs", importUnary<AbsOp>},
      {"Exp", importUnary<ExpOp>},
      {"Log", importUnary<LogOp>},
      {"Sqrt", importUnary<SqrtOp>},
      {"Tanh", importUnary<TanhOp>},
      {"Cos", importUnary<CosOp>},
      {"Sin", importUnary<SinOp>},
      {"Sigmoid", importUnary<SigmoidOp>},
      {"Erf", importUnary<ErfOp>},
      {"Relu", importUnary<ReluOp>},
      {"Reciprocal", importReciprocal},
      {"Gelu", importGelu},
      {"Equal", importCompare<ComparisonDirection::eq>},
      {"Less", importCompare<ComparisonDirection::lt>},
      {"LessOrEqual", importCompare<ComparisonDirection::le>},
      {"Greater", importCompare<ComparisonDirection::gt>},
      {"GreaterOrEqual", importCompare<ComparisonDirection::ge>},
      {"Not", importNot},
      {"And", importLogical<Logical::And>},
      {"Or", importLogical<Logical::Or>},
      {"Xor", importLogical<Logical::Xor>},
      {"IsNaN", importIsNaN},
      {"IsInf", importIsInf},
      {"Sum", importVariadic<AddOp>},
      {"Mean", importMean},
      {"Mod", importMod},
      {"Where", importWhere},
      {"Cast", importCast},
      {"CastLike", importCastLike},
      {"Identity", importIdentity},
      {"Dropout", importDropout},
  });
}
