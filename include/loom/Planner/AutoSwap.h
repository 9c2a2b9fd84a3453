//===- AutoSwap.h - --swap auto: swap or recompute, per stage ---*- C++ -*-===//
//
// Mbapp's stage-aware policy: each pipeline stage over the device budget
// sheds its excess by swapping activations to host memory, by
// recomputing them, or by recomputing part and swapping the rest,
// whichever the cluster spec prices cheapest for that stage: the swap
// copies' time not hidden behind the compute between each copy's start
// and its wait, plus the recomputed flops. Under pipelines, sending the
// excess to neighbouring stages instead (peer), or filling the next
// stage's room and offloading the rest (balance), is priced against that
// choice by playing the programs.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLANNER_AUTOSWAP_H
#define LOOM_PLANNER_AUTOSWAP_H

#include "loom/Pipelines/TrainingOptions.h"
#include "loom/Planner/ClusterSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <vector>

namespace mlir {
namespace loom {
namespace planner {

/// What --swap auto priced for one stage over the budget.
struct StageShedding {
  size_t stage = 0;
  /// Seconds per step: the swap copies' exposed time, the recomputation's
  /// time; negative when that way cannot fit the stage.
  double exposedSwap = -1, recompute = -1;
  /// Both in one stage: its cheapest tensors recomputed up to
  /// `mixedFraction` of its excess, the rest swapped; `mixed` is the
  /// seconds per step of both (the best fraction tried; negative when no
  /// mix fits).
  double mixed = -1, mixedFraction = 0;
  enum class Way { swap, recompute, mixed } way = Way::swap;
  bool swaps() const { return way != Way::recompute; }
  bool recomputes() const { return way != Way::swap; }
};

/// What --swap auto priced for the other way under pipelines: sending each
/// stage's excess to neighbouring stages with room (--swap peer, Mbapp's
/// balance), against the per-stage choice. Both programs are compiled and
/// played on the spec (playProgram), since a peer's transfers and the
/// neighbour's extra memory concern two stages at once.
struct PeerPricing {
  /// Played step time, seconds (negative when that program was not
  /// compiled).
  double peerStep = -1, perStageStep = -1;
  /// Why peer was not a candidate (one stage; no neighbour has room).
  std::string unavailable;
  bool chosen = false;
  /// --swap balance (the next stage's room, then the host pool), played
  /// the same way: its step time (negative when not compiled, with why).
  double balanceStep = -1;
  std::string balanceUnavailable;
  bool balanceChosen = false;
};

/// Resolves `options.swap == automatic` (needs `options.deviceMemory`):
/// trial compiles (their diagnostics kept back) give each stage's device
/// peak unconstrained, the swap copies `--swap host` would make, the
/// recomputation `--recompute auto` would choose, and mixes of both (the
/// cheapest tensors recomputed up to a fraction of the stage's excess,
/// the rest swapped: what the link hides is swapped, the remainder
/// recomputed); each stage over the budget takes the cheapest on `spec`
/// (ties to swap, which computes nothing twice, then to recompute). Sets
/// `options.swap` (host when a stage swaps, else none) and
/// `options.recompute`/`stageRecompute`/`stageRecomputeBytes` (the
/// recomputing stages' choices); fills `decisions`. Under pipelines
/// the program those choices make is played against the ones `--swap peer`
/// and `--swap balance` make, and the fastest wins (ties to the per-stage
/// choice, then to peer; with peer or balance, `options.swap` is that and
/// nothing is recomputed). Returns the error when a stage fits no way.
std::string resolveAutoSwap(ModuleOp module, TrainingOptions &options,
                            const ClusterSpec &spec,
                            std::vector<StageShedding> &decisions,
                            PeerPricing &peer);

} // namespace planner
} // namespace loom
} // namespace mlir

#endif // LOOM_PLANNER_AUTOSWAP_H
