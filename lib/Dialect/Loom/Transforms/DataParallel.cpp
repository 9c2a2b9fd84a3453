//===- DataParallel.cpp - Average gradients over data-parallel ranks ------===//
//
// Implements -loom-data-parallel (see Passes.td and docs/training.md): the
// gradient function @F_grad is rewritten in place so that each of D ranks,
// given its own share of the batch, returns the loss and gradients of the
// whole batch. Gradients are packed into buckets in the order the backward
// pass produces them; each bucket is all-reduced right after its last
// gradient is defined, so that its communication overlaps the remaining
// backward compute. Embedding gradients can instead be exchanged by rows
// (sparse-embedding-grad): their all-reduce is marked `loom.row_sparse`.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "TargetFunction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMDATAPARALLEL
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

/// Function attribute: the number of data-parallel ranks (docs/training.md).

/// Op attribute: the training phase an op belongs to (docs/training.md).
/// The collectives of data parallelism run on the dp axis of @mesh.
constexpr int16_t kDpAxis = static_cast<int16_t>(::loom::MeshAxis::Dp);

/// One distinct gradient value of @F_grad to be averaged.
struct Gradient {
  Value value;
  /// The results of @F_grad that return it (usually one).
  SmallVector<unsigned> results;
  /// When it becomes ready: -1 for arguments and (hoisted) constants, else
  /// the position of its defining op in the body.
  int64_t ready;
  RankedTensorType type;
  int64_t bytes;
  /// Exchanged by rows (its own all-reduce, marked `loom.row_sparse`).
  bool rowSparse = false;
};

/// Gradients reduced by one all-reduce, in ready order.
using Bucket = SmallVector<Gradient *>;

/// Result `index` of `func` for diagnostics: its quoted `loom.name`, else
/// `#N`.
std::string resultName(func::FuncOp func, unsigned index) {
  if (auto name = func.getResultAttrOfType<StringAttr>(
          index, LoomDialect::getNameAttrName()))
    return ("'" + name.getValue() + "'").str();
  return ("#" + Twine(index)).str();
}

/// Greedy DDP-style packing of `gradients` (in ready order) into buckets of
/// at most `limit` bytes; `limit == 0` puts every gradient in its own
/// bucket. A gradient larger than `limit` is a bucket by itself; a bucket
/// holds one element type. A row-sparse gradient is a bucket by itself and
/// leaves the dense bucket being filled open.
SmallVector<Bucket> packBuckets(MutableArrayRef<Gradient> gradients,
                                int64_t limit) {
  SmallVector<Bucket> buckets;
  std::optional<size_t> open;
  int64_t bytes = 0;
  for (Gradient &gradient : gradients) {
    if (gradient.rowSparse) {
      buckets.push_back({&gradient});
      continue;
    }
    bool fits = open && limit > 0 && bytes + gradient.bytes <= limit &&
                buckets[*open].front()->type.getElementType() ==
                    gradient.type.getElementType();
    if (!fits) {
      open = buckets.size();
      buckets.emplace_back();
      bytes = 0;
    }
    buckets[*open].push_back(&gradient);
    bytes += gradient.bytes;
  }
  return buckets;
}

/// Whether `op` is a constant that can move to the top of its block.
bool isHoistableConstant(Operation *op) {
  return op && op->getNumOperands() == 0 &&
         op->hasTrait<::mlir::OpTrait::ConstantLike>();
}

/// When `value` is row-sparse (Passes.td): built from scatter_adds along
/// axis 0 into zeros, their sums, products with and quotients by splat
/// constants, an
/// upper bound on its rows that can be nonzero (the indices scattered);
/// else nothing.
std::optional<int64_t> touchedRows(Value value) {
  if (matchPattern(value, m_AnyZeroFloat()))
    return 0;
  Operation *def = value.getDefiningOp();
  if (auto scatter = dyn_cast_or_null<ScatterAddOp>(def)) {
    if (scatter.getAxis() != 0)
      return std::nullopt;
    std::optional<int64_t> base = touchedRows(scatter.getTarget());
    auto indices = cast<RankedTensorType>(scatter.getIndices().getType());
    if (!base || !indices.hasStaticShape())
      return std::nullopt;
    return *base + indices.getNumElements();
  }
  if (auto add = dyn_cast_or_null<AddOp>(def)) {
    std::optional<int64_t> lhs = touchedRows(add.getLhs());
    std::optional<int64_t> rhs = touchedRows(add.getRhs());
    if (!lhs || !rhs)
      return std::nullopt;
    return *lhs + *rhs;
  }
  // Scaled by a splat constant (the mean over micro-batches divides).
  auto isSplat = [](Value v) {
    DenseElementsAttr attr;
    return matchPattern(v, m_Constant(&attr)) && attr.isSplat();
  };
  if (auto mul = dyn_cast_or_null<MulOp>(def)) {
    if (isSplat(mul.getRhs()))
      return touchedRows(mul.getLhs());
    if (isSplat(mul.getLhs()))
      return touchedRows(mul.getRhs());
  }
  if (auto div = dyn_cast_or_null<DivOp>(def))
    if (isSplat(div.getRhs()))
      return touchedRows(div.getLhs());
  return std::nullopt;
}

/// Whether exchanging `rows` touched rows of a `type` table (index and
/// row each) over `ranks` ranks moves fewer bytes than a ring all-reduce
/// of the whole table: each rank sends its rows to the D-1 others against
/// 2(D-1)/D of the table.
bool rowsAreCheaper(RankedTensorType type, int64_t rows, int64_t ranks) {
  int64_t width = type.getNumElements() / std::max<int64_t>(type.getDimSize(0), 1);
  return ranks * rows * (width + 1) < 2 * type.getDimSize(0) * width;
}

/// Emits the averaging ops, all tagged `loom.phase = "backward"`.
class Averager {
public:
  Averager(OpBuilder &builder, int64_t ranks)
      : builder(builder), ranks(ranks),
        phase(builder.getNamedAttr(LoomDialect::PhaseAttrHelper::getNameStr(),
                                   builder.getStringAttr("backward"))) {}

  /// `value` summed over the ranks and multiplied by 1/D; `rowSparse`
  /// marks the all-reduce `loom.row_sparse`.
  Value average(Location loc, Value value, bool rowSparse = false) {
    auto type = cast<RankedTensorType>(value.getType());
    auto allReduce = tag(shard::AllReduceOp::create(
        builder, loc, type, kMeshGridName, ArrayRef<int16_t>{kDpAxis}, value));
    if (rowSparse)
      allReduce->setAttr(LoomDialect::getRowSparseAttrName(),
                         builder.getUnitAttr());
    Value sum = allReduce.getResult();
    auto scale = DenseElementsAttr::get(
        type, builder.getFloatAttr(type.getElementType(),
                                   1.0 / static_cast<double>(ranks)));
    Value factor = tag(ConstantOp::create(builder, loc, type,
                                          cast<ElementsAttr>(scale)));
    return keep(tag(MulOp::create(builder, loc, sum, factor)));
  }

  /// The averages of the gradients of `bucket`, in its order: one buffer,
  /// one all-reduce.
  SmallVector<Value> averageBucket(Location loc, const Bucket &bucket) {
    if (bucket.size() == 1)
      return {average(loc, bucket.front()->value, bucket.front()->rowSparse)};
    SmallVector<Value> flat;
    SmallVector<int64_t> sizes;
    for (Gradient *gradient : bucket) {
      int64_t size = gradient->type.getNumElements();
      sizes.push_back(size);
      flat.push_back(reshape(loc, gradient->value,
                             RankedTensorType::get(
                                 {size}, gradient->type.getElementType())));
    }
    Value joined = tag(ConcatOp::create(builder, loc, flat, /*dim=*/0));
    Value averaged = average(loc, joined);
    auto split = SplitOp::create(builder, loc, averaged, /*dim=*/0, sizes);
    keep(tag(split));
    SmallVector<Value> results;
    for (auto [gradient, piece] : llvm::zip(bucket, split.getResults())) {
      Value shaped = reshape(loc, piece, gradient->type);
      if (shaped != piece)
        keep(shaped);
      results.push_back(shaped);
    }
    return results;
  }

  /// The ops computed from the all-reduces (scales, splits, the reshapes
  /// after them), in the order they were made.
  ArrayRef<Operation *> getTail() const { return tail; }

private:
  Value reshape(Location loc, Value value, RankedTensorType type) {
    if (value.getType() == type)
      return value;
    return tag(ReshapeOp::create(builder, loc, type, value));
  }
  Value keep(Value value) {
    tail.push_back(value.getDefiningOp());
    return value;
  }
  template <typename OpT> OpT keep(OpT op) {
    tail.push_back(op.getOperation());
    return op;
  }
  template <typename OpT> OpT tag(OpT op) {
    op->setAttr(phase.getName(), phase.getValue());
    return op;
  }

  OpBuilder &builder;
  int64_t ranks;
  NamedAttribute phase;
  SmallVector<Operation *> tail;
};

struct DataParallel : public mlir::loom::impl::LoomDataParallelBase<DataParallel> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override;
  void runOnOperation() override;

private:
  /// Checks @F_grad against the loom-autodiff contract and collects its
  /// distinct gradient values, in result order.
  LogicalResult collectGradients(func::FuncOp grad,
                                 SmallVectorImpl<Gradient> &gradients);
  
  /// Marks the gradients exchanged by rows (sparse-embedding-grad); warns
  /// when `on` finds no embedding gradient in the module.
  void chooseRowSparse(func::FuncOp grad, MutableArrayRef<Gradient> gradients);
  void rewrite(func::FuncOp grad, MutableArrayRef<Gradient> gradients);

  /// An error at `func`'s location that names the pass and the function;
  /// reported by location so that the function is not printed.
  InFlightDiagnostic error(func::FuncOp func) {
    return mlir::emitError(func.getLoc())
           << "loom-data-parallel: @" << func.getSymName() << ": ";
  }
};

} // namespace

LogicalResult DataParallel::initialize(MLIRContext *context) {
  auto fail = [&]() {
    return emitError(UnknownLoc::get(context)) << "loom-data-parallel: ";
  };
  if (dp < 1)
    return fail() << "dp must be >= 1 (option dp=, the number of "
                     "data-parallel ranks), got "
                  << dp.getValue();
  if (bucketBytes < 0)
    return fail() << "bucket-bytes must be >= 0 (0: one bucket per "
                     "gradient), got "
                  << bucketBytes.getValue();
  return success();
}

LogicalResult
DataParallel::collectGradients(func::FuncOp grad,
                               SmallVectorImpl<Gradient> &gradients) {
  if (grad.isExternal() || !grad.getBody().hasOneBlock())
    return error(grad) << "must have a body of one block";
  bool averaged = false;
  grad.walk([&](shard::AllReduceOp op) {
    averaged |= getMeshAxis(op.getGridAttr(), op.getGridAxes()) ==
                ::loom::MeshAxis::Dp;
  });
  if (averaged)
    return error(grad) << "is already data-parallel (it all-reduces over "
                          "the dp axis of @"
                       << kMeshGridName << ")";
  ArrayRef<Type> results = grad.getResultTypes();
  auto loss = results.empty() ? RankedTensorType()
                              : dyn_cast<RankedTensorType>(results[0]);
  if (!loss || loss.getRank() != 0 || !isa<FloatType>(loss.getElementType()) ||
      grad.getResultAttr(0, LoomDialect::getGradOfAttrName()))
    return error(grad) << "result 0 must be the loss, a rank-0 float tensor "
                          "without 'loom.grad_of' (results are (loss, "
                          "gradients...) as loom-autodiff produces them)";

  auto ret = cast<func::ReturnOp>(grad.getBody().front().getTerminator());
  llvm::DenseMap<Value, unsigned> indexOf;
  for (unsigned r = 1, e = results.size(); r < e; ++r) {
    if (!grad.getResultAttr(r, LoomDialect::getGradOfAttrName()))
      return error(grad) << "result " << r << " (" << resultName(grad, r)
                         << ") has no 'loom.grad_of'; every result after "
                            "the loss must be a gradient";
    auto type = dyn_cast<RankedTensorType>(results[r]);
    if (!type || !isa<FloatType>(type.getElementType()) ||
        !type.hasStaticShape())
      return error(grad) << "gradient result " << r << " ("
                         << resultName(grad, r) << ") has type " << results[r]
                         << "; only float tensors of static shape can be "
                            "averaged over the ranks";
    Value value = ret.getOperand(r);
    auto [it, inserted] = indexOf.try_emplace(value, gradients.size());
    if (inserted) {
      int64_t bits = type.getElementTypeBitWidth();
      gradients.push_back(
          {value, {}, 0, type, type.getNumElements() * ((bits + 7) / 8)});
    }
    gradients[it->second].results.push_back(r);
  }
  return success();
}

void DataParallel::chooseRowSparse(func::FuncOp grad,
                                   MutableArrayRef<Gradient> gradients) {
  if (sparseEmbeddingGrad == Switch::off)
    return;
  for (Gradient &gradient : gradients) {
    if (gradient.type.getRank() == 0 ||
        !gradient.type.getElementType().isF32())
      continue;
    std::optional<int64_t> rows = touchedRows(gradient.value);
    if (!rows || *rows == 0)
      continue;
    gradient.rowSparse = sparseEmbeddingGrad == Switch::on ||
                         rowsAreCheaper(gradient.type, *rows, dp);
  }
  if (sparseEmbeddingGrad != Switch::on)
    return;
  // Once per module: by the function of the first stage (or the only one).
  auto stage = grad->getAttrOfType<IntegerAttr>(
      LoomDialect::StageAttrHelper::getNameStr());
  if (stage && stage.getInt() != 0)
    return;
  bool anyEmbedding = false;
  getOperation().walk([&](ScatterAddOp op) { anyEmbedding |= op.getAxis() == 0; });
  if (!anyEmbedding)
    mlir::emitWarning(grad.getLoc())
        << "loom-data-parallel: sparse-embedding-grad=on (loomc "
           "--sparse-embedding-grad on): the model has no embedding "
           "gradient (a loom.scatter_add of a lookup's rows) to exchange "
           "by rows; every gradient is all-reduced densely";
}

void DataParallel::rewrite(func::FuncOp grad,
                           MutableArrayRef<Gradient> gradients) {
  Block &body = grad.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());

  // Constant gradients (zeros of unused parameters) are ready before the
  // backward pass starts: move them to the top, in result order, so that
  // they do not hold back the bucket they share.
  Operation *lastHoisted = nullptr;
  for (Gradient &gradient : gradients) {
    Operation *def = gradient.value.getDefiningOp();
    if (!isHoistableConstant(def))
      continue;
    if (lastHoisted)
      def->moveAfter(lastHoisted);
    else
      def->moveBefore(&body, body.begin());
    lastHoisted = def;
  }

  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [index, op] : llvm::enumerate(body))
    position[&op] = static_cast<int64_t>(index);
  for (Gradient &gradient : gradients) {
    Operation *def = gradient.value.getDefiningOp();
    gradient.ready =
        def && !isHoistableConstant(def) ? position.lookup(def) : -1;
  }
  llvm::stable_sort(gradients, [](const Gradient &a, const Gradient &b) {
    return a.ready < b.ready;
  });

  // The ops averaging a group of values go right after the op defining the
  // last of them, `anchor` (null: the top of the body); several groups with
  // one anchor follow each other in the order they are built.
  OpBuilder builder(grad.getContext());
  llvm::DenseMap<Operation *, Operation *> lastInsertedAfter;
  auto setInsertionPointAfter = [&](Operation *anchor) {
    if (Operation *last = lastInsertedAfter.lookup(anchor))
      builder.setInsertionPointAfter(last);
    else if (anchor)
      builder.setInsertionPointAfter(anchor);
    else
      builder.setInsertionPointToStart(&body);
  };
  auto recordInserted = [&](Operation *anchor) {
    lastInsertedAfter[anchor] = &*std::prev(builder.getInsertionPoint());
  };
  Averager averager(builder, dp);

  Value loss = ret.getOperand(0);
  Operation *lossAnchor = loss.getDefiningOp();
  setInsertionPointAfter(lossAnchor);
  ret.setOperand(0, averager.average(loss.getLoc(), loss));
  recordInserted(lossAnchor);

  for (const Bucket &bucket :
       packBuckets(gradients, static_cast<int64_t>(bucketBytes))) {
    Gradient *last = bucket.back();
    // Arguments and hoisted constants are all defined by `lastHoisted`.
    Operation *anchor =
        last->ready < 0 ? lastHoisted : last->value.getDefiningOp();
    setInsertionPointAfter(anchor);
    SmallVector<Value> averaged =
        averager.averageBucket(last->value.getLoc(), bucket);
    recordInserted(anchor);
    for (auto [gradient, value] : llvm::zip(bucket, averaged))
      for (unsigned result : gradient->results)
        ret.setOperand(result, value);
  }

  // What is computed from the all-reduces (the 1/D scale, a bucket's split
  // and reshapes) only feeds the return: it goes right before it, so that
  // the lowering, which waits for a transfer right before its first use,
  // lets the rest of the backward pass run while the buckets are in flight.
  // (Only the pass's own ops move: a tensor-parallel all-reduce of the
  // program keeps its place among the stage's transfers.)
  for (Operation *op : averager.getTail())
    op->moveBefore(ret);
}

void DataParallel::runOnOperation() {
  FailureOr<func::FuncOp> grad =
      findGradFunction(getOperation(), function, "loom-data-parallel");
  if (failed(grad))
    return signalPassFailure();
  SmallVector<Gradient> gradients;
  if (failed(collectGradients(*grad, gradients)))
    return signalPassFailure();
  // One rank: every value is already its own average.
  if (dp == 1)
    return;
  if (failed(getOrCreateMeshGrid(getOperation(), ::loom::MeshAxis::Dp, dp,
                                 "loom-data-parallel")))
    return signalPassFailure();
  chooseRowSparse(*grad, gradients);
  rewrite(*grad, gradients);
}
