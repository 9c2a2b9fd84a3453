//===- TrainingOptions.cpp - Checking a training compile's options --------===//

#include "loom/Pipelines/TrainingOptions.h"

#include "loom/Dialect/Loom/Transforms/TrainingFunctions.h"

using namespace mlir;
using namespace mlir::loom;

std::vector<std::string> mlir::loom::gradFunctions(const TrainingOptions &o) {
  std::vector<std::string> names;
  if (o.isPipelined())
    for (int64_t k = 0; k < o.mesh.pp; ++k)
      names.push_back(names::stageGradFunction(o.function, k));
  else
    names.push_back(names::gradFunction(o.function));
  return names;
}

std::vector<std::string> mlir::loom::stepFunctions(const TrainingOptions &o) {
  std::vector<std::string> names;
  for (const std::string &grad : gradFunctions(o))
    names.push_back(*names::stepFunction(grad));
  return names;
}

std::string mlir::loom::verifyTrainingOptions(const TrainingOptions &o) {
  if (o.function.empty())
    return "the model's function is not named";
  if (o.mesh.dp < 1 || o.mesh.tp < 1 || o.mesh.pp < 1)
    return "--mesh: every axis needs at least one rank, got " + o.mesh.str();
  if (o.microbatches < 1)
    return "--microbatches must be >= 1, got " +
           std::to_string(o.microbatches);
  if (o.microBatch < 0)
    return "--micro-batch must be >= 0 (0: the model's batch), got " +
           std::to_string(o.microBatch);
  if (o.memoryBudget < 0)
    return "--memory-budget must be >= 0, got " +
           std::to_string(o.memoryBudget);
  if (o.optimizer.clipGradNorm < 0)
    return "--clip-grad-norm must be >= 0";
  // The slots of this wave's optimisations: each is accepted once the pass
  // that implements it exists (docs/plan.md).
  if (o.overlapSplit < 1)
    return "--overlap-split must be >= 1 (1: off), got " +
           std::to_string(o.overlapSplit);
  if (o.maxInflightCollectives < 1)
    return "--max-inflight-collectives must be >= 1, got " +
           std::to_string(o.maxInflightCollectives);
  if (o.overlapSplit > 1 && o.mesh.tp == 1)
    return "--overlap-split " + std::to_string(o.overlapSplit) +
           " needs tensor parallelism (tp > 1): its sub-batches overlap the "
           "tensor-parallel all-reduces, and " + o.mesh.str() +
           " has none; use --mesh tp=2 (or more) or --overlap-split 1";
  if (!o.stageRecompute.empty() &&
      (o.recompute != RecomputePolicy::automatic ||
       o.stageRecompute.size() != gradFunctions(o).size()))
    return "recompute_per_stage: one policy per pipeline stage, with "
           "--recompute auto only (" +
           std::to_string(o.stageRecompute.size()) + " given for " +
           std::to_string(gradFunctions(o).size()) + " stage(s))";
  if (!o.stageRecomputeBytes.empty() &&
      o.stageRecomputeBytes.size() != o.stageRecompute.size())
    return "recompute_bytes_per_stage: one entry per pipeline stage (" +
           std::to_string(o.stageRecomputeBytes.size()) + " given for " +
           std::to_string(o.stageRecompute.size()) + " policies)";
  for (auto [k, policy] : llvm::enumerate(o.stageRecompute))
    if (policy == RecomputePolicy::automatic &&
        (k >= o.stageRecomputeBytes.size() || o.stageRecomputeBytes[k] <= 0))
      return "recompute_per_stage: stage " + std::to_string(k) +
             " recomputes single tensors (auto) and needs its bytes to "
             "free in recompute_bytes_per_stage (> 0)";
  if (o.deviceMemory < 0)
    return "--device-memory must be >= 0 (0: unbounded), got " +
           std::to_string(o.deviceMemory);
  if ((o.swap == SwapPolicy::peer || o.swap == SwapPolicy::balance) &&
      o.mesh.pp < 2)
    return std::string("--swap ") + stringifySwapPolicy(o.swap).str() +
           " sends activations to a neighbouring pipeline stage: it needs "
           "--mesh pp=N with N >= 2 (without stages, use --swap host)";
  if (o.swap != SwapPolicy::none &&
      o.deviceMemory == 0)
    return std::string("--swap ") + stringifySwapPolicy(o.swap).str() +
           " sheds activations to fit a device budget: give --device-memory "
           "BYTES";
  if (o.pipelineWeights != 1 && o.pipelineWeights != 2)
    return "--pipeline-weights must be 1 or 2 (PipeDream-2BW), got " +
           std::to_string(o.pipelineWeights);
  if (o.pipelineWeights == 2) {
    // W(t+1) = W(t) - lr * grad f(W(t-1)) holds when the first step's zero
    // pending gradient changes nothing (loom-two-weight-versions).
    const OptimizerOptions &opt = o.optimizer;
    if (o.mesh.dp < 2)
      return "--pipeline-weights 2 overlaps the data-parallel gradient "
             "exchange with the next step: it needs --mesh dp=2 or more";
    if (opt.kind != OptimizerKind::sgd)
      return "--pipeline-weights 2 needs --optimizer sgd (" +
             stringifyOptimizerKind(opt.kind).str() +
             " would count the first step's empty pending gradient as a "
             "step)";
    if (opt.weightDecay > 0)
      return "--pipeline-weights 2 needs --weight-decay 0 (decay would move "
             "the weights on the first step, which has no gradient yet)";
    if (opt.schedule != LrSchedule::constant)
      return "--pipeline-weights 2 needs --lr-schedule constant (the "
             "schedule would run one step ahead of the gradients)";
  }
  return "";
}
