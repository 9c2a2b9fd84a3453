//===- Plan.h - A training plan, as JSON ------------------------*- C++ -*-===//
//
// A plan is what a training compile decided: the TrainingOptions it ran
// with, and what came out of it (the step functions, the tensor-parallel
// cut of each parameter, the pipeline and the stage partition). loomc writes
// OUTDIR/plan.json and reads it back with --plan; the planner produces the
// same struct. The schema (versioned) is docs/plan.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINES_PLAN_H
#define LOOM_PIPELINES_PLAN_H

#include "loom/Pipelines/TrainingOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace loom {

/// How one parameter is cut over the tensor-parallel ranks (its loom.shard).
struct ParameterShard {
  std::string name;
  int64_t dim = 0, parts = 1, groups = 1;
  /// The size of `dim` after zero padding (0: none).
  int64_t padded = 0;
  /// One rank's slice.
  std::vector<int64_t> local;
};

struct Plan {
  /// The schema version this build writes and reads.
  static constexpr int64_t kVersion = 1;

  std::string model;
  TrainingOptions options;
  std::vector<std::string> functions;
  std::vector<ParameterShard> tensorParallelParameters;
  /// The pass pipeline, as text.
  std::string pipeline;
  /// loom-pipeline-partition's report (pipelined plans).
  std::optional<llvm::json::Value> partition;
  /// loom-report-sharding's report (tensor-parallel plans): which
  /// parameters are cut, and why the others are not.
  std::optional<llvm::json::Value> sharding;
};

llvm::json::Value toJSON(const OptimizerOptions &options);
llvm::json::Value toJSON(const TrainingOptions &options);
llvm::json::Value toJSON(const Plan &plan);

/// Reads the fields present; the others keep their values (so a plan can
/// be applied over defaults). Stage boundaries come from
/// "stage_boundaries" or, absent that, the partition report's "cuts".
bool fromJSON(const llvm::json::Value &value, OptimizerOptions &options,
              llvm::json::Path path);
bool fromJSON(const llvm::json::Value &value, TrainingOptions &options,
              llvm::json::Path path);
bool fromJSON(const llvm::json::Value &value, Plan &plan,
              llvm::json::Path path);

/// Parses plan text. Returns an error message, empty on success.
std::string parsePlan(llvm::StringRef text, Plan &plan);
/// The text of a plan file (OUTDIR/plan.json): toJSON, indented, with a
/// final newline; parsePlan reads it back.
std::string printPlan(const Plan &plan);

/// The plan of `module` compiled with `options` by `pipeline` (its text):
/// the step functions, the tensor-parallel cut of every sharded parameter
/// (from the steps' loom.shard), and for a pipelined plan the partition
/// report at options.partitionReport, whose cuts become the recorded stage
/// boundaries (so --plan reproduces the partition). On failure, an error
/// message in `error`.
FailureOr<Plan> collectPlan(ModuleOp module, const TrainingOptions &options,
                            llvm::StringRef model, llvm::StringRef pipeline,
                            std::string &error);

/// Checks `--batch rows` against the compiled step: a step reads M
/// micro-batches of the model's batch size per data-parallel rank
/// (dimension 0 of its data arguments). Returns an error message naming the
/// batch to export, empty when they agree.
std::string checkStepRows(ModuleOp module, const TrainingOptions &options,
                          int64_t rows);

} // namespace loom
} // namespace mlir

#endif // LOOM_PIPELINES_PLAN_H
