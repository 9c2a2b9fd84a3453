//===- TranslateRegistration.cpp - The emit-cpp translation ---------------===//
//
//   loom-translate --emit-cpp step.mlir -o step.cpp [--batch-size N]
//       [--roll-repeats=false]
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Cpp/EmitCpp.h"
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

void mlir::loom::registerToCppTranslation() {
  emit::translateBatchSize(); // registers --batch-size
  emit::translateRollRepeats();
  static TranslateFromMLIRRegistration registration(
      "emit-cpp",
      "Print a planned loomrt module (after convert-loom-to-loomrt and "
      "loom-memory-plan) as C++ for the CPU runtime",
      [](ModuleOp module, llvm::raw_ostream &os) {
        EmitCppOptions options;
        options.batchSize = emit::translateBatchSize();
        options.rollRepeats = emit::translateRollRepeats();
        return emitCpp(module, os, options);
      },
      [](DialectRegistry &registry) {
        registry.insert<LoomDialect, loomrt::LoomRTDialect, func::FuncDialect,
                        arith::ArithDialect, math::MathDialect,
                        memref::MemRefDialect, shard::ShardDialect>();
      });
}
