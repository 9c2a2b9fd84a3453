//===- TrainingPipeline.cpp - The pass pipeline of a training step --------===//

#include "loom/Pipelines/TrainingPipeline.h"

#include "loom/Conversion/LoomToLoomRT/Passes.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <iterator>
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::loom;

void mlir::loom::buildTrainingPipeline(OpPassManager &pm,
                                       const TrainingOptions &o) {
  // Import clean-up: one function, static shapes.
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  pm.addPass(createLoomShapeInference());
  // Spelled-out GELU, SiLU and RMSNorm as one op each: their gradients
  // keep only the input (and scale).
  pm.addNestedPass<func::FuncOp>(createLoomRaiseComposites());

  // Tensor parallelism on the forward function, before differentiation:
  // the Megatron blocks, then the vocabulary tables.
  if (o.mesh.tp > 1) {
    LoomTensorParallelOptions tp;
    tp.function = o.function;
    tp.tp = o.mesh.tp;
    pm.addPass(createLoomTensorParallel(tp));
    LoomVocabParallelOptions vocab;
    vocab.function = o.function;
    vocab.tp = o.mesh.tp;
    pm.addPass(createLoomVocabParallel(vocab));
    // What the two passes cut, and the large parameters they did not.
    LoomReportShardingOptions report;
    report.function = o.function;
    report.report = o.shardingReport;
    report.requireSharded = o.requireSharded;
    pm.addPass(createLoomReportSharding(report));
  }

  // bf16 products between conversions, before differentiation so that the
  // backward products follow (after the tensor-parallel cuts, so that their
  // collectives stay f32).
  if (o.precision == Precision::bf16) {
    LoomMixedPrecisionOptions mixed;
    mixed.function = o.function;
    pm.addPass(createLoomMixedPrecision(mixed));
  }

  // The layers that recomputation replays, found on the forward function.
  if (o.recompute != RecomputePolicy::none) {
    LoomMarkLayersOptions layers;
    layers.function = o.function;
    pm.addPass(createLoomMarkLayers(layers));
  }

  // Oases: the rows as sub-batches interleaved around those collectives
  // (the pass reports a function without any, e.g. tp=1).
  if (o.overlapSplit > 1) {
    LoomOverlapSplitOptions split;
    split.function = o.function;
    split.k = o.overlapSplit;
    pm.addPass(createLoomOverlapSplit(split));
  }

  // The gradient functions: one, or a pipeline stage program per stage.
  if (o.isPipelined()) {
    LoomPipelinePartitionOptions partition;
    partition.function = o.function;
    partition.stages = o.mesh.pp;
    partition.memoryBudget = o.memoryBudget;
    partition.stageBoundaries.assign(o.stageBoundaries.begin(),
                                     o.stageBoundaries.end());
    partition.report = o.partitionReport;
    pm.addPass(createLoomPipelinePartition(partition));
    LoomPipelineSplitOptions split;
    split.function = o.function;
    pm.addPass(createLoomPipelineSplit(split));
    LoomPipelineScheduleOptions schedule;
    schedule.function = o.function;
    schedule.microbatches = o.microbatches;
    schedule.schedule = o.schedule;
    schedule.loss = o.loss;
    pm.addPass(createLoomPipelineSchedule(schedule));
  } else {
    LoomAutodiffOptions autodiff;
    autodiff.function = o.function;
    autodiff.loss = o.loss;
    pm.addPass(createLoomAutodiff(autodiff));
  }

  // Which forward activations the backward pass recomputes.
  if (o.recompute != RecomputePolicy::none) {
    LoomRecomputeOptions recompute;
    std::vector<std::string> grads = gradFunctions(o);
    recompute.functions.assign(grads.begin(), grads.end());
    recompute.policy = o.recompute;
    for (RecomputePolicy stage : o.stageRecompute)
      recompute.policies.push_back(stringifyRecomputePolicy(stage).str());
    recompute.freeBytes.assign(o.stageRecomputeBytes.begin(),
                               o.stageRecomputeBytes.end());
    pm.addPass(createLoomRecompute(recompute));
  }

  // Per gradient function: data-parallel averaging, then the optimizer.
  for (const std::string &grad : gradFunctions(o)) {
    if (o.mesh.dp > 1) {
      LoomDataParallelOptions dp;
      dp.function = grad;
      dp.dp = o.mesh.dp;
      dp.bucketBytes = o.bucketBytes;
      dp.sparseEmbeddingGrad = o.sparseEmbeddingGrad;
      pm.addPass(createLoomDataParallel(dp));
    }
    LoomOptimizerOptions opt;
    opt.function = grad;
    opt.optimizer = o.optimizer.kind;
    opt.lr = o.optimizer.lr;
    opt.momentum = o.optimizer.momentum;
    opt.nesterov = o.optimizer.nesterov;
    opt.weightDecay = o.optimizer.weightDecay;
    opt.beta1 = o.optimizer.beta1;
    opt.beta2 = o.optimizer.beta2;
    opt.eps = o.optimizer.eps;
    opt.clipGradNorm = o.optimizer.clipGradNorm;
    opt.schedule = o.optimizer.schedule;
    opt.warmupSteps = o.optimizer.warmupSteps;
    opt.totalSteps = o.optimizer.totalSteps;
    opt.minLr = o.optimizer.minLr;
    pm.addPass(createLoomOptimizer(opt));
  }

  // PipeDream-2BW: each step reduces the previous step's buckets.
  if (o.pipelineWeights == 2) {
    LoomTwoWeightVersionsOptions versions;
    for (const std::string &step : stepFunctions(o))
      versions.functions.push_back(step);
    pm.addPass(createLoomTwoWeightVersions(versions));
  }

  // The sub-batches take turns between their collectives, in the backward
  // pass too.
  if (o.overlapSplit > 1)
    pm.addNestedPass<func::FuncOp>(createLoomOverlapOrder());

  // bf16 weights rounded by the update that writes them, not at the top of
  // the next step. After the orderings above, which then see the same
  // program with or without it (the fusion choices, and so the bits,
  // follow the order).
  if (o.precision == Precision::bf16 && o.weightShadows != Switch::off) {
    LoomWeightShadowsOptions shadows;
    for (const std::string &step : stepFunctions(o))
      shadows.functions.push_back(step);
    pm.addPass(createLoomWeightShadows(shadows));
  }

  // Transposed products computed directly; elementwise chains as one loop
  // each; buffers, kernels and library calls; the arena; the mesh check.
  OpPassManager &perFunction = pm.nest<func::FuncOp>();
  perFunction.addPass(createLoomFoldDotTranspose());
  perFunction.addPass(createLoomFuseElementwise());
  ConvertLoomToLoomRTOptions lower;
  for (const std::string &step : stepFunctions(o))
    lower.function.push_back(step);
  pm.addPass(createConvertLoomToLoomRT(lower));
  // Linear layers' biases added as their gemms write the products.
  pm.addPass(mlir::loomrt::createLoomFuseGemmBias());
  // Sums of products (gradients over sub-batches, micro-batches, layers)
  // collected by the gemms themselves.
  pm.addPass(mlir::loomrt::createLoomFuseGemmAccumulate());
  // Transposed and sliced buffers read where they lie, not copied.
  pm.addPass(mlir::loomrt::createLoomFoldLayoutCopies());
  // Norms whose output the products read as bf16 write bf16.
  if (o.precision == Precision::bf16)
    pm.addPass(mlir::loomrt::createLoomFuseNormNarrowing());
  // Norm gradients read their bf16 cotangent and add onto the residual's.
  pm.addPass(mlir::loomrt::createLoomFuseNormGrad());
  // The loss writes the softmax its gradient reads.
  pm.addPass(mlir::loomrt::createLoomFuseLossSoftmax());
  // A kernel whose kept outputs the next kernel reads runs in its loop.
  pm.addPass(mlir::loomrt::createLoomMergeKernels());
  // bf16 rounded where it is stored, not between the ops of one loop.
  if (o.precision == Precision::bf16 && o.excessPrecision != Switch::off)
    pm.addPass(mlir::loomrt::createLoomExcessPrecision());
  if (o.overlapSplit > 1) {
    mlir::loomrt::LoomMaxInflightCollectivesOptions inflight;
    inflight.max = o.maxInflightCollectives;
    pm.addPass(mlir::loomrt::createLoomMaxInflightCollectives(inflight));
  }
  // TriRace: pipeline transfers and tensor-parallel all-reduces posted as
  // early as their data allows (a program without either has none).
  if (o.commSchedule != Switch::off && (o.mesh.pp > 1 || o.mesh.tp > 1))
    pm.addPass(mlir::loomrt::createLoomCommSchedule());
  // Parameters and optimizer state updated in their own buffers.
  pm.addPass(mlir::loomrt::createLoomInPlaceUpdates());
  if (o.swap == SwapPolicy::host || o.swap == SwapPolicy::peer ||
      o.swap == SwapPolicy::balance) {
    mlir::loomrt::LoomSwapOptions swap;
    swap.deviceMemory = o.deviceMemory;
    swap.peer = o.swap == SwapPolicy::peer || o.swap == SwapPolicy::balance;
    swap.hostFallback = o.swap == SwapPolicy::balance;
    swap.hostLink = o.swapTiming.hostLink;
    swap.gemmFlops = o.swapTiming.gemmFlops;
    swap.memoryBandwidth = o.swapTiming.memoryBandwidth;
    swap.launch = o.swapTiming.launch;
    pm.addPass(mlir::loomrt::createLoomSwap(swap));
  }
  mlir::loomrt::LoomMemoryPlanOptions memory;
  memory.report = o.memoryReport;
  memory.deviceMemory = o.deviceMemory;
  pm.addPass(mlir::loomrt::createLoomMemoryPlan(memory));
  mlir::loomrt::LoomVerifyMeshOptions verify;
  verify.dp = o.mesh.dp;
  verify.tp = o.mesh.tp;
  verify.pp = o.mesh.pp;
  pm.addPass(mlir::loomrt::createLoomVerifyMesh(verify));
  // No cycle of waits between the stages (a hang at run time).
  if (o.mesh.pp > 1)
    pm.addPass(mlir::loomrt::createLoomVerifyMessages());
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::loom::compileTrial(ModuleOp module, const TrainingOptions &options) {
  TrainingOptions trial = options;
  trial.partitionReport.clear();
  trial.memoryReport.clear();
  trial.shardingReport.clear();
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  buildTrainingPipeline(pm, trial);
  if (failed(pm.run(*copy)))
    return failure();
  return copy;
}

std::string mlir::loom::resolveAutoRecompute(ModuleOp module,
                                             TrainingOptions &o) {
  if (o.deviceMemory <= 0)
    return "--recompute auto chooses by the device budget: give "
           "--device-memory";
  std::vector<std::string> steps = stepFunctions(o);
  size_t n = steps.size();
  // Compiles `module` (untouched) with per-stage policies and byte
  // targets, no budget; each stage's device peak and the bytes its
  // per-tensor recomputation chose (0 for a named policy).
  struct Trial {
    std::vector<int64_t> peaks, chosen;
  };
  auto compile = [&](const std::vector<RecomputePolicy> &policies,
                     const std::vector<int64_t> &bytes,
                     std::string &error) -> std::optional<Trial> {
    TrainingOptions trial = o;
    trial.stageRecompute = policies;
    trial.stageRecomputeBytes = bytes;
    trial.deviceMemory = 0;
    trial.swap = SwapPolicy::none;
    FailureOr<OwningOpRef<ModuleOp>> copy = compileTrial(module, trial);
    if (failed(copy)) {
      error = "--recompute auto: a trial compile failed (see the errors "
              "above)";
      return std::nullopt;
    }
    Trial t;
    for (size_t k = 0; k < n; ++k) {
      auto step = (*copy)->lookupSymbol<func::FuncOp>(steps[k]);
      auto peak = step ? step->getAttrOfType<IntegerAttr>(
                             "loomrt.device_peak_bytes")
                       : IntegerAttr();
      if (!peak) {
        error = "--recompute auto: the memory plan gave no device peak for @" +
                steps[k];
        return std::nullopt;
      }
      t.peaks.push_back(peak.getInt());
      // The bytes per-tensor recomputation chose (the gradient function
      // is inlined into the step, which keeps its loom.recompute).
      int64_t chosen = 0;
      if (auto counts = step->getAttrOfType<DictionaryAttr>(
              LoomDialect::RecomputeAttrHelper::getNameStr()))
        if (auto bytes = counts.getAs<IntegerAttr>("bytes"))
          chosen = bytes.getInt();
      t.chosen.push_back(chosen);
    }
    return t;
  };
  auto where = [&](size_t k) {
    return o.isPipelined() ? "stage " + std::to_string(k) + " (@" + steps[k] +
                                 ")"
                           : "@" + steps[k];
  };

  std::string error;
  std::vector<RecomputePolicy> policies(n, RecomputePolicy::none);
  std::vector<int64_t> bytes(n, 0);
  std::optional<Trial> none = compile(policies, bytes, error);
  if (!none)
    return error;
  // 1. Per tensor: the stages over the budget recompute their cheapest
  // tensors (flops per byte), the bytes doubling from the excess until
  // the stage fits or no tensor is left to choose.
  std::vector<bool> over(n), exhausted(n, false);
  for (size_t k = 0; k < n; ++k) {
    over[k] = none->peaks[k] > o.deviceMemory;
    if (over[k]) {
      policies[k] = RecomputePolicy::automatic;
      bytes[k] = none->peaks[k] - o.deviceMemory;
    }
  }
  std::vector<int64_t> peaks = none->peaks;
  for (int round = 0; round < 16; ++round) {
    bool open = false;
    for (size_t k = 0; k < n; ++k)
      open |= over[k] && !exhausted[k] && policies[k] ==
                                              RecomputePolicy::automatic;
    if (!open)
      break;
    std::optional<Trial> t = compile(policies, bytes, error);
    if (!t)
      return error;
    peaks = t->peaks;
    bool again = false;
    for (size_t k = 0; k < n; ++k) {
      if (policies[k] != RecomputePolicy::automatic || exhausted[k])
        continue;
      if (peaks[k] <= o.deviceMemory) {
        over[k] = false;
        continue;
      }
      if (t->chosen[k] < bytes[k]) {
        exhausted[k] = true; // every candidate chosen, still over
        continue;
      }
      bytes[k] *= 2;
      again = true;
    }
    if (!again)
      break;
  }
  // 2. Stages that single tensors cannot fit: the cheapest named policy
  // that fits (selective, comm-free, full).
  const RecomputePolicy ladder[] = {RecomputePolicy::selective,
                                    RecomputePolicy::CommFree,
                                    RecomputePolicy::full};
  std::vector<size_t> left;
  for (size_t k = 0; k < n; ++k)
    if (peaks[k] > o.deviceMemory)
      left.push_back(k);
  for (RecomputePolicy level : ladder) {
    if (left.empty())
      break;
    std::vector<RecomputePolicy> trialPolicies = policies;
    std::vector<int64_t> trialBytes = bytes;
    for (size_t k : left) {
      trialPolicies[k] = level;
      trialBytes[k] = 0;
    }
    std::optional<Trial> t = compile(trialPolicies, trialBytes, error);
    if (!t)
      return error;
    std::vector<size_t> still;
    for (size_t k : left) {
      if (t->peaks[k] <= o.deviceMemory) {
        policies[k] = level;
        bytes[k] = 0;
        peaks[k] = t->peaks[k];
      } else {
        peaks[k] = std::min(peaks[k], t->peaks[k]);
        still.push_back(k);
      }
    }
    left = std::move(still);
  }
  if (!left.empty()) {
    size_t k = left.front();
    return "--recompute auto: " + where(k) + " needs " +
           std::to_string(peaks[k]) +
           " bytes of device memory even with the most recomputation "
           "(full), over --device-memory " +
           std::to_string(o.deviceMemory) +
           "; add --swap host, more pipeline stages or smaller "
           "micro-batches";
  }
  o.stageRecompute = policies;
  o.stageRecomputeBytes =
      llvm::any_of(bytes, [](int64_t b) { return b > 0; })
          ? bytes
          : std::vector<int64_t>();
  return "";
}

namespace {

/// The values of an off/on/auto option.
llvm::cl::ValuesClass switchValues() {
  return llvm::cl::values(clEnumValN(Switch::off, "off", ""),
                          clEnumValN(Switch::on, "on", ""),
                          clEnumValN(Switch::automatic, "auto", ""));
}

/// --loom-training-pipeline's options: TrainingOptions, spelled as pass
/// options (the flag names are loomc's).
struct TrainingPipelineOptions
    : public PassPipelineOptions<TrainingPipelineOptions> {
  Option<std::string> function{*this, "function",
                               llvm::cl::desc("The forward function @F"),
                               llvm::cl::init("main")};
  Option<std::string> loss{*this, "loss",
                           llvm::cl::desc("The loss result's loom.name")};
  Option<int64_t> dp{*this, "dp", llvm::cl::desc("Data-parallel ranks"),
                     llvm::cl::init(1)};
  Option<int64_t> tp{*this, "tp", llvm::cl::desc("Tensor-parallel ranks"),
                     llvm::cl::init(1)};
  Option<int64_t> pp{*this, "pp", llvm::cl::desc("Pipeline stages"),
                     llvm::cl::init(1)};
  Option<int64_t> microbatches{*this, "microbatches",
                               llvm::cl::desc("Micro-batches per step"),
                               llvm::cl::init(1)};
  Option<PipelineScheduleKind> schedule{
      *this, "schedule", llvm::cl::desc("Pipeline schedule"),
      llvm::cl::init(PipelineScheduleKind::OneFOneB),
      llvm::cl::values(
          clEnumValN(PipelineScheduleKind::OneFOneB, "1f1b", "PipeDream-flush"),
          clEnumValN(PipelineScheduleKind::GPipe, "gpipe", "GPipe"))};
  ListOption<std::string> stageBoundaries{
      *this, "stage-boundaries",
      llvm::cl::desc("Ops that begin a stage (positions or node names)")};
  Option<int64_t> memoryBudget{*this, "memory-budget",
                               llvm::cl::desc("Bytes per stage (0: none)"),
                               llvm::cl::init(0)};
  Option<int64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("Largest data-parallel gradient bucket (0: per gradient)"),
      llvm::cl::init(25 * 1024 * 1024)};
  Option<OptimizerKind> optimizer{
      *this, "optimizer", llvm::cl::desc("sgd, adam or adamw"),
      llvm::cl::init(OptimizerKind::sgd),
      llvm::cl::values(clEnumValN(OptimizerKind::sgd, "sgd", "SGD"),
                       clEnumValN(OptimizerKind::adam, "adam", "Adam"),
                       clEnumValN(OptimizerKind::adamw, "adamw", "AdamW"))};
  Option<double> lr{*this, "lr", llvm::cl::desc("Learning rate"),
                    llvm::cl::init(0.01)};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("SGD momentum"),
                          llvm::cl::init(0.0)};
  Option<bool> nesterov{*this, "nesterov", llvm::cl::desc("Nesterov"),
                        llvm::cl::init(false)};
  Option<double> weightDecay{*this, "weight-decay",
                             llvm::cl::desc("Weight decay (<0: default)"),
                             llvm::cl::init(-1.0)};
  Option<double> beta1{*this, "beta1", llvm::cl::desc("Adam beta1"),
                       llvm::cl::init(0.9)};
  Option<double> beta2{*this, "beta2", llvm::cl::desc("Adam beta2"),
                       llvm::cl::init(0.999)};
  Option<double> eps{*this, "eps", llvm::cl::desc("Adam epsilon"),
                     llvm::cl::init(1e-8)};
  Option<double> clipGradNorm{*this, "clip-grad-norm",
                              llvm::cl::desc("Global norm (0: off)"),
                              llvm::cl::init(0.0)};
  Option<LrSchedule> lrSchedule{
      *this, "lr-schedule", llvm::cl::desc("Learning-rate schedule"),
      llvm::cl::init(LrSchedule::constant),
      llvm::cl::values(clEnumValN(LrSchedule::constant, "constant", ""),
                       clEnumValN(LrSchedule::warmup, "warmup", ""),
                       clEnumValN(LrSchedule::cosine, "cosine", ""))};
  Option<int64_t> warmupSteps{*this, "warmup-steps",
                              llvm::cl::desc("Warm-up steps"),
                              llvm::cl::init(0)};
  Option<int64_t> totalSteps{*this, "total-steps",
                             llvm::cl::desc("Cosine schedule steps"),
                             llvm::cl::init(0)};
  Option<double> minLr{*this, "min-lr", llvm::cl::desc("Final cosine rate"),
                       llvm::cl::init(0.0)};
  Option<int64_t> overlapSplit{
      *this, "overlap-split",
      llvm::cl::desc("Oases sub-batches per micro-batch (1: off; needs tp > 1)"),
      llvm::cl::init(1)};
  Option<int64_t> maxInflightCollectives{
      *this, "max-inflight-collectives",
      llvm::cl::desc("All-reduces in flight per group with overlap-split"),
      llvm::cl::init(1)};
  Option<RecomputePolicy> recompute{
      *this, "recompute",
      llvm::cl::desc("Activation recomputation (loom-recompute)"),
      llvm::cl::init(RecomputePolicy::none),
      llvm::cl::values(
          clEnumValN(RecomputePolicy::none, "none", ""),
          clEnumValN(RecomputePolicy::full, "full", ""),
          clEnumValN(RecomputePolicy::selective, "selective", ""),
          clEnumValN(RecomputePolicy::CommFree, "comm-free", ""),
          clEnumValN(RecomputePolicy::automatic, "auto", ""))};
  Option<int64_t> deviceMemory{
      *this, "device-memory",
      llvm::cl::desc("Bytes of device memory per rank (0: unbounded)"),
      llvm::cl::init(0)};
  Option<SwapPolicy> swap{
      *this, "swap",
      llvm::cl::desc("Activation offload (none, host, peer or balance)"),
      llvm::cl::init(SwapPolicy::none),
      llvm::cl::values(clEnumValN(SwapPolicy::none, "none", "no offload"),
                       clEnumValN(SwapPolicy::host, "host",
                                  "to a host pool (loom-swap)"),
                       clEnumValN(SwapPolicy::peer, "peer",
                                  "to a neighbouring pipeline stage "
                                  "(loom-swap peer)"),
                       clEnumValN(SwapPolicy::balance, "balance",
                                  "to neighbouring stages with room, the "
                                  "rest to the host pool"))};
  Option<double> swapHostLink{
      *this, "swap-host-link",
      llvm::cl::desc("loom-swap's host-link (bytes/s; with the rates "
                     "below, the copies are timed)"),
      llvm::cl::init(0)};
  Option<double> swapGemmFlops{
      *this, "swap-gemm-flops",
      llvm::cl::desc("loom-swap's gemm-flops (flop/s)"), llvm::cl::init(0)};
  Option<double> swapMemoryBandwidth{
      *this, "swap-memory-bandwidth",
      llvm::cl::desc("loom-swap's memory-bandwidth (bytes/s)"),
      llvm::cl::init(0)};
  Option<double> swapLaunch{*this, "swap-launch",
                            llvm::cl::desc("loom-swap's launch (seconds)"),
                            llvm::cl::init(0)};
  Option<int64_t> pipelineWeights{
      *this, "pipeline-weights",
      llvm::cl::desc("Weight versions: 1, or 2 (PipeDream-2BW)"),
      llvm::cl::init(1)};
  Option<Switch> commSchedule{
      *this, "comm-schedule",
      llvm::cl::desc("Pipeline transfers posted as early as their data "
                     "allows (loom-comm-schedule)"),
      llvm::cl::init(Switch::on),
      switchValues()};
  Option<Precision> precision{
      *this, "precision",
      llvm::cl::desc("Arithmetic (loom-mixed-precision with bf16)"),
      llvm::cl::init(Precision::f32),
      llvm::cl::values(clEnumValN(Precision::f32, "f32", ""),
                       clEnumValN(Precision::bf16, "bf16", ""))};
  Option<Switch> excessPrecision{
      *this, "excess-precision",
      llvm::cl::desc("With bf16, a fused loop rounds only what it stores "
                     "(loom-excess-precision)"),
      llvm::cl::init(Switch::on),
      switchValues()};
  Option<Switch> weightShadows{
      *this, "weight-shadows",
      llvm::cl::desc("With bf16, each weight's bf16 copy is written by its "
                     "update (loom-weight-shadows)"),
      llvm::cl::init(Switch::on),
      switchValues()};
  Option<Switch> sparseEmbeddingGrad{
      *this, "sparse-embedding-grad",
      llvm::cl::desc("Embedding gradients exchanged by rows under dp"),
      llvm::cl::init(Switch::off),
      switchValues()};
  Option<std::string> partitionReport{
      *this, "partition-report",
      llvm::cl::desc("Where loom-pipeline-partition writes its report")};
  Option<std::string> memoryReport{
      *this, "memory-report",
      llvm::cl::desc("Where loom-memory-plan writes its report")};
  Option<std::string> shardingReport{
      *this, "sharding-report",
      llvm::cl::desc("Where loom-report-sharding writes its report")};
  Option<bool> requireSharded{
      *this, "require-sharded",
      llvm::cl::desc("Large parameters left replicated under tp are errors"),
      llvm::cl::init(false)};
};

} // namespace

void mlir::loom::registerTrainingPipeline() {
  PassPipelineRegistration<TrainingPipelineOptions>(
      "loom-training-pipeline",
      "The whole training compile loomc runs (lib/Pipelines): tensor "
      "parallelism, autodiff or pipeline stages, data parallelism, the "
      "optimizer, the lowering to loomrt, the memory plan, the mesh check",
      [](OpPassManager &pm, const TrainingPipelineOptions &p) {
        TrainingOptions o;
        o.function = p.function;
        o.loss = p.loss;
        o.mesh = {p.dp, p.pp, p.tp};
        o.microbatches = p.microbatches;
        o.schedule = p.schedule;
        o.stageBoundaries.assign(p.stageBoundaries.begin(),
                                 p.stageBoundaries.end());
        o.memoryBudget = p.memoryBudget;
        o.bucketBytes = p.bucketBytes;
        o.optimizer.kind = p.optimizer;
        o.optimizer.lr = p.lr;
        o.optimizer.momentum = p.momentum;
        o.optimizer.nesterov = p.nesterov;
        o.optimizer.weightDecay = p.weightDecay;
        o.optimizer.beta1 = p.beta1;
        o.optimizer.beta2 = p.beta2;
        o.optimizer.eps = p.eps;
        o.optimizer.clipGradNorm = p.clipGradNorm;
        o.optimizer.schedule = p.lrSchedule;
        o.optimizer.warmupSteps = p.warmupSteps;
        o.optimizer.totalSteps = p.totalSteps;
        o.optimizer.minLr = p.minLr;
        o.overlapSplit = p.overlapSplit;
        o.maxInflightCollectives = p.maxInflightCollectives;
        o.deviceMemory = p.deviceMemory;
        o.swap = p.swap;
        o.swapTiming = {p.swapHostLink, p.swapGemmFlops,
                        p.swapMemoryBandwidth, p.swapLaunch};
        o.sparseEmbeddingGrad = p.sparseEmbeddingGrad;
        o.commSchedule = p.commSchedule;
        o.precision = p.precision;
        o.excessPrecision = p.excessPrecision;
        o.weightShadows = p.weightShadows;
        o.pipelineWeights = p.pipelineWeights;
        o.partitionReport = p.partitionReport;
        o.memoryReport = p.memoryReport;
        o.shardingReport = p.shardingReport;
        o.requireSharded = p.requireSharded;
        o.recompute = p.recompute;
        buildTrainingPipeline(pm, o);
      });
}
