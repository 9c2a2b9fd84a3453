//===- Search.h - Price and search training plans --------------*- C++ -*-===//
//
// The planner: for a model (profiled per tp degree), a cluster spec, a GPU
// count and a global batch, it enumerates plans (dp x tp x pp, micro-batch
// size and count, pipeline schedule, recomputation, the Oases overlap
// split), partitions each pipeline into stages, prices every stage with the
// cost model, drops the plans that do not fit the GPU's memory, plays the
// rest through the simulator and ranks them by step time. Fields the user
// fixed (`--mesh`, `--microbatches`, ...) are not searched.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLANNER_SEARCH_H
#define LOOM_PLANNER_SEARCH_H

#include "loom/Pipelines/TrainingOptions.h"
#include "loom/Planner/ClusterSpec.h"
#include "loom/Planner/ModelProfile.h"
#include "loom/Planner/Simulator.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace loom {
namespace planner {

/// One plan the search prices.
struct Candidate {
  ::loom::Mesh mesh;
  /// Rows per micro-batch and micro-batches per step (per dp rank).
  int64_t microBatch = 1, microbatches = 1;
  PipelineScheduleKind schedule = PipelineScheduleKind::OneFOneB;
  RecomputePolicy recompute = RecomputePolicy::none;
  int64_t overlapSplit = 1;
  /// Mbapp: activations of a stage over the GPU's memory swapped to host
  /// memory (loom-swap) within `deviceMemory` bytes (loomc's budget: the
  /// GPU's memory less the spec's reserve).
  SwapPolicy swap = SwapPolicy::none;
  int64_t deviceMemory = 0;
  /// The arithmetic the user chose (loomc/loom-plan --precision): not
  /// searched, since it changes the numbers the model computes.
  Precision precision = Precision::f32;

  std::string describe() const;
};

struct StageEstimate {
  /// Ops [begin, end) of the profiled forward function.
  size_t begin = 0, end = 0;
  StageWork work;
  /// Device bytes: parameters, gradients, optimizer state, activations
  /// (per micro-batch times the micro-batches in flight), buffers (the
  /// transfers' and, under full or comm-free recomputation, the one layer
  /// being replayed) and the spec's reserve.
  double params = 0, grads = 0, optimizerState = 0, activations = 0,
         inFlight = 0, buffers = 0, reserved = 0, deviceBytes = 0;
  /// With swap: the activation bytes kept in host memory at the peak,
  /// and the copy time per micro-batch not hidden behind its compute.
  double swappedBytes = 0, exposedSwap = 0;
};

struct Estimate {
  Candidate candidate;
  /// Empty when the plan fits; else why it was rejected.
  std::string rejected;
  std::vector<StageEstimate> stages;
  SimResult sim;
  double stepTime = 0, tokensPerSecond = 0, mfu = 0, tflopsPerGpu = 0;
  double memoryPerDevice = 0;
  double usdPerHour = 0, tokensPerUsd = 0;
  /// Where stages 1.. begin, as loom-pipeline-partition reads them
  /// ("param:NAME": the first op reading that parameter), so that loomc
  /// cuts where the planner priced; empty when a stage reads none.
  std::vector<std::string> stageBoundaries;
};

struct SearchOptions {
  int64_t gpus = 0;
  int64_t globalBatch = 0;
  OptimizerKind optimizer = OptimizerKind::adamw;
  /// Micro-batch sizes to try (rows; empty: the model's batch).
  std::vector<int64_t> microBatchSizes;
  /// Fixed choices (unset: searched).
  std::optional<::loom::Mesh> mesh;
  std::optional<int64_t> microbatches;
  std::optional<PipelineScheduleKind> schedule;
  std::optional<RecomputePolicy> recompute;
  std::optional<int64_t> overlapSplit;
  /// none: never plan swap; host (or unset): swap a plan over the GPU's
  /// memory to host memory when the spec gives the host link.
  std::optional<SwapPolicy> swap;
  /// Rank plans over the GPU's memory too (what-if evaluations).
  bool ignoreMemory = false;
  /// Largest tp searched (0: the GPUs of a node).
  int64_t maxTensorParallel = 0;
  /// Called with a line of progress now and then (may be null).
  llvm::function_ref<void(llvm::StringRef)> progress = nullptr;
};

struct SearchResult {
  /// Every fitting plan, fastest first.
  std::vector<Estimate> ranked;
  /// Plans that do not fit, by reason (a count and the closest one).
  struct Rejection {
    int64_t count = 0;
    Estimate closest;
  };
  std::map<std::string, Rejection> rejected;
  int64_t evaluated = 0;
};

/// "PLAN: why" of the rejected plan that came closest to fitting (the
/// smallest memory over the GPU's), empty when no plan was rejected for it.
std::string closestRejection(const SearchResult &result);

/// What the compiled step's phases take, as multiples of the profile's
/// forward time of the same kind of op (GEMMs, the rest) on one spec. The
/// profile prices only the forward graph; the defaults are the textbook
/// rule (a backward GEMM is two forward ones, every other backward op
/// too). Calibrated on the one-device compile (stepPhaseTimes), they
/// carry what fusion and the vector-Jacobian products make of the
/// elementwise work, which is far from that rule.
struct PhaseFactors {
  double forwardOther = 1.0;
  double backwardGemm = 2.0, backwardOther = 2.0;
  /// Over the planner's optimizer estimate (its bytes, one launch).
  double optimizer = 1.0;
  bool calibrated = false;
};

/// Profiles of a model per tp degree, computed on first use.
class ProfileCache {
public:
  /// Under bf16 (loom-mixed-precision) the products run at the GPU's bf16
  /// peak and the activations are calibrated on the bf16 compile.
  /// The one-device compile that calibrates the profiles trains with
  /// `optimizer`.
  ProfileCache(ModuleOp module, std::string function,
               Precision precision = Precision::f32,
               OptimizerKind optimizer = OptimizerKind::sgd)
      : module(module), function(std::move(function)), precision(precision),
        optimizer(optimizer) {}
  Precision getPrecision() const { return precision; }
  /// Null (with the reason in `error`) when the model cannot be cut tp
  /// ways.
  const ModelProfile *get(int64_t tp, std::string &error);
  /// Why calibrateActivations failed (empty when it worked or has not
  /// run yet): the profiles then keep their own estimate.
  const std::string &calibrationError() const { return calibrationFailure; }

  /// The profile's forward times scaled to the one-device compile's
  /// phases on `spec` (PhaseFactors' defaults when it did not compile).
  PhaseFactors phaseFactors(const ClusterSpec &spec);

private:
  ModuleOp module;
  std::string function;
  Precision precision;
  OptimizerKind optimizer;
  /// The one-device compile (planned loomrt) calibrateActivations made.
  OwningOpRef<ModuleOp> oneDeviceStep;
  std::map<int64_t, std::optional<ModelProfile>> profiles;
  std::map<int64_t, std::string> errors;
  /// calibrateActivations' factor, found with the first profile (1 when
  /// the model does not compile on one device).
  std::optional<double> activationScale;
  std::string calibrationFailure;
};

/// Prices one plan (no search); `record` keeps the simulator's events.
Estimate evaluatePlan(const ModelProfile &profile, const ModelProfile &whole,
                      const ClusterSpec &spec, const PhaseFactors &phases,
                      const Candidate &candidate, const SearchOptions &options,
                      bool record);

/// Searches the plans `options` leaves open. Errors (no plan divides the
/// batch, the GPU count does not fit the cluster, the model cannot be
/// cut): the message in `error`, naming the closest feasible alternative.
SearchResult searchPlans(ProfileCache &profiles, const ClusterSpec &spec,
                         const SearchOptions &options, std::string &error);

/// The TrainingOptions that compile `candidate` (loomc --plan).
TrainingOptions trainingOptions(const Candidate &candidate,
                                OptimizerKind optimizer);
/// The same for a priced plan, with its stage boundaries.
TrainingOptions trainingOptions(const Estimate &estimate,
                                OptimizerKind optimizer);

} // namespace planner
} // namespace loom
} // namespace mlir

#endif // LOOM_PLANNER_SEARCH_H
