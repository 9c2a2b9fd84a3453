//===- LoomOps.h - Ops of the loom dialect ----------------------*- C++ -*-===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMOPS_H
#define LOOM_DIALECT_LOOM_IR_LOOMOPS_H

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "loom/Dialect/Loom/IR/LoomEnums.h.inc"

namespace mlir {
namespace loom {
namespace detail {
/// True when each `actual` type is a ranked tensor with the element type of
/// the matching `inferred` type and a shape compatible with it: the written
/// type may be less precise than the inferred one (shape refinement).
bool isRefinementCompatible(TypeRange inferred, TypeRange actual);

/// Shape rule of elementwise ops: all operands share one (compatible) shape;
/// the result has the most precise of them and `resultElementType`, or the
/// last operand's element type when that is null.
LogicalResult inferElementwiseType(std::optional<Location> loc,
                                   StringRef opName, ValueRange operands,
                                   Type resultElementType,
                                   SmallVectorImpl<Type> &inferred);

/// Shape rule of reductions over `dims`, keeping them as size 1 or not.
LogicalResult inferReduceType(std::optional<Location> loc, StringRef opName,
                              Value operand, ArrayRef<int64_t> dims,
                              bool keepdims, SmallVectorImpl<Type> &inferred);

/// Partition rule of reductions over `dims`: the operand's sharded
/// dimension must not be reduced; it keeps its place among the remaining
/// dimensions (TensorPartitionInterface).
FailureOr<PartitionRule>
getReducePartitionRule(ArrayRef<int64_t> dims, bool keepdims,
                       ArrayRef<std::optional<ShardedDim>> operands);
} // namespace detail
} // namespace loom
} // namespace mlir

namespace mlir {
namespace loom {
// ODS spells the ShardingInterface method types unqualified.
using shard::ReductionKind;
} // namespace loom
} // namespace mlir

#define GET_OP_CLASSES
#include "loom/Dialect/Loom/IR/LoomOps.h.inc"

#endif // LOOM_DIALECT_LOOM_IR_LOOMOPS_H
