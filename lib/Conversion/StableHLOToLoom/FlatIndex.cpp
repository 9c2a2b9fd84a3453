//===- FlatIndex.cpp - Any gather or scatter as a take of single elements -===//
//
// A `gather` or `scatter` the embedding-form patterns do not take (several
// indexed dimensions, partial slices, windows) reads or writes one operand
// element per result (or update) element. Its row-major position in the
// operand is integer arithmetic on the index vectors and iotas, so the op
// becomes one loom.gather (loom.scatter_add) along axis 0 of the operand
// flattened to one dimension, at a computed index per element. Autodiff,
// the interpreter and the backends then need nothing new: the gradient of
// such a gather is the scatter_add they already have.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::shlo_to_loom;

/// The first of `values` repeated, out of [0, bound), or in neither list
/// twice; empty when there is none.
static std::string checkDims(ArrayRef<int64_t> values, int64_t bound,
                             StringRef what) {
  for (auto [k, v] : llvm::enumerate(values)) {
    if (v < 0 || v >= bound)
      return (what + " " + Twine(v) + " is out of range [0, " + Twine(bound) +
              ")")
          .str();
    if (llvm::is_contained(values.take_front(k), v))
      return (what + " lists " + Twine(v) + " twice").str();
  }
  return "";
}

std::string mlir::loom::shlo_to_loom::checkWindowIndexing(
    const WindowIndexing &w, RankedTensorType operandType,
    RankedTensorType indicesType, RankedTensorType resultType) {
  if (!operandType.hasStaticShape() || !indicesType.hasStaticShape() ||
      !resultType.hasStaticShape())
    return "dimensions of dynamic size";
  int64_t rank = operandType.getRank();
  int64_t indicesRank = indicesType.getRank();
  int64_t resultRank = resultType.getRank();
  if (static_cast<int64_t>(w.windowSizes.size()) != rank)
    return "the window needs one size per operand dimension";
  if (w.operandBatching.size() != w.indicesBatching.size())
    return "pairs a different number of operand and index batching "
           "dimensions";
  if (w.indexVectorDim < 0 || w.indexVectorDim > indicesRank)
    return "index_vector_dim is out of range";
  int64_t vectorSize = w.indexVectorDim < indicesRank
                           ? indicesType.getDimSize(w.indexVectorDim)
                           : 1;
  if (vectorSize != static_cast<int64_t>(w.startIndexMap.size()))
    return "index vectors of " + std::to_string(vectorSize) +
           " indices for " + std::to_string(w.startIndexMap.size()) +
           " indexed dimensions";
  SmallVector<int64_t> all(w.droppedDims);
  llvm::append_range(all, w.operandBatching);
  for (const std::string &why :
       {checkDims(w.startIndexMap, rank, "indexed dimension"),
        checkDims(all, rank, "collapsed or batching dimension"),
        checkDims(w.indicesBatching, indicesRank,
                  "index batching dimension")})
    if (!why.empty())
      return why;
  for (int64_t d : w.startIndexMap)
    if (llvm::is_contained(w.operandBatching, d))
      return "dimension " + std::to_string(d) + " is indexed and batching";
  for (int64_t d : all)
    if (w.windowSizes[d] != 1)
      return "collapsed or batching dimension " + std::to_string(d) +
             " has a window of " + std::to_string(w.windowSizes[d]);
  for (int64_t d = 0; d < rank; ++d)
    if (w.windowSizes[d] < 0 || w.windowSizes[d] > operandType.getDimSize(d))
      return "a window of " + std::to_string(w.windowSizes[d]) +
             " elements of operand dimension " + std::to_string(d) + " (of " +
             std::to_string(operandType.getDimSize(d)) + ")";
  int64_t numBatch = indicesRank - (w.indexVectorDim < indicesRank ? 1 : 0);
  if (static_cast<int64_t>(w.windowDims.size()) !=
          rank - static_cast<int64_t>(all.size()) ||
      resultRank != numBatch + static_cast<int64_t>(w.windowDims.size()) ||
      !llvm::is_sorted(w.windowDims) || !checkDims(w.windowDims, resultRank,
                                                  "window dimension")
                                             .empty())
    return "the window dimensions do not match the result's rank";
  SmallVector<int64_t> batchDims = w.batchResultDims(resultRank);
  for (int64_t i = 0, k = 0; i < indicesRank; ++i) {
    if (i == w.indexVectorDim)
      continue;
    if (resultType.getDimSize(batchDims[k++]) != indicesType.getDimSize(i))
      return "index dimension " + std::to_string(i) +
             " does not match the result";
  }
  for (int64_t d = 0, k = 0; d < rank; ++d) {
    if (llvm::is_contained(all, d))
      continue;
    if (resultType.getDimSize(w.windowDims[k++]) != w.windowSizes[d])
      return "the window of operand dimension " + std::to_string(d) +
             " does not match the result";
  }
  for (auto [o, i] : llvm::zip(w.operandBatching, w.indicesBatching))
    if (i == w.indexVectorDim ||
        operandType.getDimSize(o) != indicesType.getDimSize(i))
      return "batching dimensions " + std::to_string(o) + " (operand) and " +
             std::to_string(i) + " (indices) do not pair";
  return "";
}

SmallVector<int64_t>
mlir::loom::shlo_to_loom::WindowIndexing::batchResultDims(
    int64_t resultRank) const {
  SmallVector<int64_t> dims;
  for (int64_t p = 0; p < resultRank; ++p)
    if (!llvm::is_contained(windowDims, p))
      dims.push_back(p);
  return dims;
}

Value mlir::loom::shlo_to_loom::buildFlatOperandIndex(
    OpBuilder &b, Location loc, const WindowIndexing &w,
    RankedTensorType operandType, Value indices, RankedTensorType resultType,
    Value *inBounds) {
  auto i64 = b.getI64Type();
  auto indexType = RankedTensorType::get(resultType.getShape(), i64);
  auto boolType = RankedTensorType::get(resultType.getShape(), b.getI1Type());
  auto splat = [&](int64_t v) {
    return createSplat(b, loc, indexType, b.getI64IntegerAttr(v));
  };
  auto indicesType = cast<RankedTensorType>(indices.getType());
  if (!indicesType.getElementType().isInteger(64)) {
    indicesType = RankedTensorType::get(indicesType.getShape(), i64);
    indices = loom::ConvertOp::create(b, loc, indicesType, indices);
  }
  int64_t indicesRank = indicesType.getRank();
  SmallVector<int64_t> batchDims = w.batchResultDims(resultType.getRank());
  // Index dimension i (not the vector's) is result dimension batchDims[k].
  auto batchDimOf = [&](int64_t i) {
    return batchDims[i - (w.indexVectorDim < i ? 1 : 0)];
  };
  // Component j of every index vector, broadcast over the result.
  auto component = [&](int64_t j) -> Value {
    Value c = indices;
    if (w.indexVectorDim < indicesRank) {
      c = sliceAlong(b, loc, c, w.indexVectorDim, j, j + 1);
      SmallVector<int64_t> shape(indicesType.getShape());
      shape.erase(shape.begin() + w.indexVectorDim);
      c = loom::ReshapeOp::create(b, loc, RankedTensorType::get(shape, i64),
                                  c);
    }
    return loom::BroadcastOp::create(b, loc, indexType, c, batchDims);
  };

  Value flat, valid;
  int64_t stride = 1;
  int64_t nextWindow = static_cast<int64_t>(w.windowDims.size());
  for (int64_t d = operandType.getRank() - 1; d >= 0; --d) {
    int64_t size = operandType.getDimSize(d);
    Value position;
    if (const auto *j = llvm::find(w.startIndexMap, d);
        j != w.startIndexMap.end()) {
      position = component(j - w.startIndexMap.begin());
      Value low = splat(0), high = splat(size - w.windowSizes[d]);
      if (!inBounds) {
        // gather clamps the window into the operand.
        position = loom::MaxOp::create(b, loc, indexType, position, low);
        position = loom::MinOp::create(b, loc, indexType, position, high);
      } else {
        // scatter skips a window that does not fit.
        Value fits = loom::SelectOp::create(
            b, loc, boolType,
            loom::CompareOp::create(b, loc, boolType, ComparisonDirection::ge,
                                    position, low),
            loom::CompareOp::create(b, loc, boolType, ComparisonDirection::le,
                                    position, high),
            createSplat(b, loc, boolType, b.getBoolAttr(false)));
        valid = valid ? loom::SelectOp::create(b, loc, boolType, valid, fits,
                                               valid)
                      : fits;
      }
    } else if (const auto *o = llvm::find(w.operandBatching, d);
               o != w.operandBatching.end()) {
      int64_t i = w.indicesBatching[o - w.operandBatching.begin()];
      position = loom::IotaOp::create(b, loc, indexType, batchDimOf(i));
    }
    if (!llvm::is_contained(w.droppedDims, d) &&
        !llvm::is_contained(w.operandBatching, d)) {
      Value offset =
          loom::IotaOp::create(b, loc, indexType, w.windowDims[--nextWindow]);
      position = position ? loom::AddOp::create(b, loc, indexType, position,
                                                offset)
                          : offset;
    }
    if (position) {
      if (stride != 1)
        position = loom::MulOp::create(b, loc, indexType, position,
                                       splat(stride));
      flat = flat ? loom::AddOp::create(b, loc, indexType, flat, position)
                  : position;
    }
    stride *= size;
  }
  if (inBounds)
    *inBounds = valid;
  return flat ? flat : splat(0);
}
