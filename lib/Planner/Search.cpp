//===- Search.cpp - Price and search training plans -----------------------===//

#include "loom/Planner/Search.h"

#include "loom/Planner/CostModel.h"
#include "loom/Planner/ProgramPlay.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <numeric>
#include <set>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::planner;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
/// loom-data-parallel's default bucket (PyTorch DDP's).
constexpr double kBucketBytes = 25.0 * 1024 * 1024;

using Partition = std::vector<std::pair<size_t, size_t>>;

/// The forward and backward time of one op: the cost model's forward
/// time at `flops` and `bytes`, scaled by the phase factors of its kind.
std::pair<double, double> opTimes(const ProfiledOp &op, double flops,
                                  double bytes, const CostModel &cm,
                                  const PhaseFactors &phases) {
  double t = cm.kernelTime(flops, bytes, op.gemm, !op.fused);
  if (op.gemm)
    return {t, phases.backwardGemm * t};
  return {phases.forwardOther * t, phases.backwardOther * t};
}

/// Bytes of optimizer state per parameter of `w` bytes: Adam's two f32
/// moments, and f32 master weights under bf16/f16.
double stateBytesPerParam(double w, bool adam) {
  return adam ? 8.0 + (w < 4 ? 4.0 : 0.0) : 0.0;
}

/// The optimizer's update of `elements` parameters in `w`-byte elements:
/// it reads the parameter and its gradient and writes the parameter, and
/// reads and writes its state, in one memory-bound pass.
double optimizerTime(double elements, double w, bool adam,
                     const CostModel &cm) {
  return cm.kernelTime(
      0, elements * (3.0 * w + 2.0 * stateBytesPerParam(w, adam)),
      /*gemm=*/false);
}

/// Cuts the ops into `pp` contiguous stages of about equal time (each op
/// weighed by its forward and backward time at the profiled batch). Each
/// cut is at an op that reads a parameter first, so that the plan can name
/// it (`param:NAME`), and among those at the one that least costs the
/// imbalance from the equal split plus the two sends per micro-batch
/// (activations forward, their gradients back) of what crosses it, on the
/// pipeline link between tp groups of `tp` ranks.
std::optional<Partition> partition(const ModelProfile &profile, int64_t pp,
                                   int64_t tp, const CostModel &cm,
                                   const PhaseFactors &phases) {
  size_t n = profile.ops.size();
  if (pp < 1 || static_cast<size_t>(pp) > n)
    return std::nullopt;
  std::vector<double> prefix(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) {
    const ProfiledOp &op = profile.ops[i];
    auto [forward, backward] = opTimes(op, op.flops, op.bytes, cm, phases);
    prefix[i + 1] = prefix[i] + forward + backward;
  }
  Partition stages;
  size_t begin = 0;
  for (int64_t k = 1; k < pp; ++k) {
    double target = prefix[n] * k / pp;
    size_t cut = std::lower_bound(prefix.begin() + begin + 1,
                                  prefix.begin() + n + 1, target) -
                 prefix.begin();
    // Leave at least one op for each stage still to come.
    size_t last = n - (pp - k);
    cut = std::clamp<size_t>(cut, begin + 1, last);
    double best = std::numeric_limits<double>::infinity();
    for (size_t i = begin + 1; i <= last; ++i) {
      if (profile.ops[i].firstParam.empty())
        continue;
      double send = cm.sendTime(profile.ops[i].crossBytes, (k - 1) * tp,
                                k * tp, tp);
      double cost = std::abs(prefix[i] - target) + 2.0 * send;
      if (cost < best) {
        best = cost;
        cut = i;
      }
    }
    stages.push_back({begin, cut});
    begin = cut;
  }
  stages.push_back({begin, n});
  return stages;
}

/// What a stage costs per micro-batch, before the schedule and the
/// recomputation policy are chosen.
struct StageSums {
  double forward = 0, backward = 0, forwardComm = 0, backwardComm = 0,
         attentionCore = 0;
  /// The part of backwardComm the weight gradients computed meanwhile hide
  /// (loom-comm-schedule's early all-reduce starts).
  double backwardCommHidden = 0;
  /// The part of forward and forwardComm inside layers (what full and
  /// comm-free recomputation replay).
  double layerForward = 0, layerForwardComm = 0;
  double saved = 0, attentionSaved = 0, layerInputs = 0, outsideSaved = 0,
         maxLayerSaved = 0, commOutputs = 0;
  double params = 0, paramElements = 0, paramTensors = 0;
  double inBytes = 0, outBytes = 0;
  bool hasLayers = false;
};

std::vector<StageSums> sumStages(const ModelProfile &profile,
                                 const Partition &stages, int64_t rows,
                                 int64_t split, const CostModel &cm,
                                 const PhaseFactors &phases) {
  int64_t tp = profile.tp;
  double full = static_cast<double>(rows) / profile.batch;
  double sub = full / split;
  std::vector<StageSums> sums;
  for (auto [begin, end] : stages) {
    StageSums s;
    std::map<int64_t, double> perLayer;
    std::set<unsigned> held;
    int64_t layer = -2;
    for (size_t i = begin; i < end; ++i) {
      const ProfiledOp &op = profile.ops[i];
      double scale = op.perRow ? sub : 1.0;
      double times = op.perRow ? split : 1.0;
      auto [t, back] =
          opTimes(op, op.flops * scale, op.bytes * scale, cm, phases);
      s.forward += times * t;
      s.backward += times * back;
      if (op.attentionCore)
        s.attentionCore += times * t;
      double comm = op.forwardCommBytes > 0
                        ? times * cm.allReduceTime(op.forwardCommBytes * scale,
                                                   tp, 1)
                        : 0.0;
      s.forwardComm += comm;
      if (op.layer >= 0) {
        s.layerForward += times * t;
        s.layerForwardComm += comm;
      }
      if (op.backwardCommBytes > 0) {
        double comm =
            times * cm.allReduceTime(op.backwardCommBytes * scale, tp, 1);
        s.backwardComm += comm;
        // The weight gradient is one of a product's two backward GEMMs.
        double weightGradients = 0;
        for (size_t r : op.weightProducts) {
          const ProfiledOp &product = profile.ops[r];
          double productScale = product.perRow ? sub : 1.0;
          weightGradients +=
              times * opTimes(product, product.flops * productScale,
                              product.bytes * productScale, cm, phases)
                          .second /
              2;
        }
        s.backwardCommHidden += std::min(comm, weightGradients);
      }
      double saved = op.savedBytes * (op.perRow ? full : 1.0);
      s.saved += saved;
      if (op.attentionCore)
        s.attentionSaved += saved;
      if (op.layer >= 0) {
        s.hasLayers = true;
        if (op.layer != layer)
          s.layerInputs += op.crossBytes * full;
        perLayer[op.layer] += saved;
        s.commOutputs += op.forwardCommBytes * (op.perRow ? full : 1.0);
      } else {
        s.outsideSaved += saved;
      }
      layer = op.layer;
      for (unsigned p : op.params)
        if (held.insert(p).second) {
          s.paramTensors += 1;
          s.params += profile.params[p].bytes;
          s.paramElements += profile.params[p].elements;
        }
    }
    for (auto &[l, bytes] : perLayer)
      s.maxLayerSaved = std::max(s.maxLayerSaved, bytes);
    s.inBytes = begin > 0 ? profile.ops[begin].crossBytes * full : 0;
    s.outBytes =
        end < profile.ops.size() ? profile.ops[end].crossBytes * full : 0;
    sums.push_back(s);
  }
  return sums;
}

std::string gib(double bytes) {
  if (bytes >= kGiB)
    return llvm::formatv("{0:f2} GiB", bytes / kGiB).str();
  return llvm::formatv("{0:f2} MiB", bytes / (1024.0 * 1024.0)).str();
}

Estimate finish(const ModelProfile &profile, const ModelProfile &whole,
                const ClusterSpec &spec, const PhaseFactors &phases,
                const Candidate &c,
                const SearchOptions &options, const Partition &stages,
                const std::vector<StageSums> &sums, const CostModel &cm,
                bool record) {
  Estimate e;
  e.candidate = c;
  int64_t P = c.mesh.pp, tp = c.mesh.tp, dp = c.mesh.dp, M = c.microbatches;
  int64_t K = c.overlapSplit;
  double w = profile.elementBytes;
  bool adam = options.optimizer != OptimizerKind::sgd;
  std::vector<StageWork> work;
  double worst = 0;
  int64_t worstStage = 0;
  for (int64_t k = 0; k < P; ++k) {
    const StageSums &s = sums[k];
    StageEstimate st;
    st.begin = stages[k].first;
    st.end = stages[k].second;
    StageWork &sw = st.work;
    sw.forward = s.forward;
    sw.backward = s.backward;
    // Oases: with K sub-batches, one's all-reduce runs while another
    // computes; at least one sub-batch's share stays exposed.
    auto exposed = [&](double comm, double compute) {
      if (K <= 1)
        return comm;
      return std::max(comm / K, comm - compute * (K - 1) / K);
    };
    sw.forwardComm = exposed(s.forwardComm, sw.forward);
    // Without the split, an input gradient's all-reduce runs while the
    // weight gradients are computed; with it, the other sub-batches'
    // compute hides it.
    sw.backwardComm = K <= 1 ? s.backwardComm - s.backwardCommHidden
                             : exposed(s.backwardComm, sw.backward);
    double activations = s.saved, transient = 0;
    switch (c.recompute) {
    case RecomputePolicy::none:
    case RecomputePolicy::automatic:
      break;
    case RecomputePolicy::selective:
      sw.recompute = s.attentionCore;
      activations = s.saved - s.attentionSaved;
      break;
    case RecomputePolicy::full:
      // Keep each layer's input; replay the layers, collectives included.
      sw.recompute = s.layerForward + s.layerForwardComm;
      activations = s.layerInputs + s.outsideSaved;
      transient = s.maxLayerSaved; // one layer replayed at a time
      break;
    case RecomputePolicy::CommFree:
      // Keep the collectives' results too: the replay computes only.
      sw.recompute = s.layerForward;
      activations = s.layerInputs + s.outsideSaved + s.commOutputs;
      transient = s.maxLayerSaved;
      break;
    }
    if (k + 1 < P)
      sw.sendNext = cm.sendTime(s.outBytes, ::loom::Mesh(c.mesh).rank({0, k, 0}),
                                ::loom::Mesh(c.mesh).rank({0, k + 1, 0}), tp);
    // Data parallelism: the stage's gradients, in buckets; all but the last
    // can overlap the last backward.
    double gradBytes = s.params;
    sw.gradAllReduce = cm.allReduceTime(gradBytes, dp, P * tp);
    double buckets = std::max(1.0, std::ceil(gradBytes / kBucketBytes));
    sw.gradAllReduceHidden = sw.gradAllReduce * (buckets - 1) / buckets;
    // loom-data-parallel concatenates the gradients into each bucket and
    // splits them out again: per direction a copy kernel per parameter,
    // reading and writing its gradient.
    if (dp > 1)
      sw.bucketCopy = s.paramTensors * spec.efficiency.launch +
                      cm.kernelTime(0, 2.0 * gradBytes, /*gemm=*/false,
                                    /*launch=*/false);
    double stateBytes = stateBytesPerParam(w, adam);
    sw.optimizer =
        phases.optimizer * optimizerTime(s.paramElements, w, adam, cm);
    st.params = s.params;
    // Accumulated over M > 1 micro-batches: the running sum and the
    // micro-batch's own gradients are live together (Loom's memory plan).
    st.grads = M > 1 ? 2.0 * s.params : s.params;
    st.optimizerState = s.paramElements * stateBytes;
    st.activations = activations;
    st.inFlight = P == 1 ? 1
                  : c.schedule == PipelineScheduleKind::GPipe
                      ? static_cast<double>(M)
                      : static_cast<double>(std::min<int64_t>(M, P - k));
    st.buffers = 2.0 * (s.inBytes + s.outBytes) + transient;
    st.reserved = static_cast<double>(spec.reservedBytes);
    st.deviceBytes = st.params + st.grads + st.optimizerState +
                     st.activations * st.inFlight + st.buffers + st.reserved;
    double gpuBytes = static_cast<double>(spec.gpu.memoryBytes);
    if (c.swap == SwapPolicy::host && st.deviceBytes > gpuBytes) {
      // loom-swap moves activations that wait between their forward and
      // backward uses to host memory: those of the micro-batches in
      // flight but one, and about half of the one being computed.
      double movable = st.activations * (st.inFlight - 0.5);
      st.swappedBytes = std::min(st.deviceBytes - gpuBytes, movable);
      st.deviceBytes -= st.swappedBytes;
      // Each micro-batch's share goes out and back over the host link,
      // behind that micro-batch's forward and backward where it can.
      double copy = 2.0 * st.swappedBytes / st.inFlight /
                    (spec.hostLink.bandwidth * spec.efficiency.comm);
      st.exposedSwap =
          std::max(0.0, copy - (sw.forward + sw.backward + sw.recompute));
      sw.backward += st.exposedSwap;
    }
    sw.baseBytes = st.params + st.grads + st.optimizerState + st.buffers +
                   st.reserved;
    sw.activationBytes =
        st.activations - st.swappedBytes / std::max(st.inFlight, 1.0);
    if (st.deviceBytes > worst) {
      worst = st.deviceBytes;
      worstStage = k;
    }
    work.push_back(sw);
    e.stages.push_back(st);
  }
  e.memoryPerDevice = worst;
  // Each later stage begins at the first op of its range that reads a
  // parameter first (within a few elementwise ops of the priced cut).
  for (int64_t k = 1; k < P; ++k) {
    std::string boundary;
    for (size_t i = stages[k].first; i < stages[k].second && boundary.empty();
         ++i)
      if (!profile.ops[i].firstParam.empty())
        boundary = "param:" + profile.ops[i].firstParam;
    if (boundary.empty()) {
      e.stageBoundaries.clear();
      break;
    }
    e.stageBoundaries.push_back(boundary);
  }
  if (!options.ignoreMemory &&
      worst > static_cast<double>(spec.gpu.memoryBytes))
    e.rejected = llvm::formatv("over memory: stage {0} needs {1} of {2}",
                               worstStage, gib(worst),
                               gib(static_cast<double>(spec.gpu.memoryBytes)))
                     .str();
  // What the ranks of each node swap, against the node's host memory
  // (rank r = (d*pp + p)*tp + t runs stage p; nodes hold consecutive
  // ranks).
  if (!options.ignoreMemory && e.rejected.empty() &&
      spec.hostMemoryBytes > 0) {
    int64_t ranks = c.mesh.numRanks(), perNode = spec.gpusPerNode;
    for (int64_t first = 0; first < ranks && e.rejected.empty();
         first += perNode) {
      double host = 0;
      for (int64_t r = first; r < std::min(ranks, first + perNode); ++r)
        host += e.stages[(r / c.mesh.tp) % c.mesh.pp].swappedBytes;
      if (host > static_cast<double>(spec.hostMemoryBytes))
        e.rejected =
            llvm::formatv("over host memory: node {0} swaps {1} of {2}",
                          first / perNode, gib(host),
                          gib(static_cast<double>(spec.hostMemoryBytes)))
                .str();
    }
  }
  e.sim = simulateStep(work, M,
                       c.schedule == PipelineScheduleKind::GPipe
                           ? SimSchedule::gpipe
                           : SimSchedule::oneFOneB,
                       record);
  e.stepTime = e.sim.stepTime;
  double samples = static_cast<double>(options.globalBatch);
  e.tokensPerSecond = samples * profile.tokensPerSample / e.stepTime;
  double modelFlops = 3.0 * whole.modelForwardFlops * samples / whole.batch;
  double gpus = static_cast<double>(c.mesh.numRanks());
  e.tflopsPerGpu = modelFlops / e.stepTime / gpus / 1e12;
  e.mfu = modelFlops / e.stepTime / gpus / cm.peak();
  e.usdPerHour = gpus * spec.price.usdPerGpuHour;
  e.tokensPerUsd = e.tokensPerSecond * 3600.0 / e.usdPerHour;
  return e;
}

/// The error for a global batch `g` that no plan divides: `undivided`
/// maps each plan's dp x micro-batch to one (dp, micro-batch) giving it.
/// Names the products (the six smallest) and the nearest global batch one
/// of them divides (the smaller of two equally near).
std::string undividedBatchError(
    int64_t g,
    const std::map<int64_t, std::pair<int64_t, int64_t>> &undivided) {
  int64_t best = 0, bestProduct = 0;
  for (const auto &[product, plan] : undivided)
    for (int64_t multiple :
         {g / product * product, (g / product + 1) * product}) {
      int64_t distance = std::llabs(multiple - g);
      int64_t bestDistance = std::llabs(best - g);
      if (multiple > 0 &&
          (best == 0 || distance < bestDistance ||
           (distance == bestDistance && multiple < best))) {
        best = multiple;
        bestProduct = product;
      }
    }
  std::string products;
  size_t listed = 0;
  for (const auto &[product, plan] : undivided) {
    if (listed++ == 6) {
      products += llvm::formatv(" and {0} more", undivided.size() - 6).str();
      break;
    }
    products += llvm::formatv("{0}dp={1} x micro-batch {2} = {3}",
                              products.empty() ? "" : ", ", plan.first,
                              plan.second, product)
                    .str();
  }
  auto [dp, mb] = undivided.at(bestProduct);
  return llvm::formatv("--global-batch {0}: no plan divides it (a plan's dp "
                       "x micro-batch must: {1}); the nearest global batch "
                       "that one does is {2} (dp={3}, micro-batch {4})",
                       g, products, best, dp, mb)
      .str();
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0)
      out.push_back(d);
  return out;
}

} // namespace

std::string Candidate::describe() const {
  std::string s = llvm::formatv("dp={0},tp={1},pp={2} mb={3}x{4}", mesh.dp,
                                mesh.tp, mesh.pp, microBatch, microbatches)
                      .str();
  if (mesh.pp > 1)
    s += std::string(" ") + stringifyPipelineScheduleKind(schedule).str();
  if (recompute != RecomputePolicy::none)
    s += " recompute=" + stringifyRecomputePolicy(recompute).str();
  if (overlapSplit > 1)
    s += " split=" + std::to_string(overlapSplit);
  if (swap != SwapPolicy::none)
    s += " swap=" + stringifySwapPolicy(swap).str();
  if (precision != Precision::f32)
    s += " " + stringifyPrecision(precision).str();
  return s;
}

std::string mlir::loom::planner::closestRejection(const SearchResult &result) {
  const Estimate *closest = nullptr;
  for (const auto &[reason, rej] : result.rejected)
    if (!rej.closest.rejected.empty() &&
        (!closest || rej.closest.memoryPerDevice < closest->memoryPerDevice))
      closest = &rej.closest;
  return closest ? closest->candidate.describe() + ": " + closest->rejected
                 : std::string();
}

const ModelProfile *ProfileCache::get(int64_t tp, std::string &error) {
  auto it = profiles.find(tp);
  if (it == profiles.end()) {
    std::string e;
    // The tp = 1 profile, unscaled, calibrates the activations; it is
    // then the tp = 1 entry (profiled once).
    std::optional<FailureOr<ModelProfile>> oneDevice;
    if (!activationScale) {
      std::string oneError;
      oneDevice = profileModel(module, function, 1, oneError);
      FailureOr<double> scale =
          succeeded(*oneDevice)
              ? calibrateActivations(module, function, precision, optimizer,
                                     **oneDevice, calibrationFailure,
                                     &oneDeviceStep)
              : FailureOr<double>(failure());
      if (failed(*oneDevice))
        calibrationFailure = oneError;
      activationScale = succeeded(scale) ? *scale : 1.0;
    }
    FailureOr<ModelProfile> p = tp == 1 && oneDevice
                                    ? std::move(*oneDevice)
                                    : profileModel(module, function, tp, e);
    if (failed(p) && e.empty())
      e = calibrationFailure;
    if (succeeded(p)) {
      // Activations as the memory plan keeps them.
      p->activationScale = *activationScale;
      for (ProfiledOp &op : p->ops)
        op.savedBytes *= *activationScale;
      if (precision == Precision::bf16)
        p->format = NumberFormat::bf16;
    }
    if (failed(p)) {
      errors[tp] = e;
      it = profiles.emplace(tp, std::nullopt).first;
    } else {
      it = profiles.emplace(tp, std::move(*p)).first;
    }
    // The whole model's totals (for MFU) come from the tp = 1 profile.
    if (it->second && tp == 1) {
      double flops = 0, params = 0;
      for (const ProfiledOp &op : it->second->ops) {
        flops += op.flops;
        params += op.paramElements;
      }
      it->second->modelForwardFlops = flops;
      it->second->modelParams = params;
    }
  }
  if (!it->second) {
    error = errors[tp];
    return nullptr;
  }
  return &*it->second;
}

PhaseFactors ProfileCache::phaseFactors(const ClusterSpec &spec) {
  PhaseFactors phases;
  std::string error;
  const ModelProfile *one = get(1, error);
  if (!one || !oneDeviceStep)
    return phases;
  FailureOr<PhaseTimes> compiled = stepPhaseTimes(*oneDeviceStep, spec, error);
  if (failed(compiled))
    return phases;
  CostModel cm(spec, one->format);
  double gemm = 0, other = 0;
  for (const ProfiledOp &op : one->ops)
    (op.gemm ? gemm : other) +=
        cm.kernelTime(op.flops, op.bytes, op.gemm, !op.fused);
  double optimizerEstimate =
      optimizerTime(one->modelParams, one->elementBytes,
                    optimizer != OptimizerKind::sgd, cm);
  if (gemm > 0)
    phases.backwardGemm = compiled->backwardGemm / gemm;
  if (other > 0) {
    phases.forwardOther = compiled->forwardOther / other;
    phases.backwardOther = compiled->backwardOther / other;
  }
  if (optimizerEstimate > 0 && compiled->optimizer > 0)
    phases.optimizer = compiled->optimizer / optimizerEstimate;
  phases.calibrated = true;
  return phases;
}

Estimate mlir::loom::planner::evaluatePlan(const ModelProfile &profile,
                                           const ModelProfile &whole,
                                           const ClusterSpec &spec,
                                           const PhaseFactors &phases,
                                           const Candidate &candidate,
                                           const SearchOptions &options,
                                           bool record) {
  CostModel cm(spec, profile.format);
  std::optional<Partition> stages =
      partition(profile, candidate.mesh.pp, candidate.mesh.tp, cm, phases);
  if (!stages) {
    Estimate e;
    e.candidate = candidate;
    e.rejected = llvm::formatv("pp={0} exceeds the model's {1} ops",
                               candidate.mesh.pp, profile.ops.size())
                     .str();
    return e;
  }
  std::vector<StageSums> sums =
      sumStages(profile, *stages, candidate.microBatch,
                candidate.overlapSplit, cm, phases);
  return finish(profile, whole, spec, phases, candidate, options, *stages,
                sums, cm, record);
}

SearchResult mlir::loom::planner::searchPlans(ProfileCache &profiles,
                                              const ClusterSpec &spec,
                                              const SearchOptions &options,
                                              std::string &error) {
  SearchResult result;
  int64_t N = options.gpus, G = options.globalBatch;
  auto say = [&](const std::string &line) {
    if (options.progress)
      options.progress(line);
  };
  if (spec.maxNodes > 0 && N > spec.maxNodes * spec.gpusPerNode) {
    error = llvm::formatv("--gpus {0}: cluster '{1}' has at most {2} GPUs "
                          "(max_nodes {3} x gpus_per_node {4}); use --gpus {2} "
                          "or fewer",
                          N, spec.name, spec.maxNodes * spec.gpusPerNode,
                          spec.maxNodes, spec.gpusPerNode)
                .str();
    return result;
  }
  const ModelProfile *whole = profiles.get(1, error);
  if (!whole)
    return result;
  error.clear();
  PhaseFactors phases = profiles.phaseFactors(spec);
  if (phases.calibrated)
    say(llvm::formatv("times calibrated on the one-device compile: forward "
                      "non-GEMM x{0:f2}, backward GEMM x{1:f2}, backward "
                      "non-GEMM x{2:f2}, optimizer x{3:f2}",
                      phases.forwardOther, phases.backwardGemm,
                      phases.backwardOther, phases.optimizer)
            .str());
  std::vector<int64_t> sizes = options.microBatchSizes;
  if (sizes.empty())
    sizes.push_back(whole->batch);

  int64_t maxTp = options.maxTensorParallel > 0 ? options.maxTensorParallel
                                                : spec.gpusPerNode;
  std::vector<int64_t> tps;
  if (options.mesh)
    tps.push_back(options.mesh->tp);
  else
    for (int64_t d : divisors(N))
      if (d <= maxTp)
        tps.push_back(d);

  std::string tpErrors;
  // dp x micro-batch of every plan the global batch did not divide, with
  // the first (dp, micro-batch) giving it: the error names the nearest
  // global batch one of them divides.
  std::map<int64_t, std::pair<int64_t, int64_t>> undivided;
  bool canSwap = spec.hostLink.bandwidth > 0 && !options.ignoreMemory &&
                 options.swap.value_or(SwapPolicy::host) == SwapPolicy::host;
  for (int64_t tp : tps) {
    std::string e;
    const ModelProfile *profile = profiles.get(tp, e);
    if (!profile) {
      tpErrors += (tpErrors.empty() ? "" : "; ") + e;
      continue;
    }
    say(llvm::formatv("profiled tp={0}: {1} ops, {2} layers", tp,
                      profile->ops.size(), profile->layers)
            .str());
    if (tp == tps.front())
      say(profiles.calibrationError().empty()
              ? llvm::formatv("activations scaled by {0:f2} to the memory "
                              "plan of the one-device compile",
                              profile->activationScale)
                    .str()
              : "activations not calibrated (" + profiles.calibrationError() +
                    "): every value a backward op reads counts");
    CostModel cm(spec, profile->format);
    std::vector<int64_t> pps;
    if (options.mesh)
      pps.push_back(options.mesh->pp);
    else
      for (int64_t d : divisors(N / tp))
        if (profile->layers == 0 ? d <= 2 : d <= profile->layers + 2)
          pps.push_back(d);
    for (int64_t pp : pps) {
      if (N % (tp * pp) != 0)
        continue;
      int64_t dp = N / (tp * pp);
      if (options.mesh && options.mesh->dp != dp)
        continue;
      std::optional<Partition> stages =
          partition(*profile, pp, tp, cm, phases);
      if (!stages)
        continue;
      for (int64_t mb : sizes) {
        if (G % (dp * mb) != 0) {
          undivided.try_emplace(dp * mb, dp, mb);
          ++result.rejected["global batch not divisible"].count;
          continue;
        }
        int64_t M = G / (dp * mb);
        if (options.microbatches && *options.microbatches != M)
          continue;
        std::vector<int64_t> splits;
        if (options.overlapSplit)
          splits.push_back(*options.overlapSplit);
        else {
          splits.push_back(1);
          if (tp > 1)
            splits.push_back(2);
        }
        for (int64_t K : splits) {
          std::vector<StageSums> sums =
              sumStages(*profile, *stages, mb, K, cm, phases);
          std::vector<PipelineScheduleKind> schedules;
          if (options.schedule)
            schedules.push_back(*options.schedule);
          else {
            schedules.push_back(PipelineScheduleKind::OneFOneB);
            if (pp > 1)
              schedules.push_back(PipelineScheduleKind::GPipe);
          }
          std::vector<RecomputePolicy> policies;
          if (options.recompute)
            policies.push_back(*options.recompute);
          else {
            policies.push_back(RecomputePolicy::none);
            if (profile->layers > 0) {
              policies.push_back(RecomputePolicy::selective);
              policies.push_back(RecomputePolicy::full);
              if (tp > 1)
                policies.push_back(RecomputePolicy::CommFree);
            }
          }
          for (PipelineScheduleKind schedule : schedules)
            for (RecomputePolicy policy : policies) {
              Candidate c;
              c.mesh.dp = dp;
              c.mesh.tp = tp;
              c.mesh.pp = pp;
              c.microBatch = mb;
              c.microbatches = M;
              c.schedule = schedule;
              c.recompute = policy;
              c.overlapSplit = K;
              c.precision = profiles.getPrecision();
              Estimate e = finish(*profile, *whole, spec, phases, c, options,
                                  *stages, sums, cm, /*record=*/false);
              ++result.evaluated;
              if (result.evaluated % 2000 == 0)
                say(llvm::formatv("{0} plans priced", result.evaluated).str());
              // Over memory: the same plan with its activations swapped
              // to host memory, where the spec gives the host link.
              if (!e.rejected.empty() && canSwap &&
                  llvm::StringRef(e.rejected).starts_with("over memory")) {
                c.swap = SwapPolicy::host;
                c.deviceMemory = spec.gpu.memoryBytes - spec.reservedBytes;
                Estimate swapped =
                    finish(*profile, *whole, spec, phases, c, options,
                           *stages, sums, cm, /*record=*/false);
                ++result.evaluated;
                // Fits, or fails for another reason than device memory
                // (host memory): that is the plan's story.
                if (!llvm::StringRef(swapped.rejected)
                         .starts_with("over memory"))
                  e = std::move(swapped);
              }
              if (!e.rejected.empty()) {
                std::string reason =
                    e.rejected.substr(0, e.rejected.find(':'));
                SearchResult::Rejection &r = result.rejected[reason];
                if (r.count == 0 ||
                    e.memoryPerDevice < r.closest.memoryPerDevice)
                  r.closest = e;
                ++r.count;
                continue;
              }
              result.ranked.push_back(std::move(e));
            }
        }
      }
    }
  }
  // Fastest first; plans equally fast to the nanosecond (1F1B and GPipe
  // often are), the one with less memory per device first.
  std::stable_sort(result.ranked.begin(), result.ranked.end(),
                   [](const Estimate &a, const Estimate &b) {
                     auto key = [](const Estimate &e) {
                       return std::make_pair(std::llround(e.stepTime * 1e9),
                                             e.memoryPerDevice);
                     };
                     return key(a) < key(b);
                   });
  if (result.ranked.empty() && result.evaluated == 0) {
    if (!tpErrors.empty() && options.mesh)
      error = tpErrors;
    else if (!undivided.empty())
      error = undividedBatchError(G, undivided);
    else if (!tpErrors.empty())
      error = tpErrors;
    else
      error = "no plan to price (the fixed choices exclude every plan)";
  }
  return result;
}

TrainingOptions mlir::loom::planner::trainingOptions(const Candidate &c,
                                                     OptimizerKind optimizer) {
  TrainingOptions o;
  o.mesh = c.mesh;
  o.microbatches = c.microbatches;
  o.microBatch = c.microBatch;
  o.schedule = c.schedule;
  o.recompute = c.recompute;
  o.overlapSplit = c.overlapSplit;
  o.swap = c.swap;
  o.deviceMemory = c.deviceMemory;
  o.precision = c.precision;
  o.optimizer.kind = optimizer;
  return o;
}

TrainingOptions mlir::loom::planner::trainingOptions(const Estimate &e,
                                                     OptimizerKind optimizer) {
  TrainingOptions o = trainingOptions(e.candidate, optimizer);
  o.stageBoundaries = e.stageBoundaries;
  return o;
}
