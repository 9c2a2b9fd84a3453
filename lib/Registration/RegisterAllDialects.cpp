//===- RegisterAllDialects.cpp - Every dialect Loom uses ------------------===//

#include "loom/InitAllDialects.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/StableHLO/IR/ImportDialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/AllExtensions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/Extensions/AllExtensions.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::loom::registerAllDialects(DialectRegistry &registry) {
  registry.insert<LoomDialect, loomrt::LoomRTDialect, shlo::StableHLODialect,
                  shlo::chlo::CHLODialect, shlo::check::CheckDialect,
                  shlo::sdy::SdyDialect, func::FuncDialect, arith::ArithDialect,
                  math::MathDialect, memref::MemRefDialect,
                  tensor::TensorDialect, shard::ShardDialect>();
  func::registerAllExtensions(registry);
  tensor::registerAllExtensions(registry);
  registerShardVJPModels(registry);
}
