//===- TensorParallel.cpp - Megatron-style tensor parallelism -------------===//
//
// Implements -loom-tensor-parallel (see Passes.td and docs/training.md): the
// attention and MLP blocks of a forward function are partitioned over the
// ranks of the tp axis of @mesh as in Megatron-LM. Column-parallel linear
// layers start a block, row-parallel ones end it with a shard.all_reduce;
// the sharded dimension is followed through the ops in between in one sweep
// in program order, each op saying how through TensorPartitionInterface,
// and a candidate block whose sharded values escape it is left alone. The
// vocabulary tables are -loom-vocab-parallel's (VocabParallel.cpp).
//
//===----------------------------------------------------------------------===//

#include "TensorParallelUtils.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "loom-tensor-parallel"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMTENSORPARALLEL
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::tensor_parallel;

namespace {

/// How a value of a block is cut over the ranks (see ShardedDim), and the
/// candidate block it belongs to.
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

/// An op that splits the sharded dimension into heads (PartitionRule's
/// splitsDim), and its sharded result dimension.
struct HeadsSplit {
  Operation *op;
  int64_t dim;
};

/// A candidate block (several candidates that meet are merged).
struct Region {
  bool escapes = false;
  /// Whether it escapes for another reason than cut values read outside
  /// it (a weight read elsewhere): then it cannot gather them.
  bool escapesOtherwise = false;
  /// A lone linear layer whose cut output is gathered where it leaves the
  /// block (see gathersOutput()).
  bool gathered = false;
  /// The cut values read outside the candidate.
  llvm::SetVector<Value> leaving;
  /// What made the candidate escape (the first reason found), for
  /// loom-report-sharding.
  std::string stoppedBy;
  SmallVector<DotGeneralOp> columns;
  SmallVector<std::pair<DotGeneralOp, int64_t>> rows; // and W's cut dim
  SmallVector<ParamSlice> params;
  SmallVector<HeadsSplit> headsSplits;
  /// Operands (op, index) to replace by a copy of the local shape: values
  /// uniform along the sharded dimension (splat constants, broadcasts that
  /// do not produce it).
  SmallVector<std::pair<Operation *, unsigned>> localized;
};

class Partitioner {
public:
  Partitioner(func::FuncOp func, int64_t tp, StringRef grid)
      : func(func), tp(tp), grid(grid) {}

  /// Finds the blocks; false after reporting an error.
  LogicalResult analyze();
  /// Whether a block was found.
  bool empty() const { return live.empty(); }
  void rewrite();
  /// Records on the function (kTpReplicatedAttrName) why each parameter of
  /// a candidate that did not become a block stays replicated.
  void recordReplicated();

private:
  unsigned find(unsigned region) {
    while (parent[region] != region)
      region = parent[region] = parent[parent[region]];
    return region;
  }
  unsigned merge(unsigned a, unsigned b);
  /// Marks the candidate of `region` as escaping, because of `why`;
  /// `byValue`: a cut value is read outside it.
  void stop(unsigned region, const Twine &why, bool byValue = false) {
    Region &root = regions[find(region)];
    root.escapes = true;
    root.escapesOtherwise |= !byValue;
    if (root.stoppedBy.empty())
      root.stoppedBy = why.str();
  }
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
  /// Cuts the ops that read one layer of a stacked parameter (`layer`, see
  /// getParam) along the parameter's dimension `dim`; the value they give
  /// (null when the parameter is read directly).
  Value shardLayer(ParamLayer layer, int64_t dim, int64_t groups,
                   unsigned region);
  /// Gives `value` and the values it was derived from `groups` groups.
  bool regroup(Value value, int64_t groups);
  /// Applies the partition rule of `op` (TensorPartitionInterface), some of
  /// whose operands are sharded; false when the op cannot be in a block.
  bool visit(Operation *op, unsigned region);
  /// A row-parallel linear layer: the only op with partial sums that a block
  /// completes (with an all-reduce).
  /// `rhsDim`: the rhs dimension contracted with the lhs's cut one.
  bool visitRowParallel(Operation *op, int64_t rhsDim, unsigned region);
  /// Makes the replicated operand `index` of `op` sharded as `want`: from a
  /// producer uniform along the dimension (rebuilt in the local shape) or a
  /// bias parameter broadcast along it.
  bool followReplicated(Operation *op, unsigned index, ShardedDim want,
                        unsigned region, SmallVectorImpl<Value> &from);
  bool visitBias(Operation *head, ShardedDim want, unsigned region,
                 SmallVectorImpl<Value> &from);
  LogicalResult check(Region &region);
  /// Whether the escaping candidate `root` is a lone column-parallel
  /// linear layer (no row-parallel one, one cut value leaving it, on one
  /// group, read outside only by norms) whose weight is worth its two
  /// all-reduces: at least 1 % of the parameters' elements (the share
  /// loom-report-sharding warns about). Its output is then gathered where
  /// it leaves (Megatron-LM's ColumnParallelLinear with gather_output).
  bool gathersOutput(unsigned root);
  /// The cut `value` of a gathered block made whole for `uses` outside it:
  /// this rank's columns looked up at every index (zero elsewhere), summed
  /// over the ranks.
  void gather(Value value, int64_t dim, ArrayRef<OpOperand *> uses);
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
  /// Why the last visit() refused its op.
  std::string refusal;
  RankStarts starts{func, grid};
};

unsigned Partitioner::merge(unsigned a, unsigned b) {
  a = find(a);
  b = find(b);
  if (a == b)
    return a;
  Region &into = regions[a], &from = regions[b];
  into.escapes |= from.escapes;
  into.escapesOtherwise |= from.escapesOtherwise;
  into.leaving.insert(from.leaving.begin(), from.leaving.end());
  if (into.stoppedBy.empty())
    into.stoppedBy = std::move(from.stoppedBy);
  into.columns.append(from.columns);
  into.rows.append(from.rows);
  into.params.append(from.params);
  into.headsSplits.append(from.headsSplits);
  into.localized.append(from.localized);
  from = Region();
  parent[b] = a;
  return a;
}

Value Partitioner::shardLayer(ParamLayer layer, int64_t dim,
                              int64_t groups, unsigned region) {
  if (!layer.slice)
    return Value();
  Value sliced = layer.slice.getResult();
  shard(layer.slice, sliced, dim, groups, region);
  if (!layer.reshape)
    return sliced;
  shard(layer.reshape, layer.reshape.getResult(), dim - 1, groups, region,
        {sliced});
  return layer.reshape.getResult();
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

bool Partitioner::visit(Operation *op, unsigned region) {
  auto partition = dyn_cast<TensorPartitionInterface>(op);
  if (!partition) {
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": no partition rule: " << *op
                            << "\n");
    refusal = describeOp(op) + " has no partition rule";
    return false;
  }
  SmallVector<std::optional<ShardedDim>> in;
  for (Value operand : op->getOperands()) {
    auto it = state.find(operand);
    in.push_back(it == state.end() ? std::nullopt
                                   : std::optional<ShardedDim>(ShardedDim{
                                         it->second.dim, it->second.groups}));
  }
  FailureOr<PartitionRule> rule = partition.getPartitionRule(in);
  if (failed(rule)) {
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": the rule refuses: " << *op
                            << "\n");
    refusal = "the partition rule of " + describeOp(op) +
              " refuses the cut of its operands";
    return false;
  }
  if (rule->partialSum)
    return visitRowParallel(
        op, rule->operands.size() > 1 && rule->operands[1]
                ? rule->operands[1]->dim
                : -1,
        region);
  refusal = describeOp(op) + " needs its operands cut in another way";
  if (rule->operands.size() != in.size() ||
      rule->results.size() != op->getNumResults())
    return false;
  std::optional<ShardedDim> out;
  for (const std::optional<ShardedDim> &result : rule->results)
    if (result && !out)
      out = result;

  // Sharded operands, regrouped where the op needs other groups; those with
  // the results' groups are what the results are derived from.
  SmallVector<Value> from;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    const std::optional<ShardedDim> &want = rule->operands[index];
    if (!in[index])
      continue;
    if (!want || want->dim != in[index]->dim ||
        (want->groups != in[index]->groups && !regroup(operand, want->groups)))
      return false;
    if (out && want->groups == out->groups)
      from.push_back(operand);
  }
  // Replicated operands that the op needs sharded.
  for (unsigned index = 0, e = in.size(); index < e; ++index)
    if (!in[index] && rule->operands[index] &&
        !followReplicated(op, index, *rule->operands[index], region, from)) {
      refusal = describeOp(op) + " combines the cut values with operand #" +
                std::to_string(index) +
                ", which is neither cut nor uniform along the cut dimension";
      return false;
    }

  opRegion[op] = region;
  for (auto [result, sharding] : llvm::zip(op->getResults(), rule->results))
    if (sharding)
      shard(op, result, sharding->dim, sharding->groups, region, from);
  if (rule->splitsDim && out)
    regions[region].headsSplits.push_back({op, out->dim});
  return true;
}

bool Partitioner::visitRowParallel(Operation *op, int64_t rhsDim,
                                   unsigned region) {
  auto dot = dyn_cast<DotGeneralOp>(op);
  ParamLayer layer;
  int64_t cut =
      dot && rhsDim >= 0 ? getRowParallelDim(func, dot, rhsDim, layer) : -1;
  if (cut < 0) {
    refusal = describeOp(op) + " sums over the cut dimension but is not a "
                               "row-parallel linear layer (a weight "
                               "parameter, rank 2 or contracted on its "
                               "leading dimensions)";
    return false;
  }
  opRegion[op] = region;
  TransposeOp transpose;
  BlockArgument weight =
      getLinearWeight(func, dot.getRhs(), &transpose, &layer);
  if (transpose)
    opRegion[transpose] = region;
  shardLayer(layer, cut, 1, region);
  regions[region].rows.push_back({dot, cut});
  regions[region].params.push_back({weight, cut, Value()});
  return true;
}

bool Partitioner::followReplicated(Operation *op, unsigned index,
                                   ShardedDim want, unsigned region,
                                   SmallVectorImpl<Value> &from) {
  Operation *def = op->getOperand(index).getDefiningOp();
  auto producer = dyn_cast_or_null<TensorPartitionInterface>(def);
  std::optional<bool> uniform =
      producer ? producer.isUniformAlong(want.dim) : std::nullopt;
  if (!uniform)
    return false;
  if (*uniform) {
    regions[region].localized.push_back({op, index});
    return true;
  }
  return visitBias(def, want, region, from);
}

/// A bias added to a sharded value: a `loom.param` expanded along the
/// sharded dimension by `head` (ONNX's Add of a bias: `broadcast %b,
/// dims = [d]`), possibly after other expansions (JAX's `broadcast_in_dim`
/// to `[1, .., 1, N]`, or Flax's reshape to it, then a broadcast to the
/// full shape); rank 1, or more (Flax's DenseGeneral bias [heads,
/// head_dim]), the parameter cut on the dimension the chain maps the cut
/// one to. Every op of the chain is sharded, the parameter cut on its
/// dimension.
bool Partitioner::visitBias(Operation *head, ShardedDim want, unsigned region,
                            SmallVectorImpl<Value> &from) {
  // From `head` back to the parameter: each op and the dimension of its
  // result that is the bias's.
  SmallVector<std::pair<Operation *, int64_t>> chain;
  int64_t dim = want.dim;
  Value value = head->getResult(0);
  ParamLayer layer;
  BlockArgument bias;
  while (!(bias = getParam(func, value, &layer))) {
    Operation *def = value.getDefiningOp();
    auto link = dyn_cast_or_null<TensorPartitionInterface>(def);
    std::optional<int64_t> operandDim =
        link ? link.getExpandedOperandDim(dim) : std::nullopt;
    if (!operandDim)
      return false;
    chain.push_back({def, dim});
    dim = *operandDim;
    value = def->getOperand(0);
  }
  dim = layer.paramDim(dim);
  Value inner = shardLayer(layer, dim, want.groups, region);
  for (auto [op, resultDim] : llvm::reverse(chain)) {
    SmallVector<Value, 1> parentsOf;
    if (inner)
      parentsOf.push_back(inner);
    shard(op, op->getResult(0), resultDim, want.groups, region, parentsOf);
    inner = op->getResult(0);
  }
  regions[region].params.push_back({bias, dim, head->getResult(0)});
  from.push_back(head->getResult(0));
  return true;
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
      ParamLayer layer;
      int64_t cut = dot ? getColumnParallelDim(func, dot, layer) : -1;
      if (cut < 0)
        continue;
      unsigned fresh = newRegion();
      // The output features start after the lhs's kept dimensions.
      auto lhsType = cast<RankedTensorType>(dot.getLhs().getType());
      shard(dot, dot.getResult(), lhsType.getRank() - 1, 1, fresh);
      TransposeOp transpose;
      BlockArgument weight =
          getLinearWeight(func, dot.getRhs(), &transpose, &layer);
      if (transpose)
        opRegion[transpose] = fresh;
      shardLayer(layer, cut, 1, fresh);
      regions[fresh].columns.push_back(dot);
      regions[fresh].params.push_back({weight, cut, dot.getResult()});
      continue;
    }
    if (!visit(&op, *region))
      stop(*region, refusal, /*byValue=*/true);
  }

  // The layers of a stacked parameter (or the layers sharing a weight) are
  // cut alike: their candidates become one, which escapes if any does.
  llvm::DenseMap<BlockArgument, unsigned> firstReader;
  SmallVector<std::pair<unsigned, unsigned>> sharing;
  for (unsigned i = 0, e = regions.size(); i < e; ++i)
    for (const ParamSlice &param : regions[i].params)
      if (auto [it, fresh] = firstReader.try_emplace(param.arg, i); !fresh)
        sharing.push_back({it->second, i});
  for (auto [a, b] : sharing)
    merge(a, b);

  // A block keeps its sharded values and parameters to itself.
  for (auto &[value, sharding] : state) {
    unsigned root = find(sharding.region);
    sharding.region = root;
    for (Operation *user : value.getUsers()) {
      auto it = opRegion.find(user);
      if (it == opRegion.end() || find(it->second) != root) {
        stop(root,
             "a cut value reaches " +
                 (isa<func::ReturnOp>(user)
                      ? std::string("the function's results")
                      : describeOp(user)) +
                 " outside the block",
             /*byValue=*/true);
        regions[root].leaving.insert(value);
      }
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
    llvm::SmallDenseMap<BlockArgument, int64_t> cutDim;
    for (const ParamSlice &param : region.params)
      if (auto [it, fresh] = cutDim.try_emplace(param.arg, param.dim);
          !fresh && it->second != param.dim)
        stop(i, "the weight " + getParamKey(func, param.arg.getArgNumber()) +
                    " is cut on dimension " + std::to_string(it->second) +
                    " by one layer and on dimension " +
                    std::to_string(param.dim) + " by another");
    for (const ParamSlice &param : region.params)
      for (Operation *user : param.arg.getUsers()) {
        if (!inRegion(user))
          stop(i, "the weight is also read by " + describeOp(user) +
                      " outside the block");
        // The transpose of a weight is folded into its layers: it may feed
        // no other op.
        else if (isa<TransposeOp>(user) &&
                 !llvm::all_of(user->getUsers(), inRegion))
          stop(i, "the weight's transpose " + describeOp(user) +
                      " is also read outside the block");
      }
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": candidate " << i << ": "
                            << region.columns.size() << " column and "
                            << region.rows.size() << " row layers, "
                            << (region.escapes ? "escapes" : "contained")
                            << "\n");
    if (!region.escapes && region.rows.empty())
      region.stoppedBy = "no row-parallel linear layer ends the block";
    region.gathered = gathersOutput(i);
    if (!region.gathered && (region.escapes || region.rows.empty()))
      continue;
    if (failed(check(region)))
      return failure();
    live.push_back(i);
  }
  return success();
}

bool Partitioner::gathersOutput(unsigned root) {
  Region &region = regions[root];
  if (!region.escapes || region.escapesOtherwise || !region.rows.empty() ||
      region.columns.size() != 1 || region.leaving.size() != 1 ||
      !region.headsSplits.empty())
    return false;
  for (auto &[value, sharding] : state)
    if (sharding.region == root && sharding.groups != 1)
      return false;
  auto elements = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getNumElements();
  };
  int64_t total = 0;
  for (BlockArgument arg : func.getBody().front().getArguments())
    if (getParam(func, arg))
      total += elements(arg);
  // What reads it outside: only norms (BERT's MLM transform, a dense
  // before a LayerNorm). Logits that reach something else stay whole: their
  // gather would cost far more than the weight it saves.
  Value leaving = region.leaving.front();
  if (!llvm::all_of(leaving.getUsers(), [&](Operation *user) {
        auto it = opRegion.find(user);
        return (it != opRegion.end() && find(it->second) == root) ||
               isa<LayerNormOp, RmsNormOp>(user);
      }))
    return false;
  BlockArgument weight =
      getLinearWeight(func, region.columns.front().getRhs());
  if (!weight)
    return false;
  if (elements(weight) * 100 >= total)
    return true;
  region.stoppedBy =
      "it is a lone linear layer before a norm, and a weight of under 1 % of "
      "the parameters is not worth the two all-reduces that gathering its "
      "output costs";
  return false;
}

void Partitioner::gather(Value value, int64_t dim,
                         ArrayRef<OpOperand *> uses) {
  Operation *def = value.getDefiningOp();
  ImplicitLocOpBuilder b(def->getLoc(), def->getBlock(),
                         std::next(def->getIterator()));
  auto local = cast<RankedTensorType>(value.getType());
  int64_t whole = local.getDimSize(dim) * tp;
  Value columns = IotaOp::create(
      b, RankedTensorType::get({whole}, b.getI64Type()), 0);
  Value mine = buildLocalLookup(b, value, columns,
                                starts.get(local.getDimSize(dim)),
                                local.getDimSize(dim), dim);
  Value full = shard::AllReduceOp::create(b, mine.getType(), grid,
                                          ArrayRef<int16_t>{kTpAxis}, mine);
  for (OpOperand *use : uses)
    use->set(full);
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
    int64_t heads =
        cast<RankedTensorType>(split.op->getResult(0).getType())
            .getDimSize(split.dim);
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

void Partitioner::recordReplicated() {
  llvm::SmallDenseSet<unsigned> isLive(live.begin(), live.end());
  SmallVector<NamedAttribute> reasons;
  llvm::StringSet<> named;
  for (unsigned i = 0, e = regions.size(); i < e; ++i) {
    if (find(i) != i || isLive.contains(i))
      continue;
    for (const ParamSlice &param : regions[i].params) {
      std::string key = getParamKey(func, param.arg.getArgNumber());
      if (!named.insert(key).second)
        continue;
      reasons.push_back(NamedAttribute(
          StringAttr::get(func.getContext(), key),
          StringAttr::get(func.getContext(), regions[i].stoppedBy)));
    }
  }
  if (reasons.empty())
    func->removeAttr(kTpReplicatedAttrName);
  else
    func->setAttr(kTpReplicatedAttrName,
                  DictionaryAttr::get(func.getContext(), reasons));
}

void Partitioner::rewrite() {
  llvm::SmallDenseSet<unsigned> isLive(live.begin(), live.end());
  MLIRContext *ctx = func.getContext();
  OpBuilder builder(ctx);

  // The uses outside a gathered block of the cut values leaving it.
  SmallVector<std::pair<Value, SmallVector<OpOperand *>>> outside;
  for (unsigned root : live) {
    if (!regions[root].gathered)
      continue;
    for (Value value : regions[root].leaving) {
      auto &[leaving, uses] = outside.emplace_back();
      leaving = value;
      for (OpOperand &use : value.getUses()) {
        auto it = opRegion.find(use.getOwner());
        if (it == opRegion.end() || find(it->second) != root)
          uses.push_back(&use);
      }
    }
  }

  // Localized operands are rebuilt from the original types.
  llvm::SetVector<Operation *> replaced;
  for (unsigned root : live)
    for (auto [op, index] : regions[root].localized) {
      Value operand = op->getOperand(index);
      int64_t dim = state.lookup(op->getResult(0)).dim;
      builder.setInsertionPoint(op);
      Operation *def = operand.getDefiningOp();
      Value local = cast<TensorPartitionInterface>(def).buildResized(
          builder, localType(operand.getType(), dim));
      op->setOperand(index, local);
      replaced.insert(def);
    }
  // The full-shape originals that only the block used.
  for (Operation *def : replaced)
    if (def->use_empty())
      def->erase();

  // The local types; attributes that count elements along the sharded
  // dimension follow (a slice's bounds, a split's sizes).
  for (auto &[value, sharding] : state) {
    if (!isLive.contains(sharding.region))
      continue;
    value.setType(localType(value.getType(), sharding.dim));
    Operation *def = value.getDefiningOp();
    if (value == def->getResult(0))
      cast<TensorPartitionInterface>(def).partitionAttributes(sharding.dim,
                                                              tp);
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

  llvm::DenseMap<Value, Value> copies;
  llvm::SmallDenseSet<BlockArgument> cut;
  for (unsigned root : live) {
    Region &region = regions[root];
    for (const ParamSlice &param : region.params) {
      // Once, though each layer of a stacked parameter lists it.
      if (!cut.insert(param.arg).second)
        continue;
      int64_t groups =
          param.groupsOf ? state.lookup(param.groupsOf).groups : 1;
      BlockArgument arg = param.arg;
      arg.setType(localType(arg.getType(), param.dim));
      func.setArgAttr(param.arg.getArgNumber(),
                      LoomDialect::getShardAttrName(),
                      ShardAttr::get(ctx, param.dim, tp, groups,
                                     /*padded=*/0));
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
  for (auto &[value, uses] : outside)
    gather(value, state.lookup(value).dim, uses);
  func.setType(FunctionType::get(
      ctx, func.getBody().front().getArgumentTypes(), func.getResultTypes()));
}

struct TensorParallel
    : public mlir::loom::impl::LoomTensorParallelBase<TensorParallel> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    return checkTpOption(context, tp, "loom-tensor-parallel");
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto found = lookupForwardFunctionAndMesh(module, function, "loom-tensor-parallel");
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = found->first;
    ::loom::Mesh mesh = found->second;
    if (mesh.tp > 1) {
      func.emitError() << "loom-tensor-parallel: the module is already "
                          "tensor-parallel (@"
                       << kMeshGridName << " has " << mesh.tp
                       << " ranks on its tp axis)";
      return signalPassFailure();
    }
    if (tp == 1)
      return;
    Partitioner partitioner(func, tp, kMeshGridName);
    if (failed(partitioner.analyze()))
      return signalPassFailure();
    partitioner.recordReplicated();
    if (partitioner.empty()) {
      // loom-vocab-parallel, which runs next, says nothing when it finds no
      // table either: the two passes warn once.
      if (!hasVocabularyTable(func))
        func.emitWarning() << "loom-tensor-parallel: @" << func.getSymName()
                           << " has no attention or MLP block, embedding or "
                              "LM head to partition";
      return;
    }
    if (failed(getOrCreateMeshGrid(module, ::loom::MeshAxis::Tp, tp,
                                   "loom-tensor-parallel")))
      return signalPassFailure();
    partitioner.rewrite();
  }
};
} // namespace
