//===- Runtime.h - The Loom runtime's public API -----------------*- C++ -*-===//
//
// What a program emitted by `loom-translate --emit-cpp` (and `loomc`) links
// against. No MLIR dependency. The emitted `step.cpp` defines one step
// function and a ProgramSpec; its `main` calls trainMain(), which owns
// everything else (arguments, data, weights, the step loop, logging,
// checkpoints, communication). See docs/training.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_RUNTIME_H
#define LOOM_RUNTIME_RUNTIME_H

#include <cstdint>

namespace loom {
namespace rt {

/// BF16 is the element type of weight shadows only (Role::Shadow).
enum class DType : int32_t { F32 = 0, I64 = 1, I32 = 2, BF16 = 3 };
/// Bytes of one element (0 for a value outside the enum).
int64_t dtypeSize(DType type);
/// "float32", "int64", "int32", "bfloat16" (as NumPy and ml_dtypes name
/// them), or "unknown".
const char *dtypeName(DType type);

/// What a step argument or result is.
enum class Role : int32_t {
  Param = 0, ///< trainable weight, read from the weights file, checkpointed
  State = 1, ///< optimizer state (zero-initialised), checkpointed
  Data = 2,  ///< a batch input, read from DIR/<name>.npy
  Loss = 3,  ///< the scalar f32 loss result
  Other = 4, ///< any other result (ignored by the training loop)
  /// A bf16 copy of a Param argument (loom-weight-shadows): the runtime
  /// writes it from the param (TensorSpec::shadowOf) before the first step
  /// and after every load; the step's result updating it keeps it in step
  /// with the param. Derived, so checkpoints leave it out.
  Shadow = 5,
};

constexpr int kMaxRank = 8;

struct TensorSpec {
  const char *name;
  Role role;
  DType dtype;
  int32_t rank;
  int64_t shape[kMaxRank];
  /// For results: the index of the argument this result replaces after
  /// each step (params and state), or -1.
  int32_t updates;
  /// For results that replace an argument: the step writes the result into
  /// the argument's own buffer (loom-in-place-updates proved nothing reads
  /// the old value after it is overwritten), so the runtime allocates no
  /// separate buffer for it.
  bool inPlace;
  /// For Shadow arguments: the index of the Param argument whose bf16
  /// rounding this is; -1 otherwise.
  int32_t shadowOf = -1;
};

class Context;

/// The generated step: reads `args[i]` (spec.args[i]), writes `results[j]`
/// (spec.results[j]), and uses `arena` (spec.arenaBytes bytes, 64-byte
/// aligned) for every intermediate value.
using StepFn = void (*)(Context &ctx, void *const *args, void *const *results,
                        char *arena);

struct ProgramSpec {
  const char *modelName;
  const TensorSpec *args;
  int32_t numArgs;
  const TensorSpec *results;
  int32_t numResults;
  /// Size of the workspace arena planned by loom-memory-plan.
  int64_t arenaBytes;
  /// The planner's predicted peak of live arena bytes (for the report check).
  int64_t plannedPeakBytes;
  /// Rows of each data input consumed per step (the static batch dim).
  int64_t batchSize;
  StepFn step;
  /// The device mesh the program was compiled for: data, tensor and
  /// pipeline parallel sizes; `mpirun -np dp*tp*pp`. World rank r has
  /// coordinates (d, p, t), r = (d*pp + p)*tp + t, and the groups of
  /// Comm.h. In step s a rank reads rows [(s*dp + d) * batchSize,
  /// +batchSize) of each data file; with tp > 1 it loads its slice of the
  /// weights (weights.rank<t>.safetensors, or --weights with {rank} = t).
  /// dp = 0 means replicated: the program runs on any number of ranks, each
  /// reading the rows of step s alone (hand-written programs that do their
  /// own communication).
  int32_t dp = 1, tp = 1, pp = 1;
  /// The pipeline stage this program is (0 to pp-1): the ranks with
  /// pipeline coordinate p run stage p. With pp > 1, batchSize is the rows
  /// of one step per data-parallel rank (all the step's microbatches).
  int32_t stage = 0;
  /// loom-memory-plan's device peak of this program: the bytes of its
  /// device pool (params, state, the input batch, results, the arena;
  /// memory.json's `device_peak_bytes`), 0 when unknown. The runtime
  /// measures the same pool and warns when it exceeds the plan.
  int64_t plannedDevicePeakBytes = 0;
  /// The device budget the program was compiled for (`loomc
  /// --device-memory`; 0: none): a device pool that would exceed it is an
  /// error (out of device memory), as on a real device.
  int64_t deviceMemoryBytes = 0;
  /// The host pool loom-swap's offloaded buffers live in (bytes; 0: none).
  int64_t hostArenaBytes = 0;
};

/// Runs the training loop; returns the process exit code (0 on success,
/// 2 for a command-line error; other errors go through fail()). Options
/// (`--help` prints them in full):
///   --data DIR --steps N [--log loss.csv] [--weights FILE]
///   [--checkpoint-dir D [--checkpoint-every K] [--keep-checkpoints N]]
///   [--resume] [--memory-counters FILE.json] [--quiet]
/// The spec is validated first (unique names, `updates` indices naming a
/// param/state argument of the same dtype and shape, exactly one rank-0 f32
/// Loss result, data arguments batched along dim 0): a malformed spec is an
/// error naming the offending argument or result.
int trainMain(int argc, char **argv, const ProgramSpec &spec);

/// The same for a pipeline of `numStages` stage programs (`stages[k]` is
/// stage k: its `stage` is k and its `pp` is numStages; all share dp, tp
/// and the batch size). The rank with pipeline coordinate p runs
/// stages[p]; the loss (loss.csv, the progress line) and --memory-counters
/// come from the rank (d=0, p=pp-1, t=0), which holds the last stage.
/// trainMain(spec) is the one-stage case.
int trainMainStages(int argc, char **argv, const ProgramSpec *const *stages,
                    int32_t numStages);

/// Arena accounting: the emitted code calls these when an arena buffer
/// becomes live (its first write) and dead (after its last read). The
/// runtime keeps live and peak byte counters (reported with
/// --memory-counters) and checks, failing with a "planner bug" error, that
/// live buffers never overlap, stay inside the arena, are released exactly
/// as acquired, and are all released when the step returns. Zero-byte
/// buffers are not tracked.
void arenaAcquire(Context &ctx, int64_t offset, int64_t bytes);
void arenaRelease(Context &ctx, int64_t offset, int64_t bytes);

/// The --trace timeline's compute spans: the emitted code marks the clock
/// before each kernel or library call (traceMark) and records the span
/// since the mark after it (traceOp). Both do nothing unless the run
/// writes a --trace, so untraced runs pay one branch per call; the mark
/// lives in the context, not in a local of the step, which keeps long
/// steps quicker to compile.
void traceMark(Context &ctx);
void traceOp(Context &ctx, const char *name);

/// Parameters and optimizer state resident on a device (the CUDA
/// backend keeps them there between steps, so a step moves only the batch
/// and the loss). hostStateChanged(): whether the host's copies are newer
/// than the device's (the first step, a run resumed from a checkpoint);
/// the step uploads them and calls deviceStateLoaded(). stateWantedOnHost():
/// whether the runtime reads them after this step (a checkpoint follows),
/// so the step copies the updated values back.
bool hostStateChanged(Context &ctx);
void deviceStateLoaded(Context &ctx);
bool stateWantedOnHost(Context &ctx);

/// Reports a fatal error raised inside a kernel (e.g. an out-of-range
/// gather index), naming the op: prints `loom-train: error: <op>: <message>`
/// to stderr and exits with status 1 (MPI_Abort when more than one rank
/// runs); never returns. Call it from the thread that called the step, not
/// from inside a parallel region.
[[noreturn]] void fail(Context &ctx, const char *op, const char *message);

} // namespace rt
} // namespace loom

#endif // LOOM_RUNTIME_RUNTIME_H
