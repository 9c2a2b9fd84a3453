//===- ModelProfile.h - What one rank of a tp group computes ----*- C++ -*-===//
//
// The planner's view of a model: the forward function after the
// tensor-parallel passes of one tp degree (loom-tensor-parallel,
// loom-vocab-parallel, loom-mark-layers: the same passes loomc runs), as a
// sequence of ops in program order with what the cost model needs from
// each (CostInterface flops and bytes, the collectives the passes put in,
// activation sizes, which parameters it first reads). Profiles are
// symbolic (shapes only), so a 175B-parameter model profiles in seconds;
// the search prices every candidate plan from them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLANNER_MODELPROFILE_H
#define LOOM_PLANNER_MODELPROFILE_H

#include "loom/Pipelines/TrainingOptions.h"
#include "loom/Planner/ClusterSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace mlir {
namespace loom {
namespace planner {

struct ProfiledOp {
  std::string name;
  /// CostInterface counts at the profiled batch (one tp rank's share).
  double flops = 0, bytes = 0;
  bool gemm = false;
  /// Computed inside its only user's loop (loom-fuse-elementwise's rule):
  /// no kernel launch, and its result never goes to memory.
  bool fused = false;
  /// Whether the op reads the data (its cost grows with the rows).
  bool perRow = false;
  /// The layer loom-mark-layers put it in (-1: outside every layer).
  int64_t layer = -1;
  /// Scores, masking and softmax of attention (results ending in S x S).
  bool attentionCore = false;
  /// Bytes of a forward collective (shard.all_reduce) over the tp group,
  /// and of the backward one a loom.tp_copy stands for.
  double forwardCommBytes = 0, backwardCommBytes = 0;
  /// For a loom.tp_copy: the products that multiply its result by a
  /// weight (indices into ModelProfile::ops). In the backward pass their
  /// input gradients are complete before their weight gradients, so
  /// loom-comm-schedule runs the copy's all-reduce while those are computed.
  std::vector<size_t> weightProducts;
  /// Activation bytes its results keep for the backward pass.
  double savedBytes = 0;
  /// Bytes and elements of the parameters it is the first to read, and
  /// the name (loom.name) of the first of them ("" when none).
  double paramBytes = 0, paramElements = 0;
  std::string firstParam;
  /// Every parameter it reads (indices into ModelProfile::params): a
  /// stage holds each parameter its ops read, a tied one in every stage
  /// that reads it.
  std::vector<unsigned> params;
  /// Activation bytes live across the point just before it (what a
  /// pipeline cut there sends).
  double crossBytes = 0;
};

struct ModelProfile {
  /// The parameters (one tp rank's share): bytes and elements.
  struct Param {
    double bytes = 0, elements = 0;
  };
  std::vector<Param> params;
  int64_t tp = 1;
  /// Rows (samples) of the model's batch, and tokens per sample (the
  /// product of the first data argument's other dimensions).
  int64_t batch = 1, tokensPerSample = 1;
  NumberFormat format = NumberFormat::fp32;
  int64_t elementBytes = 4;
  std::vector<ProfiledOp> ops;
  int64_t layers = 0;
  /// The whole model (tp = 1), for MFU: forward flops at `batch` and
  /// parameter elements.
  double modelForwardFlops = 0;
  double modelParams = 0;
  /// The factor the ops' savedBytes were scaled by to match the memory
  /// plan (calibrateActivations); 1 when not calibrated.
  double activationScale = 1.0;
};

/// How much of the activations a profile counts as saved Loom's compiled
/// step keeps: the memory plan's activation peak (loomrt
/// .activation_peak_bytes) of @function trained on one device at its
/// batch, through the training pipeline loomc runs, over the savedBytes
/// of `oneDevice`, its tp = 1 profile (unscaled). Fusion computes
/// elementwise chains inside their consumers' loops and the memory plan
/// frees each buffer after its last reader, so the compiled step keeps
/// less than every value a vector-Jacobian product reads. The compile
/// trains with `optimizer`; `compiled`, when given, keeps it. On failure
/// (the model does not compile on one device) returns failure with the
/// reason in `error`.
FailureOr<double>
calibrateActivations(ModuleOp module, llvm::StringRef function,
                     Precision precision, OptimizerKind optimizer,
                     const ModelProfile &oneDevice, std::string &error,
                     OwningOpRef<ModuleOp> *compiled = nullptr);

/// Compiles `module` (not modified) with `options` through the training
/// pipeline loomc runs (no C++) and returns the integer attribute `attr`
/// the memory plan put on each step function (one per pipeline stage),
/// e.g. "loomrt.device_peak_bytes"; `compiled`, when given, keeps the
/// compiled module. On failure returns failure with the first error in
/// `error`.
FailureOr<std::vector<int64_t>>
compiledFigures(ModuleOp module, const TrainingOptions &options,
                llvm::StringRef attr, std::string &error,
                OwningOpRef<ModuleOp> *compiled = nullptr);

/// Profiles entry function `function` of `module` (not modified) as one
/// rank of a tp group of `tp`. On failure (the passes refuse the model at
/// this tp, e.g. heads not divisible) returns failure with the reason in
/// `error`.
FailureOr<ModelProfile> profileModel(ModuleOp module, llvm::StringRef function,
                                     int64_t tp, std::string &error);

} // namespace planner
} // namespace loom
} // namespace mlir

#endif // LOOM_PLANNER_MODELPROFILE_H
