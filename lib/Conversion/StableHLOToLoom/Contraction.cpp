//===- Contraction.cpp - dot_general and dot to loom ----------------------===//

#include "Patterns.h"

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

/// Applies `op`'s `algorithm` to its float operands `lhs` and `rhs`: one
/// component per operand and one primitive operation with f32
/// accumulation; f32 or tf32 operand precision computes in f32 (tf32 as
/// XLA's CPU backend does it: at least as precise as asked), bf16
/// precision rounds the operand through bf16 first (bf16 products are
/// exact in f32). Integer contractions ignore it. Returns why it cannot.
static std::optional<std::string>
applyDotAlgorithm(shlo::DotGeneralOp op, Value &lhs, Value &rhs,
                  ConversionPatternRewriter &rewriter) {
  shlo::DotAlgorithmAttr algorithm = op.getAlgorithmAttr();
  if (!algorithm ||
      !isa<FloatType>(getElementTypeOrSelf(op.getLhs().getType())))
    return std::nullopt;
  auto unsupported = [&](StringRef why) {
    return ("dot_general algorithm with " + why +
            " is not supported (loom computes f32 contractions with f32 "
            "accumulation; f32, tf32 and bf16 operand precision with one "
            "component are)")
        .str();
  };
  if (algorithm.getLhsComponentCount() != 1 ||
      algorithm.getRhsComponentCount() != 1 ||
      algorithm.getNumPrimitiveOperations() != 1)
    return unsupported("several components or primitive operations");
  if (!algorithm.getAccumulationType().isF32())
    return unsupported("a non-f32 accumulation type");
  Type lhsPrecision = algorithm.getLhsPrecisionType();
  Type rhsPrecision = algorithm.getRhsPrecisionType();
  for (Type precision : {lhsPrecision, rhsPrecision})
    if (!precision.isF32() && !precision.isTF32() && !precision.isBF16())
      return unsupported("an operand precision other than f32, tf32 or "
                         "bf16");
  Location loc = op.getLoc();
  auto roundToBF16 = [&](Value &value) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getElementType().isBF16())
      return;
    Value narrow = loom::ConvertOp::create(
        rewriter, loc, type.clone(rewriter.getBF16Type()), value);
    value = loom::ConvertOp::create(rewriter, loc, type, narrow);
  };
  if (lhsPrecision.isBF16())
    roundToBF16(lhs);
  if (rhsPrecision.isBF16())
    roundToBF16(rhs);
  return std::nullopt;
}

struct DotGeneralPattern : ShloPattern<shlo::DotGeneralOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::DotGeneralOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kNumeric,
                            loom::DotGeneralOp::getOperationName(), rewriter)))
      return failure();
    if (std::optional<std::string> why = checkDotTypes(
            getElementTypeOrSelf(op.getLhs().getType()),
            getElementTypeOrSelf(op.getRhs().getType()),
            getElementTypeOrSelf(op.getType())))
      return decline(op, rewriter, *why);
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    if (std::optional<std::string> why =
            applyDotAlgorithm(op, lhs, rhs, rewriter))
      return decline(op, rewriter, *why);
    shlo::DotDimensionNumbersAttr dn = op.getDotDimensionNumbers();
    replaceByDotGeneral(op, lhs, rhs,
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

} // namespace

void mlir::loom::shlo_to_loom::populateContractionPatterns(
    RewritePatternSet &patterns, UnsupportedReasons &reasons) {
  patterns.add<DotGeneralPattern, DotPattern>(
      patterns.getContext(), reasons);
}
