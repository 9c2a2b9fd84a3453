//===- GradFunction.h - Finding the @F_grad a pass works on ------*- C++ -*-===//
//
// Shared by the passes that rewrite or extend loom-autodiff's @F_grad
// (loom-data-parallel, loom-optimizer).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_DIALECT_LOOM_TRANSFORMS_GRADFUNCTION_H
#define LOOM_LIB_DIALECT_LOOM_TRANSFORMS_GRADFUNCTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace loom {

/// The function named `name` (a pass's `function=` option) or, when `name`
/// is empty, the module's only function whose name ends in `_grad`.
/// Otherwise an error at the module's location (the module is not
/// printed), prefixed with `pass`, that says how to choose.
FailureOr<func::FuncOp> findGradFunction(ModuleOp module, StringRef name,
                                         StringRef pass);

} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_DIALECT_LOOM_TRANSFORMS_GRADFUNCTION_H
