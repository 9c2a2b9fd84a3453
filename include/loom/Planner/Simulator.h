//===- Simulator.h - Discrete-event play of a pipelined step ----*- C++ -*-===//
//
// Plays one training step of a plan as events: each pipeline stage runs
// its forward and backward micro-batch work in the schedule's order
// (1F1B or GPipe) on its compute stream, a micro-batch's activation
// reaches the next stage (and its gradient the previous one) one transfer
// after it is computed, and after its last backward each stage all-reduces
// its gradients over the data-parallel group (buckets overlapping that
// backward) and updates its weights. Stage k stands for every rank with
// pipeline coordinate k (the data- and tensor-parallel ranks of a stage
// run the same program at the same time). The result: the step time,
// each stage's busy time, its device memory over the step and the
// events, which writeTrace turns into the Chrome-trace JSON that `train
// --trace` writes (memory as a counter track per stage).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLANNER_SIMULATOR_H
#define LOOM_PLANNER_SIMULATOR_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace loom {
namespace planner {

/// What one stage does per micro-batch, in seconds.
struct StageWork {
  /// Forward and backward compute of one micro-batch (the backward
  /// includes its recomputation), and the tensor-parallel communication
  /// each leaves exposed.
  double forward = 0, backward = 0, recompute = 0;
  double forwardComm = 0, backwardComm = 0;
  /// Sending one micro-batch's activation to the next stage (and its
  /// gradient back: the same bytes).
  double sendNext = 0;
  /// The data-parallel gradient all-reduce, the part of it hidden behind
  /// the last backward at best (its first buckets), and the update.
  double gradAllReduce = 0, gradAllReduceHidden = 0, optimizer = 0;
  /// Copying the gradients into their all-reduce buckets, and out of them
  /// again (each way; 0 without data parallelism): the all-reduce starts
  /// after the first, the update after the second.
  double bucketCopy = 0;
  /// Device bytes: what the stage holds throughout (parameters,
  /// gradients, optimizer state, buffers, the reserve) and what one
  /// micro-batch's forward keeps until its backward.
  double baseBytes = 0, activationBytes = 0;
};

struct SimEvent {
  int64_t stage;
  /// "compute", "tp", "pp" or "dp".
  std::string track;
  std::string name;
  double begin, end;
};

struct SimResult {
  double stepTime = 0;
  /// Per stage: time computing (forward, backward, recompute, update).
  std::vector<double> busy;
  /// The idle share of the busiest stage's step (pipeline bubble).
  double bubbleFraction = 0;
  /// Communication not hidden behind compute, on the slowest stage.
  double exposedComm = 0;
  std::vector<SimEvent> events;
  /// Per stage: its device bytes over the step, as (time, bytes) from
  /// the start (each forward adds a micro-batch's activations when it
  /// begins, each backward frees them when it ends), and their peak.
  std::vector<std::vector<std::pair<double, double>>> memory;
  std::vector<double> peakBytes;
};

enum class SimSchedule { oneFOneB, gpipe };

/// Plays `microbatches` micro-batches through `stages`. With
/// `recordEvents` false only the times are kept (the search's fast path).
SimResult simulateStep(const std::vector<StageWork> &stages,
                       int64_t microbatches, SimSchedule schedule,
                       bool recordEvents);

/// Chrome-trace JSON of `result` (one process per stage, named after the
/// rank that runs it: `rankOfStage[k]`), the format of `train --trace`.
std::string writeTrace(const SimResult &result,
                       const std::vector<int64_t> &rankOfStage,
                       llvm::StringRef title);

} // namespace planner
} // namespace loom
} // namespace mlir

#endif // LOOM_PLANNER_SIMULATOR_H
