//===- Patterns.h - Shared parts of the loom to loomrt patterns -*- C++ -*-===//
//
// Internal to lib/Conversion/LoomToLoomRT. The conversion lowers one
// function at a time: every tensor value becomes a buffer (the type
// converter maps tensor<...> to memref<...>), each pattern writes the
// buffers of its op's results, and a LoweringState shared by the patterns of
// one function holds what crosses ops: where returned values go and which
// transfers are in flight.
//
// Patterns read their op and its neighbours in the source IR (still in
// place during the conversion: which users a value has, which op defines an
// operand) and the buffers of source values through the rewriter
// (getRemappedValue, or the adaptor). Values that need no buffer (a splat
// constant read as a scalar, a transpose read through strides or by BLAS)
// have their op erased; their readers never ask for their buffer.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CONVERSION_LOOMTOLOOMRT_PATTERNS_H
#define LOOM_LIB_CONVERSION_LOOMTOLOOMRT_PATTERNS_H

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace mlir {
namespace loom {
namespace loom_to_loomrt {

//===----------------------------------------------------------------------===//
// Types and small helpers (LoomToLoomRT.cpp)
//===----------------------------------------------------------------------===//

/// tensor<SxT> -> memref<SxT>; other types stay.
class BufferTypeConverter : public TypeConverter {
public:
  BufferTypeConverter();
};

/// The buffer type of a (static) ranked tensor type.
MemRefType bufferType(Type tensorType);

bool isElementwise(Operation *op);

/// Whether `op` is marked loom.fused: computed inside its user's loop.
bool isFusedIntoUser(Operation *op);

/// The `origin` of the loomrt op lowered from `op`: its name without the
/// dialect (`add`, `dot_general`), after `recompute.` when `loom-recompute`
/// replays it (`loom.phase = "recompute"`).
StringAttr originOf(Operation *op);

/// The memory-plan category of the buffers `op` writes: `gradient`,
/// `recompute` or `optimizer` after its `loom.phase`, else `activation`.
StringRef categoryOf(Operation *op);

/// A loomrt.copy of all of `from` into `to` (one shape, both row-major).
void createDenseCopy(OpBuilder &b, Location loc, Value from, Value to,
                     StringAttr origin);

//===----------------------------------------------------------------------===//
// The state of one function's lowering
//===----------------------------------------------------------------------===//

class LoweringState {
public:
  /// For the function `source` (before its conversion).
  explicit LoweringState(func::FuncOp source);

  // Results (LoomToLoomRT.cpp). The lowered function takes one buffer per
  // result; the op that produces a returned value writes it there.

  /// Whether the source function returns `value`.
  bool isReturned(Value value) const { return resultIndices.count(value); }

  /// Whether the value of `op` gets no buffer: a splat constant or a
  /// broadcast that kernels read as a scalar or through strides, a transpose
  /// read through strides or by BLAS, the zeros a receive takes for their
  /// type. Decided on the source IR before the conversion starts (the
  /// conversion's own casts add users to the values it erases).
  bool isBufferless(Operation *op) const { return bufferless.contains(op); }

  /// The buffer an op writes its result `value` into: the result buffer
  /// when `value` is returned (and that buffer is not written yet), else a
  /// new loomrt.alloc of the category of `producer`.
  Value destination(Value value, Operation *producer, OpBuilder &b);

  /// The lowered function's result buffers, once its signature is built.
  void setResultBuffers(ValueRange buffers);
  Value getResultBuffer(unsigned index) const { return resultBuffers[index]; }

  /// The results (index, value) that no op wrote into their buffer
  /// (arguments, views, constants, a value returned twice), by index.
  SmallVector<std::pair<unsigned, Value>> getUnwrittenResults() const;

  // Transfers in flight (Communication.cpp).

  /// Waits, right here, for the transfers into values `op` reads that are
  /// still in flight.
  void waitForOperands(Operation *op, OpBuilder &b);
  void waitFor(Value value, OpBuilder &b);
  /// `value` is complete once `handle` is waited for.
  void addPendingValue(Value value, Value handle);
  /// A send, waited for at the end of the function.
  void addPendingSend(Value handle) { pendingSends.push_back(handle); }
  ArrayRef<Value> getPendingSends() const { return pendingSends; }
  /// Waits, right here, for every transfer still in flight whose value no
  /// op read (an all-reduce replayed by loom-recompute's full policy), in
  /// the order they started.
  void waitForUnread(OpBuilder &b);

private:
  DenseSet<Operation *> bufferless;
  /// Returned value -> its result indices not yet written.
  llvm::MapVector<Value, SmallVector<unsigned>> resultIndices;
  SmallVector<Value> resultBuffers;
  /// Results of all-reduces and receives -> their handle, until waited for
  /// (in start order).
  llvm::MapVector<Value, Value> pendingValues;
  SmallVector<Value> pendingSends;
};

/// Base of the patterns of one source op: waits for the op's in-flight
/// operands first (a transfer overlaps everything up to its first reader).
template <typename SourceOp>
class LoweringPattern : public OpConversionPattern<SourceOp> {
public:
  using OpAdaptor = typename OpConversionPattern<SourceOp>::OpAdaptor;

  LoweringPattern(const TypeConverter &converter, MLIRContext *context,
                  LoweringState &state)
      : OpConversionPattern<SourceOp>(converter, context), state(state) {}

  LogicalResult
  matchAndRewrite(SourceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    state.waitForOperands(op, rewriter);
    return lower(op, adaptor, rewriter);
  }

protected:
  virtual LogicalResult lower(SourceOp op, OpAdaptor adaptor,
                              ConversionPatternRewriter &rewriter) const = 0;

  /// The buffer `result` (of the op being lowered) is written into.
  Value define(Value result, ConversionPatternRewriter &rewriter) const {
    return state.destination(result, result.getDefiningOp(), rewriter);
  }

  LoweringState &state;
};

//===----------------------------------------------------------------------===//
// Pattern families, and what each checks before the conversion
//===----------------------------------------------------------------------===//

// Everything that would make a pattern fail is checked before the
// conversion starts, so that a function either lowers entirely or reports
// one error at the op (the conversion itself does not fail). Each check
// accepts the ops of other families.

/// Fusion groups of elementwise ops (kernels), constants, reductions, iota,
/// and the runtime library's softmax, norms and cross-entropy.
void populateKernelPatterns(const TypeConverter &converter,
                            RewritePatternSet &patterns, LoweringState &state);
LogicalResult checkKernelOp(Operation *op);

/// dot_general -> gemm.
void populateContractionPatterns(const TypeConverter &converter,
                                 RewritePatternSet &patterns,
                                 LoweringState &state);
LogicalResult checkContractionOp(Operation *op);

/// All-reduce, send, receive and grid_index.
void populateCommunicationPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns,
                                   LoweringState &state);
LogicalResult checkCommunicationOp(Operation *op);

/// Views, strided copies, gather and scatter_add.
void populateDataMovementPatterns(const TypeConverter &converter,
                                  RewritePatternSet &patterns,
                                  LoweringState &state);
LogicalResult checkDataMovementOp(Operation *op);

/// The function signature (results become buffer arguments) and its return
/// (result copies, waits for the transfers still in flight).
void populateFunctionPatterns(const TypeConverter &converter,
                              RewritePatternSet &patterns,
                              LoweringState &state);

//===----------------------------------------------------------------------===//
// Values without a buffer (see LoweringState::isBufferless)
//===----------------------------------------------------------------------===//

/// Whether every user of `value` is an elementwise op, which reads it inside
/// its group's loop, and it is not returned.
bool hasOnlyKernelUsers(Value value, const LoweringState &state);

/// Whether the constant gets no buffer: a splat read as a scalar by
/// kernels (directly or through broadcasts), or the zeros only receives
/// use for their type. (Kernels.cpp)
bool isBufferlessConstant(ConstantOp constant, const LoweringState &state);

/// How a gemm reads one dot_general operand: `source` (the operand, or the
/// operand of the transpose defining it), in BLAS's plain or transposed
/// layout, or, when neither fits, through a copy into the plain layout
/// (`copyPerm`, dimensions of `source`). (Contraction.cpp)
///
/// A layout that is neither is read in place when strides allow it
/// (`strided`): each batch dimension has a stride, and the free and the
/// contracting dimensions each collapse to one matrix dimension, one of them
/// with unit stride; `ld` is the other one's stride (BLAS's leading
/// dimension). Attention reads its heads this way.
struct OperandLayout {
  Value source;
  bool transposed = false;
  SmallVector<int64_t> copyPerm;
  bool strided = false;
  /// Strided: per batch level of the DotLayout, the stride in `source`.
  SmallVector<int64_t> batchStrides;
  int64_t ld = 0;
};

/// A dot_general as one batched gemm. Strided (either operand strided):
/// the batch as `batchOuter` x (batch / batchOuter) matrices.
struct DotLayout {
  OperandLayout lhs, rhs;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool strided = false;
  int64_t batchOuter = 1;
};

DotLayout planDotLayout(DotGeneralOp op);

/// Whether every use of `transpose` reads through it without its own buffer:
/// one elementwise user (strided read), or dot_generals whose gemm reads the
/// transpose's source directly. (Contraction.cpp)
bool isTransposeAbsorbed(TransposeOp transpose);

} // namespace loom_to_loomrt
} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_CONVERSION_LOOMTOLOOMRT_PATTERNS_H
