//===- TrainingOptions.h - Everything a training compile is asked -*- C++ -*-===//
//
// The typed options of a training compile: the device mesh, micro-batching
// and pipeline schedule, the optimizer, precision and target, and the slots
// of this wave's optimisations (overlap split, recompute, swap, device
// memory, communication scheduling). loomc fills it from its flags and
// --plan, loom-opt from --loom-training-pipeline's options, the planner from
// its search; buildTrainingPipeline (TrainingPipeline.h) turns it into
// passes.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINES_TRAININGOPTIONS_H
#define LOOM_PIPELINES_TRAININGOPTIONS_H

#include "loom/Dialect/Loom/Transforms/TrainingEnums.h"
#include "loom/Support/Mesh.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace loom {

/// torch.optim's optimizers and schedules (loom-optimizer's options).
struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::sgd;
  double lr = 0.01;
  double momentum = 0.0;
  bool nesterov = false;
  /// Negative: the optimizer's default (0, AdamW 0.01).
  double weightDecay = -1.0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  /// 0: no clipping.
  double clipGradNorm = 0.0;
  LrSchedule schedule = LrSchedule::constant;
  int64_t warmupSteps = 0, totalSteps = 0;
  double minLr = 0.0;

};

struct TrainingOptions {
  /// The model's forward function @F (the public entry, usually main).
  std::string function = "main";
  /// The loom.name of the loss result; empty: the only result.
  std::string loss;

  /// Data, pipeline and tensor parallelism.
  ::loom::Mesh mesh;
  /// Micro-batches per step (pipelined over the stages; gradient
  /// accumulation when pp = 1).
  int64_t microbatches = 1;
  /// Rows of one micro-batch (0: the model's own batch). A model imported
  /// from ONNX with a dynamic batch axis is imported at this size; a model
  /// whose batch is fixed must have this one.
  int64_t microBatch = 0;
  PipelineScheduleKind schedule = PipelineScheduleKind::OneFOneB;
  /// Ops that must begin a stage: sequence positions or ONNX node names.
  std::vector<std::string> stageBoundaries;
  /// Bytes of parameters and activations allowed per stage (0: no limit).
  int64_t memoryBudget = 0;
  /// Largest bucket of gradients one data-parallel all-reduce carries
  /// (loom-data-parallel; PyTorch DDP's 25 MiB; 0: one per gradient).
  int64_t bucketBytes = 25 * 1024 * 1024;

  OptimizerOptions optimizer;
  Precision precision = Precision::f32;
  /// With bf16: a fused loop keeps its intermediate values in f32, rounding
  /// only what it stores (loom-excess-precision; auto means on).
  Switch excessPrecision = Switch::on;
  /// With bf16: each parameter the products read has a bf16 copy that the
  /// optimizer's update writes (loom-weight-shadows; auto means on).
  Switch weightShadows = Switch::on;
  Target target = Target::cpu;

  // The optimisations of this wave; each pass that implements one reads
  // its field (docs/plan.md lists which exist in this build).
  /// Sub-batches per micro-batch in tensor-parallel regions (Oases; 1: off).
  int64_t overlapSplit = 1;
  /// Collectives in flight per group (with overlapSplit).
  int64_t maxInflightCollectives = 1;
  RecomputePolicy recompute = RecomputePolicy::none;
  /// With `recompute = auto`: the policy of each gradient function
  /// (gradFunctions order), as resolveAutoRecompute chose them by the
  /// device-memory budget.
  std::vector<RecomputePolicy> stageRecompute;
  /// With `recompute = auto`, per gradient function whose entry in
  /// `stageRecompute` is auto: the activation bytes it frees by
  /// recomputing single tensors (loom-recompute's free-bytes); else 0.
  std::vector<int64_t> stageRecomputeBytes;
  SwapPolicy swap = SwapPolicy::none;
  /// What loom-swap times its host copies with (loomc takes it from
  /// --cluster: planner::swapCopyTiming): the host link's bytes/s, a GEMM's
  /// flop/s, device memory's bytes/s and seconds per launch. All 0 (no
  /// cluster): each copy hides behind loom-swap's prefetch-distance ops.
  struct CopyTiming {
    double hostLink = 0, gemmFlops = 0, memoryBandwidth = 0, launch = 0;
  } swapTiming;
  /// Bytes of device memory per rank (0: unbounded).
  int64_t deviceMemory = 0;
  /// TriRace: pipeline transfers posted as early as their data allows
  /// (loom-comm-schedule; auto means on).
  Switch commSchedule = Switch::on;
  /// Embedding gradients exchanged by rows under dp.
  Switch sparseEmbeddingGrad = Switch::off;
  /// Weight versions: 1, or 2 for PipeDream-2BW's rule (the dp gradient
  /// exchange of a step overlaps the next step; loom-two-weight-versions).
  int64_t pipelineWeights = 1;

  /// Under tp > 1, make each large parameter left replicated an error
  /// (loom-report-sharding), not a warning.
  bool requireSharded = false;

  /// Where the passes write their reports (empty: nowhere).
  std::string partitionReport, memoryReport, shardingReport;

  /// Whether the step is pipelined: stage programs over micro-batches.
  bool isPipelined() const { return mesh.pp > 1 || microbatches > 1; }
};

/// The gradient functions the pipeline trains: @F_grad, or one
/// @F_stage<k>_grad per stage when pipelined.
std::vector<std::string> gradFunctions(const TrainingOptions &options);
/// The step functions it emits (names::stepFunction of each).
std::vector<std::string> stepFunctions(const TrainingOptions &options);

/// Checks the options on their own (ranges, combinations, what this build
/// implements). Returns an error message naming the option, empty when
/// they are valid; flag spellings are loomc's.
std::string verifyTrainingOptions(const TrainingOptions &options);

} // namespace loom
} // namespace mlir

#endif // LOOM_PIPELINES_TRAININGOPTIONS_H
