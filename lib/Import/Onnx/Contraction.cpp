//===- Contraction.cpp - ONNX contractions and normalisations -------------===//
//
// MatMul (numpy batching and vector operands) and Gemm become
// loom.dot_general; Softmax, LogSoftmax and LayerNormalization their loom
// ops.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

// Normalisation
//===----------------------------------------------------------------------===//

static LogicalResult importSoftmax(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis = im.normalizeAxis(node, im.intAttr(node, "axis", -1),
                                             im.typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  return im.defineResult(node, 0,
                         im.create<SoftmaxOp>(im.nodeLoc(node), *x, *axis));
}

static LogicalResult importLogSoftmax(Importer &im,
                                      const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis = im.normalizeAxis(node, im.intAttr(node, "axis", -1),
                                             im.typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  return im.defineResult(node, 0,
                         im.create<LogSoftmaxOp>(im.nodeLoc(node), *x, *axis));
}

/// LayerNormalization's optional outputs Mean and InvStdDev (when read):
/// the mean and 1/sqrt(variance + epsilon) over the normalised dimensions
/// `axis`.., in f32 (the default stash_type), with those dimensions kept as
/// size 1. They are computed apart from the fused loom.layer_norm, from
/// ops with VJPs, so gradients through them are exact too.
static void defineLayerNormStatistics(Importer &im, const onnx::NodeProto &node,
                                      Value x, int64_t axis, double eps) {
  Location loc = im.nodeLoc(node);
  RankedTensorType type = im.typeOf(x);
  int64_t rank = type.getRank();
  if (!type.getElementType().isF32()) {
    type = type.clone(im.b.getF32Type());
    x = ConvertOp::create(im.b, loc, type, x);
  }
  SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(axis, rank));
  SmallVector<int64_t> outer = llvm::to_vector(llvm::seq<int64_t>(0, axis));
  auto statType = type.clone(type.getShape().take_front(axis));
  SmallVector<int64_t> keptShape(type.getShape().take_front(axis));
  keptShape.append(rank - axis, 1);
  Value mean = ReduceMeanOp::create(im.b, loc, statType, x, dims);
  Value centered = SubOp::create(
      im.b, loc, x, BroadcastOp::create(im.b, loc, type, mean, outer));
  Value variance = ReduceMeanOp::create(
      im.b, loc, statType, MulOp::create(im.b, loc, centered, centered), dims);
  Value invStdDev = RsqrtOp::create(
      im.b, loc, AddOp::create(im.b, loc, variance, im.splat(eps, statType, loc)));
  im.define(node, 1, im.reshape(mean, keptShape, loc));
  im.define(node, 2, im.reshape(invStdDev, keptShape, loc));
}

static LogicalResult importLayerNorm(Importer &im,
                                     const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0), scale = im.input(node, 1);
  if (failed(x) || failed(scale))
    return failure();
  int64_t rank = im.typeOf(*x).getRank();
  FailureOr<int64_t> axis =
      im.normalizeAxis(node, im.intAttr(node, "axis", -1), rank);
  if (failed(axis))
    return failure();
  // Scale and bias broadcast to the normalised dimensions.
  ArrayRef<int64_t> normalized = im.typeOf(*x).getShape().drop_front(*axis);
  FailureOr<Value> s = im.broadcastOneWay(node, *scale, normalized, "Scale");
  if (failed(s))
    return failure();
  Value bias;
  if (im.hasInput(node, 2)) {
    FailureOr<Value> bv = im.input(node, 2);
    if (failed(bv))
      return failure();
    bv = im.broadcastOneWay(node, *bv, normalized, "B (the bias)");
    if (failed(bv))
      return failure();
    bias = *bv;
  }
  double eps = im.floatAttr(node, "epsilon", 1e-5f);
  if (im.isOutputUsed(node, 1) || im.isOutputUsed(node, 2))
    defineLayerNormStatistics(im, node, *x, *axis, eps);
  return im.defineResult(node, 0,
                         im.create<LayerNormOp>(im.nodeLoc(node), *x, *s, bias,
                                                im.b.getI64IntegerAttr(*axis),
                                                im.b.getF64FloatAttr(eps)));
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

static LogicalResult importMatMul(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> a = im.input(node, 0), bm = im.input(node, 1);
  if (failed(a) || failed(bm))
    return failure();
  Location loc = im.nodeLoc(node);
  Value lhs = *a, rhs = *bm;
  int64_t lr = im.typeOf(lhs).getRank(), rr = im.typeOf(rhs).getRank();
  if (lr == 0 || rr == 0)
    return im.nodeError(node) << "MatMul operands must have rank >= 1";
  // numpy: a vector operand gains a unit dimension that is dropped again.
  bool lhsVector = lr == 1, rhsVector = rr == 1;
  if (lhsVector)
    lhs = im.reshape(lhs, {1, im.typeOf(lhs).getDimSize(0)}, loc);
  if (rhsVector)
    rhs = im.reshape(rhs, {im.typeOf(rhs).getDimSize(0), 1}, loc);
  ArrayRef<int64_t> ls = im.typeOf(lhs).getShape(),
                    rs = im.typeOf(rhs).getShape();
  lr = ls.size();
  rr = rs.size();
  if (ls.back() != rs[rr - 2])
    return im.nodeError(node) << "contracting sizes differ: "
                              << formatDims(im.typeOf(*a).getShape()) << " x "
                              << formatDims(im.typeOf(*bm).getShape());
  FailureOr<DotGeneralOp> dot;
  if (rr == 2) {
    // [..., M, K] x [K, N]: contract the last lhs dim with rhs dim 0.
    dot = im.create<DotGeneralOp>(
        loc, lhs, rhs, ArrayRef<int64_t>{}, ArrayRef<int64_t>{},
        ArrayRef<int64_t>{lr - 1}, ArrayRef<int64_t>{0});
  } else {
    // Batched: broadcast the batch dimensions, then a batched dot.
    FailureOr<SmallVector<int64_t>> batch =
        broadcastShapes(ls.drop_back(2), rs.drop_back(2));
    if (failed(batch))
      return im.nodeError(node)
             << "batch dimensions of " << formatDims(im.typeOf(*a).getShape())
             << " and " << formatDims(im.typeOf(*bm).getShape())
             << " do not broadcast";
    SmallVector<int64_t> lt(*batch), rt(*batch);
    lt.append({ls[lr - 2], ls[lr - 1]});
    rt.append({rs[rr - 2], rs[rr - 1]});
    lhs = im.broadcastTo(lhs, lt, loc);
    rhs = im.broadcastTo(rhs, rt, loc);
    int64_t nb = batch->size();
    SmallVector<int64_t> bd(nb);
    std::iota(bd.begin(), bd.end(), 0);
    dot = im.create<DotGeneralOp>(
        loc, lhs, rhs, ArrayRef<int64_t>(bd), ArrayRef<int64_t>(bd),
        ArrayRef<int64_t>{nb + 1}, ArrayRef<int64_t>{nb});
  }
  if (failed(dot))
    return failure();
  Value result = *dot;
  if (lhsVector || rhsVector) {
    SmallVector<int64_t> shape(im.typeOf(result).getShape());
    if (rhsVector)
      shape.pop_back();
    if (lhsVector)
      shape.erase(shape.end() - (rhsVector ? 1 : 2));
    result = im.reshape(result, shape, loc);
  }
  im.define(node, 0, result);
  return success();
}

static LogicalResult importGemm(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> a = im.input(node, 0), bm = im.input(node, 1);
  if (failed(a) || failed(bm))
    return failure();
  if (im.typeOf(*a).getRank() != 2 || im.typeOf(*bm).getRank() != 2)
    return im.nodeError(node) << "Gemm operands must be matrices, not "
                              << formatDims(im.typeOf(*a).getShape()) << " and "
                              << formatDims(im.typeOf(*bm).getShape());
  Location loc = im.nodeLoc(node);
  bool transA = im.intAttr(node, "transA", 0),
       transB = im.intAttr(node, "transB", 0);
  double alpha = im.floatAttr(node, "alpha", 1.0f),
         beta = im.floatAttr(node, "beta", 1.0f);
  int64_t ka = transA ? 0 : 1, kb = transB ? 1 : 0;
  if (im.typeOf(*a).getDimSize(ka) != im.typeOf(*bm).getDimSize(kb))
    return im.nodeError(node) << "contracting sizes differ: "
                              << formatDims(im.typeOf(*a).getShape())
                              << (transA ? " (transposed)" : "") << " x "
                              << formatDims(im.typeOf(*bm).getShape())
                              << (transB ? " (transposed)" : "");
  FailureOr<DotGeneralOp> dot = im.create<DotGeneralOp>(
      loc, *a, *bm, ArrayRef<int64_t>{}, ArrayRef<int64_t>{},
      ArrayRef<int64_t>{ka}, ArrayRef<int64_t>{kb});
  if (failed(dot))
    return failure();
  Value y = *dot;
  if (alpha != 1.0)
    y = MulOp::create(im.b, loc, y, im.splat(alpha, im.typeOf(y), loc));
  if (im.hasInput(node, 2)) {
    FailureOr<Value> c = im.input(node, 2);
    if (failed(c))
      return failure();
    if (failed(sameElementType(im.nodeError(node),
                               im.typeOf(y).getElementType(),
                               im.typeOf(*c).getElementType())))
      return failure();
    FailureOr<Value> cb =
        im.broadcastOneWay(node, *c, im.typeOf(y).getShape(), "C");
    if (failed(cb))
      return failure();
    Value cv = *cb;
    if (beta != 1.0)
      cv = MulOp::create(im.b, loc, cv, im.splat(beta, im.typeOf(cv), loc));
    y = AddOp::create(im.b, loc, y, cv);
  }
  im.define(node, 0, y);
  return success();
}

void onnx_import::registerContractionHandlers(HandlerRegistry &registry) {
  registry.add({
      {"Softmax", importSoftmax},
      {"LogSoftmax", importLogSoftmax},
      {"LayerNormalization", importLayerNorm},
      {"MatMul", importMatMul},
      {"Gemm", importGemm},
  });
}
