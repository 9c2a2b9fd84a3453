//===- MemoryPlan.h - What a lowered step needs on its device ---*- C++ -*-===//
//
// The memory of one lowered `loomrt` step function (one pipeline stage's
// program, or the only step) under the schedule its op order encodes: the
// 1F1B or GPipe order of micro-batches is already in the program, so the
// activations in flight are the arena buffers live at the same time.
//
// loom-memory-plan computes it for every function (and writes it to
// memory.json); passes that need a stage's device peak before deciding
// what to shed (loom-swap, --recompute auto) call analyzeFunctionMemory on
// the lowered function, which runs the same placement without changing
// the IR, so its figures are those loom-memory-plan will report and the
// runtime will measure (`train --memory-counters`).
//
// The device pool of a rank holds, for the whole run:
//   params           the stage's parameters (loom.param arguments)
//   optimizer_state  its optimizer state (loom.state arguments)
//   data             the step's input batch (other arguments)
//   results          the result buffers: updated parameters and state, the
//                    loss (the runtime swaps them with the arguments)
//   arena            arena_bytes: every intermediate buffer (activations,
//                    gradients, optimizer temporaries, workspace, and the
//                    communication buffers of sends, receives and
//                    all-reduces), placed by the plan
// so device_peak_bytes = persistent + arena_bytes. The host pool holds the
// activations loom-swap offloads (its own plan, `loomrt.alloc {category =
// "swap"}`): host_peak_bytes, 0 without swap.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOMRT_TRANSFORMS_MEMORYPLAN_H
#define LOOM_DIALECT_LOOMRT_TRANSFORMS_MEMORYPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <map>
#include <string>

namespace mlir {
namespace loomrt {

/// One step function's memory, in bytes.
struct FunctionMemory {
  std::string function;
  /// The pipeline stage (`loom.stage`), or -1 for a program that is not a
  /// stage of a pipeline.
  int64_t stage = -1;
  /// The arena: its size (what the runtime allocates) and the most bytes
  /// live at once (the lower bound of any placement).
  int64_t arenaBytes = 0;
  int64_t peakLiveBytes = 0;
  /// Argument buffers by category: "params", "optimizer_state", "data",
  /// "results".
  std::map<std::string, int64_t> persistent;
  /// Arena bytes live at the peak by the buffers' category ("activation",
  /// "gradient", "optimizer", "workspace").
  std::map<std::string, int64_t> arenaAtPeak;
  /// Of those, the buffers a send, receive or all-reduce uses.
  int64_t commAtPeakBytes = 0;
  /// The most arena bytes of category "activation" live at once (not
  /// necessarily at the arena's peak, which in a large model is the
  /// gradients'): what one micro-batch's forward keeps for its backward.
  int64_t activationPeakBytes = 0;
  /// Bytes of the host pool (buffers of category "swap": activations
  /// offloaded by loom-swap); 0 without swap.
  int64_t hostPeakBytes = 0;
  /// The position (index in the function's block) of the first op at which
  /// peakLiveBytes are live; -1 when nothing is.
  int64_t peakOp = -1;

  int64_t persistentBytes() const;
  int64_t category(const std::string &name) const;
  /// Parameters and optimizer state: what nothing but more devices can cut.
  int64_t paramsAndStateBytes() const {
    return category("params") + category("optimizer_state");
  }
  /// What the rank's device pool holds: persistent buffers and the arena.
  int64_t devicePeakBytes() const { return persistentBytes() + arenaBytes; }
  /// The persistent buffers and the live arena bytes at the peak (the
  /// report's historical `peak_bytes`).
  int64_t peakBytes() const { return persistentBytes() + peakLiveBytes; }
  /// "stage k (@f)" or "@f".
  std::string describe() const;
};

/// Plans `func` (a single-block lowered step function) as loom-memory-plan
/// would, without changing it. `alignment` must be a power of two.
FunctionMemory analyzeFunctionMemory(func::FuncOp func, int64_t alignment = 64);

/// Checks `memory` against a device budget of `deviceMemory` bytes (0: no
/// budget). Returns an empty string when it fits, else the error: the
/// stage, its peak, the budget, and what would fit it (or, when the
/// persistent buffers alone exceed the budget, that nothing swappable can).
/// `microbatches` (>= 1) is the pipeline's number of micro-batches, used in
/// the advice.
std::string checkDeviceBudget(const FunctionMemory &memory,
                              int64_t deviceMemory, int64_t microbatches = 1);

} // namespace loomrt
} // namespace mlir

#endif // LOOM_DIALECT_LOOMRT_TRANSFORMS_MEMORYPLAN_H
