//===- EmitCpp.h - loomrt to C++ for the CPU backend ------------*- C++ -*-===//

#ifndef LOOM_TARGET_CPP_EMITCPP_H
#define LOOM_TARGET_CPP_EMITCPP_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace loom {

struct EmitCppOptions {
  /// Rows of each data input per step; 0 = the data inputs' common
  /// leading dimension.
  int64_t batchSize = 0;
  /// Kernels with at least this many elements get an OpenMP pragma.
  int64_t parallelThreshold = 1 << 15;
  /// Print each run of repeats of the same ops on other buffers (the
  /// micro-batches of a schedule) as one loop (lib/Target/Common/Repeats.cpp).
  bool rollRepeats = true;
};

/// Prints the module's one planned loomrt function (after
/// convert-loom-to-loomrt and loom-memory-plan) as a C++ translation unit
/// for lib/Runtime: the step function, its ProgramSpec and `main`.
/// Deterministic. Errors are reported at the offending op.
LogicalResult emitCpp(ModuleOp module, llvm::raw_ostream &os,
                      const EmitCppOptions &options = {});

/// Registers the `emit-cpp` translation
/// (lib/Target/Cpp/TranslateRegistration.cpp) and its option --batch-size.
/// Calling again does nothing.
void registerToCppTranslation();

} // namespace loom
} // namespace mlir

#endif // LOOM_TARGET_CPP_EMITCPP_H
