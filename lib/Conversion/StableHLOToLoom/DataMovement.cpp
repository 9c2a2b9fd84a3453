//===- DataMovement.cpp - Constants, shape and indexing ops to loom -------===//

#include "Patterns.h"

#include "llvm/ADT/STLExtras.h"

#include <numeric>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::shlo_to_loom;

namespace {

struct ConstantPattern : ShloPattern<shlo::ConstantOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny, "loom.constant", rewriter)))
      return failure();
    rewriter.replaceOp(op, loom::ConstantOp::create(rewriter, op.getLoc(),
                                                    op.getValue()));
    return success();
  }
};

struct IotaPattern : ShloPattern<shlo::IotaOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::IotaOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kNumeric, "loom.iota", rewriter)))
      return failure();
    rewriter.replaceOp(op, loom::IotaOp::create(rewriter, op.getLoc(),
                                                op.getType(),
                                                op.getIotaDimension()));
    return success();
  }
};

/// `broadcast_in_dim` -> `loom.broadcast`; loom wants increasing `dims`,
/// so other orders transpose the operand first.
struct BroadcastInDimPattern : ShloPattern<shlo::BroadcastInDimOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::BroadcastInDimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny, "loom.broadcast", rewriter)))
      return failure();
    Location loc = op.getLoc();
    ArrayRef<int64_t> dims = op.getBroadcastDimensions();
    auto operandType = cast<RankedTensorType>(adaptor.getOperand().getType());
    if (static_cast<int64_t>(dims.size()) != operandType.getRank())
      return decline(op, rewriter,
                     "broadcast_dimensions needs one entry per operand "
                     "dimension");
    SmallVector<int64_t> order(dims.size());
    std::iota(order.begin(), order.end(), 0);
    llvm::stable_sort(order,
                      [&](int64_t a, int64_t b) { return dims[a] < dims[b]; });
    Value operand = adaptor.getOperand();
    SmallVector<int64_t> sortedDims;
    for (int64_t i : order)
      sortedDims.push_back(dims[i]);
    if (!llvm::equal(order, llvm::seq<int64_t>(0, order.size()))) {
      SmallVector<int64_t> shape;
      for (int64_t i : order)
        shape.push_back(operandType.getDimSize(i));
      auto transposedType =
          RankedTensorType::get(shape, operandType.getElementType());
      operand = loom::TransposeOp::create(rewriter, loc, transposedType,
                                          operand, order);
    }
    rewriter.replaceOp(op, loom::BroadcastOp::create(rewriter, loc,
                                                     op.getType(), operand,
                                                     sortedDims));
    return success();
  }
};

struct ReshapePattern : ShloPattern<shlo::ReshapeOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny, "loom.reshape", rewriter)))
      return failure();
    rewriter.replaceOp(op, loom::ReshapeOp::create(rewriter, op.getLoc(),
                                                   op.getType(),
                                                   adaptor.getOperand()));
    return success();
  }
};

struct TransposePattern : ShloPattern<shlo::TransposeOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny, "loom.transpose", rewriter)))
      return failure();
    rewriter.replaceOp(op, loom::TransposeOp::create(
                               rewriter, op.getLoc(), op.getType(),
                               adaptor.getOperand(), op.getPermutation()));
    return success();
  }
};

struct SlicePattern : ShloPattern<shlo::SliceOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny, "loom.slice", rewriter)))
      return failure();
    rewriter.replaceOp(op, loom::SliceOp::create(
                               rewriter, op.getLoc(), op.getType(),
                               adaptor.getOperand(), op.getStartIndices(),
                               op.getLimitIndices(), op.getStrides()));
    return success();
  }
};

struct ConcatenatePattern : ShloPattern<shlo::ConcatenateOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::ConcatenateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny, "loom.concat", rewriter)))
      return failure();
    rewriter.replaceOp(op, loom::ConcatOp::create(
                               rewriter, op.getLoc(), op.getType(),
                               adaptor.getInputs(),
                               static_cast<uint64_t>(op.getDimension())));
    return success();
  }
};

/// How an embedding-form gather maps to `loom.gather`.
struct GatherPlan {
  int64_t axis = 0;
  /// Dimension of the indices holding the (single) index, to drop; -1 if
  /// the index vector dimension is implicit.
  int64_t dropIndexDim = -1;
  /// Result dimension i is dimension permutation[i] of loom.gather's result.
  SmallVector<int64_t> permutation;
};

/// Checks that `op` is a take along one axis (an embedding lookup): one
/// indexed operand dimension, collapsed, whole slices of all the others, no
/// batching dimensions, one index per index vector. Returns the reason
/// otherwise.
static FailureOr<GatherPlan> planGather(shlo::GatherOp op, std::string &why) {
  shlo::GatherDimensionNumbersAttr dn = op.getDimensionNumbers();
  auto operandType = cast<RankedTensorType>(op.getOperand().getType());
  auto indicesType = cast<RankedTensorType>(op.getStartIndices().getType());
  int64_t rank = operandType.getRank();
  const char *form = "; only embedding-form gathers (a take along one axis) "
                     "are supported";
  if (!dn.getOperandBatchingDims().empty() ||
      !dn.getStartIndicesBatchingDims().empty()) {
    why = std::string("gather with batching dimensions") + form;
    return failure();
  }
  if (dn.getStartIndexMap().size() != 1) {
    why = "gather indexes " + std::to_string(dn.getStartIndexMap().size()) +
          " operand dimensions at once" + form;
    return failure();
  }
  GatherPlan plan;
  plan.axis = dn.getStartIndexMap()[0];
  if (plan.axis < 0 || plan.axis >= rank ||
      dn.getCollapsedSliceDims() != ArrayRef<int64_t>{plan.axis}) {
    why = std::string("gather does not collapse exactly its indexed "
                      "dimension") +
          form;
    return failure();
  }
  ArrayRef<int64_t> sizes = op.getSliceSizes();
  if (static_cast<int64_t>(sizes.size()) != rank) {
    why = "slice_sizes needs one entry per operand dimension";
    return failure();
  }
  for (int64_t d = 0; d < rank; ++d) {
    bool whole = d == plan.axis ? sizes[d] == 1
                                : (!operandType.isDynamicDim(d) &&
                                   sizes[d] == operandType.getDimSize(d));
    if (!whole) {
      why = "gather takes partial slices of dimension " + std::to_string(d) +
            form;
      return failure();
    }
  }
  if (operandType.isDynamicDim(plan.axis)) {
    why = "gather along a dimension of dynamic size (the indices are "
          "clamped to its size)";
    return failure();
  }
  int64_t indexVectorDim = dn.getIndexVectorDim();
  int64_t indicesRank = indicesType.getRank();
  if (indexVectorDim < indicesRank) {
    if (indexVectorDim < 0 || indicesType.getDimSize(indexVectorDim) != 1) {
      why = std::string("gather index vectors must hold one index") + form;
      return failure();
    }
    plan.dropIndexDim = indexVectorDim;
  } else if (indexVectorDim != indicesRank) {
    why = "index_vector_dim is out of range";
    return failure();
  }
  int64_t numBatch = indicesRank - (plan.dropIndexDim >= 0 ? 1 : 0);
  int64_t resultRank = numBatch + rank - 1;
  ArrayRef<int64_t> offsetDims = dn.getOffsetDims();
  if (static_cast<int64_t>(offsetDims.size()) != rank - 1 ||
      !llvm::is_sorted(offsetDims) ||
      llvm::any_of(offsetDims,
                   [&](int64_t d) { return d < 0 || d >= resultRank; })) {
    why = "offset_dims must list one increasing result dimension per "
          "operand dimension that is not indexed";
    return failure();
  }
  // loom.gather's result is operand[:axis] ++ batch ++ operand[axis+1:].
  int64_t nextOffset = 0, nextBatch = 0;
  for (int64_t p = 0; p < resultRank; ++p) {
    if (llvm::is_contained(offsetDims, p)) {
      int64_t k = nextOffset++;
      plan.permutation.push_back(k < plan.axis ? k : k + numBatch);
    } else {
      plan.permutation.push_back(plan.axis + nextBatch++);
    }
  }
  return plan;
}

struct GatherPattern : ShloPattern<shlo::GatherOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny, "loom.gather", rewriter)))
      return failure();
    if (std::optional<std::string> why =
            checkTypes({op.getStartIndices().getType()}, kInt,
                       "loom.gather indices"))
      return decline(op, rewriter, *why);
    std::string why;
    FailureOr<GatherPlan> plan = planGather(op, why);
    if (failed(plan))
      return decline(op, rewriter, why);

    Location loc = op.getLoc();
    auto dataType = cast<RankedTensorType>(adaptor.getOperand().getType());
    Value indices = adaptor.getStartIndices();
    auto indicesType = cast<RankedTensorType>(indices.getType());
    if (plan->dropIndexDim >= 0) {
      SmallVector<int64_t> shape(indicesType.getShape());
      shape.erase(shape.begin() + plan->dropIndexDim);
      indicesType = RankedTensorType::get(shape, indicesType.getElementType());
      indices = loom::ReshapeOp::create(rewriter, loc, indicesType, indices);
    }
    // StableHLO clamps start indices into [0, size - 1].
    Type indexElement = indicesType.getElementType();
    Value zero = createSplat(rewriter, loc, indicesType,
                             rewriter.getIntegerAttr(indexElement, 0));
    Value last = createSplat(
        rewriter, loc, indicesType,
        rewriter.getIntegerAttr(indexElement,
                                dataType.getDimSize(plan->axis) - 1));
    indices = loom::MaxOp::create(rewriter, loc, indicesType, indices, zero);
    indices = loom::MinOp::create(rewriter, loc, indicesType, indices, last);

    SmallVector<int64_t> shape(dataType.getShape().take_front(plan->axis));
    llvm::append_range(shape, indicesType.getShape());
    llvm::append_range(shape, dataType.getShape().drop_front(plan->axis + 1));
    bool transpose = !llvm::equal(
        plan->permutation, llvm::seq<int64_t>(0, plan->permutation.size()));
    Type gatherType = transpose ? RankedTensorType::get(
                                      shape, dataType.getElementType())
                                : op.getType();
    Value result = loom::GatherOp::create(rewriter, loc, gatherType,
                                          adaptor.getOperand(), indices,
                                          static_cast<uint64_t>(plan->axis));
    if (transpose)
      result = loom::TransposeOp::create(rewriter, loc, op.getType(), result,
                                         plan->permutation);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::loom::shlo_to_loom::populateDataMovementPatterns(
    RewritePatternSet &patterns, UnsupportedReasons &reasons) {
  patterns.add<ConstantPattern, IotaPattern, BroadcastInDimPattern,
               ReshapePattern, TransposePattern, SlicePattern,
               ConcatenatePattern, GatherPattern>(patterns.getContext(),
                                                  reasons);
}
