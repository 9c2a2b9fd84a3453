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

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir {
namespace loom {

/// Adds the passes of a training step to `pm` (on builtin.module): import
/// clean-up, tensor parallelism, autodiff or pipeline stages, data
/// parallelism, the optimizer, the lowering to loomrt, the memory plan and
/// the check that every mesh axis got its collectives. `options` must have
/// passed verifyTrainingOptions.
void buildTrainingPipeline(OpPassManager &pm, const TrainingOptions &options);

/// Compiles a clone of `module` (untouched) with `options` through
/// buildTrainingPipeline, writing no reports, and returns it: the lowered,
/// memory-planned step functions whose figures (loomrt.device_peak_bytes,
/// ...) the trials of --recompute auto and the planner read. Errors go to
/// the context's diagnostic handler.
FailureOr<OwningOpRef<ModuleOp>> compileTrial(ModuleOp module,
                                              const TrainingOptions &options);

/// `--recompute auto`: chooses each pipeline stage's recomputation policy
/// (each gradient function's) by the device-memory budget. Compiles
/// `module` (untouched) once per policy, cheapest first (none, selective,
/// comm-free, full), with no budget, reads every stage's device peak from
/// the memory plan, and gives each stage the first policy under
/// `options.deviceMemory`: the stages that hold the most micro-batches in
/// flight (the first under 1F1B) recompute the most. Fills
/// `options.stageRecompute`; on failure returns the error (the stage that
/// fits under no policy, its smallest peak and the budget).
std::string resolveAutoRecompute(ModuleOp module, TrainingOptions &options);

/// Registers `--loom-training-pipeline` (loom-opt).
void registerTrainingPipeline();

} // namespace loom
} // namespace mlir

#endif // LOOM_PIPELINES_TRAININGPIPELINE_H
