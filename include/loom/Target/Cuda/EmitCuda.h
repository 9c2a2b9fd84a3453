//===- EmitCuda.h - loomrt to CUDA for the CUDA backend ---------*- C++ -*-===//

#ifndef LOOM_TARGET_CUDA_EMITCUDA_H
#define LOOM_TARGET_CUDA_EMITCUDA_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace mlir {
namespace loom {

struct EmitCudaOptions {
  /// Rows of each data input per step; 0 = the data inputs' common
  /// leading dimension.
  int64_t batchSize = 0;
  /// Threads per block of the generated kernels (a multiple of 32).
  int64_t blockSize = 256;
  /// At most this many blocks per launch; grid-stride loops cover the rest.
  int64_t maxBlocks = 4096;
  /// Print each run of repeats of the same ops on other buffers (the
  /// micro-batches of a schedule) as one loop (lib/Target/Common/Repeats.cpp).
  bool rollRepeats = true;
};

/// Prints the module's planned loomrt function(s) (after
/// convert-loom-to-loomrt and loom-memory-plan) as one CUDA translation
/// unit (`.cu`) for the runtime's CUDA backend: every generated kernel
/// (loomrt.kernel, reduce, copy, iota) a __global__ function with a
/// grid-stride loop, launched through LOOM_LAUNCH on the runtime's compute
/// stream; gemm, softmax, the norms, cross-entropy, gather, scatter-add and
/// communication calls of loom/Runtime/CudaKernels.h; the arena one device
/// allocation with the same memory plan as the CPU program. The source
/// builds with nvcc and, with -DLOOM_CUDA_EMULATION, as host C++ against
/// loom/Runtime/CudaEmulation.h. Deterministic; errors are reported at the
/// offending op.
LogicalResult emitCuda(ModuleOp module, llvm::raw_ostream &os,
                       const EmitCudaOptions &options = {});

/// Registers the `emit-cuda` translation
/// (lib/Target/Cuda/TranslateRegistration.cpp). Calling again does
/// nothing.
void registerToCudaTranslation();

} // namespace loom
} // namespace mlir

#endif // LOOM_TARGET_CUDA_EMITCUDA_H
