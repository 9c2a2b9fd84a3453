//===- TranslateRegistration.cpp - The emit-cuda translation --------------===//
//
//   loom-translate --emit-cuda step.mlir -o step.cu [--batch-size N]
//       [--roll-repeats=false]
//       [--cuda-block-size 256] [--cuda-max-blocks 4096]
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Cuda/EmitCuda.h"
#include "loom/Target/Common/EmitterBase.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
namespace cl = llvm::cl;

void mlir::loom::registerToCudaTranslation() {
  emit::translateBatchSize(); // registers --batch-size
  emit::translateRollRepeats();
  static cl::OptionCategory category("emit-cuda options");
  static cl::opt<int64_t> blockSize(
      "cuda-block-size",
      cl::desc("--emit-cuda: threads per block of the generated kernels (a "
               "multiple of 32, at most 1024)"),
      cl::init(256), cl::cat(category));
  static cl::opt<int64_t> maxBlocks(
      "cuda-max-blocks",
      cl::desc("--emit-cuda: most blocks per kernel launch (grid-stride "
               "loops cover the rest)"),
      cl::init(4096), cl::cat(category));
  static TranslateFromMLIRRegistration registration(
      "emit-cuda",
      "Print a planned loomrt module (after convert-loom-to-loomrt and "
      "loom-memory-plan) as CUDA for the runtime's CUDA backend",
      [](ModuleOp module, llvm::raw_ostream &os) {
        EmitCudaOptions options;
        options.batchSize = emit::translateBatchSize();
        options.rollRepeats = emit::translateRollRepeats();
        options.blockSize = blockSize;
        options.maxBlocks = maxBlocks;
        return emitCuda(module, os, options);
      },
      [](DialectRegistry &registry) {
        registry.insert<LoomDialect, loomrt::LoomRTDialect, func::FuncDialect,
                        arith::ArithDialect, math::MathDialect,
                        memref::MemRefDialect, shard::ShardDialect>();
      });
}
