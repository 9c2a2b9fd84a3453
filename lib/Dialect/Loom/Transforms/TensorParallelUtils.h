//===- TensorParallelUtils.h - Shared by the tensor-parallel passes -*- C++ -*-===//
//
// What -loom-tensor-parallel (Megatron blocks) and -loom-vocab-parallel
// (embedding, LM head, cross-entropy) share (see Passes.td for their
// contracts): the linear layers they recognise, the checks of their options
// and the question of whether a function has a vocabulary table. Internal to
// LoomTransforms.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_DIALECT_LOOM_TRANSFORMS_TENSORPARALLELUTILS_H
#define LOOM_LIB_DIALECT_LOOM_TRANSFORMS_TENSORPARALLELUTILS_H

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Support/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir {
namespace loom {
namespace tensor_parallel {

/// The collectives of tensor parallelism run on the tp axis of @mesh.
constexpr int16_t kTpAxis = static_cast<int16_t>(::loom::MeshAxis::Tp);

/// A dictionary on the forward function, set by loom-tensor-parallel and
/// read by loom-report-sharding: for each parameter (by `loom.name`) that a
/// candidate block took but that stays replicated, what stopped the block
/// (a string naming the op and its ONNX node).
constexpr llvm::StringLiteral kTpReplicatedAttrName = "loom.tp_replicated";

/// The key of argument `argNumber` of `func` in kTpReplicatedAttrName and
/// the sharding report: its `loom.name`, else "#<argNumber>".
std::string getParamKey(func::FuncOp func, unsigned argNumber);

/// How diagnostics name `op`: "'loom.concat'", with " (node 'n')" when its
/// location carries a name (the ONNX node or the StableHLO op).
std::string describeOp(Operation *op);

/// One layer of a parameter stacked on a leading layer axis, as Flax's
/// `nn.scan` reads it once the importer has unrolled the loop: a
/// unit-stride `loom.slice` of one index along the parameter's dimension 0,
/// whole along the others, then `loom.reshape`d to drop that dimension (a
/// kernel) or not (a bias [1, n], broadcast after).
struct ParamLayer {
  SliceOp slice;
  /// Null when the layer keeps the unit layer axis.
  ReshapeOp reshape;
  /// The parameter's dimension that is dimension `dim` of the layer.
  int64_t paramDim(int64_t dim) const { return reshape ? dim + 1 : dim; }
};

/// The `loom.param` argument of `func` that `value` is, or null. With
/// `layer`, also the stacked parameter that `value` is one layer of; then
/// `layer->slice` is set (null when `value` is the parameter itself).
BlockArgument getParam(func::FuncOp func, Value value,
                       ParamLayer *layer = nullptr);

/// The rank-2 parameter that is the weight of a linear layer whose rhs is
/// `rhs`: the parameter itself, or its transpose `loom.transpose %W,
/// permutation = [1, 0]` (PyTorch's `x @ W.t()` for W [out, in], as ONNX
/// MatMul exports it); `transpose` is set to that op, else null. With
/// `layer`, also one layer of a stacked parameter (see getParam).
BlockArgument getLinearWeight(func::FuncOp func, Value rhs,
                              TransposeOp *transpose = nullptr,
                              ParamLayer *layer = nullptr);

/// The dimension of the rank-2 weight parameter of `dot` (see
/// getLinearWeight) that is contracted with the lhs's last dimension, when
/// `dot` is a linear layer; else -1. Through a transpose the dimension is
/// the parameter's, not the rhs's.
int64_t getLinearContractedDim(func::FuncOp func, DotGeneralOp dot);

/// The dimension of the weight parameter of `dot` that a column-parallel
/// cut splits, when `dot` is a linear layer whose output features start at
/// result dimension lhsRank - 1 (the lhs's last dimension contracted): a
/// rank-2 weight (see getLinearContractedDim; the dimension not
/// contracted), or a parameter of rank >= 3 contracted on its first
/// dimension (Flax's DenseGeneral kernel [in, heads, head_dim]: cut on the
/// heads); either may be one layer of a stacked parameter (`layer` says
/// which, and the dimension is the stacked parameter's). Else -1.
int64_t getColumnParallelDim(func::FuncOp func, DotGeneralOp dot,
                             ParamLayer &layer);

/// The dimension of the weight parameter of `dot` that a row-parallel cut
/// splits when the lhs is cut on the dimension contracted with rhs
/// dimension `rhsDim`: a rank-2 weight contracted with the lhs's last
/// dimension (through its transpose the parameter's dimension), or a
/// parameter of rank >= 3 whose leading dimensions are contracted (Flax's
/// DenseGeneral output kernel [heads, head_dim, out]); either may be one
/// layer of a stacked parameter, as for getColumnParallelDim. Else -1.
int64_t getRowParallelDim(func::FuncOp func, DotGeneralOp dot, int64_t rhsDim,
                          ParamLayer &layer);

/// The function `name` of `module` with a body of one block; an error
/// naming `pass` (and the option) otherwise.
FailureOr<func::FuncOp> lookupForwardFunction(ModuleOp module, StringRef name,
                                              StringRef pass);

/// lookupForwardFunction, and the device mesh of `module` (`@mesh`; every
/// axis 1 when absent).
FailureOr<std::pair<func::FuncOp, ::loom::Mesh>>
lookupForwardFunctionAndMesh(ModuleOp module, StringRef name, StringRef pass);

/// Checks option tp= of `pass` in its initialize().
LogicalResult checkTpOption(MLIRContext *context, int64_t tp, StringRef pass);

/// Whether loom-vocab-parallel would cut a vocabulary table of `func` (an
/// embedding or LM head). Asked by loom-tensor-parallel, which warns once
/// for both passes when a function has neither a block nor a table.
bool hasVocabularyTable(func::FuncOp func);

/// The first of the `local` rows of a cut table that the calling rank
/// holds: `loom.grid_index` of the tp axis of `grid` times `local`, i64
/// scalars built once per function, at its start.
class RankStarts {
public:
  RankStarts(func::FuncOp func, StringRef grid) : func(func), grid(grid) {}
  Value get(int64_t local);

private:
  func::FuncOp func;
  StringRef grid;
  Value rank;
  llvm::DenseMap<int64_t, Value> starts;
};

/// A lookup in a table cut along `axis` over the tp ranks, of which `data`
/// holds the `local` entries from `start` (RankStarts) on: `data` at
/// the global i64 `indices` less `start`, zero where an index is another
/// rank's. Summed over the ranks (an all-reduce), it is the lookup in the
/// whole table; its gradient reaches only the rows this rank holds.
Value buildLocalLookup(ImplicitLocOpBuilder &b, Value data, Value indices,
                       Value start, int64_t local, int64_t axis);

} // namespace tensor_parallel
} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_DIALECT_LOOM_TRANSFORMS_TENSORPARALLELUTILS_H
