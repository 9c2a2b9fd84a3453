//===- Losses.cpp - ONNX reductions and losses ----------------------------===//
//
// ReduceSum, ReduceMean and ReduceMax (axes as attribute or input), CumSum
// (a scan of shifted adds), and the losses: SoftmaxCrossEntropyLoss, and NegativeLogLikelihoodLoss of a
// LogSoftmax, both as loom.cross_entropy.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

// Reductions and losses
//===----------------------------------------------------------------------===//

template <typename OpTy>
static LogicalResult importReduce(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = im.typeOf(*x).getRank();
  // Axes: an attribute up to opset 17 (ReduceSum: 12), an input after.
  std::optional<SmallVector<int64_t>> axes = im.intsAttr(node, "axes");
  if (im.hasInput(node, 1)) {
    FailureOr<ConstTensor> a = im.requireConst(node, 1, "axes");
    if (failed(a))
      return failure();
    axes = *constAxes(&*a);
  }
  bool keepdims = im.intAttr(node, "keepdims", 1);
  if (!axes || axes->empty()) {
    if (im.intAttr(node, "noop_with_empty_axes", 0)) {
      im.define(node, 0, *x);
      return success();
    }
    axes = SmallVector<int64_t>();
    for (int64_t d = 0; d < rank; ++d)
      axes->push_back(d);
  }
  SmallVector<int64_t> dims;
  for (int64_t a : *axes) {
    FailureOr<int64_t> n = im.normalizeAxis(node, a, rank, "axes entry");
    if (failed(n))
      return failure();
    if (llvm::is_contained(dims, *n))
      return im.nodeError(node)
             << "axes " << formatDims(*axes) << " repeat dimension " << *n;
    dims.push_back(*n);
  }
  llvm::sort(dims);
  return im.defineResult(
      node, 0,
      im.create<OpTy>(im.nodeLoc(node), *x, ArrayRef<int64_t>(dims), keepdims));
}

/// `weights`-weighted ONNX cross-entropy from loom's per-sample one:
/// loss_i * w[label_i] (0 where the label is `ignore`), then `none`, their
/// sum, or (mean) their sum over the sum of the weights used, as ONNX and
/// PyTorch define the weighted mean. Built from ops with VJPs.
static FailureOr<Value> weightedCrossEntropy(Importer &im, Location loc,
                                             Value scores, Value labels,
                                             Value weights,
                                             LossReduction reduction,
                                             IntegerAttr ignore) {
  RankedTensorType labelType = im.typeOf(labels);
  auto perSample = labelType.clone(im.typeOf(scores).getElementType());
  FailureOr<CrossEntropyOp> losses = im.create<CrossEntropyOp>(
      loc, scores, labels, LossReduction::none, ignore);
  if (failed(losses))
    return failure();
  Value ignored;
  if (ignore) {
    ignored = CompareOp::create(
        im.b, loc, ComparisonDirection::eq, labels,
        im.splat(static_cast<double>(ignore.getInt()), labelType, loc));
    labels = SelectOp::create(im.b, loc, ignored, im.splat(0, labelType, loc),
                              labels);
  }
  FailureOr<GatherOp> gathered =
      im.create<GatherOp>(loc, weights, labels, int64_t(0));
  if (failed(gathered))
    return failure();
  Value w = *gathered;
  if (ignored)
    w = SelectOp::create(im.b, loc, ignored, im.splat(0, perSample, loc), w);
  Value weighted = MulOp::create(im.b, loc, *losses, w);
  if (reduction == LossReduction::none)
    return weighted;
  auto scalar = RankedTensorType::get({}, perSample.getElementType());
  SmallVector<int64_t> all =
      llvm::to_vector(llvm::seq<int64_t>(0, perSample.getRank()));
  Value total = ReduceSumOp::create(im.b, loc, scalar, weighted, all);
  if (reduction == LossReduction::sum)
    return total;
  return Value(DivOp::create(im.b, loc, total,
                             ReduceSumOp::create(im.b, loc, scalar, w, all)));
}

static LogicalResult importCrossEntropy(Importer &im,
                                        const onnx::NodeProto &node,
                                        Value scores, Value labels,
                                        Value weights = {}) {
  // ONNX puts the classes in dimension 1; loom wants them last.
  Location loc = im.nodeLoc(node);
  int64_t rank = im.typeOf(scores).getRank();
  if (rank < 2)
    return im.nodeError(node) << "scores must have shape [N, C, ...], not "
                              << formatDims(im.typeOf(scores).getShape());
  Type labelType = im.typeOf(labels).getElementType();
  if (!isa<IntegerType>(labelType) || labelType.isInteger(1))
    return im.nodeError(node)
           << "labels must be int32 or int64, not " << labelType;
  SmallVector<int64_t> expected(im.typeOf(scores).getShape());
  expected.erase(expected.begin() + 1);
  if (im.typeOf(labels).getShape() != ArrayRef<int64_t>(expected))
    return im.nodeError(node)
           << "labels of shape " << formatDims(im.typeOf(labels).getShape())
           << " do not match scores of shape "
           << formatDims(im.typeOf(scores).getShape()) << " (expected "
           << formatDims(expected) << ")";
  if (rank > 2) {
    SmallVector<int64_t> perm = {0};
    for (int64_t d = 2; d < rank; ++d)
      perm.push_back(d);
    perm.push_back(1);
    FailureOr<TransposeOp> t =
        im.create<TransposeOp>(loc, scores, ArrayRef<int64_t>(perm));
    if (failed(t))
      return failure();
    scores = *t;
  }
  std::string reduction = im.stringAttr(node, "reduction", "mean");
  LossReduction r;
  if (reduction == "mean")
    r = LossReduction::mean;
  else if (reduction == "sum")
    r = LossReduction::sum;
  else if (reduction == "none")
    r = LossReduction::none;
  else
    return im.nodeError(node)
           << "reduction '" << reduction << "' is not one of mean, sum, none";
  IntegerAttr ignore;
  if (im.attr(node, "ignore_index"))
    ignore = im.b.getI64IntegerAttr(im.intAttr(node, "ignore_index", 0));
  if (weights) {
    RankedTensorType wType = im.typeOf(weights);
    int64_t classes = im.typeOf(scores).getShape().back();
    if (wType.getRank() != 1 || wType.getDimSize(0) != classes ||
        wType.getElementType() != im.typeOf(scores).getElementType())
      return im.nodeError(node)
             << "class weights of type " << wType << " must be a vector of "
             << classes << " " << im.typeOf(scores).getElementType()
             << " (one per class)";
    FailureOr<Value> loss =
        weightedCrossEntropy(im, loc, scores, labels, weights, r, ignore);
    if (failed(loss))
      return failure();
    im.define(node, 0, *loss);
    return success();
  }
  return im.defineResult(
      node, 0, im.create<CrossEntropyOp>(loc, scores, labels, r, ignore));
}

/// Input `k` of `node`, or a null value when the node omits it.
static FailureOr<Value> optionalInput(Importer &im, const onnx::NodeProto &node,
                                      int k) {
  if (!im.hasInput(node, k))
    return Value();
  return im.input(node, k);
}

/// SoftmaxCrossEntropyLoss(scores, labels[, weights]); its second output,
/// log_prob, is LogSoftmax over the class axis 1.
static LogicalResult importSoftmaxCrossEntropy(Importer &im,
                                               const onnx::NodeProto &node) {
  FailureOr<Value> scores = im.input(node, 0), labels = im.input(node, 1);
  if (failed(scores) || failed(labels))
    return failure();
  FailureOr<Value> weights = optionalInput(im, node, 2);
  if (failed(weights))
    return failure();
  if (im.isOutputUsed(node, 1) && im.typeOf(*scores).getRank() >= 2) {
    FailureOr<LogSoftmaxOp> logProb =
        im.create<LogSoftmaxOp>(im.nodeLoc(node), *scores, int64_t(1));
    if (failed(logProb))
      return failure();
    im.define(node, 1, *logProb);
  }
  return importCrossEntropy(im, node, *scores, *labels, *weights);
}

static LogicalResult importNllLoss(Importer &im, const onnx::NodeProto &node) {
  // NLL(log_softmax(x, axis=1)) == cross_entropy(x): Loom imports that pair
  // and nothing else (NLL of arbitrary inputs has no loom op). The
  // LogSoftmax, if nothing else uses it, is removed as dead code.
  const onnx::NodeProto *producer =
      im.hasInput(node, 0) ? im.producers.lookup(node.input(0)) : nullptr;
  if (!producer || producer->op_type() != "LogSoftmax")
    return im.nodeError(node)
           << "only NegativeLogLikelihoodLoss of a LogSoftmax output is "
              "supported (it becomes a cross-entropy over the LogSoftmax "
              "input)";
  FailureOr<Value> logits = im.input(*producer, 0), labels = im.input(node, 1);
  if (failed(logits) || failed(labels))
    return failure();
  FailureOr<int64_t> axis =
      im.normalizeAxis(*producer, im.intAttr(*producer, "axis", -1),
                       im.typeOf(*logits).getRank());
  if (failed(axis))
    return failure();
  if (*axis != 1)
    return im.nodeError(node) << "the LogSoftmax feeding this loss normalises "
                                 "axis "
                              << *axis << ", not the class axis 1";
  FailureOr<Value> weights = optionalInput(im, node, 2);
  if (failed(weights))
    return failure();
  return importCrossEntropy(im, node, *logits, *labels, *weights);
}

/// CumSum(x, axis) with `exclusive` and `reverse`. Known input folds (sums
/// in double or wrapping int64, rounded once). A run-time input becomes a
/// Hillis-Steele scan of existing ops: ceil(log2 n) steps of
/// x + shift(x, s) for s = 1, 2, 4, ..., where shift moves the tensor s
/// places along the axis (towards the end, or the start when reversed) and
/// fills in zeros; exclusive shifts once more by one first. Exact for
/// integers; floats are summed in a tree order instead of left to right.
static LogicalResult importCumSum(Importer &im, const onnx::NodeProto &node) {
  bool exclusive = im.intAttr(node, "exclusive", 0) != 0;
  bool reverse = im.intAttr(node, "reverse", 0) != 0;
  FailureOr<ConstTensor> axisT = im.requireConst(node, 1, "axis");
  if (failed(axisT))
    return failure();
  if (axisT->isFloat() || axisT->size() != 1)
    return im.nodeError(node) << "axis must be one integer";
  const ConstTensor *cx = im.constInput(node, 0);
  Value x;
  SmallVector<int64_t> shape;
  Type elementType;
  if (cx) {
    shape = cx->shape;
    elementType = cx->elementType;
  } else {
    FailureOr<Value> v = im.input(node, 0);
    if (failed(v))
      return failure();
    x = *v;
    shape.assign(im.typeOf(x).getShape().begin(), im.typeOf(x).getShape().end());
    elementType = im.typeOf(x).getElementType();
  }
  if (elementType.isInteger(1))
    return im.nodeError(node) << "the input must be numbers, not "
                              << elementType;
  int64_t rank = shape.size();
  FailureOr<int64_t> axis = im.normalizeAxis(node, axisT->i[0], rank);
  if (failed(axis))
    return failure();
  int64_t n = shape[*axis];
  if (cx) {
    ConstTensor c = ConstTensor::make(elementType, shape);
    int64_t inner = computeStrides(shape)[*axis];
    int64_t outer = c.size() / std::max<int64_t>(n * inner, 1);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        double accF = 0;
        uint64_t accI = 0;
        for (int64_t step = 0; step < n; ++step) {
          int64_t j = reverse ? n - 1 - step : step;
          int64_t p = (o * n + j) * inner + in;
          if (!exclusive) {
            accF += c.isFloat() ? cx->f[p] : 0;
            accI += c.isFloat() ? 0 : static_cast<uint64_t>(cx->i[p]);
          }
          if (c.isFloat())
            c.f[p] = accF;
          else
            c.i[p] = static_cast<int64_t>(accI);
          if (exclusive) {
            accF += c.isFloat() ? cx->f[p] : 0;
            accI += c.isFloat() ? 0 : static_cast<uint64_t>(cx->i[p]);
          }
        }
      }
    im.defineConst(node, 0, std::move(c));
    return success();
  }
  Location loc = im.nodeLoc(node);
  RankedTensorType type = im.typeOf(x);
  // x shifted by s places along the axis, zeros filled in.
  auto shift = [&](Value v, int64_t s) -> FailureOr<Value> {
    SmallVector<int64_t> start(rank, 0), limit(shape), stride(rank, 1);
    if (reverse)
      start[*axis] = s;
    else
      limit[*axis] = n - s;
    FailureOr<SliceOp> kept =
        im.create<SliceOp>(loc, v, ArrayRef<int64_t>(start),
                           ArrayRef<int64_t>(limit), ArrayRef<int64_t>(stride));
    if (failed(kept))
      return failure();
    SmallVector<int64_t> zeroShape(shape);
    zeroShape[*axis] = s;
    Value zeros = im.splat(0, type.clone(zeroShape), loc);
    SmallVector<Value> pieces =
        reverse ? SmallVector<Value>{*kept, zeros}
                : SmallVector<Value>{zeros, *kept};
    FailureOr<ConcatOp> concat =
        im.create<ConcatOp>(loc, ValueRange(pieces), *axis);
    if (failed(concat))
      return failure();
    return Value(*concat);
  };
  if (exclusive && n == 1) {
    im.define(node, 0, im.splat(0, type, loc));
    return success();
  }
  Value acc = x;
  if (exclusive && n > 1) {
    FailureOr<Value> shifted = shift(acc, 1);
    if (failed(shifted))
      return failure();
    acc = *shifted;
  }
  for (int64_t s = 1; s < n; s *= 2) {
    FailureOr<Value> shifted = shift(acc, s);
    if (failed(shifted))
      return failure();
    acc = AddOp::create(im.b, loc, acc, *shifted);
  }
  im.define(node, 0, acc);
  return success();
}

void onnx_import::registerLossHandlers(HandlerRegistry &registry) {
  registry.add({
      {"ReduceSum", importReduce<ReduceSumOp>},
      {"ReduceMean", importReduce<ReduceMeanOp>},
      {"ReduceMax", importReduce<ReduceMaxOp>},
      {"CumSum", importCumSum},
      {"SoftmaxCrossEntropyLoss", importSoftmaxCrossEntropy},
      {"NegativeLogLikelihoodLoss", importNllLoss},
  });
}
