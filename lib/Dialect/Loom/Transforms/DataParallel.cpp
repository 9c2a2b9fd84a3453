//===- DataParallel.cpp - Average gradients over data-parallel ranks ------===//
//
// Implements -loom-data-parallel (see Passes.td and docs/training.md): the
// gradient function @F_grad is rewritten in place so that each of D ranks,
// given its own share of the batch, returns the loss and gradients of the
// whole batch. Gradients are packed into buckets in the order the backward
// pass produces them; each bucket is all-reduced right after its last
// gradient is defined, so that its communication overlaps the remaining
// backward compute.
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
/// holds one element type.
SmallVector<Bucket> packBuckets(MutableArrayRef<Gradient> gradients,
                                int64_t limit) {
  SmallVector<Bucket> buckets;
  int64_t bytes = 0;
  for (Gradient &gradient : gradients) {
    bool fits = !buckets.empty() && limit > 0 &&
                bytes + gradient.bytes <= limit &&
                buckets.back().front()->type.getElementType() ==
                    gradient.type.getElementType();
    if (!fits) {
      buckets.emplace_back();
      bytes = 0;
    }
    buckets.back().push_back(&gradient);
    bytes += gradient.bytes;
  }
  return buckets;
}

/// Whether `op` is a constant that can move to the top of its block.
bool isHoistableConstant(Operation *op) {
  return op && op->getNumOperands() == 0 &&
         op->hasTrait<::mlir::OpTrait::ConstantLike>();
}

/// Emits the averaging ops, all tagged `loom.phase = "backward"`.
class Averager {
public:
  Averager(OpBuilder &builder, int64_t ranks)
      : builder(builder), ranks(ranks),
        phase(builder.getNamedAttr(LoomDialect::PhaseAttrHelper::getNameStr(),
                                   builder.getStringAttr("backward"))) {}

  /// `value` summed over the ranks and multiplied by 1/D.
  Value average(Location loc, Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    Value sum = tag(shard::AllReduceOp::create(
        builder, loc, type, kMeshGridName, ArrayRef<int16_t>{kDpAxis}, value));
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
      return {average(loc, bucket.front()->value)};
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
  rewrite(*grad, gradients);
}
