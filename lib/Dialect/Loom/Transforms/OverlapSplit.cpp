//===- OverlapSplit.cpp - Oases sub-batches around tensor-parallel comm ---===//
//
// Implements -loom-overlap-split (see Passes.td and docs/training.md): the
// rows of a tensor-parallel forward function are computed as K sub-batches
// whose ops are interleaved so that one sub-batch's all-reduce is in flight
// while the next one computes. Three steps on the function's one block:
//
//  1. analysis, in program order: which values are batched (and along which
//     dimension), which ops are row-wise on them (cloned K times), which op
//     mixes rows (a join: it reads the concatenation of the sub-values and
//     it and everything after it stay whole), which ops use no batched value
//     (hoisted before the split region);
//  2. the clones, segment by segment, round-robin over the sub-batches;
//  3. the joins read loom.concat's of the sub-values; the originals go.
//
//===----------------------------------------------------------------------===//

#include "TensorParallelUtils.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMOVERLAPSPLIT
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

constexpr StringLiteral kPass = "loom-overlap-split";

using Dims = ArrayRef<std::optional<ShardedDim>>;

/// A rule that gives every operand and result the one dimension `d`.
PartitionRule sameDim(Operation *op, int64_t d) {
  PartitionRule rule;
  rule.operands.assign(op->getNumOperands(), ShardedDim{d});
  rule.results.assign(op->getNumResults(), ShardedDim{d});
  return rule;
}

/// dot_general: the batch is a batching dimension of both operands (the
/// unbatched one is sliced along it) or a free dimension of one operand
/// whose partner is unbatched; a contracted batch mixes rows.
FailureOr<PartitionRule> dotGeneralRule(DotGeneralOp dot, Dims in) {
  ArrayRef<int64_t> lb = dot.getLhsBatchingDims(), rb = dot.getRhsBatchingDims();
  ArrayRef<int64_t> lc = dot.getLhsContractingDims(),
                    rc = dot.getRhsContractingDims();
  int64_t lhsRank = dot.getLhs().getType().getRank();
  // The position of free dimension `dim` among its operand's free ones.
  auto freeIndex = [](int64_t dim, ArrayRef<int64_t> batch,
                      ArrayRef<int64_t> contract) {
    int64_t index = 0;
    for (int64_t i = 0; i < dim; ++i)
      if (!llvm::is_contained(batch, i) && !llvm::is_contained(contract, i))
        ++index;
    return index;
  };
  int64_t numBatch = lb.size();
  int64_t lhsFree = lhsRank - numBatch - static_cast<int64_t>(lc.size());
  PartitionRule rule;
  rule.operands = {std::nullopt, std::nullopt};
  const std::optional<ShardedDim> &lhs = in[0], &rhs = in[1];
  auto batchingPair = [&](const std::optional<ShardedDim> &s,
                          ArrayRef<int64_t> dims) -> int64_t {
    if (!s)
      return -1;
    const auto *it = llvm::find(dims, s->dim);
    return it == dims.end() ? -1 : it - dims.begin();
  };
  int64_t lp = batchingPair(lhs, lb), rp = batchingPair(rhs, rb);
  if (lhs && llvm::is_contained(lc, lhs->dim))
    return failure();
  if (rhs && llvm::is_contained(rc, rhs->dim))
    return failure();
  if (lp >= 0 || rp >= 0) {
    int64_t p = lp >= 0 ? lp : rp;
    if ((lhs && lp != p) || (rhs && rp != p))
      return failure();
    rule.operands = {ShardedDim{lb[p]}, ShardedDim{rb[p]}};
    rule.results.push_back(ShardedDim{p});
    return rule;
  }
  if (lhs && rhs)
    return failure();
  if (lhs) {
    rule.operands[0] = lhs;
    rule.results.push_back(
        ShardedDim{numBatch + freeIndex(lhs->dim, lb, lc)});
    return rule;
  }
  rule.operands[1] = rhs;
  rule.results.push_back(ShardedDim{numBatch + lhsFree +
                                    freeIndex(rhs->dim, rb, rc)});
  return rule;
}

/// A normalisation over [axis, rank): row-wise on earlier dimensions; its
/// scale and bias are used whole.
FailureOr<PartitionRule> normRule(Operation *op, int64_t axis, Dims in) {
  if (!in[0] || in[0]->dim >= axis ||
      llvm::any_of(in.drop_front(), [](auto s) { return s.has_value(); }))
    return failure();
  PartitionRule rule;
  rule.operands.assign(op->getNumOperands(), std::nullopt);
  rule.operands[0] = in[0];
  rule.results.push_back(in[0]);
  return rule;
}

/// gather: batched indices (the table used whole), or a table batched on
/// another axis than the gathered one with unbatched indices.
FailureOr<PartitionRule> gatherRule(GatherOp gather, Dims in) {
  int64_t axis = gather.getAxis();
  int64_t indicesRank = gather.getIndices().getType().getRank();
  PartitionRule rule;
  if (in[1] && !in[0]) {
    rule.operands = {std::nullopt, in[1]};
    rule.results.push_back(ShardedDim{axis + in[1]->dim});
    return rule;
  }
  if (in[0] && !in[1] && in[0]->dim != axis) {
    int64_t d = in[0]->dim;
    rule.operands = {in[0], std::nullopt};
    rule.results.push_back(ShardedDim{d < axis ? d : d - 1 + indicesRank});
    return rule;
  }
  return failure();
}

/// reshape: the batch stays the outer factor of one result dimension (its
/// own, one it is split into, or one it is merged into with the following
/// dimensions). Size-1 dimensions before it do not move it.
FailureOr<PartitionRule> reshapeRule(ReshapeOp reshape, Dims in) {
  auto src = dyn_cast<RankedTensorType>(reshape.getOperand().getType());
  auto dst = dyn_cast<RankedTensorType>(reshape.getType());
  if (!src || !dst || !src.hasStaticShape() || !dst.hasStaticShape())
    return failure();
  int64_t d = in[0]->dim, before = 1;
  for (int64_t i = 0; i < d; ++i)
    before *= src.getDimSize(i);
  int64_t size = src.getDimSize(d), at = 0, product = 1;
  while (at < dst.getRank() &&
         (product < before ||
          (product == before && dst.getDimSize(at) == 1 && size != 1)))
    product *= dst.getDimSize(at++);
  if (product != before || at == dst.getRank())
    return failure();
  int64_t newSize = dst.getDimSize(at);
  if (newSize < size && size % newSize != 0)
    return failure();
  if (newSize > size) {
    int64_t merged = 1, i = d;
    while (i < src.getRank() && merged < newSize)
      merged *= src.getDimSize(i++);
    if (merged != newSize)
      return failure();
  }
  PartitionRule rule;
  rule.operands.push_back(in[0]);
  rule.results.push_back(ShardedDim{at});
  return rule;
}

/// The rule of `op` given its operands' batch dimensions (null: unbatched),
/// or failure when it mixes rows.
FailureOr<PartitionRule> rowWiseRule(Operation *op, Dims in) {
  return TypeSwitch<Operation *, FailureOr<PartitionRule>>(op)
      .Case<shard::AllReduceOp, TpCopyOp>(
          [&](Operation *) -> FailureOr<PartitionRule> {
            return sameDim(op, in[0]->dim);
          })
      .Case([&](DotGeneralOp dot) { return dotGeneralRule(dot, in); })
      .Case([&](LayerNormOp ln) { return normRule(op, ln.getAxis(), in); })
      .Case([&](RmsNormOp rms) { return normRule(op, rms.getAxis(), in); })
      .Case([&](GatherOp gather) { return gatherRule(gather, in); })
      .Case([&](ReshapeOp reshape) { return reshapeRule(reshape, in); })
      .Case([&](ConcatOp concat) -> FailureOr<PartitionRule> {
        std::optional<ShardedDim> shared;
        for (const std::optional<ShardedDim> &s : in)
          if (s) {
            if (shared && *shared != *s)
              return failure();
            shared = s;
          }
        if (shared->dim == static_cast<int64_t>(concat.getDim()))
          return failure();
        return sameDim(op, shared->dim);
      })
      .Case([&](CrossEntropyOp ce) -> FailureOr<PartitionRule> {
        // Per-sample losses only; a mean or sum mixes rows.
        int64_t rank = ce.getLogits().getType().getRank();
        std::optional<ShardedDim> s = in[0] ? in[0] : in[1];
        if (ce.getReduction() != LossReduction::none || s->dim >= rank - 1 ||
            (in[0] && in[1] && *in[0] != *in[1]))
          return failure();
        return sameDim(op, s->dim);
      })
      .Default([&](Operation *) -> FailureOr<PartitionRule> {
        if (auto partition = dyn_cast<TensorPartitionInterface>(op))
          return partition.getPartitionRule(in);
        return failure();
      });
}

RankedTensorType withDim(Type type, int64_t dim, int64_t size) {
  auto t = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] = size;
  return t.clone(shape);
}

/// Whether `value` has a static dimension `dim` that `k` divides.
bool divides(Value value, int64_t dim, int64_t k) {
  auto t = dyn_cast<RankedTensorType>(value.getType());
  return t && dim >= 0 && dim < t.getRank() && !t.isDynamicDim(dim) &&
         t.getDimSize(dim) % k == 0;
}

class OverlapSplitter {
public:
  OverlapSplitter(func::FuncOp func, int64_t k) : func(func), k(k) {}

  LogicalResult run() {
    if (!func.getBody().hasOneBlock())
      return func.emitError() << kPass << ": @" << func.getName()
                              << " has more than one block";
    for (BlockArgument arg : dataArguments())
      if (cast<RankedTensorType>(arg.getType()).isDynamicDim(0))
        return func.emitError()
               << kPass << ": data argument '" << nameOf(arg)
               << "' has a dynamic batch dimension; run loom-shape-inference "
                  "first";
    auto noCollective = [&]() {
      return func.emitError()
             << kPass << ": --overlap-split " << k << ": @" << func.getName()
             << " has no tensor-parallel collective (loom.tp_copy, "
                "shard.all_reduce) on its batched rows to overlap; "
                "--overlap-split needs tensor parallelism (tp > 1, after "
                "loom-tensor-parallel and loom-vocab-parallel); use "
                "--overlap-split 1 or --mesh tp=2";
    };
    // The batch dimension.
    std::string whyNotRows = unsplittableAlong(0, "rows");
    if (whyNotRows.empty()) {
      analyzeAlong(0);
      if (!hasSplitCollective())
        return noCollective();
      rewrite();
      return success();
    }
    // Else the sequence dimension, when every collective's sub-batches stay
    // independent along it (no op before the last collective mixes the
    // positions, as attention does).
    std::string whyNotSequence = unsplittableAlong(1, "positions");
    Operation *mixer = nullptr;
    if (whyNotSequence.empty()) {
      analyzeAlong(1);
      if (!hasSplitCollective())
        return noCollective();
      mixer = firstJoinBeforeACollective();
      if (!mixer) {
        rewrite();
        return success();
      }
      whyNotSequence = "'" + mixer->getName().getStringRef().str() +
                       "' mixes the sequence positions before a "
                       "tensor-parallel collective (attention does; every op "
                       "between two collectives must be independent along it)";
    }
    InFlightDiagnostic error =
        func.emitError()
        << kPass << ": --overlap-split " << k << " does not divide the batch "
        << "of data argument " << whyNotRows
        << "; every sub-batch needs the same number of rows, and the sequence "
           "dimension (1) cannot be split instead: "
        << whyNotSequence << ". Use a micro-batch that " << k
        << " divides or another --overlap-split";
    if (mixer)
      error.attachNote(mixer->getLoc()) << "this op mixes the positions";
    return error;
  }

private:
  /// The arguments that carry data (neither loom.param nor loom.state), of
  /// rank >= 1.
  SmallVector<BlockArgument> dataArguments() {
    SmallVector<BlockArgument> args;
    for (BlockArgument arg : func.getArguments()) {
      unsigned i = arg.getArgNumber();
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.getRank() == 0 ||
          func.getArgAttr(i, LoomDialect::getParamAttrName()) ||
          func.getArgAttr(i, LoomDialect::getStateAttrName()))
        continue;
      args.push_back(arg);
    }
    return args;
  }

  std::string nameOf(BlockArgument arg) {
    auto name = func.getArgAttrOfType<StringAttr>(
        arg.getArgNumber(), LoomDialect::getNameAttrName());
    return name ? name.getValue().str()
                : ("arg" + Twine(arg.getArgNumber())).str();
  }

  /// Why the data arguments cannot be cut into k parts along `dim` (whose
  /// entries are `what`), empty when they can.
  std::string unsplittableAlong(int64_t dim, StringRef what) {
    for (BlockArgument arg : dataArguments()) {
      auto type = cast<RankedTensorType>(arg.getType());
      std::string quoted = "'" + nameOf(arg) + "'";
      if (type.getRank() <= dim)
        return quoted + " has no dimension " + std::to_string(dim);
      if (type.isDynamicDim(dim))
        return quoted + " has a dynamic dimension " + std::to_string(dim);
      if (type.getDimSize(dim) % k != 0)
        return quoted + " (" + std::to_string(type.getDimSize(dim)) + " " +
               what.str() + " in dimension " + std::to_string(dim) + ")";
    }
    return "";
  }

  /// The analysis with the data arguments split along `dim`.
  void analyzeAlong(int64_t dim) {
    batchDim.clear();
    afterJoin.clear();
    rules.clear();
    pre.clear();
    split.clear();
    post.clear();
    for (BlockArgument arg : dataArguments())
      if (!arg.use_empty())
        batchDim[arg] = dim;
    analyze();
  }

  bool hasSplitCollective() {
    return llvm::any_of(split, [](Operation *op) {
      return isa<shard::AllReduceOp, TpCopyOp>(op);
    });
  }

  /// The first join (an op on split values that is not split) when a
  /// collective comes after it, else null.
  Operation *firstJoinBeforeACollective() {
    Operation *join = nullptr;
    for (Operation *op : post) {
      if (!join && llvm::any_of(op->getOperands(), [&](Value v) {
            return batchDim.count(v) && !afterJoin.contains(v);
          }))
        join = op;
      if (join && isa<shard::AllReduceOp, TpCopyOp>(op))
        return join;
    }
    return nullptr;
  }

  void analyze() {
    Block &body = func.getBody().front();
    for (Operation &op : body) {
      bool tainted = llvm::any_of(op.getOperands(), [&](Value v) {
        return afterJoin.contains(v);
      });
      SmallVector<std::optional<ShardedDim>> in;
      bool anyBatched = false;
      for (Value v : op.getOperands()) {
        auto it = batchDim.find(v);
        if (it == batchDim.end()) {
          in.push_back(std::nullopt);
          continue;
        }
        in.push_back(ShardedDim{it->second});
        anyBatched = true;
      }
      if (!anyBatched && !tainted && !op.hasTrait<::mlir::OpTrait::IsTerminator>()) {
        pre.push_back(&op);
        continue;
      }
      if (anyBatched && !tainted && isSplittable(&op, in))
        continue;
      post.push_back(&op);
      for (Value r : op.getResults())
        afterJoin.insert(r);
    }
  }

  /// Records `op` as split when it is row-wise on `in` with dimensions that
  /// k divides.
  bool isSplittable(Operation *op, Dims in) {
    if (op->getNumRegions() != 0 || op->hasTrait<::mlir::OpTrait::IsTerminator>() ||
        op->getNumResults() == 0)
      return false;
    FailureOr<PartitionRule> rule = rowWiseRule(op, in);
    if (failed(rule) || rule->partialSum ||
        rule->operands.size() != op->getNumOperands() ||
        rule->results.size() != op->getNumResults())
      return false;
    for (auto [operand, have, want] :
         llvm::zip(op->getOperands(), in, rule->operands)) {
      if (have && (!want || *want != *have))
        return false;
      if (want && (want->groups != 1 || !divides(operand, want->dim, k)))
        return false;
    }
    for (auto [result, want] : llvm::zip(op->getResults(), rule->results))
      if (!want || want->groups != 1 || !divides(result, want->dim, k))
        return false;
    for (auto [result, want] : llvm::zip(op->getResults(), rule->results))
      batchDim[result] = want->dim;
    rules[op] = *rule;
    split.push_back(op);
    return true;
  }

  void rewrite() {
    Block &body = func.getBody().front();
    Operation *terminator = body.getTerminator();
    // Ops on no batched value first, in program order.
    for (Operation *op : pre)
      op->moveBefore(terminator);

    OpBuilder b(terminator);
    maps.assign(k, IRMapping());
    // Each data argument's rows (or positions), once per sub-batch.
    for (BlockArgument arg : func.getArguments())
      if (batchDim.count(arg) && llvm::any_of(arg.getUsers(), [&](Operation *u) {
            return rules.count(u);
          }))
        for (int64_t i = 0; i < k; ++i)
          maps[i].map(arg, rowSlice(b, arg, batchDim.lookup(arg), i));

    // Segments: a collective's forward comm (all_reduce) ends one, an op
    // whose backward is comm (tp_copy) begins one.
    SmallVector<unsigned> segment(split.size());
    unsigned current = 0;
    bool open = false;
    for (auto [i, op] : llvm::enumerate(split)) {
      if (isa<TpCopyOp>(op) && open) {
        ++current;
        open = false;
      }
      segment[i] = current;
      open = true;
      if (isa<shard::AllReduceOp>(op)) {
        ++current;
        open = false;
      }
    }
    unsigned numSegments = split.empty() ? 0 : segment.back() + 1;
    size_t first = 0;
    for (unsigned s = 0; s < numSegments; ++s) {
      size_t last = first;
      while (last < split.size() && segment[last] == s)
        ++last;
      for (int64_t i = 0; i < k; ++i)
        for (size_t j = first; j < last; ++j)
          cloneFor(b, split[j], i);
      first = last;
    }

    // The joins and what follows them read the whole values.
    for (Operation *op : post) {
      if (op != terminator)
        op->moveBefore(terminator);
      b.setInsertionPoint(op);
      for (OpOperand &use : op->getOpOperands()) {
        Value v = use.get();
        if (!batchDim.count(v) || isa<BlockArgument>(v))
          continue;
        use.set(joined(b, v));
      }
    }
    for (Operation *op : llvm::reverse(split))
      op->erase();
    // Full-size operands that only the split ops read, now rebuilt smaller.
    for (Operation *op : llvm::reverse(pre))
      if (isOpTriviallyDead(op))
        op->erase();
  }

  void cloneFor(OpBuilder &b, Operation *op, int64_t i) {
    const PartitionRule &rule = rules[op];
    SmallVector<Value> operands;
    for (auto [operand, want] : llvm::zip(op->getOperands(), rule.operands)) {
      if (batchDim.count(operand))
        operands.push_back(maps[i].lookup(operand));
      else if (want)
        operands.push_back(subBatchOf(b, operand, want->dim, i));
      else
        operands.push_back(operand);
    }
    Operation *clone = b.clone(*op);
    clone->setOperands(operands);
    for (auto [result, want] : llvm::zip(clone->getResults(), rule.results)) {
      auto type = cast<RankedTensorType>(result.getType());
      result.setType(withDim(type, want->dim, type.getDimSize(want->dim) / k));
    }
    if (auto partition = dyn_cast<TensorPartitionInterface>(clone))
      if (rule.operands.front())
        partition.partitionAttributes(rule.operands.front()->dim, k);
    for (auto [from, to] : llvm::zip(op->getResults(), clone->getResults()))
      maps[i].map(from, to);
  }

  /// Rows [i*n/k, (i+1)*n/k) of `value` along `dim`.
  Value rowSlice(OpBuilder &b, Value value, int64_t dim, int64_t i) {
    auto type = cast<RankedTensorType>(value.getType());
    int64_t part = type.getDimSize(dim) / k;
    SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape()),
        strides(type.getRank(), 1);
    start[dim] = i * part;
    limit[dim] = (i + 1) * part;
    return SliceOp::create(b, value.getLoc(), withDim(type, dim, part), value,
                           start, limit, strides);
  }

  /// Sub-batch i of an unbatched operand that a row-wise op uses along its
  /// batch dimension: rebuilt at the sub-batch size when it is the same
  /// along it (shared by the sub-batches), else sliced.
  Value subBatchOf(OpBuilder &b, Value value, int64_t dim, int64_t i) {
    auto key = std::make_tuple(value.getAsOpaquePointer(), dim, int64_t(-1));
    if (auto partition = value.getDefiningOp<TensorPartitionInterface>()) {
      if (partition.isUniformAlong(dim) == std::optional<bool>(true)) {
        auto it = pieces.find(key);
        if (it != pieces.end())
          return it->second;
        auto type = cast<RankedTensorType>(value.getType());
        if (Value resized = partition.buildResized(
                b, withDim(type, dim, type.getDimSize(dim) / k)))
          return pieces[key] = resized;
      }
    }
    std::get<2>(key) = i;
    auto it = pieces.find(key);
    if (it != pieces.end())
      return it->second;
    return pieces[key] = rowSlice(b, value, dim, i);
  }

  /// The whole of batched `value`: its sub-values concatenated.
  Value joined(OpBuilder &b, Value value) {
    auto it = joins.find(value);
    if (it != joins.end())
      return it->second;
    SmallVector<Value> parts;
    for (int64_t i = 0; i < k; ++i)
      parts.push_back(maps[i].lookup(value));
    Value whole = ConcatOp::create(b, value.getLoc(), value.getType(), parts,
                                   batchDim.lookup(value));
    return joins[value] = whole;
  }

  func::FuncOp func;
  int64_t k;
  /// Batched values (before the rewrite) -> their batch dimension.
  DenseMap<Value, int64_t> batchDim;
  /// Results of joins and of the ops after them.
  DenseSet<Value> afterJoin;
  DenseMap<Operation *, PartitionRule> rules;
  SmallVector<Operation *> pre, split, post;
  SmallVector<IRMapping> maps;
  std::map<std::tuple<const void *, int64_t, int64_t>, Value> pieces;
  DenseMap<Value, Value> joins;
};

struct OverlapSplitPass
    : public mlir::loom::impl::LoomOverlapSplitBase<OverlapSplitPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (k < 1) {
      module.emitError() << kPass << ": k must be >= 1, got "
                         << static_cast<int64_t>(k);
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> found =
        tensor_parallel::lookupForwardFunction(module, function, kPass);
    if (failed(found))
      return signalPassFailure();
    if (k == 1)
      return;
    if (failed(OverlapSplitter(*found, k).run()))
      return signalPassFailure();
  }
};

} // namespace
