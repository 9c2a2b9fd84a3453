//===- Contraction.cpp - dot_general, dot and reduce to loom --------------===//

#include "Patterns.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::shlo_to_loom;

namespace {

/// Operand element types a contraction may widen to its result element type
/// (loom.dot_general has one element type): bf16/f16 -> f32, i32 -> i64.
static bool canWiden(Type from, Type to) {
  if (to.isF32())
    return from.isBF16() || from.isF16();
  if (to.isSignlessInteger(64))
    return from.isSignlessInteger(32);
  return false;
}

/// `value` converted to `elementType` when it differs (the caller checked
/// that it may be widened).
static Value widenTo(OpBuilder &builder, Location loc, Value value,
                     Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  return loom::ConvertOp::create(builder, loc, type.clone(elementType), value);
}

/// Why a contraction of `lhs` and `rhs` into `result` (element types)
/// cannot be a loom.dot_general; empty when it can.
static std::optional<std::string> checkDotTypes(Type lhs, Type rhs,
                                                Type result) {
  if ((lhs == result || canWiden(lhs, result)) &&
      (rhs == result || canWiden(rhs, result)))
    return std::nullopt;
  std::string why;
  llvm::raw_string_ostream os(why);
  os << "operands of element types " << lhs << " and " << rhs
     << " with result " << result
     << ": loom.dot_general has one element type (only widening bf16/f16 "
        "to f32 and i32 to i64 operands is supported)";
  return why;
}

/// Replaces `op` by a dot_general of its widened operands.
static void replaceByDotGeneral(Operation *op, Value lhs, Value rhs,
                                ArrayRef<int64_t> lhsBatch,
                                ArrayRef<int64_t> rhsBatch,
                                ArrayRef<int64_t> lhsContract,
                                ArrayRef<int64_t> rhsContract,
                                ConversionPatternRewriter &rewriter) {
  Location loc = op->getLoc();
  Type resultType = op->getResult(0).getType();
  Type resultElement = getElementTypeOrSelf(resultType);
  Value wideLhs = widenTo(rewriter, loc, lhs, resultElement);
  Value wideRhs = widenTo(rewriter, loc, rhs, resultElement);
  rewriter.replaceOp(op, loom::DotGeneralOp::create(
                             rewriter, loc, resultType, wideLhs, wideRhs,
                             lhsBatch, rhsBatch, lhsContract, rhsContract));
}

struct DotGeneralPattern : ShloPattern<shlo::DotGeneralOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::DotGeneralOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getAlgorithm())
      return decline(op, rewriter,
                     "dot_general with an `algorithm` is not supported (loom "
                     "chooses how to compute contractions)");
    if (failed(requireTypes(op, kNumeric,
                            loom::DotGeneralOp::getOperationName(), rewriter)))
      return failure();
    if (std::optional<std::string> why = checkDotTypes(
            getElementTypeOrSelf(op.getLhs().getType()),
            getElementTypeOrSelf(op.getRhs().getType()),
            getElementTypeOrSelf(op.getType())))
      return decline(op, rewriter, *why);
    shlo::DotDimensionNumbersAttr dn = op.getDotDimensionNumbers();
    replaceByDotGeneral(op, adaptor.getLhs(), adaptor.getRhs(),
                        dn.getLhsBatchingDimensions(),
                        dn.getRhsBatchingDimensions(),
                        dn.getLhsContractingDimensions(),
                        dn.getRhsContractingDimensions(), rewriter);
    return success();
  }
};

/// `dot` (rank 1 or 2 operands) contracts the last lhs dimension with the
/// first rhs dimension.
struct DotPattern : ShloPattern<shlo::DotOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::DotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kNumeric,
                            loom::DotGeneralOp::getOperationName(), rewriter)))
      return failure();
    int64_t lhsRank = cast<RankedTensorType>(op.getLhs().getType()).getRank();
    int64_t rhsRank = cast<RankedTensorType>(op.getRhs().getType()).getRank();
    if (lhsRank < 1 || lhsRank > 2 || rhsRank < 1 || rhsRank > 2)
      return decline(op, rewriter, "dot needs operands of rank 1 or 2");
    if (std::optional<std::string> why = checkDotTypes(
            getElementTypeOrSelf(op.getLhs().getType()),
            getElementTypeOrSelf(op.getRhs().getType()),
            getElementTypeOrSelf(op.getType())))
      return decline(op, rewriter, *why);
    replaceByDotGeneral(op, adaptor.getLhs(), adaptor.getRhs(), {}, {},
                        {lhsRank - 1}, {0}, rewriter);
    return success();
  }
};

enum class ReduceKind { Sum, Max, Min, And, Or };

/// The reduction a `reduce` body computes: one add, maximum, minimum, and
/// or or of the two block arguments, returned. On i1, maximum is or and
/// minimum is and.
static FailureOr<ReduceKind> getReduceKind(shlo::ReduceOp op,
                                           std::string &why) {
  const char *expected = "reduce body is not a single add, maximum, minimum, "
                         "and or or of its two arguments";
  Block &block = op.getBody().front();
  auto body = block.without_terminator();
  if (block.getNumArguments() != 2 || !llvm::hasSingleElement(body)) {
    why = expected;
    return failure();
  }
  Operation &inner = *body.begin();
  Operation *terminator = block.getTerminator();
  bool onArguments = inner.getNumOperands() == 2 &&
                     inner.getNumResults() == 1 &&
                     ((inner.getOperand(0) == block.getArgument(0) &&
                       inner.getOperand(1) == block.getArgument(1)) ||
                      (inner.getOperand(0) == block.getArgument(1) &&
                       inner.getOperand(1) == block.getArgument(0)));
  if (!onArguments || !isa<shlo::ReturnOp>(terminator) ||
      terminator->getNumOperands() != 1 ||
      terminator->getOperand(0) != inner.getResult(0)) {
    why = expected;
    return failure();
  }
  bool isBool = getElementTypeOrSelf(inner.getResult(0).getType())
                    .isSignlessInteger(1);
  if (isa<shlo::AddOp>(inner) && !isBool)
    return ReduceKind::Sum;
  if (isa<shlo::MaxOp>(inner))
    return isBool ? ReduceKind::Or : ReduceKind::Max;
  if (isa<shlo::MinOp>(inner))
    return isBool ? ReduceKind::And : ReduceKind::Min;
  if (isa<shlo::AndOp, shlo::OrOp>(inner)) {
    if (!isBool) {
      why = "reduce with a bitwise '" +
            inner.getName().getStringRef().str() +
            "' body has no loom reduction (only logical and/or of i1)";
      return failure();
    }
    return isa<shlo::AndOp>(inner) ? ReduceKind::And : ReduceKind::Or;
  }
  why = "reduce body '" + inner.getName().getStringRef().str() +
        "' has no loom reduction (supported: add, maximum, minimum; and, or "
        "of i1)";
  return failure();
}

/// Whether `init` is a constant equal to the identity of `kind`.
static bool isIdentity(Value init, ReduceKind kind) {
  DenseElementsAttr attr;
  if (!matchPattern(init, m_Constant(&attr)) || !attr.isSplat())
    return false;
  if (isa<FloatType>(attr.getElementType())) {
    APFloat v = attr.getSplatValue<APFloat>();
    switch (kind) {
    case ReduceKind::Sum:
      return v.isZero();
    case ReduceKind::Max:
      return v.isInfinity() && v.isNegative();
    case ReduceKind::Min:
      return v.isInfinity() && !v.isNegative();
    default:
      return false;
    }
  }
  APInt v = attr.getSplatValue<APInt>();
  switch (kind) {
  case ReduceKind::Sum:
    return v.isZero();
  case ReduceKind::Max:
    return v.isMinSignedValue();
  case ReduceKind::Min:
    return v.isMaxSignedValue();
  case ReduceKind::And:
    return v.isOne();
  case ReduceKind::Or:
    return v.isZero();
  }
  return false;
}

/// Numbers: sum -> reduce_sum, max -> reduce_max, min -> `-max(-x)` for
/// floats and `-1 - max(-1 - x)` for integers (exact: `-1 - x` cannot
/// overflow).
static Value reduceNumbers(OpBuilder &b, Location loc, ReduceKind kind,
                           Value input, RankedTensorType resultType,
                           ArrayRef<int64_t> dims) {
  auto inputType = cast<RankedTensorType>(input.getType());
  Type element = resultType.getElementType();
  if (kind == ReduceKind::Sum)
    return loom::ReduceSumOp::create(b, loc, resultType, input, dims);
  if (kind == ReduceKind::Max)
    return loom::ReduceMaxOp::create(b, loc, resultType, input, dims);
  if (isa<FloatType>(element)) {
    Value neg = loom::NegOp::create(b, loc, inputType, input);
    Value max = loom::ReduceMaxOp::create(b, loc, resultType, neg, dims);
    return loom::NegOp::create(b, loc, resultType, max);
  }
  TypedAttr minusOne = getScalarAttr(b, element, -1);
  Value flipped = loom::SubOp::create(
      b, loc, inputType, createSplat(b, loc, inputType, minusOne), input);
  Value max = loom::ReduceMaxOp::create(b, loc, resultType, flipped, dims);
  return loom::SubOp::create(b, loc, resultType,
                             createSplat(b, loc, resultType, minusOne), max);
}

/// i1: or -> `reduce_max(convert<i32>(x)) != 0`; and -> not any of not x.
static Value reduceBools(OpBuilder &b, Location loc, ReduceKind kind,
                         Value input, RankedTensorType resultType,
                         ArrayRef<int64_t> dims) {
  auto inputType = cast<RankedTensorType>(input.getType());
  if (kind == ReduceKind::And)
    input = loom::CompareOp::create(
        b, loc, inputType, ComparisonDirection::eq, input,
        createSplat(b, loc, inputType, b.getBoolAttr(false)));
  Type i32 = b.getI32Type();
  Value counts = loom::ConvertOp::create(b, loc, inputType.clone(i32), input);
  Value any = loom::ReduceMaxOp::create(b, loc, resultType.clone(i32), counts,
                                        dims);
  Value zero = createSplat(b, loc, resultType.clone(i32),
                           b.getI32IntegerAttr(0));
  return loom::CompareOp::create(
      b, loc, resultType,
      kind == ReduceKind::Or ? ComparisonDirection::ne
                             : ComparisonDirection::eq,
      any, zero);
}

/// `reduce` of one input whose body is one add/maximum/minimum (numbers) or
/// and/or/maximum/minimum (i1) -> reduce_sum/reduce_max based forms. An
/// init value that is not the identity is combined with the result.
struct ReducePattern : ShloPattern<shlo::ReduceOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getInputs().size() == 1 && op.getNumResults() != 1)
      return decline(op, rewriter, "reduce of one input needs one result");
    if (op.getInputs().size() != 1)
      return decline(op, rewriter,
                     "reduce of " + std::to_string(op.getInputs().size()) +
                         " inputs at once (e.g. an argmax) has no loom "
                         "equivalent");
    std::string why;
    FailureOr<ReduceKind> kind = getReduceKind(op, why);
    if (failed(kind))
      return decline(op, rewriter, why);
    bool isBool = *kind == ReduceKind::And || *kind == ReduceKind::Or;
    if (failed(requireTypes(op, isBool ? kBool : kNumeric,
                            *kind == ReduceKind::Sum
                                ? loom::ReduceSumOp::getOperationName()
                                : loom::ReduceMaxOp::getOperationName(),
                            rewriter)))
      return failure();

    Location loc = op.getLoc();
    Value input = adaptor.getInputs()[0];
    Value init = adaptor.getInitValues()[0];
    auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
    ArrayRef<int64_t> dims = op.getDimensions();
    Value result =
        isBool ? reduceBools(rewriter, loc, *kind, input, resultType, dims)
               : reduceNumbers(rewriter, loc, *kind, input, resultType, dims);
    if (!isIdentity(init, *kind)) {
      Value initAll = broadcastScalarTo(rewriter, loc, init, resultType);
      switch (*kind) {
      case ReduceKind::Sum:
        result = loom::AddOp::create(rewriter, loc, resultType, result,
                                      initAll);
        break;
      case ReduceKind::Max:
        result = loom::MaxOp::create(rewriter, loc, resultType, result,
                                      initAll);
        break;
      case ReduceKind::Min:
        result = loom::MinOp::create(rewriter, loc, resultType, result,
                                      initAll);
        break;
      case ReduceKind::And:
        result = loom::SelectOp::create(rewriter, loc, resultType, result,
                                        initAll, result);
        break;
      case ReduceKind::Or:
        result = loom::SelectOp::create(rewriter, loc, resultType, result,
                                        result, initAll);
        break;
      }
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::loom::shlo_to_loom::populateContractionPatterns(
    RewritePatternSet &patterns, UnsupportedReasons &reasons) {
  patterns.add<DotGeneralPattern, DotPattern, ReducePattern>(
      patterns.getContext(), reasons);
}
