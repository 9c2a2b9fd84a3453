//===- Losses.cpp - ONNX reductions and losses ----------------------------===//
//
// ReduceSum, ReduceMean and ReduceMax (axes as attribute or input), and the
// losses: SoftmaxCrossEntropyLoss, and NegativeLogLikelihoodLoss of a
// LogSoftmax, both as loom.cross_entropy.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"

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

static LogicalResult importCrossEntropy(Importer &im,
                                        const onnx::NodeProto &node,
                                        Value scores, Value labels) {
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
  return im.defineResult(
      node, 0, im.create<CrossEntropyOp>(loc, scores, labels, r, ignore));
}

static LogicalResult importSoftmaxCrossEntropy(Importer &im,
                                               const onnx::NodeProto &node) {
  if (im.hasInput(node, 2))
    return im.nodeError(node) << "class weights (input 2) are not supported";
  if (failed(im.requireUnused(node, 1, "log_prob")))
    return failure();
  FailureOr<Value> scores = im.input(node, 0), labels = im.input(node, 1);
  if (failed(scores) || failed(labels))
    return failure();
  return importCrossEntropy(im, node, *scores, *labels);
}

static LogicalResult importNllLoss(Importer &im, const onnx::NodeProto &node) {
  // NLL(log_softmax(x, axis=1)) == cross_entropy(x): Loom imports that pair
  // and nothing else (NLL of arbitrary inputs has no loom op). The
  // LogSoftmax, if nothing else uses it, is removed as dead code.
  if (im.hasInput(node, 2))
    return im.nodeError(node) << "class weights (input 2) are not supported";
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
  return importCrossEntropy(im, node, *logits, *labels);
}

void onnx_import::registerLossHandlers(HandlerRegistry &registry) {
  registry.add({
      {"ReduceSum", importReduce<ReduceSumOp>},
      {"ReduceMean", importReduce<ReduceMeanOp>},
      {"ReduceMax", importReduce<ReduceMaxOp>},
      {"SoftmaxCrossEntropyLoss", importSoftmaxCrossEntropy},
      {"NegativeLogLikelihoodLoss", importNllLoss},
  });
}
