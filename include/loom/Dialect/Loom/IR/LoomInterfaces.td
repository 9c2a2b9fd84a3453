//===- LoomInterfaces.td - Interfaces of the loom dialect --*- tablegen -*-===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMINTERFACES_TD
#define LOOM_DIALECT_LOOM_IR_LOOMINTERFACES_TD

include "mlir/IR/OpBase.td"

def Loom_CostInterface : OpInterface<"CostInterface"> {
  let cppNamespace = "::mlir::loom";
  let description = [{
    The work an op does, for the planner's cost model and for reports:
    floating-point operations and bytes read plus written. Both are counted
    for one execution of the op on its full (unpartitioned) tensors and are
    `std::nullopt` while a shape the count depends on is dynamic.

    Conventions: an elementwise op costs one flop per result element (a
    transcendental counts as one); a contraction costs 2 flops per
    multiply-add; pure data movement (reshape, transpose, slice, ...) costs
    no flops. Bytes are those of all operands and results, each tensor read
    or written once.

    Default: ops with the `DataMovement` trait cost no flops; any other op
    costs one flop per element of its first result.
  }];
  let methods = [
    InterfaceMethod<"Floating-point operations of one execution.",
      "std::optional<int64_t>", "getFlopCount", (ins), [{}], [{
        return ::mlir::loom::detail::getDefaultFlopCount($_op);
      }]>,
    InterfaceMethod<"Bytes read and written by one execution.",
      "std::optional<int64_t>", "getBytesAccessed", (ins), [{}], [{
        return ::mlir::loom::detail::getOperandAndResultBytes($_op);
      }]>,
  ];
}

def Loom_VJPInterface : OpInterface<"VJPInterface"> {
  let cppNamespace = "::mlir::loom";
  let description = [{
    Reverse-mode differentiation of one op: its vector-Jacobian product
    (VJP). Given the cotangents of the op's results (d loss / d result), the
    op builds, with loom ops only, the cotangents of its operands
    (d loss / d operand). `loom-autodiff` calls it for every op between the
    parameters and the loss; the pass itself knows no op.

    An operand is *differentiable* when a gradient can flow into it. By
    default that is every operand with a float element type of an op that
    has a float result; integer and boolean values (indices, labels,
    predicates, comparison results, float-to-integer conversions) carry no
    gradient. Ops override `isOperandDifferentiable` where this rule is not
    enough.

    `buildVJP` is called once shapes are static, with the builder's
    insertion point where the op's operands and results are available
    (loom-autodiff: the end of the gradient function's body). `resultCotangents` has one entry per result,
    with the result's type, or a null value for a result that has no
    cotangent (a zero cotangent). It appends one entry per operand to
    `operandCotangents`: a value of exactly the operand's type, or null when
    the operand gets no gradient (it is not differentiable, or its cotangent
    is zero). Entries for non-differentiable operands must be null. The
    implementation may use the op's operands and results (the forward
    values) and must not modify the op. Returns failure, after emitting an
    error at the op, when it cannot differentiate this instance.

    Conventions at kinks (as in PyTorch): `relu` and `abs` have derivative 0
    at 0; `max`/`min` split the cotangent evenly between tied operands;
    `reduce_max` splits it evenly between the tied maxima of a slice.
  }];
  let methods = [
    InterfaceMethod<[{
        True when a gradient can flow into operand `index`. Default: the
        operand has a float element type and some result of the op has one.
      }],
      "bool", "isOperandDifferentiable", (ins "unsigned":$index), [{}], [{
        return ::mlir::loom::detail::isFloatToFloatOperand($_op, index);
      }]>,
    InterfaceMethod<[{
        Builds the operand cotangents from the result cotangents (null:
        zero) at the builder's insertion point; see the interface
        description for the contract.
      }],
      "::llvm::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultCotangents,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandCotangents)>,
  ];
}

def Loom_TensorPartitionInterface : OpInterface<"TensorPartitionInterface"> {
  let cppNamespace = "::mlir::loom";
  let description = [{
    How an op takes part in a Megatron-style tensor-parallel block
    (`loom-tensor-parallel`): which dimension of its results is sharded
    when some operands are, and what its operands must be for that. A
    *sharded* value (`ShardedDim{dim, groups}`) is cut over the `T` ranks
    along dimension `dim`, which is `groups` equal blocks, each cut into `T`
    equal parts; a rank holds its part of every block (`groups > 1`: a
    fused projection such as QKV). The pass follows the sharded dimension
    from a column-parallel linear layer to a row-parallel one in program
    order and asks each op in between; the pass itself has no rule for
    any op.

    `getPartitionRule(operands)` gets one entry per operand, the operand's
    sharding or null (replicated: every rank holds all of it; at least one
    entry is sharded) and returns a `PartitionRule`, or failure when the op
    cannot be in a block with these operands (the block is then left
    alone):

    * `operands`: per operand, the sharding it must have (null: used
      whole). A sharded operand with another number of groups is
      *regrouped* (the pass gives it and the values it was computed from
      that many groups, when they have one); a replicated operand that must
      be sharded is made so by the pass from its producer (a constant or
      broadcast uniform along the dimension is rebuilt in the local shape,
      `isUniformAlong`; a bias parameter broadcast along it is cut,
      `getExpandedOperandDim`).
    * `results`: per result, its sharding (null: not sharded).
    * `partialSum`: the results are partial sums over the ranks (a
      contraction over the sharded dimension: a row-parallel layer, which
      the pass completes with an all-reduce).
    * `splitsDim`: the sharded result dimension is the outer factor of the
      operand's sharded dimension (a reshape into attention heads), named
      in the pass's divisibility errors.

    Default: an op with the `ElementwiseMapping` trait takes sharded
    operands that agree on one sharding and gives it to every operand and
    result; any other op fails.

    The other methods are asked of the producers of replicated operands and
    of the ops of a rank's block after its values got their local types:
    `isUniformAlong(dim)`, `buildResized(builder, type)`,
    `getExpandedOperandDim(dim)` and `partitionAttributes(dim, parts)`.

    Why not upstream's `shard::ShardingInterface` (which the elementwise
    ops and `dot_general` also implement, for `sharding-propagation`):
    docs/architecture.md, *Decisions*.
  }];
  let methods = [
    InterfaceMethod<[{
        The sharding of the results and the sharding the operands must
        have, given the shardings of the operands (null: replicated); see
        the interface description. Failure: the op cannot be partitioned
        this way.
      }],
      "::mlir::FailureOr<::mlir::loom::PartitionRule>", "getPartitionRule",
      (ins "::llvm::ArrayRef<std::optional<::mlir::loom::ShardedDim>>":$operands),
      [{}], [{
        return ::mlir::loom::detail::getElementwisePartitionRule($_op,
                                                                operands);
      }]>,
    InterfaceMethod<[{
        Whether the op's result is constant along its dimension `dim`, so
        that the op can be rebuilt at any size of that dimension
        (`buildResized`): `true` for a splat constant or a broadcast that
        does not produce `dim` from a dimension of size > 1; `false` for an
        op that could say but whose result varies along `dim` (a broadcast
        of a bias along it, followed back with `getExpandedOperandDim`);
        `std::nullopt` (default) when the op does not make values from
        smaller ones.
      }],
      "std::optional<bool>", "isUniformAlong", (ins "int64_t":$dim), [{}], [{
        return std::nullopt;
      }]>,
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the op again with the
        result type `type`, which differs only along dimensions the result
        is uniform along (`isUniformAlong`). Default: null (cannot).
      }],
      "::mlir::Value", "buildResized",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::RankedTensorType":$type),
      [{}], [{
        return {};
      }]>,
    InterfaceMethod<[{
        When the op only expands its first operand into its result
        (broadcasting it, or inserting and dropping size-1 dimensions), the
        operand dimension that result dimension `dim` copies unchanged (of
        the same size); std::nullopt (default) otherwise. The pass follows
        a bias added to a sharded value back to its parameter through
        these ops.
      }],
      "std::optional<int64_t>", "getExpandedOperandDim", (ins "int64_t":$dim),
      [{}], [{
        return std::nullopt;
      }]>,
    InterfaceMethod<[{
        Called once the op's operands and results have their local types
        (dimension `dim` of the first operand and of the first result
        divided by `parts`): updates the attributes that count elements
        along it (a slice's bounds, a split's sizes). Default: nothing.
      }],
      "void", "partitionAttributes", (ins "int64_t":$dim, "int64_t":$parts),
      [{}], [{
        return;
      }]>,
  ];
}

// All operands and results of the op have one shape, up to refinement (a `?`
// matches any size). Loom's elementwise ops never broadcast implicitly.
// The shape pass relies on this trait to refine values in both directions.
def Loom_SameShape : NativeOpTrait<"SameShape"> {
  let cppNamespace = "::mlir::loom::OpTrait";
}

// An elementwise op: element i of each result depends only on element i of
// each operand, and all operands and results have one shape (SameShape).
// Elementwise ops follow a sharded dimension with TensorPartitionInterface's
// default rule.
def Loom_ElementwiseMapping : NativeOpTrait<"ElementwiseMapping"> {
  let cppNamespace = "::mlir::loom::OpTrait";
}
def Loom_Elementwise : TraitList<[Loom_SameShape, Loom_ElementwiseMapping,
                                  Loom_TensorPartitionInterface]>;

// Marks ops that only move or reinterpret data; their flop count is zero.
def Loom_DataMovement : NativeOpTrait<"DataMovement"> {
  let cppNamespace = "::mlir::loom::OpTrait";
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMINTERFACES_TD
