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

// All operands and results of the op have one shape, up to refinement (a `?`
// matches any size). Loom's elementwise ops never broadcast implicitly.
// The shape pass relies on this trait to refine values in both directions.
def Loom_SameShape : NativeOpTrait<"SameShape"> {
  let cppNamespace = "::mlir::loom::OpTrait";
}

// An elementwise op: element i of each result depends only on element i of
// each operand, and all operands and results have one shape (SameShape).
def Loom_ElementwiseMapping : NativeOpTrait<"ElementwiseMapping"> {
  let cppNamespace = "::mlir::loom::OpTrait";
}
def Loom_Elementwise : TraitList<[Loom_SameShape, Loom_ElementwiseMapping]>;

// Marks ops that only move or reinterpret data; their flop count is zero.
def Loom_DataMovement : NativeOpTrait<"DataMovement"> {
  let cppNamespace = "::mlir::loom::OpTrait";
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMINTERFACES_TD
