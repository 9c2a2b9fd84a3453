//===- TrainingPipeline.h - The pass pipeline of a training step -*- C++ -*-===//
//
// buildTrainingPipeline is the one description of what a training compile
// runs: loomc, loom-opt's --loom-training-pipeline and the planner all
// build it from TrainingOptions, so a FileCheck test sees exactly what
// loomc runs.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINES_TRAININGPIPELINE_H
#define LOOM_PIPELINES_TRAININGPIPELINE_H

#include "loom/Pipelines/TrainingOptions.h"

#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace loom {

/// Adds the passes of a training step to `pm` (on builtin.module): import
/// clean-up, tensor parallelism, autodiff or pipeline stages, data
/// parallelism, the optimizer, the lowering to loomrt, the memory plan and
/// the check that every mesh axis got its collectives. `options` must have
/// passed verifyTrainingOptions.
void buildTrainingPipeline(OpPassManager &pm, const TrainingOptions &options);

/// Registers `--loom-training-pipeline` (loom-opt).
void registerTrainingPipeline();

} // namespace loom
} // namespace mlir

#endif // LOOM_PIPELINES_TRAININGPIPELINE_H
