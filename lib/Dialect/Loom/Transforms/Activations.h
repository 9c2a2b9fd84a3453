//===- Activations.h - Which values of a training step are activations -*- C++ -*-===//
//
// Shared by loom-mark-layers and loom-recompute: the values of a function's
// forward ops (ops without `loom.phase`) that carry activations.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_ACTIVATIONS_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_ACTIVATIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace loom {

/// Whether `op` belongs to the forward pass of a training step: it carries
/// no `loom.phase` (backward, recompute and optimizer ops do).
bool isForwardOp(Operation *op);

/// The results of `func`'s forward ops computed from a learned parameter
/// (a `loom.param` argument) and from the data (another argument, or a
/// value received from another pipeline stage). Values of the weights alone
/// (a broadcast bias) or of the data alone (a mask, shifted labels) are not
/// activations; arguments never are.
llvm::DenseSet<Value> findActivations(func::FuncOp func);

} // namespace loom
} // namespace mlir

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_ACTIVATIONS_H
