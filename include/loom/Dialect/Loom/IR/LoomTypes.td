//===- LoomTypes.td - Type constraints of the loom dialect --*- tablegen -*-===//
//
// Loom uses builtin ranked tensors; it defines no types of its own (a custom
// tensor type would cut it off from upstream `tensor`, `shard` and
// bufferization). This file names the element-type sets the ops accept.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMTYPES_TD
#define LOOM_DIALECT_LOOM_IR_LOOMTYPES_TD

include "mlir/IR/CommonTypeConstraints.td"

def Loom_FloatTensor : RankedTensorOf<[F32, BF16, F16]>;
def Loom_IntTensor : RankedTensorOf<[I64, I32]>;
def Loom_BoolTensor : RankedTensorOf<[I1]>;
def Loom_NumericTensor : RankedTensorOf<[F32, BF16, F16, I64, I32]>;
def Loom_Tensor : RankedTensorOf<[F32, BF16, F16, I64, I32, I1]>;

#endif // LOOM_DIALECT_LOOM_IR_LOOMTYPES_TD
