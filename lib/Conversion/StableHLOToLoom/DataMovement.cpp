//===- DataMovement.cpp - Constants, shape and indexing ops to loom -------===//

#include "Patterns.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

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
    if (failed(requireTypes(op, kAny,
                            loom::ConstantOp::getOperationName(), rewriter)))
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
    if (failed(requireTypes(op, kNumeric,
                            loom::IotaOp::getOperationName(), rewriter)))
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
    if (failed(requireTypes(op, kAny,
                            loom::BroadcastOp::getOperationName(), rewriter)))
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
    // Ties (repeated dimensions, refused by the verifier) keep their order.
    llvm::sort(order, [&](int64_t a, int64_t b) {
      return std::make_pair(dims[a], a) < std::make_pair(dims[b], b);
    });
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
    if (failed(requireTypes(op, kAny,
                            loom::ReshapeOp::getOperationName(), rewriter)))
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
    if (failed(requireTypes(op, kAny,
                            loom::TransposeOp::getOperationName(), rewriter)))
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
    if (failed(requireTypes(op, kAny,
                            loom::SliceOp::getOperationName(), rewriter)))
      return failure();
    rewriter.replaceOp(op, loom::SliceOp::create(
                               rewriter, op.getLoc(), op.getType(),
                               adaptor.getOperand(), op.getStartIndices(),
                               op.getLimitIndices(), op.getStrides()));
    return success();
  }
};

/// The start of each dimension of a `dynamic_slice`/`dynamic_update_slice`
/// of `extents` into `type` (static): each start index known at import
/// (a constant, or a loop counter once the loop is unrolled), clamped into
/// [0, dim - extent] as StableHLO clamps it. Sets `why` otherwise.
std::optional<SmallVector<int64_t>> staticStarts(ValueRange indices,
                                                 RankedTensorType type,
                                                 ArrayRef<int64_t> extents,
                                                 StringRef opName,
                                                 std::string &why) {
  int64_t rank = type.getRank();
  if (!type.hasStaticShape() ||
      static_cast<int64_t>(indices.size()) != rank ||
      static_cast<int64_t>(extents.size()) != rank) {
    why = (opName + " needs a static operand and one start index and size "
                    "per dimension")
              .str();
    return std::nullopt;
  }
  SmallVector<int64_t> starts(rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = type.getDimSize(d);
    if (extents[d] < 0 || extents[d] > dim) {
      why = (opName + " extent " + Twine(extents[d]) +
             " does not fit dimension " + Twine(d) + " of size " + Twine(dim))
                .str();
      return std::nullopt;
    }
    std::optional<int64_t> start = evaluateScalarInt(indices[d]);
    if (!start) {
      why = (opName + " start index of dimension " + Twine(d) +
             " is computed at run time; Loom's programs are static: index "
             "with constants or the counter of a loop with constant bounds "
             "(which Loom unrolls)")
                .str();
      return std::nullopt;
    }
    starts[d] = std::clamp<int64_t>(*start, 0, dim - extents[d]);
  }
  return starts;
}

/// `dynamic_slice` at start indices known at import -> `slice`.
struct DynamicSlicePattern : ShloPattern<shlo::DynamicSliceOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::DynamicSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny, loom::SliceOp::getOperationName(),
                            rewriter)))
      return failure();
    auto type = cast<RankedTensorType>(adaptor.getOperand().getType());
    ArrayRef<int64_t> sizes = op.getSliceSizes();
    std::string why;
    std::optional<SmallVector<int64_t>> starts = staticStarts(
        op.getStartIndices(), type, sizes, "dynamic_slice", why);
    if (!starts)
      return decline(op, rewriter, why);
    if (cast<RankedTensorType>(op.getType()).getShape() != sizes)
      return decline(op, rewriter,
                     "dynamic_slice result shape is not its slice sizes");
    SmallVector<int64_t> limits(*starts), strides(starts->size(), 1);
    for (auto [limit, size] : llvm::zip(limits, sizes))
      limit += size;
    rewriter.replaceOp(op, loom::SliceOp::create(
                               rewriter, op.getLoc(), op.getType(),
                               adaptor.getOperand(), *starts, limits, strides));
    return success();
  }
};

/// `dynamic_update_slice` at start indices known at import: the update
/// padded to the operand's shape, selected where it lands.
struct DynamicUpdateSlicePattern : ShloPattern<shlo::DynamicUpdateSliceOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::DynamicUpdateSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny, loom::SelectOp::getOperationName(),
                            rewriter)))
      return failure();
    auto type = cast<RankedTensorType>(adaptor.getOperand().getType());
    auto updateType = cast<RankedTensorType>(adaptor.getUpdate().getType());
    if (!updateType.hasStaticShape() ||
        updateType.getRank() != type.getRank() ||
        updateType.getElementType() != type.getElementType() ||
        op.getType() != type)
      return decline(op, rewriter,
                     "dynamic_update_slice needs an update of the operand's "
                     "rank and element type and a result of its type");
    std::string why;
    std::optional<SmallVector<int64_t>> starts =
        staticStarts(op.getStartIndices(), type, updateType.getShape(),
                     "dynamic_update_slice", why);
    if (!starts)
      return decline(op, rewriter, why);
    if (updateType == type) {
      rewriter.replaceOp(op, adaptor.getUpdate());
      return success();
    }
    Location loc = op.getLoc();
    int64_t rank = type.getRank();
    SmallVector<int64_t> high(rank), interior(rank, 0);
    for (int64_t d = 0; d < rank; ++d)
      high[d] = type.getDimSize(d) - (*starts)[d] - updateType.getDimSize(d);
    auto scalar = [&](Type element, TypedAttr value) {
      return createSplat(rewriter, loc, RankedTensorType::get({}, element),
                         value);
    };
    Type element = type.getElementType();
    Value zero = scalar(element, getScalarAttr(rewriter, element, 0));
    Value placed = padTensor(rewriter, loc, adaptor.getUpdate(), zero,
                             *starts, high, interior);
    Type i1 = rewriter.getI1Type();
    Value inside = padTensor(
        rewriter, loc,
        createSplat(rewriter, loc, updateType.clone(i1),
                    rewriter.getBoolAttr(true)),
        scalar(i1, rewriter.getBoolAttr(false)), *starts, high, interior);
    rewriter.replaceOp(op, loom::SelectOp::create(
                               rewriter, loc, type, inside, placed,
                               adaptor.getOperand()));
    return success();
  }
};

/// `pad` -> concatenations with broadcast pad values (edges), reshapes
/// around a concatenation (interior) and slices (negative edges); see
/// padTensor.
struct PadPattern : ShloPattern<shlo::PadOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny, loom::ConcatOp::getOperationName(),
                            rewriter)))
      return failure();
    auto inputType = cast<RankedTensorType>(adaptor.getOperand().getType());
    auto padType = cast<RankedTensorType>(adaptor.getPaddingValue().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> low = op.getEdgePaddingLow(),
                      high = op.getEdgePaddingHigh(),
                      interior = op.getInteriorPadding();
    int64_t rank = inputType.getRank();
    bool valid = inputType.hasStaticShape() && resultType.hasStaticShape() &&
                 resultType.getRank() == rank && padType.getRank() == 0 &&
                 padType.getElementType() == inputType.getElementType() &&
                 resultType.getElementType() == inputType.getElementType() &&
                 static_cast<int64_t>(low.size()) == rank &&
                 static_cast<int64_t>(high.size()) == rank &&
                 static_cast<int64_t>(interior.size()) == rank;
    for (int64_t d = 0; valid && d < rank; ++d) {
      int64_t n = inputType.getDimSize(d), size = 0;
      valid = interior[d] >= 0 &&
              !llvm::MulOverflow(std::max<int64_t>(n - 1, 0), interior[d],
                                 size) &&
              !llvm::AddOverflow(size, n, size) &&
              !llvm::AddOverflow(size, low[d], size) &&
              !llvm::AddOverflow(size, high[d], size) &&
              size == resultType.getDimSize(d);
    }
    if (!valid)
      return decline(op, rewriter,
                     "pad needs static shapes, a 0-d padding value of the "
                     "operand's element type, one low, high and "
                     "(non-negative) interior padding per dimension, and the "
                     "result shape they give");
    // An empty operand (JAX's associative scans pad some) or result: all
    // the result holds is padding.
    if (inputType.getNumElements() == 0 || resultType.getNumElements() == 0) {
      rewriter.replaceOp(op, loom::BroadcastOp::create(
                                 rewriter, op.getLoc(), resultType,
                                 adaptor.getPaddingValue(),
                                 ArrayRef<int64_t>{}));
      return success();
    }
    rewriter.replaceOp(op, padTensor(rewriter, op.getLoc(),
                                     adaptor.getOperand(),
                                     adaptor.getPaddingValue(), low, high,
                                     interior));
    return success();
  }
};

struct ConcatenatePattern : ShloPattern<shlo::ConcatenateOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::ConcatenateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny,
                            loom::ConcatOp::getOperationName(), rewriter)))
      return failure();
    rewriter.replaceOp(op, loom::ConcatOp::create(
                               rewriter, op.getLoc(), op.getType(),
                               adaptor.getInputs(),
                               static_cast<uint64_t>(op.getDimension())));
    return success();
  }
};

/// A take along one operand axis, with batching dimensions when it is
/// JAX's `take_along_axis` (a gather) or its transpose (a scatter).
struct TakeAxes {
  int64_t axis = 0;
  /// Operand dimensions the indices' batching dimensions pair with, and
  /// those indices dimensions (once the index vector dimension is dropped).
  SmallVector<int64_t> operandBatching, indicesBatching;
};

/// How an embedding-form gather maps to `loom.gather`.
struct GatherPlan : TakeAxes {
  /// Dimension of the indices holding the (single) index, to drop; -1 if
  /// the index vector dimension is implicit.
  int64_t dropIndexDim = -1;
  /// Result dimension i is dimension permutation[i] of loom.gather's result.
  SmallVector<int64_t> permutation;
};

/// Checks that `op` is a take along one axis (an embedding lookup, or with
/// batching dimensions JAX's `take_along_axis`): one indexed operand
/// dimension, collapsed, single elements of the batching dimensions, whole
/// slices of all the others, one index per index vector. Returns the
/// reason otherwise.
static FailureOr<GatherPlan> planGather(shlo::GatherOp op, std::string &why) {
  shlo::GatherDimensionNumbersAttr dn = op.getDimensionNumbers();
  auto operandType = cast<RankedTensorType>(op.getOperand().getType());
  auto indicesType = cast<RankedTensorType>(op.getStartIndices().getType());
  int64_t rank = operandType.getRank();
  const char *form = "; a gather with dimensions of dynamic size must be "
                     "a take along one axis";
  if (dn.getOperandBatchingDims().size() !=
      dn.getStartIndicesBatchingDims().size()) {
    why = "gather pairs a different number of operand and index batching "
          "dimensions";
    return failure();
  }
  if (dn.getStartIndexMap().size() != 1) {
    why = "gather indexes " + std::to_string(dn.getStartIndexMap().size()) +
          " operand dimensions at once" + form;
    return failure();
  }
  GatherPlan plan;
  plan.axis = dn.getStartIndexMap()[0];
  plan.operandBatching.assign(dn.getOperandBatchingDims().begin(),
                              dn.getOperandBatchingDims().end());
  plan.indicesBatching.assign(dn.getStartIndicesBatchingDims().begin(),
                              dn.getStartIndicesBatchingDims().end());
  for (int64_t d : plan.operandBatching)
    if (d < 0 || d >= rank || d == plan.axis ||
        operandType.isDynamicDim(d)) {
      why = "gather batching dimension " + std::to_string(d) +
            " is out of range, the indexed one or of dynamic size";
      return failure();
    }
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
  int64_t numOperandBatching = static_cast<int64_t>(plan.operandBatching.size());
  for (int64_t d = 0; d < rank; ++d) {
    bool single = d == plan.axis || llvm::is_contained(plan.operandBatching, d);
    bool whole = single ? sizes[d] == 1
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
  for (int64_t &d : plan.indicesBatching) {
    if (d < 0 || d >= indicesRank || d == plan.dropIndexDim) {
      why = "gather index batching dimension " + std::to_string(d) +
            " is out of range or the index vector dimension";
      return failure();
    }
    if (plan.dropIndexDim >= 0 && d > plan.dropIndexDim)
      --d;
  }
  int64_t numBatch = indicesRank - (plan.dropIndexDim >= 0 ? 1 : 0);
  int64_t numOffset = rank - 1 - numOperandBatching;
  int64_t resultRank = numBatch + numOffset;
  ArrayRef<int64_t> offsetDims = dn.getOffsetDims();
  if (static_cast<int64_t>(offsetDims.size()) != numOffset ||
      !llvm::is_sorted(offsetDims) ||
      llvm::any_of(offsetDims,
                   [&](int64_t d) { return d < 0 || d >= resultRank; })) {
    why = "offset_dims must list one increasing result dimension per "
          "operand dimension that is not indexed";
    return failure();
  }
  // Without batching dimensions loom.gather's result is operand[:axis] ++
  // batch ++ operand[axis+1:]; with them (see lowerBatchedGather) it is
  // batch ++ the offset dimensions.
  int64_t nextOffset = 0, nextBatch = 0;
  for (int64_t p = 0; p < resultRank; ++p) {
    if (llvm::is_contained(offsetDims, p)) {
      int64_t k = nextOffset++;
      if (numOperandBatching > 0)
        plan.permutation.push_back(numBatch + k);
      else
        plan.permutation.push_back(k < plan.axis ? k : k + numBatch);
    } else {
      plan.permutation.push_back(numOperandBatching > 0
                                     ? nextBatch++
                                     : plan.axis + nextBatch++);
    }
  }
  return plan;
}

/// The operand dimensions in flattenBatching's order: the batching ones,
/// the indexed one, then the others.
static SmallVector<int64_t> batchingFirst(const TakeAxes &plan,
                                          int64_t rank) {
  SmallVector<int64_t> permutation(plan.operandBatching);
  permutation.push_back(plan.axis);
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(permutation, d))
      permutation.push_back(d);
  return permutation;
}

/// A gather with batching dimensions as a take along axis 0 of the operand
/// with its batching dimensions and the indexed one flattened (in that
/// order, the other dimensions after them): each (clamped) index moves to
/// `index + size(axis) * (the row-major position of its batch coordinates)`,
/// the coordinates being iotas along the indices' batching dimensions.
/// Returns the flattened operand and the flat indices; loom.gather of the
/// two is batch ++ the operand's other dimensions.
static std::pair<Value, Value> flattenBatching(OpBuilder &b, Location loc,
                                               const TakeAxes &plan,
                                               Value data, Value indices) {
  auto dataType = cast<RankedTensorType>(data.getType());
  auto indicesType = cast<RankedTensorType>(indices.getType());
  int64_t rank = dataType.getRank();
  SmallVector<int64_t> permutation = batchingFirst(plan, rank);
  SmallVector<int64_t> permuted;
  for (int64_t d : permutation)
    permuted.push_back(dataType.getDimSize(d));
  if (!llvm::equal(permutation, llvm::seq<int64_t>(0, rank)))
    data = loom::TransposeOp::create(
        b, loc, RankedTensorType::get(permuted, dataType.getElementType()),
        data, permutation);
  int64_t leading = static_cast<int64_t>(plan.operandBatching.size()) + 1;
  int64_t rows = 1;
  for (int64_t d = 0; d < leading; ++d)
    rows *= permuted[d];
  SmallVector<int64_t> flat{rows};
  flat.append(permuted.begin() + leading, permuted.end());
  data = loom::ReshapeOp::create(
      b, loc, RankedTensorType::get(flat, dataType.getElementType()), data);

  // The batch coordinates' row-major position, in units of size(axis).
  Type element = indicesType.getElementType();
  int64_t stride = dataType.getDimSize(plan.axis);
  for (int64_t k = static_cast<int64_t>(plan.operandBatching.size()) - 1;
       k >= 0; --k) {
    Value coord = loom::IotaOp::create(b, loc, indicesType,
                                       plan.indicesBatching[k]);
    coord = loom::MulOp::create(
        b, loc, indicesType, coord,
        createSplat(b, loc, indicesType, b.getIntegerAttr(element, stride)));
    indices = loom::AddOp::create(b, loc, indicesType, indices, coord);
    stride *= dataType.getDimSize(plan.operandBatching[k]);
  }
  return {data, indices};
}

/// The inverse of flattenBatching's operand layout: `flat` back to
/// `originalType`.
static Value unflattenBatching(OpBuilder &b, Location loc,
                               const TakeAxes &plan, Value flat,
                               RankedTensorType originalType) {
  int64_t rank = originalType.getRank();
  SmallVector<int64_t> permutation = batchingFirst(plan, rank);
  SmallVector<int64_t> permuted;
  for (int64_t d : permutation)
    permuted.push_back(originalType.getDimSize(d));
  Value value = loom::ReshapeOp::create(
      b, loc, RankedTensorType::get(permuted, originalType.getElementType()),
      flat);
  if (llvm::equal(permutation, llvm::seq<int64_t>(0, rank)))
    return value;
  SmallVector<int64_t> inverse(rank);
  for (int64_t k = 0; k < rank; ++k)
    inverse[permutation[k]] = k;
  return loom::TransposeOp::create(b, loc, originalType, value, inverse);
}

/// A gather planGather declines, as a loom.gather of single elements of
/// the flattened operand (see FlatIndex.cpp). Returns why it cannot be.
static std::string lowerAnyGather(shlo::GatherOp op,
                                  shlo::GatherOp::Adaptor adaptor,
                                  ConversionPatternRewriter &rewriter) {
  shlo::GatherDimensionNumbersAttr dn = op.getDimensionNumbers();
  WindowIndexing w;
  w.startIndexMap = llvm::to_vector(dn.getStartIndexMap());
  w.droppedDims = llvm::to_vector(dn.getCollapsedSliceDims());
  w.operandBatching = llvm::to_vector(dn.getOperandBatchingDims());
  w.indicesBatching = llvm::to_vector(dn.getStartIndicesBatchingDims());
  w.windowDims = llvm::to_vector(dn.getOffsetDims());
  w.windowSizes = llvm::to_vector(op.getSliceSizes());
  w.indexVectorDim = dn.getIndexVectorDim();
  auto operandType = cast<RankedTensorType>(adaptor.getOperand().getType());
  auto indicesType =
      cast<RankedTensorType>(adaptor.getStartIndices().getType());
  auto resultType = cast<RankedTensorType>(op.getType());
  std::string why =
      checkWindowIndexing(w, operandType, indicesType, resultType);
  if (!why.empty())
    return why;
  Location loc = op.getLoc();
  Value flatIndex = buildFlatOperandIndex(rewriter, loc, w, operandType,
                                          adaptor.getStartIndices(),
                                          resultType);
  Value flat = loom::ReshapeOp::create(
      rewriter, loc,
      RankedTensorType::get({operandType.getNumElements()},
                            operandType.getElementType()),
      adaptor.getOperand());
  rewriter.replaceOp(op, loom::GatherOp::create(rewriter, loc, resultType,
                                                flat, flatIndex,
                                                static_cast<uint64_t>(0)));
  return "";
}

struct GatherPattern : ShloPattern<shlo::GatherOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny,
                            loom::GatherOp::getOperationName(), rewriter)))
      return failure();
    if (std::optional<std::string> why =
            checkTypes({op.getStartIndices().getType()}, kInt,
                       (loom::GatherOp::getOperationName() + " indices").str()))
      return decline(op, rewriter, *why);
    std::string why;
    FailureOr<GatherPlan> plan = planGather(op, why);
    if (failed(plan)) {
      // Any other static gather reads single elements.
      if (!cast<RankedTensorType>(op.getType()).hasStaticShape() ||
          !cast<RankedTensorType>(op.getOperand().getType())
               .hasStaticShape() ||
          !cast<RankedTensorType>(op.getStartIndices().getType())
               .hasStaticShape())
        return decline(op, rewriter, why);
      std::string general = lowerAnyGather(op, adaptor, rewriter);
      if (general.empty())
        return success();
      return decline(op, rewriter, "gather: " + general);
    }

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

    Value data = adaptor.getOperand();
    int64_t axis = plan->axis;
    SmallVector<int64_t> shape;
    if (!plan->operandBatching.empty()) {
      std::tie(data, indices) =
          flattenBatching(rewriter, loc, *plan, data, indices);
      axis = 0;
      shape.assign(indicesType.getShape().begin(),
                   indicesType.getShape().end());
      llvm::append_range(
          shape, cast<RankedTensorType>(data.getType()).getShape().drop_front());
    } else {
      shape.assign(dataType.getShape().take_front(axis).begin(),
                   dataType.getShape().take_front(axis).end());
      llvm::append_range(shape, indicesType.getShape());
      llvm::append_range(shape, dataType.getShape().drop_front(axis + 1));
    }
    bool transpose = !llvm::equal(
        plan->permutation, llvm::seq<int64_t>(0, plan->permutation.size()));
    Type gatherType = transpose ? RankedTensorType::get(
                                      shape, dataType.getElementType())
                                : op.getType();
    Value result = loom::GatherOp::create(rewriter, loc, gatherType, data,
                                          indices,
                                          static_cast<uint64_t>(axis));
    if (transpose)
      result = loom::TransposeOp::create(rewriter, loc, op.getType(), result,
                                         plan->permutation);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// How an embedding-gradient scatter maps to `loom.scatter_add`.
using ScatterPlan = TakeAxes;

/// Whether `op`'s update computation adds its two arguments.
static bool hasAddBody(shlo::ScatterOp op) {
  Block &block = op.getUpdateComputation().front();
  auto body = block.without_terminator();
  Operation *terminator = block.getTerminator();
  bool isAdd = block.getNumArguments() == 2 && llvm::hasSingleElement(body);
  if (isAdd) {
    Operation &inner = *body.begin();
    isAdd = isa<shlo::AddOp>(inner) &&
            ((inner.getOperand(0) == block.getArgument(0) &&
              inner.getOperand(1) == block.getArgument(1)) ||
             (inner.getOperand(0) == block.getArgument(1) &&
              inner.getOperand(1) == block.getArgument(0))) &&
            isa<shlo::ReturnOp>(terminator) &&
            terminator->getNumOperands() == 1 &&
            terminator->getOperand(0) == inner.getResult(0);
  }
  return isAdd;
}

/// Checks that `op`, an add-scatter of one operand and one update (the
/// caller checked), is the gradient of an embedding lookup: one index per
/// index vector into one operand dimension, inserted, with the index
/// vector in a trailing dimension of size 1 and whole slices of the other
/// operand dimensions as the trailing update dimensions. Sets `why`
/// otherwise.
static FailureOr<ScatterPlan> planScatter(shlo::ScatterOp op,
                                          std::string &why) {
  const char *form = "; a scatter with dimensions of dynamic size must "
                     "add whole slices along one axis";
  auto fail = [&](const std::string &text) {
    why = text + form;
    return failure();
  };
  shlo::ScatterDimensionNumbersAttr dn = op.getScatterDimensionNumbers();
  if (dn.getInputBatchingDims().size() !=
      dn.getScatterIndicesBatchingDims().size())
    return fail("scatter pairs a different number of operand and index "
                "batching dimensions");
  ScatterPlan plan;
  plan.operandBatching.assign(dn.getInputBatchingDims().begin(),
                              dn.getInputBatchingDims().end());
  plan.indicesBatching.assign(dn.getScatterIndicesBatchingDims().begin(),
                              dn.getScatterIndicesBatchingDims().end());
  int64_t numOperandBatching = static_cast<int64_t>(plan.operandBatching.size());
  auto operandType = cast<RankedTensorType>(op.getInputs()[0].getType());
  auto indicesType = cast<RankedTensorType>(op.getScatterIndices().getType());
  auto updatesType = cast<RankedTensorType>(op.getUpdates()[0].getType());
  int64_t rank = operandType.getRank();
  if (dn.getScatterDimsToOperandDims().size() != 1)
    return fail("scatter indexes " +
                std::to_string(dn.getScatterDimsToOperandDims().size()) +
                " operand dimensions at once");
  int64_t axis = dn.getScatterDimsToOperandDims()[0];
  plan.axis = axis;
  if (axis < 0 || axis >= rank ||
      dn.getInsertedWindowDims() != ArrayRef<int64_t>{axis})
    return fail("scatter does not insert exactly its indexed dimension");
  int64_t indicesRank = indicesType.getRank();
  if (indicesRank < 1 || dn.getIndexVectorDim() != indicesRank - 1 ||
      indicesType.getDimSize(indicesRank - 1) != 1)
    return fail("scatter index vectors must hold one index in the last "
                "dimension of the indices");
  for (auto [o, i] : llvm::zip(plan.operandBatching, plan.indicesBatching))
    if (o < 0 || o >= rank || o == axis || i < 0 || i >= indicesRank - 1 ||
        operandType.isDynamicDim(o) || indicesType.isDynamicDim(i) ||
        operandType.getDimSize(o) != indicesType.getDimSize(i))
      return fail("scatter batching dimensions " + std::to_string(o) +
                  " (operand) and " + std::to_string(i) +
                  " (indices) do not pair");
  int64_t numBatch = indicesRank - 1;
  ArrayRef<int64_t> windowDims = dn.getUpdateWindowDims();
  if (updatesType.getRank() != numBatch + rank - 1 - numOperandBatching ||
      !llvm::equal(windowDims,
                   llvm::seq<int64_t>(numBatch, updatesType.getRank())))
    return fail("scatter update_window_dims must be all update dimensions "
                "after the index dimensions");
  for (int64_t d = 0; d < numBatch; ++d) {
    int64_t u = updatesType.getDimSize(d), i = indicesType.getDimSize(d);
    if (u != i && !ShapedType::isDynamic(u) && !ShapedType::isDynamic(i))
      return fail("scatter updates dimension " + std::to_string(d) +
                  " does not match the indices");
  }
  for (int64_t d = 0, w = numBatch; d < rank; ++d) {
    if (d == axis || llvm::is_contained(plan.operandBatching, d))
      continue;
    int64_t u = updatesType.getDimSize(w++), o = operandType.getDimSize(d);
    if (u != o && !ShapedType::isDynamic(u) && !ShapedType::isDynamic(o))
      return fail("scatter updates partial slices of dimension " +
                  std::to_string(d));
  }
  if (numOperandBatching > 0 && operandType.isDynamicDim(axis))
    return fail("scatter along a dimension of dynamic size");
  return plan;
}

/// An add-scatter planScatter declines, as a loom.scatter_add of single
/// elements into the flattened operand (see FlatIndex.cpp); updates whose
/// window does not fit are skipped, as StableHLO specifies. Returns why it
/// cannot be.
static std::string lowerAnyScatter(shlo::ScatterOp op,
                                   shlo::ScatterOp::Adaptor adaptor,
                                   ConversionPatternRewriter &rewriter) {
  shlo::ScatterDimensionNumbersAttr dn = op.getScatterDimensionNumbers();
  Value input = adaptor.getInputs()[0], updates = adaptor.getUpdates()[0];
  auto operandType = cast<RankedTensorType>(input.getType());
  auto indicesType =
      cast<RankedTensorType>(adaptor.getScatterIndices().getType());
  auto updatesType = cast<RankedTensorType>(updates.getType());
  WindowIndexing w;
  w.startIndexMap = llvm::to_vector(dn.getScatterDimsToOperandDims());
  w.droppedDims = llvm::to_vector(dn.getInsertedWindowDims());
  w.operandBatching = llvm::to_vector(dn.getInputBatchingDims());
  w.indicesBatching = llvm::to_vector(dn.getScatterIndicesBatchingDims());
  w.windowDims = llvm::to_vector(dn.getUpdateWindowDims());
  w.indexVectorDim = dn.getIndexVectorDim();
  // The window of each operand dimension is the size of its update
  // dimension; dropped and batching dimensions have windows of one.
  int64_t rank = operandType.getRank();
  w.windowSizes.assign(rank, 1);
  for (int64_t d = 0, k = 0; d < rank; ++d) {
    if (llvm::is_contained(w.droppedDims, d) ||
        llvm::is_contained(w.operandBatching, d))
      continue;
    if (k >= static_cast<int64_t>(w.windowDims.size()) ||
        w.windowDims[k] < 0 || w.windowDims[k] >= updatesType.getRank())
      return "the window dimensions do not match the updates' rank";
    w.windowSizes[d] = updatesType.getDimSize(w.windowDims[k++]);
  }
  std::string why =
      checkWindowIndexing(w, operandType, indicesType, updatesType);
  if (!why.empty())
    return why;
  Location loc = op.getLoc();
  Value inBounds;
  Value flatIndex = buildFlatOperandIndex(rewriter, loc, w, operandType,
                                          adaptor.getScatterIndices(),
                                          updatesType, &inBounds);
  if (inBounds) {
    auto indexType = cast<RankedTensorType>(flatIndex.getType());
    flatIndex = loom::SelectOp::create(
        rewriter, loc, indexType, inBounds, flatIndex,
        createSplat(rewriter, loc, indexType, rewriter.getI64IntegerAttr(0)));
    updates = loom::SelectOp::create(
        rewriter, loc, updatesType, inBounds, updates,
        createSplat(rewriter, loc, updatesType,
                    getScalarAttr(rewriter, updatesType.getElementType(), 0)));
  }
  auto flatType = RankedTensorType::get({operandType.getNumElements()},
                                        operandType.getElementType());
  Value flat = loom::ReshapeOp::create(rewriter, loc, flatType, input);
  Value sum = loom::ScatterAddOp::create(rewriter, loc, flatType, flat,
                                         flatIndex, updates,
                                         static_cast<uint64_t>(0));
  rewriter.replaceOp(op,
                     loom::ReshapeOp::create(rewriter, loc, operandType, sum));
  return "";
}

/// Add-`scatter` -> `loom.scatter_add`. In embedding-gradient form it adds
/// whole slices; StableHLO skips out-of-bounds indices, loom.scatter_add
/// rejects them (the interpreter reports them), so those indices must be in
/// range. Any other static add-scatter adds single elements
/// (lowerAnyScatter), skipping windows out of bounds as StableHLO does.
struct ScatterPattern : ShloPattern<shlo::ScatterOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::ScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kNumeric,
                            loom::ScatterAddOp::getOperationName(), rewriter)))
      return failure();
    if (std::optional<std::string> why =
            checkTypes(
                {op.getScatterIndices().getType()}, kInt,
                (loom::ScatterAddOp::getOperationName() + " indices").str()))
      return decline(op, rewriter, *why);
    if (op.getInputs().size() != 1 || op.getUpdates().size() != 1)
      return decline(op, rewriter,
                     "scatter of " + Twine(op.getInputs().size()) +
                         " operands; only scatters of one operand are "
                         "supported");
    if (!hasAddBody(op))
      return decline(op, rewriter,
                     "scatter body is not an add of its two arguments; only "
                     "add-scatters (gradients of gathers) are supported");
    std::string why;
    FailureOr<ScatterPlan> plan = planScatter(op, why);
    if (failed(plan)) {
      // Any other static add-scatter adds single elements.
      if (!cast<RankedTensorType>(op.getInputs()[0].getType())
               .hasStaticShape() ||
          !cast<RankedTensorType>(op.getUpdates()[0].getType())
               .hasStaticShape() ||
          !cast<RankedTensorType>(op.getScatterIndices().getType())
               .hasStaticShape())
        return decline(op, rewriter, why);
      std::string general = lowerAnyScatter(op, adaptor, rewriter);
      if (general.empty())
        return success();
      return decline(op, rewriter, "scatter: " + general);
    }
    std::optional<int64_t> axis = plan->axis;
    Location loc = op.getLoc();
    Value indices = adaptor.getScatterIndices();
    auto indicesType = cast<RankedTensorType>(indices.getType());
    indicesType = RankedTensorType::get(indicesType.getShape().drop_back(),
                                        indicesType.getElementType());
    indices = loom::ReshapeOp::create(rewriter, loc, indicesType, indices);
    if (!plan->operandBatching.empty()) {
      // Flattened as the gather's operand: scatter_add along axis 0 takes
      // the updates as they are (indices ++ the other operand dimensions).
      Value input = adaptor.getInputs()[0];
      auto inputType = cast<RankedTensorType>(input.getType());
      auto [flatInput, flatIndices] =
          flattenBatching(rewriter, loc, *plan, input, indices);
      Value sum = loom::ScatterAddOp::create(
          rewriter, loc, flatInput.getType(), flatInput, flatIndices,
          adaptor.getUpdates()[0], static_cast<uint64_t>(0));
      rewriter.replaceOp(op, unflattenBatching(rewriter, loc, *plan, sum,
                                               inputType));
      return success();
    }
    // StableHLO's updates are indices ++ operand[:axis] ++ operand[axis+1:];
    // loom's are operand[:axis] ++ indices ++ operand[axis+1:].
    Value updates = adaptor.getUpdates()[0];
    auto updatesType = cast<RankedTensorType>(updates.getType());
    int64_t numBatch = indicesType.getRank();
    if (*axis > 0 && numBatch > 0) {
      SmallVector<int64_t> permutation;
      for (int64_t d = 0; d < *axis; ++d)
        permutation.push_back(numBatch + d);
      for (int64_t d = 0; d < numBatch; ++d)
        permutation.push_back(d);
      for (int64_t d = numBatch + *axis; d < updatesType.getRank(); ++d)
        permutation.push_back(d);
      SmallVector<int64_t> shape;
      for (int64_t d : permutation)
        shape.push_back(updatesType.getDimSize(d));
      updates = loom::TransposeOp::create(
          rewriter, loc,
          RankedTensorType::get(shape, updatesType.getElementType()), updates,
          permutation);
    }
    rewriter.replaceOp(op, loom::ScatterAddOp::create(
                               rewriter, loc, op.getResults()[0].getType(),
                               adaptor.getInputs()[0], indices, updates,
                               static_cast<uint64_t>(*axis)));
    return success();
  }
};

} // namespace

void mlir::loom::shlo_to_loom::populateDataMovementPatterns(
    RewritePatternSet &patterns, UnsupportedReasons &reasons) {
  patterns.add<ConstantPattern, IotaPattern, BroadcastInDimPattern,
               ReshapePattern, TransposePattern, SlicePattern,
               PadPattern, ConcatenatePattern, GatherPattern, ScatterPattern,
               DynamicSlicePattern, DynamicUpdateSlicePattern>(
      patterns.getContext(), reasons);
}
