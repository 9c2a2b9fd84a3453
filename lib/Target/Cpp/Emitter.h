//===- Emitter.h - The loomrt to C++ emitter (CPU backend) ------*- C++ -*-===//
//
// Internal to lib/Target/Cpp. The C++ half of the emitter: what the CPU
// target prints differently from CUDA (see
// include/loom/Target/Common/EmitterBase.h for what the two share).
// Generated kernels (loomrt.kernel, reduce, copy, iota) become loop nests
// with OpenMP pragmas above EmitCppOptions::parallelThreshold elements
// (Kernels.cpp); library calls go to the runtime's cpu:: kernels and
// Comm.h; the step takes the host arena and the argument pointers as they
// are. EmitCpp.cpp holds the prologue and the module entry point.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TARGET_CPP_EMITTER_H
#define LOOM_LIB_TARGET_CPP_EMITTER_H

#include "loom/Target/Common/EmitterBase.h"
#include "loom/Target/Cpp/EmitCpp.h"

namespace mlir {
namespace loom {
namespace emit_cpp {

class Emitter : public emit::EmitterBase {
public:
  Emitter(func::FuncOp func, llvm::raw_ostream &out,
          const EmitCppOptions &options, int64_t batchSize, int64_t stage)
      : EmitterBase(func, out, {"emit-cpp", "CPU"}, batchSize, stage),
        options(options) {
    rollRepeats = options.rollRepeats;
  }

private:
  void bindArgument(BlockArgument arg, StringRef n, bool isResult,
                    unsigned index) override;
  void printStep() override;
  LogicalResult emitKernel(loomrt::KernelOp op) override;
  LogicalResult emitReduce(loomrt::ReduceOp op) override;
  /// Prints to `s` a reduction that keeps the `inner` innermost input
  /// dimensions: rows of contiguous columns folded into tiles of
  /// accumulators.
  /// The accumulators of a reduction over trailing dimensions.
  static constexpr int64_t kLanes = 8;
  /// A reduction over trailing dimensions (base: the output's first
  /// element) into `kLanes` accumulators; leaves the result in `acc`.
  LogicalResult printLaneReduce(llvm::raw_ostream &s, loomrt::ReduceOp op,
                                const emit::ReduceGeometry &g, int indent,
                                StringRef accType, StringRef init,
                                bool isFloat);
  LogicalResult printColumnReduce(llvm::raw_ostream &s, loomrt::ReduceOp op,
                                  const emit::ReduceGeometry &g,
                                  unsigned inner, StringRef accType,
                                  StringRef init);
  /// A generated loop as a function of `params` (const unless in
  /// `written`; see outlineKernel) whose body `printBody` prints at
  /// indent 2, and its call in the step after a `comment` line.
  LogicalResult
  emitFunction(StringRef hint, StringRef comment, ArrayRef<Value> params,
               ArrayRef<Value> written,
               llvm::function_ref<LogicalResult(llvm::raw_ostream &)>
                   printBody);
  LogicalResult emitIota(loomrt::IotaOp op) override;
  LogicalResult emitCopy(loomrt::CopyOp op) override;
  LogicalResult emitGridIndex(loomrt::GridIndexOp op) override;
  std::string libraryCall(StringRef fn, bool cpuTakesCtx) override;
  /// The runtime's branch-free float versions (loom/Runtime/VecMath.h) of
  /// exp, log, rsqrt, tanh and erf, so that kernel loops vectorise; libm's
  /// are scalar calls.
  std::string mathCall(StringRef fn, StringRef arg) override {
    if (fn == "sqrt" || fn == "cos" || fn == "sin")
      return EmitterBase::mathCall(fn, arg);
    return ("vm::" + fn + "(" + arg + ")").str();
  }

  const EmitCppOptions &options;
};

} // namespace emit_cpp
} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_TARGET_CPP_EMITTER_H
