//===- ProgramPlay.h - The compiled step played on a cluster ----*- C++ -*-===//
//
// Plays the per-rank programs loomc compiled (the planned loomrt step of
// each pipeline stage, what the emitters print) as discrete events on a
// cluster spec: every op in program order on the stage's compute stream,
// timed by the cost model from its operands (a GEMM's flops; any other
// op's bytes read and written, from its declared memory effects); each
// all-reduce, send and swap copy from its start op on its own channel,
// completed at its `wait`, which stalls the compute stream until then; a
// receive completes when its matching send (by stages and tag) has
// arrived. Stage k stands for every rank with pipeline coordinate k. Unlike
// the planner's Simulator, which prices a profile of the forward graph,
// the play sees what the compiler made of it: fusion, the memory plan's
// buffers, the comm schedule's early receives, the overlap split's
// interleaving, recomputation and swaps. The result is the Simulator's
// (writeTrace gives the `train --trace` format).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLANNER_PROGRAMPLAY_H
#define LOOM_PLANNER_PROGRAMPLAY_H

#include "loom/Planner/ClusterSpec.h"
#include "loom/Planner/Simulator.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir {
namespace loom {
namespace planner {

/// Plays the step of `module` (planned loomrt: one function, or one per
/// pipeline stage marked `loom.stage`) on `spec`. Events are recorded
/// when `recordEvents`. Errors (a module that is not a planned step, a
/// receive no stage sends, a swap on a spec without a host link) go to
/// `error`.
FailureOr<SimResult> playProgram(ModuleOp module, const ClusterSpec &spec,
                                 bool recordEvents, std::string &error);

/// The time of one op of a planned loomrt step on `spec`'s compute stream,
/// as the play prices it: a GEMM by its flops at the peak of its operands'
/// type, any other computing op (loomrt::isComputeOp) by the bytes it
/// declares it reads and writes (a copy by its shape); 0 for the rest.
double computeOpTime(Operation *op, const ClusterSpec &spec);

/// Compute time of a one-device, one-micro-batch step (loomc's program
/// without pipeline stages), by phase, each op priced by computeOpTime.
/// Forward: the ops up to the last one that writes the loss (result 0).
/// Optimizer: ops that write a parameter or optimizer state updated in
/// place, or a buffer the optimizer allocated. Backward: the rest. GEMMs
/// are counted apart from the other ops.
struct PhaseTimes {
  double forwardGemm = 0, forwardOther = 0;
  double backwardGemm = 0, backwardOther = 0;
  double optimizer = 0;
};
FailureOr<PhaseTimes> stepPhaseTimes(ModuleOp module, const ClusterSpec &spec,
                                     std::string &error);

/// The pipeline rank of stage k's first rank (its trace process), for
/// writeTrace: `k * tp` on the module's mesh.
std::vector<int64_t> playedRanks(ModuleOp module);

} // namespace planner
} // namespace loom
} // namespace mlir

#endif // LOOM_PLANNER_PROGRAMPLAY_H
