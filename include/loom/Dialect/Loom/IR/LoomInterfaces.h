//===- LoomInterfaces.h - Interfaces of the loom dialect --------*- C++ -*-===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMINTERFACES_H
#define LOOM_DIALECT_LOOM_IR_LOOMINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace loom {
namespace detail {
LogicalResult verifySameShape(Operation *op);
} // namespace detail

/// A value cut over the tensor-parallel ranks along dimension `dim`, which
/// is `groups` equal blocks, each cut into one equal part per rank; a rank
/// holds its part of every block (TensorPartitionInterface).
struct ShardedDim {
  int64_t dim;
  int64_t groups = 1;
  bool operator==(const ShardedDim &other) const {
    return dim == other.dim && groups == other.groups;
  }
  bool operator!=(const ShardedDim &other) const { return !(*this == other); }
};

/// What an op does with sharded operands (TensorPartitionInterface's
/// getPartitionRule): per operand the sharding it must have and per result
/// its sharding (null: replicated).
struct PartitionRule {
  SmallVector<std::optional<ShardedDim>, 2> operands;
  SmallVector<std::optional<ShardedDim>, 1> results;
  /// The results are partial sums over the ranks (to be all-reduced).
  bool partialSum = false;
  /// The sharded result dimension is the outer factor of the operand's
  /// sharded dimension (attention heads split off a hidden dimension).
  bool splitsDim = false;
};

namespace OpTrait {
/// All operands and results have one shape, up to refinement (`?` matches
/// any size). Reports mismatches with a hint to broadcast explicitly.
template <typename ConcreteType>
class SameShape : public ::mlir::OpTrait::TraitBase<ConcreteType, SameShape> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return detail::verifySameShape(op);
  }
};

/// Result element i depends only on operand elements i (with SameShape:
/// Loom's elementwise ops).
template <typename ConcreteType>
class ElementwiseMapping
    : public ::mlir::OpTrait::TraitBase<ConcreteType, ElementwiseMapping> {};

/// Ops that only move or reinterpret data (reshape, transpose, slice, ...).
template <typename ConcreteType>
class DataMovement
    : public ::mlir::OpTrait::TraitBase<ConcreteType, DataMovement> {};
} // namespace OpTrait

namespace detail {
/// Number of elements of a ranked tensor type, or nullopt if it is not a
/// statically shaped tensor.
std::optional<int64_t> getNumElements(Type type);
/// Size in bytes of a statically shaped tensor (i1 counts one byte).
std::optional<int64_t> getNumBytes(Type type);
/// 0 for DataMovement ops, else the element count of the first result.
std::optional<int64_t> getDefaultFlopCount(Operation *op);
/// `flopsPerElement` times the element count of the first result.
std::optional<int64_t> getElementwiseFlopCount(Operation *op,
                                               int64_t flopsPerElement);
/// Bytes of all tensor operands plus all tensor results.
std::optional<int64_t> getOperandAndResultBytes(Operation *op);
/// The default differentiability rule of VJPInterface: operand `index` has
/// a float element type and so has some result of `op`.
bool isFloatToFloatOperand(Operation *op, unsigned index);
/// The default partition rule of TensorPartitionInterface: for an op with
/// the ElementwiseMapping trait whose sharded operands agree on one
/// sharding, that sharding for every operand and result; else failure.
FailureOr<PartitionRule>
getElementwisePartitionRule(Operation *op,
                            ArrayRef<std::optional<ShardedDim>> operands);
/// The rule of an op whose operands and results all line up along every
/// dimension but `except` (a concatenation): the sharding its sharded
/// operands agree on, when it is not along `except`, for every operand and
/// result; else failure.
FailureOr<PartitionRule>
getAlignedPartitionRule(Operation *op, int64_t except,
                        ArrayRef<std::optional<ShardedDim>> operands);
} // namespace detail

/// Attaches VJPInterface to `shard.all_reduce` (sum): the identity, the
/// backward half of Megatron-LM's `g` (see `loom.tp_copy`). Tools that
/// differentiate tensor-parallel graphs register it with their dialects.
void registerShardVJPModels(DialectRegistry &registry);
} // namespace loom
} // namespace mlir

#include "loom/Dialect/Loom/IR/LoomInterfaces.h.inc"

#endif // LOOM_DIALECT_LOOM_IR_LOOMINTERFACES_H
