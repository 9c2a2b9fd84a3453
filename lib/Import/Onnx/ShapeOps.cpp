//===- ShapeOps.cpp - ONNX shape ops --------------------------------------===//
//
// Reshape, Transpose, Unsqueeze, Squeeze, Flatten, Expand, Concat, Split,
// Slice and Gather of run-time values, and the ONNX shape rules (Reshape's
// 0 and -1, (un)squeezed axes, shape operands) that the constant folding of
// known tensors applies too.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

// Shape ops
//===----------------------------------------------------------------------===//

/// ONNX Reshape's target: 0 copies the input size (unless allowzero), one
/// -1 is inferred.
FailureOr<SmallVector<int64_t>>
onnx_import::reshapeTarget(ArrayRef<int64_t> in, const ConstTensor &shape,
                           bool allowZero, std::string &error) {
  if (shape.shape.size() != 1) {
    error = "the target shape must be a 1-D tensor, not one of shape " +
            formatDims(shape.shape);
    return failure();
  }
  SmallVector<int64_t> out;
  int64_t known = 1, inferAt = -1;
  int64_t total = numElements(in).value_or(-1);
  for (int64_t k = 0, e = shape.size(); k < e; ++k) {
    int64_t d = shape.asInt(k);
    if (d == 0 && !allowZero) {
      if (k >= static_cast<int64_t>(in.size())) {
        error = "0 at position " + std::to_string(k) +
                " copies an input dimension that does not exist";
        return failure();
      }
      d = in[k];
    }
    if (d == -1) {
      if (inferAt >= 0) {
        error = "more than one -1";
        return failure();
      }
      inferAt = k;
      out.push_back(-1);
      continue;
    }
    if (d < 0) {
      error = "negative size " + std::to_string(d);
      return failure();
    }
    if (d != 0 && known > std::numeric_limits<int64_t>::max() / d) {
      error = "the target " + formatDims(shape.i) + " is too large";
      return failure();
    }
    known *= d;
    out.push_back(d);
  }
  if (inferAt >= 0) {
    if (known == 0 || total % known != 0) {
      error = "cannot infer the -1 in " + formatDims(shape.i) + " (" +
              std::to_string(total) + " elements)";
      return failure();
    }
    out[inferAt] = total / known;
  } else if (known != total) {
    error = "the target " + formatDims(out) + " has " +
            std::to_string(known) + " elements but the input has " +
            std::to_string(total);
    return failure();
  }
  return out;
}

static LogicalResult importReshape(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  FailureOr<ConstTensor> shape = im.requireConst(node, 1, "the target shape");
  if (failed(x) || failed(shape))
    return failure();
  std::string error;
  auto target = reshapeTarget(im.typeOf(*x).getShape(), *shape,
                              im.intAttr(node, "allowzero", 0), error);
  if (failed(target))
    return im.nodeError(node)
           << "cannot reshape " << formatDims(im.typeOf(*x).getShape()) << ": "
           << error;
  im.define(node, 0, im.reshape(*x, *target, im.nodeLoc(node)));
  return success();
}

static LogicalResult importTranspose(Importer &im,
                                     const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = im.typeOf(*x).getRank();
  SmallVector<int64_t> perm;
  if (auto p = im.intsAttr(node, "perm")) {
    perm = *p;
  } else {
    // The default reverses the dimensions.
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  }
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  bool isPermutation = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t d = 0; isPermutation && d < rank; ++d)
    isPermutation = sorted[d] == d;
  if (!isPermutation)
    return im.nodeError(node)
           << "perm " << formatDims(perm) << " is not a permutation of the "
           << rank << " input dimensions";
  return im.defineResult(
      node, 0,
      im.create<TransposeOp>(im.nodeLoc(node), *x, ArrayRef<int64_t>(perm)));
}

/// Axes of Squeeze/Unsqueeze/Reduce*: an input since opset 13 (18 for most
/// reductions), an attribute before.
std::optional<SmallVector<int64_t>>
onnx_import::constAxes(const ConstTensor *c) {
  if (!c)
    return std::nullopt;
  SmallVector<int64_t> axes;
  for (int64_t k = 0, e = c->size(); k < e; ++k)
    axes.push_back(c->asInt(k));
  return axes;
}

/// Result shape of Unsqueeze(in, axes).
FailureOr<SmallVector<int64_t>>
onnx_import::unsqueezedShape(ArrayRef<int64_t> in, ArrayRef<int64_t> axes,
                             std::string &error) {
  int64_t outRank = in.size() + axes.size();
  SmallVector<bool> isNew(outRank, false);
  for (int64_t a : axes) {
    int64_t n = a < 0 ? a + outRank : a;
    if (n < 0 || n >= outRank) {
      error = "axes entry " + std::to_string(a) + " is out of range for rank " +
              std::to_string(outRank);
      return failure();
    }
    if (isNew[n]) {
      error = "axes " + formatDims(axes) + " repeat dimension " +
              std::to_string(n);
      return failure();
    }
    isNew[n] = true;
  }
  SmallVector<int64_t> shape;
  size_t next = 0;
  for (int64_t d = 0; d < outRank; ++d)
    shape.push_back(isNew[d] ? 1 : in[next++]);
  return shape;
}

/// Result shape of Squeeze(in, axes); without axes every size-1 dimension
/// goes.
FailureOr<SmallVector<int64_t>>
onnx_import::squeezedShape(ArrayRef<int64_t> in,
                           const std::optional<SmallVector<int64_t>> &axes,
                           std::string &error) {
  int64_t rank = in.size();
  SmallVector<bool> drop(rank, false);
  if (axes) {
    for (int64_t a : *axes) {
      int64_t n = a < 0 ? a + rank : a;
      if (n < 0 || n >= rank) {
        error = "axes entry " + std::to_string(a) +
                " is out of range for rank " + std::to_string(rank);
        return failure();
      }
      if (in[n] != 1) {
        error = "cannot squeeze dimension " + std::to_string(a) +
                " of size " + std::to_string(in[n]);
        return failure();
      }
      drop[n] = true;
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      drop[d] = in[d] == 1;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d])
      shape.push_back(in[d]);
  return shape;
}

static LogicalResult importUnsqueeze(Importer &im,
                                     const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  FailureOr<ConstTensor> axesT = im.requireConst(node, 1, "axes");
  if (failed(x) || failed(axesT))
    return failure();
  std::string error;
  auto shape =
      unsqueezedShape(im.typeOf(*x).getShape(), *constAxes(&*axesT), error);
  if (failed(shape))
    return im.nodeError(node) << error;
  im.define(node, 0, im.reshape(*x, *shape, im.nodeLoc(node)));
  return success();
}

static LogicalResult importSqueeze(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  std::optional<SmallVector<int64_t>> axes;
  if (im.hasInput(node, 1)) {
    FailureOr<ConstTensor> axesT = im.requireConst(node, 1, "axes");
    if (failed(axesT))
      return failure();
    axes = constAxes(&*axesT);
  }
  std::string error;
  auto shape = squeezedShape(im.typeOf(*x).getShape(), axes, error);
  if (failed(shape))
    return im.nodeError(node) << error;
  im.define(node, 0, im.reshape(*x, *shape, im.nodeLoc(node)));
  return success();
}

static LogicalResult importFlatten(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> in = im.typeOf(*x).getShape();
  int64_t axis = im.intAttr(node, "axis", 1);
  if (axis < 0)
    axis += in.size();
  if (axis < 0 || axis > static_cast<int64_t>(in.size()))
    return im.nodeError(node) << "axis " << im.intAttr(node, "axis", 1)
                              << " is out of range for rank " << in.size();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d)
    (d < axis ? outer : inner) *= in[d];
  im.define(node, 0, im.reshape(*x, {outer, inner}, im.nodeLoc(node)));
  return success();
}

/// The 1-D, non-negative shape held by `t` (Expand, ConstantOfShape).
FailureOr<SmallVector<int64_t>> onnx_import::shapeOperand(const ConstTensor &t,
                                                          std::string &error) {
  if (t.shape.size() != 1) {
    error = "the shape must be a 1-D tensor, not one of shape " +
            formatDims(t.shape);
    return failure();
  }
  SmallVector<int64_t> shape = *constAxes(&t);
  if (!numElements(shape)) {
    error = "the shape " + formatDims(shape) +
            " has a negative or too large size";
    return failure();
  }
  return shape;
}

static LogicalResult importExpand(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  FailureOr<ConstTensor> shapeT = im.requireConst(node, 1, "the target shape");
  if (failed(x) || failed(shapeT))
    return failure();
  std::string error;
  FailureOr<SmallVector<int64_t>> target = shapeOperand(*shapeT, error);
  if (failed(target))
    return im.nodeError(node) << error;
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(im.typeOf(*x).getShape(), *target);
  if (failed(shape))
    return im.nodeError(node)
           << "cannot expand " << formatDims(im.typeOf(*x).getShape()) << " to "
           << formatDims(*target);
  im.define(node, 0, im.broadcastTo(*x, *shape, im.nodeLoc(node)));
  return success();
}

static LogicalResult importConcat(Importer &im, const onnx::NodeProto &node) {
  SmallVector<Value> inputs;
  for (int k = 0; k < node.input_size(); ++k) {
    FailureOr<Value> v = im.input(node, k);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  if (inputs.empty())
    return im.nodeError(node) << "needs at least one input";
  FailureOr<int64_t> axis = im.normalizeAxis(node, im.intAttr(node, "axis", 0),
                                             im.typeOf(inputs[0]).getRank());
  if (failed(axis))
    return failure();
  return im.defineResult(
      node, 0,
      im.create<ConcatOp>(im.nodeLoc(node), ValueRange(inputs), *axis));
}

static LogicalResult importSplit(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = im.typeOf(*x).getRank();
  FailureOr<int64_t> axis =
      im.normalizeAxis(node, im.intAttr(node, "axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t size = im.typeOf(*x).getDimSize(*axis);
  int64_t outputs = node.output_size();
  SmallVector<int64_t> sizes;
  if (im.hasInput(node, 1)) {
    FailureOr<ConstTensor> split = im.requireConst(node, 1, "split");
    if (failed(split))
      return failure();
    sizes = *constAxes(&*split);
  } else {
    // Opset 18: num_outputs pieces of ceil(size / n), the last smaller;
    // before: one equal piece per output.
    bool hasNum = im.attr(node, "num_outputs");
    int64_t n = hasNum ? im.intAttr(node, "num_outputs", 1) : outputs;
    if (n != outputs || n <= 0)
      return im.nodeError(node) << "has " << outputs << " outputs but "
                                << (hasNum ? "num_outputs = " : "")
                                << (hasNum ? std::to_string(n) : "none")
                                << (hasNum ? "" : " were requested");
    if (!hasNum && size % n != 0)
      return im.nodeError(node)
             << "cannot split dimension " << *axis << " of size " << size
             << " into " << n << " equal pieces; give split sizes";
    int64_t piece = (size + n - 1) / n;
    for (int64_t k = 0; k < n; ++k)
      sizes.push_back(std::clamp<int64_t>(size - k * piece, 0, piece));
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    return im.nodeError(node) << "has " << outputs << " outputs but "
                              << sizes.size() << " split sizes";
  if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != size)
    return im.nodeError(node)
           << "split sizes " << formatDims(sizes) << " do not add up to "
           << size << ", the size of dimension " << *axis;
  FailureOr<SplitOp> op =
      im.create<SplitOp>(im.nodeLoc(node), *x, *axis, ArrayRef<int64_t>(sizes));
  if (failed(op))
    return failure();
  for (auto [k, r] : llvm::enumerate(op->getResults()))
    im.define(node, k, r);
  return success();
}

static LogicalResult importSlice(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  FailureOr<ConstTensor> starts = im.requireConst(node, 1, "starts");
  FailureOr<ConstTensor> ends = im.requireConst(node, 2, "ends");
  if (failed(x) || failed(starts) || failed(ends))
    return failure();
  ArrayRef<int64_t> in = im.typeOf(*x).getShape();
  int64_t rank = in.size();
  SmallVector<int64_t> axes, steps;
  if (im.hasInput(node, 3)) {
    FailureOr<ConstTensor> a = im.requireConst(node, 3, "axes");
    if (failed(a))
      return failure();
    axes = *constAxes(&*a);
  } else {
    for (int64_t k = 0; k < starts->size(); ++k)
      axes.push_back(k);
  }
  if (im.hasInput(node, 4)) {
    FailureOr<ConstTensor> s = im.requireConst(node, 4, "steps");
    if (failed(s))
      return failure();
    steps = *constAxes(&*s);
  } else {
    steps.assign(axes.size(), 1);
  }
  if (starts->size() != static_cast<int64_t>(axes.size()) ||
      ends->size() != static_cast<int64_t>(axes.size()) ||
      steps.size() != axes.size())
    return im.nodeError(node)
           << "starts, ends, axes and steps differ in length ("
           << starts->size() << ", " << ends->size() << ", " << axes.size()
           << ", " << steps.size() << ")";
  SmallVector<int64_t> start(rank, 0), limit(in), stride(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    FailureOr<int64_t> axis =
        im.normalizeAxis(node, axes[k], rank, "axes entry");
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return im.nodeError(node)
             << "axes " << formatDims(axes) << " repeat dimension " << *axis;
    seen[*axis] = true;
    int64_t size = in[*axis];
    if (steps[k] <= 0)
      return im.nodeError(node) << "step " << steps[k] << " on axis " << *axis
                                << " is not supported (only positive steps)";
    // Positive steps: negative indices count from the end, then both clamp
    // to [0, size].
    auto clampIndex = [&](int64_t v) {
      if (v < 0)
        v += size;
      return std::clamp<int64_t>(v, 0, size);
    };
    start[*axis] = clampIndex(starts->asInt(k));
    limit[*axis] = std::max(start[*axis], clampIndex(ends->asInt(k)));
    // A step past the end takes one element; clamping keeps the slice's
    // size arithmetic far from overflow.
    stride[*axis] = std::min<int64_t>(steps[k], std::max<int64_t>(size, 1));
  }
  return im.defineResult(
      node, 0,
      im.create<SliceOp>(im.nodeLoc(node), *x, ArrayRef<int64_t>(start),
                         ArrayRef<int64_t>(limit), ArrayRef<int64_t>(stride)));
}

static LogicalResult importGather(Importer &im, const onnx::NodeProto &node) {
  FailureOr<Value> data = im.input(node, 0);
  if (failed(data))
    return failure();
  int64_t rank = im.typeOf(*data).getRank();
  FailureOr<int64_t> axis =
      im.normalizeAxis(node, im.intAttr(node, "axis", 0), rank);
  if (failed(axis))
    return failure();
  Value indices;
  if (const ConstTensor *c = im.constInput(node, 1)) {
    // Constant indices: normalise negative ones (ONNX allows them) now.
    if (c->isFloat() || c->elementType.isInteger(1))
      return im.nodeError(node)
             << "indices must be int32 or int64, not " << c->elementType;
    ConstTensor fixed = *c;
    int64_t size = im.typeOf(*data).getDimSize(*axis);
    for (int64_t &v : fixed.i) {
      if (v < -size || v >= size)
        return im.nodeError(node)
               << "index " << v << " is out of range for "
               << "dimension " << *axis << " of size " << size;
      if (v < 0)
        v += size;
    }
    indices = im.materialize(fixed, im.nodeLoc(node));
  } else {
    FailureOr<Value> v = im.input(node, 1);
    if (failed(v))
      return failure();
    indices = *v;
  }
  if (!isa<IntegerType>(im.typeOf(indices).getElementType()) ||
      im.typeOf(indices).getElementType().isInteger(1))
    return im.nodeError(node) << "indices must be int32 or int64, not "
                              << im.typeOf(indices).getElementType();
  if (!im.constInput(node, 1)) {
    // Run-time indices may be negative too (counted from the end), while
    // loom.gather takes [0, size): wrap them explicitly.
    Location loc = im.nodeLoc(node);
    RankedTensorType type = im.typeOf(indices);
    Value zero = im.splat(0, type, loc);
    Value size = im.splat(im.typeOf(*data).getDimSize(*axis), type, loc);
    Value negative =
        CompareOp::create(im.b, loc, ComparisonDirection::lt, indices, zero);
    Value wrapped = AddOp::create(im.b, loc, indices, size);
    indices = SelectOp::create(im.b, loc, negative, wrapped, indices);
  }
  return im.defineResult(
      node, 0, im.create<GatherOp>(im.nodeLoc(node), *data, indices, *axis));
}

void onnx_import::registerShapeHandlers(HandlerRegistry &registry) {
  registry.add({
      {"Reshape", importReshape},
      {"Transpose", importTranspose},
      {"Unsqueeze", importUnsqueeze},
      {"Squeeze", importSqueeze},
      {"Flatten", importFlatten},
      {"Expand", importExpand},
      {"Concat", importConcat},
      {"Split", importSplit},
      {"Slice", importSlice},
      {"Gather", importGather},
  });
}
