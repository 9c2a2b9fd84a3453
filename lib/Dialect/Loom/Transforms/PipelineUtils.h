//===- PipelineUtils.h - Shared by the pipeline passes ----------*- C++ -*-===//
//
// Helpers shared by -loom-pipeline-partition and -loom-pipeline-split (see
// Passes.td for their contracts). Internal to LoomTransforms.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_DIALECT_LOOM_TRANSFORMS_PIPELINEUTILS_H
#define LOOM_LIB_DIALECT_LOOM_TRANSFORMS_PIPELINEUTILS_H

#include "loom/Dialect/Loom/IR/LoomDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace loom {
namespace pipeline {

/// Name of the i64 attribute on an op (and on a stage function or call):
/// the pipeline stage it belongs to.
constexpr llvm::StringLiteral kStageAttrName =
    LoomDialect::StageAttrHelper::getNameStr();
/// Name of the i64 attribute on a partitioned function: its stage count.
constexpr llvm::StringLiteral kStagesAttrName =
    LoomDialect::StagesAttrHelper::getNameStr();

/// The ops of `body` (terminator excluded) that depend on no block argument,
/// directly or through other ops: constants, iota, and ops computed only
/// from those. Every pipeline stage that needs them computes them itself.
llvm::DenseSet<Operation *> findReplicatedOps(Block &body);

/// Checks that `func` is a single-block function whose ops have no regions
/// (what both passes handle); otherwise reports an error naming `pass`.
LogicalResult checkStraightLine(func::FuncOp func, llvm::StringRef pass);

} // namespace pipeline
} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_DIALECT_LOOM_TRANSFORMS_PIPELINEUTILS_H
