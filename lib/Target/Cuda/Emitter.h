//===- Emitter.h - The loomrt to CUDA emitter -------------------*- C++ -*-===//
//
// Internal to lib/Target/Cuda. The CUDA half of the emitter (see
// include/loom/Target/Common/EmitterBase.h for what it shares with the
// C++ one). Generated kernels (loomrt.kernel, reduce, copy, iota) become
// __global__ functions, collected in `kernels` and launched from the step
// with LOOM_LAUNCH on the runtime's compute stream (Kernels.cpp); library
// calls go to loom/Runtime/CudaKernels.h (cuda::); the step function
// (EmitCuda.cpp) keeps the arena, the arguments, results and constants in
// device memory made by its first call, copies the inputs in and the
// results out.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TARGET_CUDA_EMITTER_H
#define LOOM_LIB_TARGET_CUDA_EMITTER_H

#include "loom/Target/Common/EmitterBase.h"
#include "loom/Target/Cuda/EmitCuda.h"

namespace mlir {
namespace loom {
namespace emit_cuda {

class Emitter : public emit::EmitterBase {
public:
  Emitter(func::FuncOp func, llvm::raw_ostream &out,
          const EmitCudaOptions &options, int64_t batchSize, int64_t stage)
      : EmitterBase(func, out, {"emit-cuda", "CUDA"}, batchSize, stage),
        options(options) {
    rollRepeats = options.rollRepeats;
  }

private:
  void bindArgument(BlockArgument arg, StringRef n, bool isResult,
                    unsigned index) override;
  void printStep() override;
  LogicalResult emitKernel(loomrt::KernelOp op) override;
  LogicalResult emitReduce(loomrt::ReduceOp op) override;
  LogicalResult emitIota(loomrt::IotaOp op) override;
  /// A reduction of at least kBlockReduceMin elements per output (at most
  /// kMaxGridX outputs): one block per output, a tree in shared memory
  /// (`acc`: the accumulator type, `init` its start). The many-output
  /// case matters too: a layer norm's gradient sums each of thousands of
  /// rows, which one thread per row would read uncoalesced.
  LogicalResult emitBlockReduce(loomrt::ReduceOp op,
                                const emit::ReduceGeometry &g,
                                StringRef comment, StringRef acc,
                                StringRef init);
  /// Reductions of this many elements per output or more fold them with a
  /// block of threads; shorter ones with one thread per output.
  static constexpr int64_t kBlockReduceMin = 256;
  /// CUDA's largest grid in x: one block per output up to this many.
  static constexpr int64_t kMaxGridX = 2147483647;
  LogicalResult emitCopy(loomrt::CopyOp op) override;
  LogicalResult emitGridIndex(loomrt::GridIndexOp op) override;
  std::string libraryCall(StringRef fn, bool cpuTakesCtx) override;
  std::string constantStorage(StringRef n) override {
    return (n + "_host").str();
  }
  std::string floatLiteral(double value) override;
  std::string intDivision(StringRef a, StringRef b) override {
    return ("loom_divi(" + a + ", " + b + ")").str();
  }
  const char *intMax() override { return "loom_maxi"; }
  const char *intMin() override { return "loom_mini"; }

  /// A __global__ kernel named after `hint`, over `n` elements (a
  /// grid-stride loop with index `i`), taking the buffers `params` (const
  /// unless in `written`); `printBody` prints the loop's body at indent 4.
  /// Defines it once per distinct text (outlineKernel) and prints its
  /// launch and check in the step.
  LogicalResult
  emitGlobal(StringRef hint, StringRef comment, int64_t n,
             ArrayRef<Value> params, ArrayRef<Value> written,
             llvm::function_ref<LogicalResult(llvm::raw_ostream &)> printBody);

  const EmitCudaOptions &options;
};

} // namespace emit_cuda
} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_TARGET_CUDA_EMITTER_H
