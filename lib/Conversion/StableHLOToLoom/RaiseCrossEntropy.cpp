//===- RaiseCrossEntropy.cpp - Spelled-out cross-entropy to loom ----------===//
//
// Implements -raise-stablehlo-cross-entropy (see Passes.td): JAX has no
// cross-entropy op, so optax's softmax_cross_entropy_with_integer_labels
// reaches StableHLO as a logsumexp minus a take_along_axis gather (some 40
// ops with JAX's index normalisation and fill masks). Rewriting it into one
// loom.cross_entropy lets the loom passes treat it as PyTorch's exports'
// loss is treated (loom-vocab-parallel cuts the LM head and its loss).
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/StableHLOToLoom/Passes.h"

#include "Patterns.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_RAISESTABLEHLOCROSSENTROPY
#include "loom/Conversion/StableHLOToLoom/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::shlo_to_loom;

namespace {

RankedTensorType rankedType(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

/// The sizes of `type` other than 1, in order.
SmallVector<int64_t> nonUnitSizes(RankedTensorType type) {
  SmallVector<int64_t> sizes;
  for (int64_t d : type.getShape())
    if (d != 1)
      sizes.push_back(d);
  return sizes;
}

/// The value `small` (shape S) that `big` (shape S ++ [C]) repeats along
/// its last dimension through broadcast_in_dim and unit-dimension reshapes
/// (big[i..., c] == small[i...]), following them back to `stopAt` if given,
/// else as far as they go; null if there is none.
Value perRowSource(Value big, Value stopAt = {}) {
  RankedTensorType bigType = rankedType(big);
  if (!bigType || !bigType.hasStaticShape() || bigType.getRank() < 1)
    return {};
  // pos[d]: the dimension of `small` (a leading one of `big`) that
  // dimension d of the current value indexes; -1: the class dimension, or
  // a unit dimension.
  int64_t rank = bigType.getRank();
  SmallVector<int64_t> pos = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
  pos.push_back(-1);
  Value current = big;
  while (current != stopAt) {
    RankedTensorType type = rankedType(current);
    Operation *def = current.getDefiningOp();
    if (auto bcast = dyn_cast_or_null<shlo::BroadcastInDimOp>(def)) {
      RankedTensorType in = rankedType(bcast.getOperand());
      ArrayRef<int64_t> dims = bcast.getBroadcastDimensions();
      if (!in || static_cast<int64_t>(dims.size()) != in.getRank())
        return {};
      // A dimension the broadcast creates or expands must be the class
      // dimension (or of size 1).
      for (int64_t d = 0; d < type.getRank(); ++d) {
        const int64_t *k = llvm::find(dims, d);
        bool expanded = k == dims.end() ||
                        in.getDimSize(k - dims.begin()) != type.getDimSize(d);
        if (expanded && pos[d] != -1 && type.getDimSize(d) != 1)
          return {};
      }
      SmallVector<int64_t> next;
      for (auto [k, d] : llvm::enumerate(dims))
        next.push_back(in.getDimSize(k) == type.getDimSize(d) ? pos[d] : -1);
      pos = std::move(next);
      current = bcast.getOperand();
      continue;
    }
    if (auto reshape = dyn_cast_or_null<shlo::ReshapeOp>(def)) {
      RankedTensorType in = rankedType(reshape.getOperand());
      if (!in || nonUnitSizes(in) != nonUnitSizes(type))
        return {};
      SmallVector<int64_t> kept;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.getDimSize(d) != 1)
          kept.push_back(pos[d]);
      SmallVector<int64_t> next;
      unsigned k = 0;
      for (int64_t size : in.getShape())
        next.push_back(size == 1 ? -1 : kept[k++]);
      pos = std::move(next);
      current = reshape.getOperand();
      continue;
    }
    break;
  }
  RankedTensorType smallType = rankedType(current);
  if (!smallType || smallType.getShape() != bigType.getShape().drop_back())
    return {};
  for (int64_t d = 0; d < smallType.getRank(); ++d)
    if (smallType.getDimSize(d) != 1 && pos[d] != d)
      return {};
  return current;
}

/// The value of every element of `v` when it is a float constant (possibly
/// broadcast) with one value.
std::optional<APFloat> floatSplat(Value v) {
  while (auto bcast = v.getDefiningOp<shlo::BroadcastInDimOp>())
    v = bcast.getOperand();
  auto constant = v.getDefiningOp<shlo::ConstantOp>();
  auto dense = constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue())
                        : DenseFPElementsAttr();
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>();
}

bool isNaNSplat(Value v) {
  std::optional<APFloat> splat = floatSplat(v);
  return splat && splat->isNaN();
}

/// Whether gather `g` takes the only element of an operand dimension `k` of
/// size 1 (at any start index: StableHLO clamps it to 0), whole slices of
/// the others: its result is the operand without dimension `k`, as JAX's
/// `x[..., 0]` spells it.
bool isUnitDimensionTake(shlo::GatherOp g) {
  RankedTensorType in = rankedType(g.getOperand());
  RankedTensorType out = rankedType(g.getResult());
  if (!in || !out || in.getRank() != out.getRank() + 1)
    return false;
  shlo::GatherDimensionNumbersAttr dn = g.getDimensionNumbers();
  if (dn.getCollapsedSliceDims().size() != 1 ||
      !dn.getOperandBatchingDims().empty() ||
      dn.getStartIndexMap() != dn.getCollapsedSliceDims())
    return false;
  int64_t k = dn.getCollapsedSliceDims()[0];
  if (in.getDimSize(k) != 1 ||
      !llvm::equal(dn.getOffsetDims(), llvm::seq<int64_t>(0, out.getRank())))
    return false;
  SmallVector<int64_t> kept(in.getShape());
  kept.erase(kept.begin() + k);
  return g.getSliceSizes() == in.getShape() && out.getShape() == ArrayRef(kept);
}

/// The indices at which `value` (shape S) takes one element of each row of
/// `logits` (shape S ++ [C]) along its last dimension, as JAX's
/// `take_along_axis(logits, labels[..., None], -1)[..., 0]` lowers: a
/// gather with the leading dimensions as batching dimensions, then unit
/// reshapes, `x[..., 0]` gathers and fill-mode selects (NaN where an index
/// is out of range). Returns the gather's indices reshaped to S (JAX has
/// already wrapped negative labels), or null.
Value matchTakeAlongLast(PatternRewriter &rewriter, Value value,
                         Value logits) {
  RankedTensorType logitsType = rankedType(logits);
  int64_t rank = logitsType.getRank();
  while (true) {
    Operation *def = value.getDefiningOp();
    if (auto select = dyn_cast_or_null<shlo::SelectOp>(def)) {
      if (!isNaNSplat(select.getOnFalse()))
        return {};
      value = select.getOnTrue();
    } else if (auto reshape = dyn_cast_or_null<shlo::ReshapeOp>(def)) {
      value = reshape.getOperand();
    } else if (auto gather = dyn_cast_or_null<shlo::GatherOp>(def);
               gather && isUnitDimensionTake(gather)) {
      value = gather.getOperand();
    } else {
      break;
    }
  }
  auto gather = value.getDefiningOp<shlo::GatherOp>();
  if (!gather || gather.getOperand() != logits)
    return {};
  RankedTensorType indicesType = rankedType(gather.getStartIndices());
  RankedTensorType resultType = rankedType(gather.getResult());
  if (!indicesType || !indicesType.hasStaticShape() || !resultType)
    return {};
  shlo::GatherDimensionNumbersAttr dn = gather.getDimensionNumbers();
  auto leading = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
  int64_t vectorDim = dn.getIndexVectorDim();
  if (dn.getOperandBatchingDims() != ArrayRef(leading) ||
      dn.getStartIndicesBatchingDims() != ArrayRef(leading) ||
      dn.getStartIndexMap() != ArrayRef<int64_t>{rank - 1} ||
      dn.getCollapsedSliceDims() != ArrayRef<int64_t>{rank - 1} ||
      !dn.getOffsetDims().empty() ||
      llvm::any_of(gather.getSliceSizes(), [](int64_t s) { return s != 1; }))
    return {};
  // One index per row: the indices' other dimensions have size 1.
  for (int64_t d = rank - 1; d < indicesType.getRank(); ++d)
    if (indicesType.getDimSize(d) != 1)
      return {};
  if (vectorDim < rank - 1 || vectorDim > indicesType.getRank())
    return {};
  auto labelsType = RankedTensorType::get(logitsType.getShape().drop_back(),
                                          indicesType.getElementType());
  return shlo::ReshapeOp::create(rewriter, gather.getLoc(), labelsType,
                                 gather.getStartIndices());
}

/// `lse - picked`, where lse is logsumexp(logits) over the last dimension
/// and picked takes one logit per row at the labels (see Passes.td).
struct RaiseCrossEntropy : OpRewritePattern<shlo::SubtractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(shlo::SubtractOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = rankedType(op.getResult());
    if (!resultType || !isa<FloatType>(resultType.getElementType()))
      return failure();
    // lse = log(|sum(exp(logits - shift))|) [+ shift]: the shift of JAX's
    // logsumexp (the row max) cancels whatever its value.
    Value lse = op.getLhs(), shift;
    if (auto add = lse.getDefiningOp<shlo::AddOp>()) {
      for (auto [log, other] : {std::pair(add.getLhs(), add.getRhs()),
                                std::pair(add.getRhs(), add.getLhs())})
        if (log.getDefiningOp<shlo::LogOp>()) {
          lse = log;
          shift = other;
          break;
        }
    }
    auto log = lse.getDefiningOp<shlo::LogOp>();
    if (!log)
      return rewriter.notifyMatchFailure(op, "not a logsumexp minus a take");
    Value sum = log.getOperand();
    if (auto abs = sum.getDefiningOp<shlo::AbsOp>())
      sum = abs.getOperand();
    auto reduce = sum.getDefiningOp<shlo::ReduceOp>();
    if (!reduce || reduce.getInputs().size() != 1)
      return failure();
    std::string why;
    FailureOr<SmallVector<ReduceKind>> kinds =
        getReduceKinds(reduce.getBody(), 1, why);
    auto exp = reduce.getInputs()[0].getDefiningOp<shlo::ExpOp>();
    if (failed(kinds) || (*kinds)[0] != ReduceKind::Sum ||
        !exp)
      return failure();
    std::optional<APFloat> init = floatSplat(reduce.getInitValues()[0]);
    if (!init || !init->isZero())
      return failure();
    auto shifted = exp.getOperand().getDefiningOp<shlo::SubtractOp>();
    if (!shifted)
      return failure();
    Value logits = shifted.getLhs();
    RankedTensorType logitsType = rankedType(logits);
    if (!logitsType || !logitsType.hasStaticShape() ||
        logitsType.getRank() != resultType.getRank() + 1 ||
        reduce.getDimensions() !=
            ArrayRef<int64_t>{logitsType.getRank() - 1})
      return failure();
    // Either the shift is added back and the take reads the logits, or it
    // is not and the take reads the shifted logits (lse and take both
    // shifted): logsumexp(logits) - logits[label] either way.
    // The shift: JAX's (guarded) row max, or any value per row.
    Value taken = shift ? logits : shifted.getResult();
    Value rowShift = perRowSource(shifted.getRhs(), shift);
    if (!rowShift || (shift && rowShift != shift))
      return rewriter.notifyMatchFailure(op, "the shift is not per row");
    Value labels = matchTakeAlongLast(rewriter, op.getRhs(), taken);
    if (!labels)
      return rewriter.notifyMatchFailure(op, "not a take along the classes");
    rewriter.replaceOpWithNewOp<loom::CrossEntropyOp>(
        op, resultType, logits, labels, LossReduction::none,
        /*ignore_index=*/nullptr);
    return success();
  }
};

struct RaiseStableHLOCrossEntropyPass
    : loom::impl::RaiseStableHLOCrossEntropyBase<
          RaiseStableHLOCrossEntropyPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RaiseCrossEntropy>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
