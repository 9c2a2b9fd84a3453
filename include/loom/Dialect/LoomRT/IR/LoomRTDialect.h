//===- LoomRTDialect.h - The loomrt dialect ---------------------*- C++ -*-===//

#ifndef LOOM_DIALECT_LOOMRT_IR_LOOMRTDIALECT_H
#define LOOM_DIALECT_LOOMRT_IR_LOOMRTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "loom/Support/Mesh.h"

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h.inc"

#include "loom/Dialect/LoomRT/IR/LoomRTOpsEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "loom/Dialect/LoomRT/IR/LoomRTTypes.h.inc"

#define GET_OP_CLASSES
#include "loom/Dialect/LoomRT/IR/LoomRTOps.h.inc"

namespace mlir {
namespace loomrt {

/// The bytes of a statically shaped buffer (`memref`) of `type`: one byte
/// per i1 element, else the element's bit width over 8. The memory plan,
/// loom-swap, the emitters and the planner all size buffers with it.
int64_t bufferBytes(Type type);

/// The buffer `value` is a view of (`loomrt.view`s followed to their
/// source; `value` itself when it is no view).
Value rootBuffer(Value value);
/// `buffer` and the views of it, transitively (`buffer` first).
SmallVector<Value> aliasesOf(Value buffer);
/// Whether buffer `root` lives past `op`: an argument (live throughout), or
/// a buffer that an op after `op` in its block uses (views included).
bool livesPast(Value root, Operation *op);

/// The strides `kernel` reads its input `i` with: its `in_strides` entry,
/// else the loop's dense strides (the element it writes).
SmallVector<int64_t> inputStrides(KernelOp kernel, unsigned i);
/// The element `kernel` starts reading its input `i` at: its `in_offsets`
/// entry, else 0.
int64_t inputOffset(KernelOp kernel, unsigned i);
/// Whether `kernel` reads its input `i` at the element it writes.
bool readsAtWrittenElement(KernelOp kernel, unsigned i);

/// Whether `kernel` reads every input at the element it writes.
bool readsDensely(KernelOp kernel);
/// Whether the body of `kernel` is one addf of its two arguments: f32
/// (addf, yield), or bf16 as convert-loom-to-loomrt writes a bf16 add
/// (both widened, added in f32, the sum narrowed: one rounding).
bool isPlainAdd(KernelOp kernel);
/// Whether `kernel` converts its one input, of element type `from`, to
/// `to` at the element it writes (a body of one arith.extf or
/// arith.truncf), into a buffer of as many elements.
bool isConversionKernel(KernelOp kernel, Type from, Type to);

/// Whether an op strictly between `from` and `to` (one block) may write
/// one of `buffers` (roots, rootBuffer) or, with `orRead`, read one, or
/// has effects it does not declare. A kernel's or reduce's body is scalar
/// arithmetic: their effects are their operands'.
bool touchedBetween(Operation *from, Operation *to, ArrayRef<Value> buffers,
                    bool orRead = false);

/// Whether `op` is computed on the step's compute stream (a generated loop
/// or a runtime-library kernel): what `train --trace` times one by one and
/// the planner's play of the program prices.
bool isComputeOp(Operation *op);

/// The work of a compute op (isComputeOp), what its time is priced from:
/// a GEMM's flops; any other op's arithmetic per element in units of a
/// simple scalar op (its fused scalar ops, weighted: an exp is 24, a tanh
/// 36, measured for the CPU backend's vectorised functions; a fold; 48
/// for softmax and cross-entropy, 32 for norms); and the bytes of
/// every buffer it declares it reads or writes, once per kind (a copy: its
/// shape's elements, read and written). Zero for other ops. The planner's
/// play and loom-swap's timed prefetch price the same work.
struct OpWork {
  double flops = 0, bytes = 0;
  bool gemm = false;
  /// A GEMM on bf16 operands.
  bool bf16 = false;
  /// A GEMM's bias, GELU or GELU-gradient epilogue: a pass over the
  /// product (arithmetic units and bytes, as for an elementwise kernel).
  double epilogueFlops = 0, epilogueBytes = 0;
};
OpWork computeWork(Operation *op);

/// A compute op's span name in `train --trace` and in the play's timeline:
/// what it computes (its `origin`, else its kind) and, where the model
/// named it, the model's name: "kernel broadcast+add (/h.0/mlp/Add)".
std::string traceSpanName(Operation *op);

} // namespace loomrt
} // namespace mlir

#endif // LOOM_DIALECT_LOOMRT_IR_LOOMRTDIALECT_H
