//===- TensorParallel.cpp - Megatron-style tensor parallelism -------------===//
//
// Implements -loom-tensor-parallel (see Passes.td and docs/training.md): the
// attention and MLP blocks of a forward function are partitioned over the
// ranks of a 1-D shard.grid as in Megatron-LM. Column-parallel linear layers
// start a block, row-parallel ones end it with a shard.all_reduce; the
// sharded dimension is followed through the ops in between in one sweep in
// program order, and a candidate block whose sharded values escape it is
// left alone. The vocabulary tables (token embedding, LM head and the
// cross-entropy on its logits) are cut by rows by a separate
// VocabPartitioner, after the blocks.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMTENSORPARALLEL
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

/// The collectives of tensor parallelism run on the tp axis of @mesh.
constexpr int16_t kTpAxis = static_cast<int16_t>(::loom::MeshAxis::Tp);

/// How a value of a block is cut over the ranks: dimension `dim` is
/// `groups` equal blocks, each cut into `tp` equal parts; a rank holds its
/// part of every block.
struct Sharding {
  int64_t dim;
  int64_t groups;
  unsigned region;
};

/// A parameter cut over the ranks.
struct ParamSlice {
  BlockArgument arg;
  int64_t dim;
  /// The value whose final sharding gives the groups (the column-parallel
  /// product or the bias broadcast); null: one group.
  Value groupsOf;
};

/// A `loom.reshape` that splits the sharded dimension into heads.
struct HeadsSplit {
  ReshapeOp op;
  int64_t dim;
};

/// A candidate block (several candidates that meet are merged).
struct Region {
  bool escapes = false;
  SmallVector<DotGeneralOp> columns;
  SmallVector<std::pair<DotGeneralOp, int64_t>> rows; // and W's cut dim
  SmallVector<ParamSlice> params;
  SmallVector<HeadsSplit> headsSplits;
  /// Operands (op, index) to replace by a copy of the local shape: splat
  /// constants and broadcasts that do not produce the sharded dimension.
  SmallVector<std::pair<Operation *, unsigned>> localized;
  /// `loom.slice` ops whose start and limit on the sharded dimension become
  /// per-rank offsets (divided by tp).
  SmallVector<SliceOp> slices;
};

/// The rank-2 `loom.param` argument of `func` that `value` is, or null.
BlockArgument getParam(func::FuncOp func, Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != &func.getBody().front() ||
      !func.getArgAttr(arg.getArgNumber(), LoomDialect::getParamAttrName()))
    return {};
  return arg;
}

/// The rank-2 parameter that is the weight of a linear layer whose rhs is
/// `rhs`: the parameter itself, or its transpose `loom.transpose %W,
/// permutation = [1, 0]` (PyTorch's `x @ W.t()` for W [out, in], as ONNX
/// MatMul exports it); `transpose` is set to that op, else null.
BlockArgument getLinearWeight(func::FuncOp func, Value rhs,
                              TransposeOp *transpose = nullptr) {
  if (transpose)
    *transpose = nullptr;
  if (BlockArgument arg = getParam(func, rhs))
    return arg;
  auto op = rhs.getDefiningOp<TransposeOp>();
  if (!op || op.getPermutation() != ArrayRef<int64_t>{1, 0})
    return {};
  BlockArgument arg = getParam(func, op.getOperand());
  if (arg && transpose)
    *transpose = op;
  return arg;
}

/// The dimension of the rank-2 weight parameter of `dot` (see
/// getLinearWeight) that is contracted with the lhs's last dimension, when
/// `dot` is a linear layer; else -1. Through a transpose the dimension is
/// the parameter's, not the rhs's.
int64_t getLinearContractedDim(func::FuncOp func, DotGeneralOp dot) {
  auto lhs = dyn_cast<RankedTensorType>(dot.getLhs().getType());
  auto rhs = dyn_cast<RankedTensorType>(dot.getRhs().getType());
  TransposeOp transpose;
  if (!lhs || !rhs || rhs.getRank() != 2 || lhs.getRank() < 2 ||
      !getLinearWeight(func, dot.getRhs(), &transpose) ||
      !dot.getLhsBatchingDims().empty() ||
      dot.getLhsContractingDims() != ArrayRef<int64_t>{lhs.getRank() - 1} ||
      dot.getRhsContractingDims().size() != 1)
    return -1;
  int64_t contracted = dot.getRhsContractingDims()[0];
  return transpose ? 1 - contracted : contracted;
}

/// Whether `bcast` produces values that are constant along its result
/// dimension `dim`: `dim` is not one of the operand's, or the operand's
/// dimension that maps to it has size 1 (JAX's `broadcast_in_dim` of a
/// `[.., 1]` statistic). Such a broadcast can be recreated in any local
/// shape of `dim`.
bool isUniformAlong(BroadcastOp bcast, int64_t dim) {
  ArrayRef<int64_t> dims = bcast.getDims();
  const auto *it = llvm::find(dims, dim);
  if (it == dims.end())
    return true;
  auto operand = dyn_cast<RankedTensorType>(bcast.getOperand().getType());
  return operand && operand.getDimSize(it - dims.begin()) == 1;
}

class Partitioner {
public:
  Partitioner(func::FuncOp func, int64_t tp, StringRef grid)
      : func(func), tp(tp), grid(grid) {}

  /// Finds the blocks; false after reporting an error.
  LogicalResult analyze();
  /// Whether a block was found.
  bool empty() const { return live.empty(); }
  /// Whether `op` is in a block that will be partitioned.
  bool inBlock(Operation *op) {
    auto it = opRegion.find(op);
    return it != opRegion.end() && llvm::is_contained(live, find(it->second));
  }
  void rewrite();

private:
  unsigned find(unsigned region) {
    while (parent[region] != region)
      region = parent[region] = parent[parent[region]];
    return region;
  }
  unsigned merge(unsigned a, unsigned b);
  unsigned newRegion() {
    parent.push_back(regions.size());
    regions.emplace_back();
    return regions.size() - 1;
  }
  void shard(Operation *op, Value value, int64_t dim, int64_t groups,
             unsigned region, ArrayRef<Value> from = {}) {
    state[value] = {dim, groups, region};
    opRegion[op] = region;
    if (!from.empty())
      parents[value].assign(from.begin(), from.end());
  }
  /// Gives `value` and the values it was derived from `groups` groups.
  bool regroup(Value value, int64_t groups);
  /// Applies the propagation rule of `op`, whose operands `sharded` are
  /// sharded; false when the op cannot be in a block.
  bool visit(Operation *op, unsigned region);
  bool visitElementwise(Operation *op, unsigned region);
  bool visitBias(BroadcastOp bcast, const Sharding &shared, unsigned region,
                 SmallVectorImpl<Value> &from);
  bool visitBroadcast(BroadcastOp op, unsigned region);
  bool visitReduce(Operation *op, ArrayRef<int64_t> dims, bool keepdims,
                   unsigned region);
  bool visitSlice(SliceOp op, unsigned region);
  LogicalResult check(Region &region);
  RankedTensorType localType(Type type, int64_t dim) {
    auto tensor = cast<RankedTensorType>(type);
    SmallVector<int64_t> shape(tensor.getShape());
    shape[dim] /= tp;
    return tensor.clone(shape);
  }

  func::FuncOp func;
  int64_t tp;
  StringRef grid;
  SmallVector<Region, 0> regions;
  SmallVector<unsigned> parent;
  llvm::MapVector<Value, Sharding> state;
  llvm::DenseMap<Value, SmallVector<Value, 2>> parents;
  llvm::DenseMap<Operation *, unsigned> opRegion;
  /// The roots of the regions that become blocks.
  SmallVector<unsigned> live;
};

unsigned Partitioner::merge(unsigned a, unsigned b) {
  a = find(a);
  b = find(b);
  if (a == b)
    return a;
  Region &into = regions[a], &from = regions[b];
  into.escapes |= from.escapes;
  into.columns.append(from.columns);
  into.rows.append(from.rows);
  into.params.append(from.params);
  into.headsSplits.append(from.headsSplits);
  into.localized.append(from.localized);
  into.slices.append(from.slices);
  from = Region();
  parent[b] = a;
  return a;
}

bool Partitioner::regroup(Value value, int64_t groups) {
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    Sharding &s = state.find(v)->second;
    if (s.groups == groups)
      continue;
    if (s.groups != 1)
      return false;
    s.groups = groups;
    if (auto it = parents.find(v); it != parents.end())
      worklist.append(it->second.begin(), it->second.end());
  }
  return true;
}

bool Partitioner::visitElementwise(Operation *op, unsigned region) {
  std::optional<Sharding> shared;
  SmallVector<Value> from;
  for (Value operand : op->getOperands()) {
    auto it = state.find(operand);
    if (it == state.end())
      continue;
    if (shared && (shared->dim != it->second.dim ||
                   shared->groups != it->second.groups))
      return false;
    shared = it->second;
    from.push_back(operand);
  }
  int64_t dim = shared->dim;
  for (OpOperand &operand : op->getOpOperands()) {
    if (state.count(operand.get()))
      continue;
    Operation *def = operand.get().getDefiningOp();
    if (auto constant = dyn_cast_or_null<ConstantOp>(def)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense || !dense.isSplat())
        return false;
      regions[region].localized.push_back({op, operand.getOperandNumber()});
      continue;
    }
    auto bcast = dyn_cast_or_null<BroadcastOp>(def);
    if (!bcast)
      return false;
    if (isUniformAlong(bcast, dim)) {
      regions[region].localized.push_back({op, operand.getOperandNumber()});
      continue;
    }
    if (!visitBias(bcast, *shared, region, from))
      return false;
  }
  for (Value result : op->getResults())
    shard(op, result, dim, shared->groups, region, from);
  return true;
}

/// The operand dimension of `reshape` that its result dimension `dim`
/// comes from when the reshape only inserts or drops size-1 dimensions and
/// `dim` is not one of them (Flax's `reshape(bias, (1, .., 1, -1))`).
std::optional<int64_t> getUnitReshapeSource(ReshapeOp reshape, int64_t dim) {
  auto src = dyn_cast<RankedTensorType>(reshape.getOperand().getType());
  auto dst = dyn_cast<RankedTensorType>(reshape.getType());
  if (!src || !dst || !src.hasStaticShape() || !dst.hasStaticShape() ||
      dst.getDimSize(dim) == 1)
    return std::nullopt;
  auto nonUnit = [](RankedTensorType type) {
    SmallVector<int64_t> dims;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.getDimSize(i) != 1)
        dims.push_back(i);
    return dims;
  };
  SmallVector<int64_t> from = nonUnit(src), to = nonUnit(dst);
  if (from.size() != to.size())
    return std::nullopt;
  for (auto [f, t] : llvm::zip(from, to))
    if (src.getDimSize(f) != dst.getDimSize(t))
      return std::nullopt;
  return from[llvm::find(to, dim) - to.begin()];
}

/// A bias added to a sharded value: a rank-1 `loom.param` broadcast along
/// the sharded dimension, in one broadcast (ONNX's Add of a bias:
/// `broadcast %b, dims = [d]`) or in a chain of broadcasts and reshapes
/// that only add size-1 dimensions (JAX's `broadcast_in_dim` to `[1, .., 1,
/// N]`, or Flax's reshape to it, then a broadcast to the full shape). Every
/// op of the chain is sharded, the parameter cut on its dimension.
bool Partitioner::visitBias(BroadcastOp bcast, const Sharding &shared,
                            unsigned region, SmallVectorImpl<Value> &from) {
  // From `bcast` back to the parameter: each op and the dimension of its
  // result that is the bias's.
  SmallVector<std::pair<Operation *, int64_t>> chain;
  int64_t dim = shared.dim;
  Value value = bcast.getResult();
  while (Operation *def = value.getDefiningOp()) {
    int64_t operandDim;
    if (auto b = dyn_cast<BroadcastOp>(def)) {
      ArrayRef<int64_t> dims = b.getDims();
      const auto *it = llvm::find(dims, dim);
      if (it == dims.end())
        return false;
      operandDim = it - dims.begin();
      auto operandType = cast<RankedTensorType>(b.getOperand().getType());
      if (operandType.getDimSize(operandDim) != b.getType().getDimSize(dim))
        return false;
    } else if (auto r = dyn_cast<ReshapeOp>(def)) {
      std::optional<int64_t> source = getUnitReshapeSource(r, dim);
      if (!source)
        return false;
      operandDim = *source;
    } else {
      return false;
    }
    chain.push_back({def, dim});
    dim = operandDim;
    value = def->getOperand(0);
  }
  BlockArgument bias = getParam(func, value);
  if (!bias || cast<RankedTensorType>(bias.getType()).getRank() != 1)
    return false;
  Value inner;
  for (auto [op, resultDim] : llvm::reverse(chain)) {
    SmallVector<Value, 1> parentsOf;
    if (inner)
      parentsOf.push_back(inner);
    shard(op, op->getResult(0), resultDim, shared.groups, region, parentsOf);
    inner = op->getResult(0);
  }
  regions[region].params.push_back({bias, 0, bcast.getResult()});
  from.push_back(bcast.getResult());
  return true;
}

/// A broadcast of a sharded value: the sharded dimension maps to a result
/// dimension of the same size (the other dimensions may grow).
bool Partitioner::visitBroadcast(BroadcastOp op, unsigned region) {
  Sharding s = state.lookup(op.getOperand());
  int64_t dim = op.getDims()[s.dim];
  auto operandType = cast<RankedTensorType>(op.getOperand().getType());
  if (operandType.getDimSize(s.dim) != op.getType().getDimSize(dim))
    return false;
  shard(op, op.getResult(), dim, s.groups, region, op.getOperand());
  return true;
}

/// A reduction over other dimensions than the sharded one (the max and sum
/// of a softmax that JAX spells out): the sharded dimension keeps its
/// place among the remaining ones.
bool Partitioner::visitReduce(Operation *op, ArrayRef<int64_t> dims,
                              bool keepdims, unsigned region) {
  Sharding s = state.lookup(op->getOperand(0));
  if (llvm::is_contained(dims, s.dim))
    return false;
  int64_t dim = s.dim;
  if (!keepdims)
    dim -= llvm::count_if(dims, [&](int64_t d) { return d < s.dim; });
  shard(op, op->getResult(0), dim, s.groups, region, op->getOperand(0));
  return true;
}

/// A unit-stride slice of a sharded value: the whole sharded dimension, or
/// one of `G` equal consecutive parts of it (JAX's `jnp.split` of a fused
/// QKV projection is one slice per part), which gives the operand `G`
/// groups, as `loom.split` does.
bool Partitioner::visitSlice(SliceOp op, unsigned region) {
  Sharding s = state.lookup(op.getOperand());
  auto type = cast<RankedTensorType>(op.getOperand().getType());
  if (type.isDynamicDim(s.dim) || op.getStrides()[s.dim] != 1)
    return false;
  int64_t size = type.getDimSize(s.dim);
  int64_t start = op.getStart()[s.dim], limit = op.getLimit()[s.dim];
  if (start == 0 && limit == size) {
    regions[region].slices.push_back(op);
    shard(op, op.getResult(), s.dim, s.groups, region, op.getOperand());
    return true;
  }
  int64_t part = limit - start;
  if (part <= 0 || size % part != 0 || start % part != 0 ||
      !regroup(op.getOperand(), size / part))
    return false;
  regions[region].slices.push_back(op);
  shard(op, op.getResult(), s.dim, 1, region);
  return true;
}

bool Partitioner::visit(Operation *op, unsigned region) {
  if (op->hasTrait<mlir::loom::OpTrait::ElementwiseMapping>())
    return visitElementwise(op, region);

  auto sharding = [&](Value v) -> std::optional<Sharding> {
    auto it = state.find(v);
    if (it == state.end())
      return std::nullopt;
    return it->second;
  };

  if (isa<SoftmaxOp, LogSoftmaxOp>(op)) {
    Sharding s = *sharding(op->getOperand(0));
    auto axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    if (axis == s.dim)
      return false;
    shard(op, op->getResult(0), s.dim, s.groups, region, op->getOperand(0));
    return true;
  }
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    Sharding s = *sharding(transpose.getOperand());
    auto *it = llvm::find(transpose.getPermutation(), s.dim);
    shard(op, transpose.getResult(),
          std::distance(transpose.getPermutation().begin(), it), s.groups,
          region, transpose.getOperand());
    return true;
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    Sharding s = *sharding(reshape.getOperand());
    auto src = cast<RankedTensorType>(reshape.getOperand().getType());
    auto dst = cast<RankedTensorType>(reshape.getType());
    if (!src.hasStaticShape() || !dst.hasStaticShape() || s.groups != 1)
      return false;
    // The result dimension that starts where the sharded one starts.
    int64_t before = 1;
    for (int64_t i = 0; i < s.dim; ++i)
      before *= src.getDimSize(i);
    int64_t at = 0, product = 1;
    while (at < dst.getRank() && product < before)
      product *= dst.getDimSize(at++);
    if (product != before || at == dst.getRank())
      return false;
    int64_t size = src.getDimSize(s.dim), newSize = dst.getDimSize(at);
    if (newSize < size) {
      // Split into [heads, head size, ...]: the heads are sharded.
      if (size % newSize != 0)
        return false;
      regions[region].headsSplits.push_back({reshape, at});
    } else if (newSize > size) {
      // Merged with the following dimensions: [heads, head size] -> hidden.
      int64_t merged = 1, i = s.dim;
      while (i < src.getRank() && merged < newSize)
        merged *= src.getDimSize(i++);
      if (merged != newSize)
        return false;
    }
    shard(op, reshape.getResult(), at, 1, region, reshape.getOperand());
    return true;
  }
  if (auto split = dyn_cast<SplitOp>(op)) {
    Sharding s = *sharding(split.getOperand());
    if (static_cast<int64_t>(split.getDim()) != s.dim) {
      for (Value result : split.getResults())
        shard(op, result, s.dim, s.groups, region, split.getOperand());
      return true;
    }
    // A fused projection cut into equal parts: each is one group.
    ArrayRef<int64_t> sizes = split.getSizes();
    auto parts = static_cast<int64_t>(sizes.size());
    if (parts < 2 || !llvm::all_equal(sizes) ||
        !regroup(split.getOperand(), parts))
      return false;
    for (Value result : split.getResults())
      shard(op, result, s.dim, 1, region);
    return true;
  }
  if (auto dot = dyn_cast<DotGeneralOp>(op)) {
    std::optional<Sharding> lhs = sharding(dot.getLhs()),
                            rhs = sharding(dot.getRhs());
    if (lhs && !rhs) {
      // Row-parallel: the lhs is sharded on the contracted dimension.
      int64_t cut = getLinearContractedDim(func, dot);
      auto lhsType = cast<RankedTensorType>(dot.getLhs().getType());
      if (cut < 0 || lhs->dim != lhsType.getRank() - 1 || lhs->groups != 1)
        return false;
      opRegion[op] = region;
      TransposeOp transpose;
      BlockArgument weight = getLinearWeight(func, dot.getRhs(), &transpose);
      if (transpose)
        opRegion[transpose] = region;
      regions[region].rows.push_back({dot, cut});
      regions[region].params.push_back({weight, cut, Value()});
      return true;
    }
    // Attention: both operands sharded on the same batching dimension.
    if (!lhs || !rhs || lhs->groups != 1 || rhs->groups != 1)
      return false;
    auto *l = llvm::find(dot.getLhsBatchingDims(), lhs->dim);
    auto *r = llvm::find(dot.getRhsBatchingDims(), rhs->dim);
    if (l == dot.getLhsBatchingDims().end() ||
        r == dot.getRhsBatchingDims().end() ||
        l - dot.getLhsBatchingDims().begin() !=
            r - dot.getRhsBatchingDims().begin())
      return false;
    shard(op, dot.getResult(), l - dot.getLhsBatchingDims().begin(), 1,
          region, {dot.getLhs(), dot.getRhs()});
    return true;
  }
  if (auto bcast = dyn_cast<BroadcastOp>(op))
    return visitBroadcast(bcast, region);
  if (auto slice = dyn_cast<SliceOp>(op))
    return visitSlice(slice, region);
  if (auto reduce = dyn_cast<ReduceSumOp>(op))
    return visitReduce(op, reduce.getDims(), reduce.getKeepdims(), region);
  if (auto reduce = dyn_cast<ReduceMeanOp>(op))
    return visitReduce(op, reduce.getDims(), reduce.getKeepdims(), region);
  if (auto reduce = dyn_cast<ReduceMaxOp>(op))
    return visitReduce(op, reduce.getDims(), reduce.getKeepdims(), region);
  return false;
}

LogicalResult Partitioner::analyze() {
  Block &body = func.getBody().front();
  for (Operation &op : body) {
    std::optional<unsigned> region;
    for (Value operand : op.getOperands())
      if (auto it = state.find(operand); it != state.end())
        region = region ? merge(*region, it->second.region)
                        : find(it->second.region);
    if (!region) {
      // A column-parallel linear layer starts a candidate block.
      auto dot = dyn_cast<DotGeneralOp>(op);
      int64_t contracted = dot ? getLinearContractedDim(func, dot) : -1;
      if (contracted < 0)
        continue;
      unsigned fresh = newRegion();
      auto type = cast<RankedTensorType>(dot.getType());
      shard(dot, dot.getResult(), type.getRank() - 1, 1, fresh);
      TransposeOp transpose;
      BlockArgument weight = getLinearWeight(func, dot.getRhs(), &transpose);
      if (transpose)
        opRegion[transpose] = fresh;
      regions[fresh].columns.push_back(dot);
      regions[fresh].params.push_back(
          {weight, 1 - contracted, dot.getResult()});
      continue;
    }
    if (!visit(&op, *region))
      regions[find(*region)].escapes = true;
  }

  // A block keeps its sharded values and parameters to itself.
  for (auto &[value, sharding] : state) {
    unsigned root = find(sharding.region);
    sharding.region = root;
    for (Operation *user : value.getUsers()) {
      auto it = opRegion.find(user);
      if (it == opRegion.end() || find(it->second) != root)
        regions[root].escapes = true;
    }
  }
  for (unsigned i = 0, e = regions.size(); i < e; ++i) {
    if (find(i) != i)
      continue;
    Region &region = regions[i];
    auto inRegion = [&](Operation *user) {
      auto it = opRegion.find(user);
      return it != opRegion.end() && find(it->second) == i;
    };
    for (const ParamSlice &param : region.params)
      for (Operation *user : param.arg.getUsers()) {
        if (!inRegion(user))
          region.escapes = true;
        // The transpose of a weight is folded into its layers: it may feed
        // no other op.
        else if (isa<TransposeOp>(user) &&
                 !llvm::all_of(user->getUsers(), inRegion))
          region.escapes = true;
      }
    if (region.escapes || region.rows.empty())
      continue;
    if (failed(check(region)))
      return failure();
    live.push_back(i);
  }
  return success();
}

/// Errors, most specific first: the heads, the weights, then any value.
LogicalResult Partitioner::check(Region &region) {
  auto error = [&](Operation *op) {
    return op->emitError() << "loom-tensor-parallel: tp=" << tp
                           << " does not divide ";
  };
  auto weightName = [&](BlockArgument arg) {
    auto name = func.getArgAttrOfType<StringAttr>(
        arg.getArgNumber(), LoomDialect::getNameAttrName());
    return name ? ("'" + name.getValue() + "'").str()
                : ("#" + Twine(arg.getArgNumber())).str();
  };
  for (HeadsSplit split : region.headsSplits) {
    int64_t heads = split.op.getType().getDimSize(split.dim);
    if (heads % tp != 0)
      return error(split.op)
             << "the " << heads << " attention heads (result dimension "
             << split.dim << " of this reshape)";
  }
  for (const ParamSlice &param : region.params) {
    auto type = cast<RankedTensorType>(param.arg.getType());
    int64_t groups = param.groupsOf ? state.lookup(param.groupsOf).groups : 1;
    int64_t size = type.getDimSize(param.dim);
    if (size % (tp * groups) == 0)
      continue;
    Operation *user = *param.arg.getUsers().begin();
    InFlightDiagnostic diag = error(user);
    diag << "dimension " << param.dim << " (size " << size;
    if (groups > 1)
      diag << ", " << groups << " blocks of " << size / groups;
    return diag << ") of the parameter " << weightName(param.arg)
                << " (argument #" << param.arg.getArgNumber() << ")";
  }
  for (auto &[value, sharding] : state) {
    if (sharding.region != find(&region - regions.begin()))
      continue;
    int64_t size = cast<RankedTensorType>(value.getType())
                       .getDimSize(sharding.dim);
    if (size % (tp * sharding.groups) != 0) {
      Operation *def = value.getDefiningOp();
      return error(def) << "dimension " << sharding.dim << " (size " << size
                        << ") of the result of this '" << def->getName()
                        << "'";
    }
  }
  return success();
}

void Partitioner::rewrite() {
  llvm::SmallDenseSet<unsigned> isLive(live.begin(), live.end());
  MLIRContext *ctx = func.getContext();
  OpBuilder builder(ctx);

  // Localized operands are rebuilt from the original types.
  llvm::SetVector<Operation *> replaced;
  for (unsigned root : live)
    for (auto [op, index] : regions[root].localized) {
      Value operand = op->getOperand(index);
      int64_t dim = state.lookup(op->getResult(0)).dim;
      RankedTensorType type = localType(operand.getType(), dim);
      builder.setInsertionPoint(op);
      Operation *def = operand.getDefiningOp();
      Value local;
      if (auto constant = dyn_cast<ConstantOp>(def))
        local = ConstantOp::create(
            builder, def->getLoc(), type,
            cast<ElementsAttr>(cast<DenseElementsAttr>(constant.getValue())
                                   .resizeSplat(type)));
      else
        local = BroadcastOp::create(builder, def->getLoc(), type,
                                    def->getOperand(0),
                                    cast<BroadcastOp>(def).getDims());
      op->setOperand(index, local);
      replaced.insert(def);
    }
  // The full-shape originals that only the block used.
  for (Operation *def : replaced)
    if (def->use_empty())
      def->erase();

  for (auto &[value, sharding] : state) {
    if (!isLive.contains(sharding.region))
      continue;
    value.setType(localType(value.getType(), sharding.dim));
    if (auto split = value.getDefiningOp<SplitOp>();
        split && value == split.getResult(0) &&
        static_cast<int64_t>(split.getDim()) == sharding.dim) {
      SmallVector<int64_t> sizes(split.getSizes());
      for (int64_t &size : sizes)
        size /= tp;
      split.setSizes(sizes);
    }
  }

  // Slices of the sharded dimension take the rank's part of each group.
  for (unsigned root : live)
    for (SliceOp slice : regions[root].slices) {
      int64_t dim = state.lookup(slice.getResult()).dim;
      SmallVector<int64_t> start(slice.getStart()), limit(slice.getLimit());
      start[dim] /= tp;
      limit[dim] /= tp;
      slice.setStart(start);
      slice.setLimit(limit);
    }

  // A transposed weight W [out, in] of a layer `x @ transpose(W)` is used
  // directly, contracting its other dimension, so that its cut is W's.
  SmallVector<Operation *> transposes;
  for (unsigned root : live) {
    Region &region = regions[root];
    SmallVector<DotGeneralOp> layers(region.columns);
    for (auto [dot, cut] : region.rows)
      layers.push_back(dot);
    for (DotGeneralOp dot : layers) {
      auto transpose = dot.getRhs().getDefiningOp<TransposeOp>();
      if (!transpose)
        continue;
      dot.getRhsMutable().assign(transpose.getOperand());
      dot.setRhsContractingDims({1 - dot.getRhsContractingDims()[0]});
      if (!llvm::is_contained(transposes, transpose.getOperation()))
        transposes.push_back(transpose);
    }
  }
  for (Operation *transpose : transposes)
    if (transpose->use_empty())
      transpose->erase();

  Builder b(ctx);
  llvm::DenseMap<Value, Value> copies;
  for (unsigned root : live) {
    Region &region = regions[root];
    for (const ParamSlice &param : region.params) {
      int64_t groups =
          param.groupsOf ? state.lookup(param.groupsOf).groups : 1;
      BlockArgument arg = param.arg;
      arg.setType(localType(arg.getType(), param.dim));
      SmallVector<NamedAttribute> fields{
          b.getNamedAttr("dim", b.getI64IntegerAttr(param.dim)),
          b.getNamedAttr("parts", b.getI64IntegerAttr(tp))};
      if (groups > 1)
        fields.push_back(
            b.getNamedAttr("groups", b.getI64IntegerAttr(groups)));
      func.setArgAttr(param.arg.getArgNumber(),
                      LoomDialect::getShardAttrName(),
                      b.getDictionaryAttr(fields));
    }
    // f: the replicated input of a column-parallel layer, once per value,
    // before the first of its layers (merged regions list their layers out
    // of program order: separate Q, K, V projections of one input).
    for (DotGeneralOp dot : region.columns) {
      Value &copy = copies[dot.getLhs()];
      if (!copy) {
        builder.setInsertionPoint(dot);
        copy = TpCopyOp::create(builder, dot.getLoc(), dot.getLhs(), grid,
                                ArrayRef<int16_t>{kTpAxis});
      } else if (dot->isBeforeInBlock(copy.getDefiningOp())) {
        copy.getDefiningOp()->moveBefore(dot);
      }
      dot.getLhsMutable().assign(copy);
    }
    // g: the partial sums of a row-parallel layer.
    for (auto [dot, cut] : region.rows) {
      builder.setInsertionPointAfter(dot);
      auto sum = shard::AllReduceOp::create(builder, dot.getLoc(),
                                            dot.getType(), grid,
                                            ArrayRef<int16_t>{kTpAxis}, dot);
      dot.getResult().replaceAllUsesExcept(sum, sum);
    }
  }
  func.setType(FunctionType::get(
      ctx, func.getBody().front().getArgumentTypes(), func.getResultTypes()));
}


//===----------------------------------------------------------------------===//
// Vocabulary parallelism: the token embedding, the LM head, the loss
//===----------------------------------------------------------------------===//

/// An LM head `x @ W` (or `x @ transpose(W)`) whose logits reach a
/// `loom.cross_entropy` through reshapes that keep the class dimension.
struct LmHead {
  DotGeneralOp dot;
  SmallVector<ReshapeOp> reshapes;
  CrossEntropyOp loss;
};

/// A vocabulary table `W` cut along its vocabulary dimension `dim` into
/// `tp` parts of `local` rows (the last rank's may end in padding).
struct VocabTable {
  BlockArgument arg;
  int64_t dim = -1;
  int64_t vocab = 0, padded = 0, local = 0;
  SmallVector<GatherOp> embeddings;
  SmallVector<LmHead> heads;
};

/// Megatron-LM's vocabulary-parallel embedding and cross-entropy (see
/// Passes.td): finds the tables on the original function, rewrites after
/// the blocks have been partitioned.
class VocabPartitioner {
public:
  VocabPartitioner(func::FuncOp func, int64_t tp, StringRef grid)
      : func(func), tp(tp), grid(grid) {}

  /// Finds the tables whose every use is an embedding lookup or an LM head
  /// and that no block uses.
  void analyze(Partitioner &blocks);
  bool empty() const { return tables.empty(); }
  void rewrite();

private:
  /// Whether `value` is computed from a function argument that is not a
  /// parameter (token ids, not positions computed from constants).
  bool dependsOnInput(Value value);
  /// The head whose matmul is `dot`, if its logits reach a cross-entropy.
  std::optional<LmHead> matchHead(DotGeneralOp dot, int64_t vocabDim);
  /// `loom.grid_index * local`, the first vocabulary row of this rank.
  Value rangeStart(ImplicitLocOpBuilder &b, int64_t local);
  void rewriteEmbedding(VocabTable &table, GatherOp gather);
  void rewriteHead(VocabTable &table, LmHead &head);
  Value allReduce(ImplicitLocOpBuilder &b, Value v,
                  shard::ReductionKind kind = shard::ReductionKind::Sum) {
    return shard::AllReduceOp::create(b, v.getType(), grid,
                                      ArrayRef<int16_t>{kTpAxis}, v, kind);
  }

  func::FuncOp func;
  int64_t tp;
  StringRef grid;
  SmallVector<VocabTable> tables;
  llvm::DenseMap<int64_t, Value> starts;
  Value rank;
};

bool VocabPartitioner::dependsOnInput(Value value) {
  SmallVector<Value> worklist{value};
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == &func.getBody().front() &&
          !func.getArgAttr(arg.getArgNumber(), LoomDialect::getParamAttrName()))
        return true;
      continue;
    }
    if (Operation *def = v.getDefiningOp())
      worklist.append(def->operand_begin(), def->operand_end());
  }
  return false;
}

std::optional<LmHead> VocabPartitioner::matchHead(DotGeneralOp dot,
                                                  int64_t vocabDim) {
  int64_t contracted = getLinearContractedDim(func, dot);
  if (contracted < 0 || 1 - contracted != vocabDim)
    return std::nullopt;
  LmHead head{dot, {}, {}};
  Value logits = dot.getResult();
  auto classes = cast<RankedTensorType>(logits.getType()).getShape().back();
  while (logits.hasOneUse()) {
    Operation *user = *logits.getUsers().begin();
    if (auto reshape = dyn_cast<ReshapeOp>(user)) {
      auto type = cast<RankedTensorType>(reshape.getType());
      if (!type.hasStaticShape() || type.getRank() < 1 ||
          type.getShape().back() != classes)
        return std::nullopt;
      head.reshapes.push_back(reshape);
      logits = reshape.getResult();
      continue;
    }
    auto loss = dyn_cast<CrossEntropyOp>(user);
    if (!loss || loss.getLogits() != logits)
      return std::nullopt;
    head.loss = loss;
    return head;
  }
  return std::nullopt;
}

void VocabPartitioner::analyze(Partitioner &blocks) {
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!getParam(func, arg) || !type || type.getRank() != 2 ||
        !type.hasStaticShape() || arg.use_empty())
      continue;
    VocabTable table;
    table.arg = arg;
    bool ok = true;
    auto agree = [&](int64_t dim) {
      ok &= table.dim < 0 || table.dim == dim;
      table.dim = dim;
    };
    for (Operation *user : arg.getUsers()) {
      if (!ok)
        break;
      if (blocks.inBlock(user)) {
        ok = false;
      } else if (auto gather = dyn_cast<GatherOp>(user)) {
        ok = gather.getData() == arg && dependsOnInput(gather.getIndices());
        agree(static_cast<int64_t>(gather.getAxis()));
        table.embeddings.push_back(gather);
      } else if (auto transpose = dyn_cast<TransposeOp>(user)) {
        ok = transpose.getPermutation() == ArrayRef<int64_t>{1, 0};
        for (Operation *next : transpose->getUsers()) {
          auto dot = dyn_cast<DotGeneralOp>(next);
          std::optional<LmHead> head;
          if (dot && dot.getRhs() == transpose.getResult())
            head = matchHead(dot, 0);
          ok &= head.has_value() && !blocks.inBlock(dot);
          if (!ok)
            break;
          agree(0);
          table.heads.push_back(*head);
        }
      } else if (auto dot = dyn_cast<DotGeneralOp>(user)) {
        int64_t contracted = getLinearContractedDim(func, dot);
        std::optional<LmHead> head;
        if (dot.getRhs() == arg && contracted >= 0)
          head = matchHead(dot, 1 - contracted);
        ok = head.has_value();
        if (ok) {
          agree(1 - contracted);
          table.heads.push_back(*head);
        }
      } else {
        ok = false;
      }
    }
    if (!ok || table.dim < 0)
      continue;
    table.vocab = type.getDimSize(table.dim);
    table.local = (table.vocab + tp - 1) / tp;
    table.padded = table.local * tp;
    tables.push_back(std::move(table));
  }
}

Value VocabPartitioner::rangeStart(ImplicitLocOpBuilder &b, int64_t local) {
  Value &start = starts[local];
  if (start)
    return start;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  auto i64 = RankedTensorType::get({}, b.getI64Type());
  if (!rank)
    rank = GridIndexOp::create(b, i64, grid, ArrayRef<int16_t>{kTpAxis});
  b.setInsertionPointAfter(rank.getDefiningOp());
  Value size = ConstantOp::create(
      b, cast<ElementsAttr>(DenseElementsAttr::get(
             i64, b.getIntegerAttr(b.getI64Type(), local))));
  start = MulOp::create(b, rank, size);
  return start;
}

namespace vocab {
Value splat(ImplicitLocOpBuilder &b, RankedTensorType type, Attribute value) {
  return ConstantOp::create(
      b, cast<ElementsAttr>(DenseElementsAttr::get(type, value)));
}
Value splatInt(ImplicitLocOpBuilder &b, RankedTensorType type, int64_t v) {
  return splat(b, type, b.getIntegerAttr(type.getElementType(), v));
}
Value splatFloat(ImplicitLocOpBuilder &b, RankedTensorType type, double v) {
  return splat(b, type, b.getFloatAttr(type.getElementType(), v));
}
SmallVector<int64_t> range(int64_t from, int64_t to) {
  SmallVector<int64_t> dims;
  for (int64_t d = from; d < to; ++d)
    dims.push_back(d);
  return dims;
}
/// `x` as i64 (token ids and labels may be i32).
Value toI64(ImplicitLocOpBuilder &b, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getElementType().isInteger(64))
    return x;
  return ConvertOp::create(b, type.clone(b.getI64Type()), x);
}
} // namespace vocab

void VocabPartitioner::rewriteEmbedding(VocabTable &table, GatherOp gather) {
  // rows = W_r[clamp(ids - start)], zero where the id is another rank's;
  // the sum over the ranks is the full lookup.
  ImplicitLocOpBuilder b(gather.getLoc(), gather);
  Value start = rangeStart(b, table.local);
  Value ids = vocab::toI64(b, gather.getIndices());
  auto idsType = cast<RankedTensorType>(ids.getType());
  Value local = SubOp::create(
      b, ids, BroadcastOp::create(b, idsType, start, ArrayRef<int64_t>{}));
  Value atLeast0 = MaxOp::create(b, local, vocab::splatInt(b, idsType, 0));
  Value clamped =
      MinOp::create(b, atLeast0, vocab::splatInt(b, idsType, table.local - 1));
  Value mine = CompareOp::create(b, ComparisonDirection::eq, clamped, local);
  Value rows = GatherOp::create(b, table.arg, clamped, gather.getAxis());
  auto rowsType = cast<RankedTensorType>(rows.getType());
  auto axis = static_cast<int64_t>(gather.getAxis());
  Value mask = BroadcastOp::create(
      b, rowsType.clone(b.getI1Type()), mine,
      vocab::range(axis, axis + idsType.getRank()));
  Value kept = SelectOp::create(b, mask, rows,
                                vocab::splatFloat(b, rowsType, 0.0));
  gather.getResult().replaceAllUsesWith(allReduce(b, kept));
  gather.erase();
}

void VocabPartitioner::rewriteHead(VocabTable &table, LmHead &head) {
  DotGeneralOp dot = head.dot;
  ImplicitLocOpBuilder b(dot.getLoc(), dot);
  // f on the replicated hidden states; W used directly (a transpose folded).
  dot.getLhsMutable().assign(
      TpCopyOp::create(b, dot.getLhs(), grid, ArrayRef<int16_t>{kTpAxis}));
  if (auto transpose = dot.getRhs().getDefiningOp<TransposeOp>()) {
    dot.getRhsMutable().assign(transpose.getOperand());
    dot.setRhsContractingDims({1 - dot.getRhsContractingDims()[0]});
    if (transpose->use_empty())
      transpose->erase();
  }
  auto localType = [&](Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.back() = table.local;
    v.setType(type.clone(shape));
  };
  localType(dot.getResult());
  for (ReshapeOp reshape : head.reshapes)
    localType(reshape.getResult());

  CrossEntropyOp loss = head.loss;
  b.setLoc(loss.getLoc());
  b.setInsertionPoint(loss);
  Value logits = loss.getLogits();
  auto logitsType = cast<RankedTensorType>(logits.getType());
  int64_t classDim = logitsType.getRank() - 1;
  SmallVector<int64_t> sampleDims = vocab::range(0, classDim);
  auto i64Type = logitsType.clone(b.getI64Type());
  Value labels = vocab::toI64(b, loss.getLabels());
  auto labelsType = cast<RankedTensorType>(labels.getType());
  auto sampleType = labelsType.clone(logitsType.getElementType());
  Value start = rangeStart(b, table.local);
  Value column = IotaOp::create(b, i64Type, classDim);

  // The padding columns (global index >= vocab) are -inf: exp gives 0.
  Value live = logits;
  if (table.padded != table.vocab) {
    Value global = AddOp::create(
        b, column, BroadcastOp::create(b, i64Type, start, ArrayRef<int64_t>{}));
    Value real = CompareOp::create(b, ComparisonDirection::lt, global,
                                   vocab::splatInt(b, i64Type, table.vocab));
    live = SelectOp::create(
        b, real, logits,
        vocab::splatFloat(b, logitsType,
                          -std::numeric_limits<double>::infinity()));
  }
  // logsumexp: the global max (a constant for the gradient) and the global
  // sum of exp(logits - max).
  auto max = shard::AllReduceOp::create(
      b, sampleType, grid, ArrayRef<int16_t>{kTpAxis},
      ReduceMaxOp::create(b, live, ArrayRef<int64_t>{classDim}, false),
      shard::ReductionKind::Max);
  max->setAttr(LoomDialect::getStopGradientAttrName(), b.getUnitAttr());
  Value shifted =
      SubOp::create(b, live, BroadcastOp::create(b, logitsType, max, sampleDims));
  Value sum = allReduce(b, ReduceSumOp::create(b, ExpOp::create(b, shifted),
                                                ArrayRef<int64_t>{classDim},
                                                false));
  Value lse = AddOp::create(b, LogOp::create(b, sum), max);
  // The target logit: on the rank whose range holds the label.
  Value localLabels = SubOp::create(
      b, labels,
      BroadcastOp::create(b, labelsType, start, ArrayRef<int64_t>{}));
  Value hit = CompareOp::create(
      b, ComparisonDirection::eq, column,
      BroadcastOp::create(b, i64Type, localLabels, sampleDims));
  Value target = allReduce(
      b, ReduceSumOp::create(
             b,
             SelectOp::create(b, hit, logits,
                              vocab::splatFloat(b, logitsType, 0.0)),
             ArrayRef<int64_t>{classDim}, false));
  Value perSample = SubOp::create(b, lse, target);

  // The reduction of loom.cross_entropy.
  SmallVector<int64_t> all = vocab::range(0, labelsType.getRank());
  Value valid;
  if (std::optional<uint64_t> ignore = loss.getIgnoreIndex()) {
    valid = CompareOp::create(
        b, ComparisonDirection::ne, labels,
        vocab::splatInt(b, labelsType, static_cast<int64_t>(*ignore)));
    perSample = SelectOp::create(b, valid, perSample,
                                 vocab::splatFloat(b, sampleType, 0.0));
  }
  Value result = perSample;
  auto reduce = [&](auto op, Value x) -> Value {
    if (all.empty())
      return x;
    return decltype(op)::create(b, x, all, false);
  };
  switch (loss.getReduction()) {
  case LossReduction::none:
    break;
  case LossReduction::sum:
    result = reduce(ReduceSumOp(), perSample);
    break;
  case LossReduction::mean:
    if (valid) {
      Value total = reduce(ReduceSumOp(), perSample);
      Value count =
          reduce(ReduceSumOp(), ConvertOp::create(b, sampleType, valid));
      result = DivOp::create(b, total, count);
    } else
      result = reduce(ReduceMeanOp(), perSample);
    break;
  }
  loss.getResult().replaceAllUsesWith(result);
  loss.erase();
}

void VocabPartitioner::rewrite() {
  Builder b(func.getContext());
  for (VocabTable &table : tables) {
    auto type = cast<RankedTensorType>(table.arg.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[table.dim] = table.local;
    table.arg.setType(type.clone(shape));
    SmallVector<NamedAttribute> fields{
        b.getNamedAttr("dim", b.getI64IntegerAttr(table.dim)),
        b.getNamedAttr("parts", b.getI64IntegerAttr(tp))};
    if (table.padded != table.vocab)
      fields.push_back(
          b.getNamedAttr("padded", b.getI64IntegerAttr(table.padded)));
    func.setArgAttr(table.arg.getArgNumber(), LoomDialect::getShardAttrName(),
                    b.getDictionaryAttr(fields));
    for (GatherOp gather : table.embeddings)
      rewriteEmbedding(table, gather);
    for (LmHead &head : table.heads)
      rewriteHead(table, head);
  }
  func.setType(FunctionType::get(func.getContext(),
                                 func.getBody().front().getArgumentTypes(),
                                 func.getResultTypes()));
}

struct TensorParallel
    : public mlir::loom::impl::LoomTensorParallelBase<TensorParallel> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    auto fail = [&]() {
      return emitError(UnknownLoc::get(context)) << "loom-tensor-parallel: ";
    };
    if (tp < 1)
      return fail() << "tp must be >= 1 (option tp=, the number of "
                       "tensor-parallel ranks), got "
                    << tp.getValue();
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(function);
    if (!func) {
      module.emitError() << "loom-tensor-parallel: function '" << function
                         << "' (option function=) is not in the module";
      return signalPassFailure();
    }
    if (func.isExternal() || !func.getBody().hasOneBlock()) {
      func.emitError() << "loom-tensor-parallel: @" << func.getSymName()
                       << " must have a body of one block";
      return signalPassFailure();
    }
    FailureOr<::loom::Mesh> mesh = getMesh(module);
    if (failed(mesh))
      return signalPassFailure();
    if (mesh->tp > 1) {
      func.emitError() << "loom-tensor-parallel: the module is already "
                          "tensor-parallel (@"
                       << kMeshGridName << " has " << mesh->tp
                       << " ranks on its tp axis)";
      return signalPassFailure();
    }
    if (tp == 1)
      return;
    Partitioner partitioner(func, tp, kMeshGridName);
    if (failed(partitioner.analyze()))
      return signalPassFailure();
    VocabPartitioner vocab(func, tp, kMeshGridName);
    vocab.analyze(partitioner);
    if (partitioner.empty() && vocab.empty()) {
      func.emitWarning() << "loom-tensor-parallel: @" << func.getSymName()
                         << " has no attention or MLP block, embedding or "
                            "LM head to partition";
      return;
    }
    if (failed(getOrCreateMeshGrid(module, ::loom::MeshAxis::Tp, tp,
                                   "loom-tensor-parallel")))
      return signalPassFailure();
    partitioner.rewrite();
    vocab.rewrite();
  }
};
} // namespace
