//===- WeightSlicing.h - Per-rank weights of a tensor-parallel step -*- C++ -*-===//
//
// A tensor-parallel step takes one rank's slice of each sharded parameter
// (`loom.shard` on its argument). These utilities read the cuts off a lowered
// step and cut a full safetensors checkpoint into one file per rank; loomc
// uses them for OUTDIR/weights.rank<t>.safetensors, and a resharding tool
// can reuse them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINES_WEIGHTSLICING_H
#define LOOM_PIPELINES_WEIGHTSLICING_H

#include "loom/Pipelines/Plan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <map>
#include <string>

namespace mlir {
namespace loom {

/// The loom.shard of each named parameter of the lowered step `step`, by
/// parameter name; an error at `step` for a malformed one.
FailureOr<std::map<std::string, ParameterShard>>
collectParameterShards(func::FuncOp step);

/// Writes `path("weights.rank<r>.safetensors")` for each of the `tp` ranks:
/// the weights of `full` with each sharded parameter cut to the rank's
/// slice (dimension `dim`, zero-extended to `padded` rows when given, is
/// `groups` equal blocks, each cut into `parts` equal parts; rank r holds
/// part r of every block). Returns an error message, empty on success.
std::string
writeRankWeights(const std::string &full, int64_t tp,
                 const std::vector<ParameterShard> &shards,
                 llvm::function_ref<std::string(llvm::StringRef)> path);

} // namespace loom
} // namespace mlir

#endif // LOOM_PIPELINES_WEIGHTSLICING_H
