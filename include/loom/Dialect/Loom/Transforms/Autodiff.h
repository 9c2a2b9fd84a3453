//===- Autodiff.h - Reverse-mode differentiation as a C++ API ---*- C++ -*-===//
//
// What -loom-autodiff does, callable from other passes (loom-pipeline-schedule
// differentiates each stage with it) without a nested pass manager.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_AUTODIFF_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
namespace loom {

/// What to differentiate (the options of -loom-autodiff).
struct GradientOptions {
  /// The loom.name of the loss result; empty: the only result, else the
  /// one named `loss`.
  std::string loss;
  /// Arguments (loom.name or argN) to differentiate besides every float
  /// `loom.param`.
  llvm::SmallVector<std::string> wrt;
};

/// Adds @F_grad (names::gradFunction) right after `forward`: the loss and
/// the gradient of every differentiated argument (docs/training.md). On
/// failure the module is unchanged and the errors have been emitted.
FailureOr<func::FuncOp> buildGradientFunction(func::FuncOp forward,
                                              const GradientOptions &options);

} // namespace loom
} // namespace mlir

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_AUTODIFF_H
