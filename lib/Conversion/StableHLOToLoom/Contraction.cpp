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

} // namespace

void mlir::loom::shlo_to_loom::populateContractionPatterns(
    RewritePatternSet &patterns, UnsupportedReasons &reasons) {
  patterns.add<DotGeneralPattern, DotPattern>(
      patterns.getContext(), reasons);
}
