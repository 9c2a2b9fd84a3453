//===- TargetFunction.h - Finding the function a pass works on --*- C++ -*-===//
//
// Every Loom pass that works on one function of the module takes it by name
// (its function= option) or, without one, finds the only function that
// qualifies; the errors for a missing name, none and several candidates are
// worded once, here. Internal to LoomTransforms.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_DIALECT_LOOM_TRANSFORMS_TARGETFUNCTION_H
#define LOOM_LIB_DIALECT_LOOM_TRANSFORMS_TARGETFUNCTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
namespace loom {

struct TargetFunctionQuery {
  /// The pass asking (errors start with it).
  StringRef pass;
  /// The function= option; empty: search.
  StringRef name;
  /// Which functions qualify when `name` is empty.
  llvm::function_ref<bool(func::FuncOp)> isCandidate;
  /// What qualifies, to complete "no function ..." and "several functions
  /// ...": e.g. "named '*_grad'".
  StringRef candidates;
  /// How to get one, e.g. "run loom-autodiff first" (may be empty).
  StringRef hint;
  /// A candidate that wins over the others (e.g. "main"); empty: none.
  StringRef preferred;
};

/// The function `query` asks for; otherwise an error at the module's
/// location (the module is not printed) that names the pass and says how to
/// choose.
FailureOr<func::FuncOp> findTargetFunction(ModuleOp module,
                                           const TargetFunctionQuery &query);

/// The function named `name` (the `option`, e.g. "function") if it has a
/// body; otherwise "PASS: no function @NAME with a body (OPTION=NAME)" at
/// the module's location.
FailureOr<func::FuncOp> findFunctionWithBody(ModuleOp module, StringRef name,
                                             StringRef pass,
                                             StringRef option = "function");

/// The function named `name` or, when `name` is empty, the module's only
/// gradient function (@G_grad), for the passes that extend loom-autodiff's
/// output (loom-data-parallel, loom-optimizer).
FailureOr<func::FuncOp> findGradFunction(ModuleOp module, StringRef name,
                                         StringRef pass);

/// The step functions (loom-optimizer's output) a pass rewrites: those
/// named in `names` (its function= list option) or, when it is empty,
/// every function with a result marked `loom.updates`.
SmallVector<func::FuncOp> findStepFunctions(ModuleOp module,
                                            ArrayRef<std::string> names);

/// Where a pass inserts new state arguments of a step function: after the
/// last `loom.param` or `loom.state` argument, before the data.
unsigned stateArgumentsEnd(func::FuncOp func);

/// Adds `by` to every `loom.updates` index of `func` that names an argument
/// at or after `at` (arguments inserted there moved them).
void shiftUpdatesFrom(func::FuncOp func, unsigned at, unsigned by);

} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_DIALECT_LOOM_TRANSFORMS_TARGETFUNCTION_H
