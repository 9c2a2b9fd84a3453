//===- Patterns.h - Shared parts of the StableHLO patterns ------*- C++ -*-===//
//
// Internal to lib/Conversion/StableHLOToLoom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CONVERSION_STABLEHLOTOLOOM_PATTERNS_H
#define LOOM_LIB_CONVERSION_STABLEHLOTOLOOM_PATTERNS_H

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/StableHLO/IR/ImportDialects.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>
#include <string>

namespace mlir {
namespace loom {
namespace shlo_to_loom {

/// Why an op was not converted, recorded by the pattern that declined it.
/// One map per run of the pass (patterns hold a reference to it).
using UnsupportedReasons = llvm::DenseMap<Operation *, std::string>;

/// Classes of element types the loom dialect has.
enum ElementKind : unsigned {
  kFloat = 1,  // f32, bf16, f16
  kInt = 2,    // i64, i32 (signless)
  kBool = 4,   // i1
  kNumeric = kFloat | kInt,
  kAny = kFloat | kInt | kBool,
};

/// The class of `elementType`, or 0 when loom lacks it.
unsigned getElementKind(Type elementType);

/// Why `types` do not all fit `kinds` (every type must be a ranked tensor
/// of a loom element type of one of the kinds); empty when they do.
/// `target` names what they are for in the message (e.g. `ExpOp::getOperationName()`).
std::optional<std::string> checkTypes(ArrayRef<Type> types, unsigned kinds,
                                      StringRef target);

/// A tensor of type `like` (a ranked tensor, possibly with dynamic sizes)
/// filled with `value`: a constant, broadcast from a 0-d constant when the
/// shape is not static.
Value createSplat(OpBuilder &builder, Location loc, RankedTensorType like,
                  TypedAttr value);

/// `value` converted to an attribute of `elementType` (float or integer).
TypedAttr getScalarAttr(OpBuilder &builder, Type elementType, double value);

/// `value` broadcast to the shape of `like` when it is 0-d and `like` is
/// not; otherwise `value` itself.
Value broadcastScalarTo(OpBuilder &builder, Location loc, Value value,
                        RankedTensorType like);

/// Elements `start` to `limit` (exclusive) of dimension `dim` of `input`
/// (a ranked tensor of static shape).
Value sliceAlong(OpBuilder &builder, Location loc, Value input, int64_t dim,
                 int64_t start, int64_t limit);

/// `input` (a ranked tensor of static shape) padded with the 0-d
/// `padValue` as stablehlo.pad pads: `interior[d]` elements between
/// neighbours of dimension d, then `low[d]`/`high[d]` elements before/after
/// it (negative: that many cut). The caller checks that every dimension of
/// the result is positive.
Value padTensor(OpBuilder &builder, Location loc, Value input, Value padValue,
                ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                ArrayRef<int64_t> interior);

/// How the elements of a gather's result (a scatter's updates) index the
/// operand: StableHLO's dimension numbers, named for both ops.
struct WindowIndexing {
  /// Operand dimension started by each index vector component
  /// (`start_index_map`, `scatter_dims_to_operand_dims`).
  SmallVector<int64_t> startIndexMap;
  /// Operand dimensions with a window of one element and no result
  /// dimension (`collapsed_slice_dims`, `inserted_window_dims`).
  SmallVector<int64_t> droppedDims;
  /// Paired batching dimensions of the operand and the indices.
  SmallVector<int64_t> operandBatching, indicesBatching;
  /// Result dimensions of the other operand dimensions, in their order
  /// (`offset_dims`, `update_window_dims`).
  SmallVector<int64_t> windowDims;
  /// Window size per operand dimension (`slice_sizes`; for a scatter, the
  /// updates' window dimensions, 1 elsewhere).
  SmallVector<int64_t> windowSizes;
  int64_t indexVectorDim = 0;

  /// The result dimensions that are not window dimensions, increasing:
  /// the indices' dimensions other than the index vector's, in order.
  SmallVector<int64_t> batchResultDims(int64_t resultRank) const;
};

/// Why `w` does not describe a gather of `operandType` at `indicesType`
/// into `resultType` (or a scatter with updates of `resultType`), all of
/// static shape; empty when it does.
std::string checkWindowIndexing(const WindowIndexing &w,
                                RankedTensorType operandType,
                                RankedTensorType indicesType,
                                RankedTensorType resultType);

/// The row-major position in the operand of every element of the result
/// (an i64 tensor of its shape), for a `w` checkWindowIndexing accepts.
/// Without `inBounds` each start is clamped so its window fits (gather);
/// with it, starts are not clamped and `*inBounds` is set to an i1 tensor
/// telling where the element's whole window fits (scatter skips the
/// others; null when every window fits).
Value buildFlatOperandIndex(OpBuilder &builder, Location loc,
                            const WindowIndexing &w,
                            RankedTensorType operandType, Value indices,
                            RankedTensorType resultType,
                            Value *inBounds = nullptr);

/// The associative reductions a StableHLO reduction body can name.
enum class ReduceKind { Sum, Prod, Max, Min, And, Or };

/// The reductions a body of `count` inputs (`reduce`, `reduce_window`:
/// block arguments accumulators then elements) computes when they are
/// independent: result k is one add, multiply, maximum, minimum, and or or
/// of accumulator k and element k. On i1, maximum is or, minimum and
/// multiply are and.
/// Sets `why` on failure.
FailureOr<SmallVector<ReduceKind>> getReduceKinds(Region &body, unsigned count,
                                                  std::string &why);

/// Whether `init` is a constant equal to the identity of `kind`.
bool isReduceIdentity(Value init, ReduceKind kind);

/// `lhs` combined elementwise with `rhs` (same type) by `kind`.
Value combineByKind(OpBuilder &builder, Location loc, ReduceKind kind,
                    Value lhs, Value rhs);

/// The shape of `value`, a ranked tensor.
inline ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Small integer tensors known at import (signless integer types, i1 as 0
/// or 1; elements in row-major order), and values known not to be.
struct ScalarValues {
  llvm::DenseMap<Value, SmallVector<int64_t>> values;
  llvm::DenseSet<Value> unknown;
};

/// The value of `value` when it is a one-element signless integer tensor
/// computed from constants by integer stablehlo ops (arithmetic, logic,
/// convert, compare, select, clamp, and the data movement of reshape,
/// broadcast_in_dim, iota, slice, concatenate, dynamic_slice and
/// dynamic_update_slice over small tensors); else nullopt.
std::optional<int64_t> evaluateScalarInt(Value value);

/// The elements (row-major) of a static integer tensor of at most 4096
/// elements computed so; else nullopt.
std::optional<SmallVector<int64_t>> evaluateInts(Value value);

/// Unrolls every `stablehlo.while` whose trip count is known at import,
/// innermost first: the loop-carried scalars known at each iteration
/// (counters) become constants and the body is copied once per iteration.
/// A loop it cannot unroll stays, with the reason in `reasons`.
void unrollWhileLoops(ModuleOp module, UnsupportedReasons &reasons);

/// Base of the patterns: declining records the reason for the report.
template <typename SrcOp>
class ShloPattern : public OpConversionPattern<SrcOp> {
public:
  ShloPattern(MLIRContext *context, UnsupportedReasons &reasons)
      : OpConversionPattern<SrcOp>(context), reasons(reasons) {}

protected:
  LogicalResult decline(Operation *op, ConversionPatternRewriter &rewriter,
                        const Twine &why) const {
    std::string text = why.str();
    reasons[op] = text;
    return rewriter.notifyMatchFailure(op, text);
  }

  /// Declines `op` unless all its operand and result types fit `kinds`.
  LogicalResult requireTypes(Operation *op, unsigned kinds, StringRef target,
                             ConversionPatternRewriter &rewriter) const {
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    if (std::optional<std::string> why = checkTypes(types, kinds, target))
      return decline(op, rewriter, *why);
    return success();
  }

private:
  UnsupportedReasons &reasons;
};

void populateElementwisePatterns(RewritePatternSet &patterns,
                                 UnsupportedReasons &reasons);
void populateDataMovementPatterns(RewritePatternSet &patterns,
                                  UnsupportedReasons &reasons);
void populateContractionPatterns(RewritePatternSet &patterns,
                                 UnsupportedReasons &reasons);
void populateReductionPatterns(RewritePatternSet &patterns,
                               UnsupportedReasons &reasons);
void populateCallPatterns(RewritePatternSet &patterns,
                          UnsupportedReasons &reasons);

} // namespace shlo_to_loom
} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_CONVERSION_STABLEHLOTOLOOM_PATTERNS_H
