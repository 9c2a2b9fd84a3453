//===- AutoSwap.cpp - --swap auto: swap or recompute, per stage -----------===//
//
// Trial compiles of the model (the diagnostics of each kept back: a way
// that cannot fit is an expected answer, not an error): without help
// (which stages exceed the budget), with --swap host (each stage's swap
// copies, priced against the compute they hide behind), with --recompute
// auto (each stage's recomputed flops), and with both at a few shares of
// each stage's excess. See AutoSwap.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Planner/AutoSwap.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Pipelines/TrainingPipeline.h"
#include "loom/Planner/CostModel.h"
#include "loom/Planner/ProgramPlay.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::planner;

namespace {

/// The bytes of a buffer operand (0 for handles and the like).
double bufferBytes(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return static_cast<double>(loomrt::bufferBytes(type));
}

/// Seconds per step that `step`'s swap copies do not hide: each copy
/// (bytes over the host link) against the compute between its start and
/// its wait.
double exposedSwapTime(func::FuncOp step, const ClusterSpec &spec) {
  SmallVector<Operation *> ops;
  for (Operation &op : step.getBody().front())
    ops.push_back(&op);
  double rate = spec.hostLink.bandwidth * spec.efficiency.comm;
  double exposed = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!isa<loomrt::SwapOutOp, loomrt::SwapInOp>(ops[i]))
      continue;
    Value handle = ops[i]->getResult(0);
    double copy =
        bufferBytes(ops[i]->getOperand(0)) / rate + spec.hostLink.latency;
    double window = 0;
    for (size_t j = i + 1; j < ops.size(); ++j) {
      auto wait = dyn_cast<loomrt::WaitOp>(ops[j]);
      if (wait && wait.getHandle() == handle)
        break;
      window += computeOpTime(ops[j], spec);
    }
    exposed += std::max(0.0, copy - window);
  }
  return exposed;
}

/// A trial compile whose diagnostics are kept back (returned in `error`).
std::optional<OwningOpRef<ModuleOp>> quietTrial(ModuleOp module,
                                                const TrainingOptions &o,
                                                std::string &error) {
  std::string first;
  ScopedDiagnosticHandler keep(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && first.empty())
      first = d.str();
    return success();
  });
  FailureOr<OwningOpRef<ModuleOp>> copy = compileTrial(module, o);
  if (failed(copy)) {
    error = first.empty() ? "the trial compile failed" : first;
    return std::nullopt;
  }
  return std::move(*copy);
}

int64_t intAttr(func::FuncOp f, StringRef name) {
  auto a = f ? f->getAttrOfType<IntegerAttr>(name) : IntegerAttr();
  return a ? a.getInt() : -1;
}

/// The flops `step`'s recomputation repeats (its loom.recompute counts).
double recomputedFlops(func::FuncOp step) {
  if (step)
    if (auto counts = step->getAttrOfType<DictionaryAttr>(
            LoomDialect::RecomputeAttrHelper::getNameStr()))
      if (auto f = counts.getAs<IntegerAttr>("flops"))
        return static_cast<double>(f.getInt());
  return 0;
}

/// The step time of `o` compiled and played on `spec`; negative when it
/// does not compile or play (the reason in `error`).
double playedStep(ModuleOp module, const TrainingOptions &o,
                  const ClusterSpec &spec, std::string &error) {
  std::optional<OwningOpRef<ModuleOp>> trial = quietTrial(module, o, error);
  if (!trial)
    return -1;
  FailureOr<SimResult> played =
      playProgram(**trial, spec, /*recordEvents=*/false, error);
  return succeeded(played) ? played->stepTime : -1;
}

} // namespace

std::string mlir::loom::planner::resolveAutoSwap(
    ModuleOp module, TrainingOptions &o, const ClusterSpec &spec,
    std::vector<StageShedding> &decisions, PeerPricing &peer) {
  if (o.deviceMemory <= 0)
    return "--swap auto chooses swap or recomputation by the device budget: "
           "give --device-memory";
  if (spec.hostLink.bandwidth <= 0)
    return "--swap auto: cluster '" + spec.name +
           "' gives no host_link (the link swap copies take); add one to "
           "the spec or use --recompute auto";
  std::vector<std::string> steps = stepFunctions(o);
  auto where = [&](size_t k) {
    return o.isPipelined() ? "stage " + std::to_string(k) : "@" + steps[k];
  };
  TrainingOptions plain = o;
  plain.swap = SwapPolicy::none;
  plain.recompute = RecomputePolicy::none;
  plain.stageRecompute.clear();
  plain.stageRecomputeBytes.clear();
  // Peer (pipelines only): each stage's excess to neighbours with room.
  TrainingOptions toPeer = plain;
  toPeer.swap = SwapPolicy::peer;
  // Balance (pipelines only): the next stage's room, then the host pool.
  TrainingOptions toBalance = plain;
  toBalance.swap = SwapPolicy::balance;
  // Peer or balance for the whole pipeline, nothing recomputed.
  auto chooseWhole = [&](SwapPolicy policy) {
    peer.chosen = policy == SwapPolicy::peer;
    peer.balanceChosen = policy == SwapPolicy::balance;
    o.swap = policy;
    o.recompute = RecomputePolicy::none;
    o.stageRecompute.clear();
    o.stageRecomputeBytes.clear();
  };

  // 1. Which stages exceed the budget without help.
  TrainingOptions free = plain;
  free.deviceMemory = 0;
  std::string error;
  std::optional<OwningOpRef<ModuleOp>> unconstrained =
      quietTrial(module, free, error);
  if (!unconstrained)
    return "--swap auto: the model does not compile: " + error;
  std::vector<size_t> over;
  std::vector<int64_t> excess(steps.size(), 0);
  for (size_t k = 0; k < steps.size(); ++k) {
    int64_t peak =
        intAttr((*unconstrained)->lookupSymbol<func::FuncOp>(steps[k]),
                "loomrt.device_peak_bytes");
    if (peak > o.deviceMemory) {
      over.push_back(k);
      excess[k] = peak - o.deviceMemory;
    }
  }
  decisions.clear();
  peer = PeerPricing();
  o.swap = SwapPolicy::none;
  if (over.empty())
    return "";

  CostModel cm(spec, o.precision == Precision::bf16 ? NumberFormat::bf16
                                                     : NumberFormat::fp32);
  // 2. Swap: the exposed time of each stage's copies.
  TrainingOptions swapped = plain;
  swapped.swap = SwapPolicy::host;
  std::string swapError;
  std::optional<OwningOpRef<ModuleOp>> swapTrial =
      quietTrial(module, swapped, swapError);
  // 3. Recomputation: each stage's recomputed flops.
  TrainingOptions recomputed = plain;
  recomputed.recompute = RecomputePolicy::automatic;
  std::string recomputeError;
  std::optional<OwningOpRef<ModuleOp>> recomputeTrial;
  {
    // Its trial compiles report through the context; kept back too.
    ScopedDiagnosticHandler keep(module.getContext(),
                                 [](Diagnostic &) { return success(); });
    recomputeError = resolveAutoRecompute(module, recomputed);
  }
  if (recomputeError.empty())
    recomputeTrial = quietTrial(module, recomputed, recomputeError);
  auto recomputeTime = [&](func::FuncOp step) {
    return cm.kernelTime(recomputedFlops(step), 0, /*gemm=*/true,
                         /*launch=*/false);
  };
  // 4. Both: the cheapest tensors recomputed up to a share of each
  // stage's excess, the rest swapped (loom-swap sheds what is still over).
  // Tried even where one way alone fails: together they may fit a stage
  // neither fits. A trial that does not fit prices no stage at that share.
  const double shares[] = {0.25, 0.5, 0.75};
  auto shareOf = [&](double share, size_t k) {
    return std::max<int64_t>(
        1, static_cast<int64_t>(share * static_cast<double>(excess[k])));
  };
  std::vector<std::optional<OwningOpRef<ModuleOp>>> mixTrials;
  for (double share : shares) {
    TrainingOptions mix = plain;
    mix.swap = SwapPolicy::host;
    mix.recompute = RecomputePolicy::automatic;
    mix.stageRecompute.assign(steps.size(), RecomputePolicy::none);
    mix.stageRecomputeBytes.assign(steps.size(), 0);
    for (size_t k : over) {
      mix.stageRecompute[k] = RecomputePolicy::automatic;
      mix.stageRecomputeBytes[k] = shareOf(share, k);
    }
    std::string mixError;
    mixTrials.push_back(quietTrial(module, mix, mixError));
  }

  bool anySwap = false, anyRecompute = false;
  std::vector<RecomputePolicy> policies(steps.size(), RecomputePolicy::none);
  std::vector<int64_t> bytes(steps.size(), 0);
  for (size_t k : over) {
    StageShedding d;
    d.stage = k;
    if (swapTrial)
      d.exposedSwap = exposedSwapTime(
          (*swapTrial)->lookupSymbol<func::FuncOp>(steps[k]), spec);
    if (recomputeTrial)
      d.recompute = recomputeTime(
          (*recomputeTrial)->lookupSymbol<func::FuncOp>(steps[k]));
    for (auto [share, trial] : llvm::zip(shares, mixTrials)) {
      if (!trial)
        continue;
      auto step = (*trial)->lookupSymbol<func::FuncOp>(steps[k]);
      double t = exposedSwapTime(step, spec) + recomputeTime(step);
      if (d.mixed < 0 || t < d.mixed) {
        d.mixed = t;
        d.mixedFraction = share;
      }
    }
    if (d.exposedSwap < 0 && d.recompute < 0 && d.mixed < 0) {
      // Neighbours with room may still take the excess, all of it or
      // what they can (the rest to the host pool).
      if (o.mesh.pp > 1) {
        std::string peerError, balanceError;
        peer.peerStep = playedStep(module, toPeer, spec, peerError);
        if (peer.peerStep < 0)
          peer.balanceStep = playedStep(module, toBalance, spec, balanceError);
        if (peer.peerStep >= 0 || peer.balanceStep >= 0) {
          decisions.clear();
          chooseWhole(peer.peerStep >= 0 ? SwapPolicy::peer
                                         : SwapPolicy::balance);
          return "";
        }
        swapError += "; nor by sending to neighbouring stages: " + peerError +
                     "; nor by --swap balance: " + balanceError;
      }
      return "--swap auto: " + where(k) +
             " fits the --device-memory budget of " +
             std::to_string(o.deviceMemory) +
             " bytes neither by swapping (" + swapError +
             ") nor by recomputing (" + recomputeError +
             ") nor by both; use more pipeline stages or smaller "
             "micro-batches";
    }
    // The cheapest way; ties to swap, then to recompute alone.
    using Way = StageShedding::Way;
    std::pair<double, Way> best{-1, Way::swap};
    for (auto [time, way] : {std::pair{d.exposedSwap, Way::swap},
                             std::pair{d.recompute, Way::recompute},
                             std::pair{d.mixed, Way::mixed}})
      if (time >= 0 && (best.first < 0 || time < best.first))
        best = {time, way};
    d.way = best.second;
    anySwap |= d.swaps();
    anyRecompute |= d.recomputes();
    if (d.way == Way::recompute) {
      policies[k] = recomputed.stageRecompute[k];
      bytes[k] = k < recomputed.stageRecomputeBytes.size()
                     ? recomputed.stageRecomputeBytes[k]
                     : 0;
    } else if (d.way == Way::mixed) {
      policies[k] = RecomputePolicy::automatic;
      bytes[k] = shareOf(d.mixedFraction, k);
    }
    decisions.push_back(d);
  }
  o.swap = anySwap ? SwapPolicy::host : SwapPolicy::none;
  if (anyRecompute) {
    o.recompute = RecomputePolicy::automatic;
    o.stageRecompute = policies;
    o.stageRecomputeBytes = bytes;
  } else {
    o.recompute = RecomputePolicy::none;
    o.stageRecompute.clear();
    o.stageRecomputeBytes.clear();
  }

  // 5. Peer and balance (pipelines only): the excess to neighbours with
  // room (all of it; or the next stage's room, then the host pool),
  // against the per-stage choice, all played on the spec; ties to the
  // per-stage choice, which keeps the neighbours' memory free, then to
  // peer, which copies nothing to the host.
  if (o.mesh.pp == 1) {
    peer.unavailable = peer.balanceUnavailable = "one pipeline stage";
    return "";
  }
  peer.peerStep = playedStep(module, toPeer, spec, peer.unavailable);
  peer.balanceStep =
      playedStep(module, toBalance, spec, peer.balanceUnavailable);
  if (peer.peerStep < 0 && peer.balanceStep < 0)
    return "";
  std::string perStageError;
  peer.perStageStep = playedStep(module, o, spec, perStageError);
  std::pair<double, SwapPolicy> best{peer.perStageStep,
                                     SwapPolicy::automatic};
  for (auto [time, policy] : {std::pair{peer.peerStep, SwapPolicy::peer},
                              std::pair{peer.balanceStep,
                                        SwapPolicy::balance}})
    if (time >= 0 && (best.first < 0 || time < best.first))
      best = {time, policy};
  if (best.second != SwapPolicy::automatic)
    chooseWhole(best.second);
  return "";
}
