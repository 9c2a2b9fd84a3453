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
