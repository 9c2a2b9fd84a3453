//===- loom-opt.cpp - The mlir-opt of Loom --------------------------------===//
//
// Parses, verifies, transforms and prints IR of the loom dialect and of the
// upstream dialects Loom uses, with every Loom pass and the upstream passes
// it builds on registered.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "loom/Conversion/StableHLOToLoom/Passes.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Conversion/LoomToLoomRT/Passes.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"
#include "loom/Import/StableHLO.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/AllExtensions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/Extensions/AllExtensions.h"
#include "loom/Pipelines/TrainingPipeline.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::loom::LoomDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::shard::ShardDialect, mlir::loomrt::LoomRTDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect>();
  // Inlining of func.call and the sharding rules of func/tensor ops, so
  // that sharding-propagation can cross function boundaries.
  mlir::func::registerAllExtensions(registry);
  mlir::tensor::registerAllExtensions(registry);
  // The VJP of shard.all_reduce, for loom-autodiff on tensor-parallel graphs.
  mlir::loom::registerShardVJPModels(registry);
  // The StableHLO importer's stablehlo/chlo/check/sdy dialects, so that
  // `loom-opt --inline --symbol-dce --convert-stablehlo-to-loom` imports.
  mlir::loom::registerStableHLOImportDialects(registry);

  // Upstream passes Loom pipelines use: canonicalize, cse, inline,
  // symbol-dce, ... and the shard dialect's sharding-propagation and
  // shard-partition.
  mlir::registerTransformsPasses();
  mlir::shard::registerShardPasses();
  mlir::loom::registerLoomPasses();
  mlir::loom::registerStableHLOToLoomPasses();
  mlir::loom::registerLoomToLoomRTPasses();
  mlir::loomrt::registerLoomRTPasses();
  // --loom-training-pipeline: exactly what loomc runs (lib/Pipelines).
  mlir::loom::registerTrainingPipeline();

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Loom optimizer driver: runs loom and upstream passes\n",
      registry));
}
