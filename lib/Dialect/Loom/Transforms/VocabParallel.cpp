//===- VocabParallel.cpp - Megatron-style vocabulary parallelism ----------===//
//
// Implements -loom-vocab-parallel (see Passes.td and docs/training.md): the
// vocabulary tables of a forward function (token embedding, LM head and the
// cross-entropy on its logits) are cut by rows over the ranks of the tp
// axis of @mesh, as Megatron-LM's VocabParallelEmbedding and
// vocab_parallel_cross_entropy do. Runs after -loom-tensor-parallel, whose
// blocks it leaves alone (their parameters carry `loom.shard`).
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
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"

#include <limits>

#define DEBUG_TYPE "loom-vocab-parallel"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMVOCABPARALLEL
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::tensor_parallel;

namespace {

/// An LM head `x @ W` (or `x @ transpose(W)`) whose logits reach a
/// `loom.cross_entropy` through reshapes that keep the class dimension and
/// at most one bias: `loom.add` of a rank-1 `loom.param` broadcast along
/// the class dimension (BERT's MLM decoder).
struct LmHead {
  DotGeneralOp dot;
  SmallVector<ReshapeOp> reshapes;
  CrossEntropyOp loss;
  AddOp biasAdd;
  BroadcastOp biasBroadcast;
  BlockArgument bias;
};

/// A vocabulary table `W` cut along its vocabulary dimension `dim` into
/// `tp` parts of `local` rows (the last rank's may end in padding).
struct VocabTable {
  BlockArgument arg;
  int64_t dim = -1;
  int64_t vocab = 0, padded = 0, local = 0;
  SmallVector<GatherOp> embeddings;
  SmallVector<LmHead> heads;
  /// A table read whole (Flax's `pos[None, :S]` added to the embedding):
  /// the op that reads it, which a lookup of every row replaces.
  Operation *wholeRead = nullptr;
};

/// Lookups whose sum is what the rest of the model reads (BERT's word,
/// token-type and position embeddings; GPT-2's word and position ones):
/// `root` is the last `loom.add` of a chain that starts at a token
/// embedding and adds the others (each read only there, possibly
/// broadcast). Every table of a sum is cut; each lookup gives this rank's
/// partial rows and one all-reduce of `root` completes them all, so a
/// table indexed by positions is cut at no extra communication.
struct EmbeddingSum {
  Value root;
  SmallVector<GatherOp> lookups;
  /// The tables it reads whole (cut when the sum is).
  SmallVector<VocabTable, 1> wholes;
};

/// Megatron-LM's vocabulary-parallel embedding and cross-entropy (see
/// Passes.td).
class VocabPartitioner {
public:
  VocabPartitioner(func::FuncOp func, int64_t tp, StringRef grid)
      : func(func), tp(tp), grid(grid), starts(func, grid) {}

  /// Finds the tables whose every use is an embedding lookup or an LM head.
  /// A parameter loom-tensor-parallel has cut (`loom.shard`) is a weight of
  /// a block, not a table.
  void analyze();
  bool empty() const { return tables.empty(); }
  void rewrite();
  /// Adds to the function's kTpReplicatedAttrName dictionary why each
  /// table candidate (a parameter with an embedding lookup, or a linear
  /// layer whose logits reach a cross-entropy) is not cut.
  void recordRefusals();

private:
  /// Whether `value` is computed from a function argument that is not a
  /// parameter (token ids, not positions computed from constants).
  bool dependsOnInput(Value value);
  /// The head whose matmul is `dot`, if its logits reach a cross-entropy.
  std::optional<LmHead> matchHead(DotGeneralOp dot, int64_t vocabDim);
  /// Whether `add` adds a bias to `logits` (see LmHead); fills `head`.
  bool matchBias(AddOp add, Value logits, LmHead &head);
  /// Finds the embedding sums; cuts the candidates all of whose lookups
  /// they take.
  void findEmbeddingSums();
  /// A rank-2 parameter `value` read only by one broadcast or reshape
  /// whose rows (dimension 0) are a dimension of the result: a table read
  /// whole, as a lookup of every row would.
  std::optional<VocabTable> matchWholeTable(Value value);
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
  SmallVector<VocabTable, 1> tables;
  /// Tables looked up by positions (or constants), cut only when an
  /// embedding sum takes all their lookups; why not, otherwise.
  SmallVector<std::pair<VocabTable, std::string>, 1> candidates;
  /// Table candidates that are not cut, by loom.name, and why.
  SmallVector<std::pair<std::string, std::string>> refusals;
  /// Why the last matchHead() found no head.
  std::string headRefusal;
  RankStarts starts;
  /// The embedding sums, and the lookups whose all-reduce is their sum's.
  SmallVector<EmbeddingSum, 1> sums;
  llvm::DenseSet<Operation *> summedLater;
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

/// Whether a `loom.cross_entropy` over `classes` classes is computed from
/// `value` (within a few ops): then `value` was meant as its logits.
static bool reachesLoss(Value value, int64_t classes) {
  SmallVector<Value> worklist{value};
  llvm::DenseSet<Value> seen;
  while (!worklist.empty() && seen.size() < 64) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (Operation *user : v.getUsers()) {
      if (auto loss = dyn_cast<CrossEntropyOp>(user))
        if (cast<RankedTensorType>(loss.getLogits().getType())
                .getShape()
                .back() == classes)
          return true;
      worklist.append(user->result_begin(), user->result_end());
    }
  }
  return false;
}

std::optional<LmHead> VocabPartitioner::matchHead(DotGeneralOp dot,
                                                  int64_t vocabDim) {
  headRefusal.clear();
  int64_t contracted = getLinearContractedDim(func, dot);
  if (contracted < 0 || 1 - contracted != vocabDim)
    return std::nullopt;
  LmHead head{dot, {}, {}, {}, {}, {}};
  Value logits = dot.getResult();
  auto classes = cast<RankedTensorType>(logits.getType()).getShape().back();
  bool meantAsLogits = reachesLoss(logits, classes);
  auto refuse = [&](const Twine &why) -> std::optional<LmHead> {
    if (meantAsLogits)
      headRefusal = ("the logits of the LM head " + describeOp(dot) + " " +
                     why + " before the cross-entropy")
                        .str();
    return std::nullopt;
  };
  while (logits.hasOneUse()) {
    Operation *user = *logits.getUsers().begin();
    if (auto reshape = dyn_cast<ReshapeOp>(user)) {
      auto type = cast<RankedTensorType>(reshape.getType());
      if (!type.hasStaticShape() || type.getRank() < 1 ||
          type.getShape().back() != classes)
        return refuse("are reshaped by " + describeOp(user) +
                      ", which changes the class dimension,");
      head.reshapes.push_back(reshape);
      logits = reshape.getResult();
      continue;
    }
    if (auto add = dyn_cast<AddOp>(user); add && !head.biasAdd) {
      if (!matchBias(add, logits, head))
        return refuse("reach " + describeOp(user) +
                      ", which adds something other than a bias "
                      "parameter,");
      logits = add.getResult();
      continue;
    }
    auto loss = dyn_cast<CrossEntropyOp>(user);
    if (!loss || loss.getLogits() != logits)
      return refuse("reach " + describeOp(user));
    head.loss = loss;
    return head;
  }
  return refuse("have " + Twine(std::distance(logits.use_begin(),
                                              logits.use_end())) +
                " uses (the cross-entropy must be the only one)");
}

bool VocabPartitioner::matchBias(AddOp add, Value logits, LmHead &head) {
  Value other = add.getLhs() == logits ? add.getRhs() : add.getLhs();
  auto broadcast = other.getDefiningOp<BroadcastOp>();
  auto type = cast<RankedTensorType>(logits.getType());
  if (other == logits || !broadcast || !broadcast->hasOneUse() ||
      broadcast.getDims() != ArrayRef<int64_t>{type.getRank() - 1})
    return false;
  BlockArgument bias = getParam(func, broadcast.getOperand());
  if (!bias || !bias.hasOneUse() ||
      cast<RankedTensorType>(bias.getType()).getRank() != 1 ||
      func.getArgAttr(bias.getArgNumber(), LoomDialect::getShardAttrName()))
    return false;
  head.biasAdd = add;
  head.biasBroadcast = broadcast;
  head.bias = bias;
  return true;
}

void VocabPartitioner::analyze() {
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!getParam(func, arg) || !type || type.getRank() != 2 ||
        !type.hasStaticShape() || arg.use_empty() ||
        func.getArgAttr(arg.getArgNumber(), LoomDialect::getShardAttrName()))
      continue;
    VocabTable table;
    table.arg = arg;
    bool ok = true;
    // Why this parameter is not a table, when it looked like one.
    std::string refusal;
    // Why a table with a lookup by positions is not cut, if no embedding
    // sum takes all its lookups.
    std::string positional;
    auto agree = [&](int64_t dim) {
      ok &= table.dim < 0 || table.dim == dim;
      table.dim = dim;
    };
    for (Operation *user : arg.getUsers()) {
      if (!ok)
        break;
      if (auto gather = dyn_cast<GatherOp>(user)) {
        ok = gather.getData() == arg;
        if (ok && !dependsOnInput(gather.getIndices()) && positional.empty())
          positional = "its lookup " + describeOp(gather) +
                       " is not indexed by token ids, and its rows are not "
                       "added to a token embedding's (a table indexed by "
                       "positions or constants stays whole)";
        agree(static_cast<int64_t>(gather.getAxis()));
        table.embeddings.push_back(gather);
      } else if (auto transpose = dyn_cast<TransposeOp>(user)) {
        ok = transpose.getPermutation() == ArrayRef<int64_t>{1, 0};
        for (Operation *next : transpose->getUsers()) {
          auto dot = dyn_cast<DotGeneralOp>(next);
          std::optional<LmHead> head;
          if (dot && dot.getRhs() == transpose.getResult())
            head = matchHead(dot, 0);
          ok &= head.has_value();
          if (!ok) {
            refusal = headRefusal;
            break;
          }
          agree(0);
          table.heads.push_back(*head);
        }
      } else if (auto dot = dyn_cast<DotGeneralOp>(user)) {
        int64_t contracted = getLinearContractedDim(func, dot);
        std::optional<LmHead> head;
        if (dot.getRhs() == arg && contracted >= 0)
          head = matchHead(dot, 1 - contracted);
        ok = head.has_value();
        if (!ok)
          refusal = headRefusal;
        if (ok) {
          agree(1 - contracted);
          table.heads.push_back(*head);
        }
      } else {
        ok = false;
        if (!table.embeddings.empty() || !table.heads.empty())
          refusal = "besides its embedding lookups and LM heads it is read "
                    "by " +
                    describeOp(user);
      }
    }
    if (!ok && !refusal.empty()) {
      refusals.push_back({getParamKey(func, arg.getArgNumber()), refusal});
    }
    if (!ok || table.dim < 0) {
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": argument #"
                              << arg.getArgNumber()
                              << " has another use: not a table\n");
      continue;
    }
    table.vocab = type.getDimSize(table.dim);
    table.local = (table.vocab + tp - 1) / tp;
    table.padded = table.local * tp;
    if (!positional.empty()) {
      if (table.heads.empty())
        candidates.push_back({std::move(table), std::move(positional)});
      else
        refusals.push_back({getParamKey(func, arg.getArgNumber()),
                            std::move(positional)});
      continue;
    }
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": argument #"
                            << arg.getArgNumber() << ": " << table.vocab
                            << " rows on dimension " << table.dim << ", "
                            << table.embeddings.size() << " embedding(s), "
                            << table.heads.size() << " LM head(s)\n");
    tables.push_back(std::move(table));
  }
  findEmbeddingSums();
}

/// `value` through broadcasts and reshapes, each read only once: what is
/// under them.
static Value stripExpansions(Value value) {
  while (isa_and_nonnull<BroadcastOp, ReshapeOp>(value.getDefiningOp()) &&
         value.hasOneUse())
    value = value.getDefiningOp()->getOperand(0);
  return value;
}

/// The lookup that `value` is, through broadcasts, if it and each of them
/// is read only once.
static GatherOp getSummedLookup(Value value) {
  while (auto broadcast = value.getDefiningOp<BroadcastOp>()) {
    if (!value.hasOneUse())
      return {};
    value = broadcast.getOperand();
  }
  auto gather = value.getDefiningOp<GatherOp>();
  return gather && value.hasOneUse() ? gather : GatherOp();
}

/// Whether `select` passes `value` or a splat of 0 or NaN (Flax's `take`
/// fills invalid ids with NaN): summed over the ranks, a select of a
/// partial lookup is the select of the whole one.
static bool selectsLookupOrFill(SelectOp select, Value value) {
  if (select.getOnTrue() != value && select.getOnFalse() != value)
    return false;
  Value fill = stripExpansions(select.getOnTrue() == value
                                   ? select.getOnFalse()
                                   : select.getOnTrue());
  DenseElementsAttr splat;
  if (!matchPattern(fill, m_Constant(&splat)) || !splat.isSplat() ||
      !isa<FloatType>(splat.getElementType()))
    return false;
  APFloat v = splat.getSplatValue<APFloat>();
  return v.isZero() || v.isNaN();
}

std::optional<VocabTable> VocabPartitioner::matchWholeTable(Value value) {
  BlockArgument arg = getParam(func, value);
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!arg || !type || type.getRank() != 2 || !type.hasStaticShape() ||
      !arg.hasOneUse() ||
      func.getArgAttr(arg.getArgNumber(), LoomDialect::getShardAttrName()))
    return std::nullopt;
  Operation *user = *arg.getUsers().begin();
  // The rows must stay a dimension of their own: a broadcast keeps them
  // as one of its `dims`; a reshape only adds unit dimensions.
  if (auto broadcast = dyn_cast<BroadcastOp>(user)) {
    auto result = cast<RankedTensorType>(broadcast.getType());
    if (broadcast.getDims().size() != 2 ||
        result.getDimSize(broadcast.getDims()[0]) != type.getDimSize(0))
      return std::nullopt;
  } else if (auto reshape = dyn_cast<ReshapeOp>(user)) {
    auto result = cast<RankedTensorType>(reshape.getType());
    SmallVector<int64_t> kept;
    for (int64_t d : result.getShape())
      if (d != 1)
        kept.push_back(d);
    if (kept != SmallVector<int64_t>(type.getShape()))
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  VocabTable table;
  table.arg = arg;
  table.dim = 0;
  table.vocab = type.getDimSize(0);
  table.local = (table.vocab + tp - 1) / tp;
  table.padded = table.local * tp;
  table.wholeRead = user;
  return table;
}

void VocabPartitioner::findEmbeddingSums() {
  llvm::DenseMap<Operation *, VocabTable *> lookupTable;
  for (VocabTable &table : tables)
    for (GatherOp gather : table.embeddings)
      lookupTable[gather] = &table;
  for (auto &[table, why] : candidates)
    for (GatherOp gather : table.embeddings)
      lookupTable[gather] = &table;

  llvm::DenseSet<Operation *> taken;
  for (VocabTable &table : tables)
    for (GatherOp gather : table.embeddings) {
      if (taken.contains(gather))
        continue;
      EmbeddingSum sum{gather.getResult(), {gather}, {}};
      while (sum.root.hasOneUse()) {
        Operation *user = *sum.root.getUsers().begin();
        if (auto select = dyn_cast<SelectOp>(user);
            select && selectsLookupOrFill(select, sum.root)) {
          sum.root = select.getResult();
          continue;
        }
        auto add = dyn_cast<AddOp>(user);
        if (!add)
          break;
        Value other = add.getLhs() == sum.root ? add.getRhs() : add.getLhs();
        if (other == sum.root)
          break;
        if (GatherOp term = getSummedLookup(other);
            term && lookupTable.count(term)) {
          sum.lookups.push_back(term);
        } else if (std::optional<VocabTable> whole =
                       matchWholeTable(stripExpansions(other))) {
          sum.wholes.push_back(std::move(*whole));
        } else {
          break;
        }
        sum.root = add.getResult();
      }
      if (sum.lookups.size() + sum.wholes.size() < 2)
        continue;
      taken.insert(sum.lookups.begin(), sum.lookups.end());
      sums.push_back(std::move(sum));
    }

  // A candidate is cut when every one of its lookups is a term of a sum.
  for (auto &[table, why] : candidates) {
    if (llvm::all_of(table.embeddings,
                     [&](GatherOp g) { return taken.contains(g); })) {
      tables.push_back(std::move(table));
      continue;
    }
    refusals.push_back({getParamKey(func, table.arg.getArgNumber()), why});
    for (GatherOp gather : table.embeddings)
      taken.erase(gather);
  }
  // A sum with a term left whole is no sum: its lookups are all-reduced
  // one by one.
  llvm::erase_if(sums, [&](const EmbeddingSum &sum) {
    return !llvm::all_of(sum.lookups,
                         [&](GatherOp g) { return taken.contains(g); });
  });
  // The tables a sum reads whole are cut with it.
  for (EmbeddingSum &sum : sums) {
    summedLater.insert(sum.lookups.begin(), sum.lookups.end());
    for (VocabTable &whole : sum.wholes)
      tables.push_back(std::move(whole));
    sum.wholes.clear();
  }
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
  // the sum over the ranks is the full lookup, taken here or, for the
  // terms of an embedding sum, once on the sum.
  ImplicitLocOpBuilder b(gather.getLoc(), gather);
  Value rows = buildLocalLookup(
      b, table.arg, vocab::toI64(b, gather.getIndices()),
      starts.get(table.local), table.local,
      static_cast<int64_t>(gather.getAxis()));
  gather.getResult().replaceAllUsesWith(
      summedLater.contains(gather) ? rows : allReduce(b, rows));
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
  // The bias: cut like the table's rows (zero-padded alike).
  if (head.bias) {
    localType(head.bias);
    func.setArgAttr(
        head.bias.getArgNumber(), LoomDialect::getShardAttrName(),
        ShardAttr::get(func.getContext(), /*dim=*/0, tp, /*groups=*/1,
                       table.padded != table.vocab ? table.padded : 0));
    localType(head.biasBroadcast.getResult());
    localType(head.biasAdd.getResult());
  }

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
  Value start = starts.get(table.local);
  // One row of column indices, broadcast (a kernel reads it with stride 0).
  Value column = BroadcastOp::create(
      b, i64Type,
      IotaOp::create(b,
                     RankedTensorType::get({logitsType.getDimSize(classDim)},
                                           b.getI64Type()),
                     0),
      ArrayRef<int64_t>{classDim});

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

void VocabPartitioner::recordRefusals() {
  // loom-tensor-parallel's reasons, with this pass's for table candidates
  // (more precise for an LM head than the block's), less the tables this
  // pass cuts.
  NamedAttrList reasons;
  if (auto found = func->getAttrOfType<DictionaryAttr>(kTpReplicatedAttrName))
    reasons.append(found.getValue());
  for (const auto &[name, why] : refusals)
    reasons.set(name, StringAttr::get(func.getContext(), why));
  for (const VocabTable &table : tables)
    reasons.erase(getParamKey(func, table.arg.getArgNumber()));
  if (reasons.empty())
    func->removeAttr(kTpReplicatedAttrName);
  else
    func->setAttr(kTpReplicatedAttrName,
                  reasons.getDictionary(func.getContext()));
}

void VocabPartitioner::rewrite() {
  for (VocabTable &table : tables) {
    auto type = cast<RankedTensorType>(table.arg.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[table.dim] = table.local;
    table.arg.setType(type.clone(shape));
    func.setArgAttr(
        table.arg.getArgNumber(), LoomDialect::getShardAttrName(),
        ShardAttr::get(func.getContext(), table.dim, tp, /*groups=*/1,
                       table.padded != table.vocab ? table.padded : 0));
    for (GatherOp gather : table.embeddings)
      rewriteEmbedding(table, gather);
    if (table.wholeRead) {
      // Every row, looked up: this rank's, zero elsewhere (a term of a
      // sum, all-reduced with it).
      ImplicitLocOpBuilder b(table.wholeRead->getLoc(), table.wholeRead);
      Value rows = IotaOp::create(
          b, RankedTensorType::get({table.vocab}, b.getI64Type()), 0);
      table.wholeRead->setOperand(
          0, buildLocalLookup(b, table.arg, rows, starts.get(table.local),
                              table.local, /*axis=*/0));
    }
    for (LmHead &head : table.heads)
      rewriteHead(table, head);
  }
  for (EmbeddingSum &sum : sums) {
    Operation *last = sum.root.getDefiningOp();
    ImplicitLocOpBuilder b(last->getLoc(), last->getBlock(),
                           std::next(last->getIterator()));
    Value total = allReduce(b, sum.root);
    sum.root.replaceAllUsesExcept(total, total.getDefiningOp());
  }
  func.setType(FunctionType::get(func.getContext(),
                                 func.getBody().front().getArgumentTypes(),
                                 func.getResultTypes()));
}

struct VocabParallel
    : public mlir::loom::impl::LoomVocabParallelBase<VocabParallel> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    return checkTpOption(context, tp, "loom-vocab-parallel");
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto found = lookupForwardFunctionAndMesh(module, function, "loom-vocab-parallel");
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = found->first;
    ::loom::Mesh mesh = found->second;
    // loom-tensor-parallel, which runs first, may have given the tp axis
    // its size; any other size is another compile's.
    if (mesh.tp != 1 && mesh.tp != tp) {
      func.emitError() << "loom-vocab-parallel: @" << kMeshGridName
                       << " has " << mesh.tp
                       << " ranks on its tp axis, not tp=" << tp.getValue()
                       << " (run both tensor-parallel passes with one tp)";
      return signalPassFailure();
    }
    if (tp == 1)
      return;
    VocabPartitioner vocab(func, tp, kMeshGridName);
    vocab.analyze();
    vocab.recordRefusals();
    // No table: loom-tensor-parallel has warned if it found no block either.
    if (vocab.empty())
      return;
    if (failed(getOrCreateMeshGrid(module, ::loom::MeshAxis::Tp, tp,
                                   "loom-vocab-parallel")))
      return signalPassFailure();
    vocab.rewrite();
  }
};
} // namespace

bool mlir::loom::tensor_parallel::hasVocabularyTable(func::FuncOp func) {
  VocabPartitioner vocab(func, /*tp=*/1, kMeshGridName);
  vocab.analyze();
  return !vocab.empty();
}
