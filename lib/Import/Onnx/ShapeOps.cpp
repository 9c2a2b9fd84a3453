//===- ShapeOps.cpp - ONNX shape ops --------------------------------------===//
//
// Reshape, Transpose, Unsqueeze, Squeeze, Flatten, Expand, Concat, Split,
// Slice, Gather, GatherElements, GatherND, ScatterElements, ScatterND, Pad
// and Trilu of run-time values, and the ONNX shape rules (Reshape's 0 and -1,
// (un)squeezed axes, shape operands) that the constant folding of known
// tensors applies too. GatherElements, GatherND, Pad and Trilu of known
// tensors are evaluated here; of run-time values they become existing loom
// ops (a gather or scatter_add on the flattened data; concats of constant
// blocks or gathers at constant indices; a select under an iota mask), so
// they lower and differentiate like those.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

#include <algorithm>
#include <cstdlib>
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

/// SplitToSequence(x[, split]): the pieces of `x` along `axis` as a
/// sequence (split: one size for equal pieces, the last smaller, or the
/// sizes; without it, pieces of 1, squeezed unless keepdims).
static LogicalResult importSplitToSequence(Importer &im,
                                           const onnx::NodeProto &node) {
  FailureOr<Value> x = im.input(node, 0);
  if (failed(x))
    return failure();
  RankedTensorType type = im.typeOf(*x);
  FailureOr<int64_t> axis =
      im.normalizeAxis(node, im.intAttr(node, "axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t size = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (im.hasInput(node, 1)) {
    FailureOr<ConstTensor> split = im.requireConst(node, 1, "split");
    if (failed(split))
      return failure();
    if (split->shape.empty()) {
      int64_t piece = split->asInt(0);
      if (piece <= 0)
        return im.nodeError(node) << "split must be positive, got " << piece;
      for (int64_t at = 0; at < size; at += piece)
        sizes.push_back(std::min(piece, size - at));
    } else {
      sizes = *constAxes(&*split);
    }
  } else {
    sizes.assign(size, 1);
    squeeze = im.intAttr(node, "keepdims", 1) == 0;
  }
  if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != size)
    return im.nodeError(node)
           << "split sizes " << formatDims(sizes) << " do not add up to "
           << size << ", the size of dimension " << *axis;
  Location loc = im.nodeLoc(node);
  FailureOr<SplitOp> op =
      im.create<SplitOp>(loc, *x, *axis, ArrayRef<int64_t>(sizes));
  if (failed(op))
    return failure();
  SmallVector<Value> pieces(op->getResults().begin(), op->getResults().end());
  if (squeeze)
    for (Value &piece : pieces) {
      SmallVector<int64_t> shape(im.typeOf(piece).getShape());
      shape.erase(shape.begin() + *axis);
      piece = im.reshape(piece, shape, loc);
    }
  im.defineSequence(node, 0, std::move(pieces));
  return success();
}

/// SequenceAt(seq, position): one element of a sequence, at a known
/// position (negative counts from the end).
static LogicalResult importSequenceAt(Importer &im,
                                      const onnx::NodeProto &node) {
  const SmallVector<Value> *sequence = im.sequenceInput(node, 0);
  if (!sequence)
    return im.nodeError(node) << "input 0 must be a sequence that "
                                 "SplitToSequence made";
  FailureOr<ConstTensor> position = im.requireConst(node, 1, "position");
  if (failed(position))
    return failure();
  int64_t count = sequence->size(), at = position->asInt(0);
  if (position->size() != 1 || at < -count || at >= count)
    return im.nodeError(node) << "position " << at
                              << " is out of range for a sequence of "
                              << count << " tensors";
  im.define(node, 0, (*sequence)[at < 0 ? at + count : at]);
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

/// Copies element `src` of `from` to element `dst` of `to` (same kind).
static void copyElement(const ConstTensor &from, int64_t src, ConstTensor &to,
                        int64_t dst) {
  if (to.isFloat())
    to.f[dst] = from.f[src];
  else
    to.i[dst] = from.i[src];
}

//===----------------------------------------------------------------------===//
// GatherElements
//===----------------------------------------------------------------------===//

/// The data (input 0) and indices (input 1) of GatherElements/GatherND:
/// each a known tensor (`cdata`/`cidx`, the value then null) or a run-time
/// value, with their shapes; the indices are checked to be int32/int64.
struct GatherOperands {
  const ConstTensor *cdata = nullptr, *cidx = nullptr;
  Value data, indices;
  SmallVector<int64_t> dataShape, idxShape;
  Type idxType;
};

static FailureOr<GatherOperands> readGatherOperands(Importer &im,
                                                    const onnx::NodeProto &node) {
  GatherOperands r;
  r.cdata = im.constInput(node, 0);
  r.cidx = im.constInput(node, 1);
  if (!r.cdata) {
    FailureOr<Value> v = im.input(node, 0);
    if (failed(v))
      return failure();
    r.data = *v;
  }
  if (!r.cidx) {
    FailureOr<Value> v = im.input(node, 1);
    if (failed(v))
      return failure();
    r.indices = *v;
  }
  r.dataShape = r.cdata ? r.cdata->shape
                        : SmallVector<int64_t>(im.typeOf(r.data).getShape());
  r.idxShape = r.cidx ? r.cidx->shape
                      : SmallVector<int64_t>(im.typeOf(r.indices).getShape());
  r.idxType =
      r.cidx ? r.cidx->elementType : im.typeOf(r.indices).getElementType();
  if (!isa<IntegerType>(r.idxType) || r.idxType.isInteger(1))
    return im.nodeError(node)
           << "indices must be int32 or int64, not " << r.idxType;
  return r;
}

/// The run-time indices of `operands`, as int64.
static Value widenedIndices(Importer &im, const GatherOperands &operands,
                            Location loc) {
  if (operands.idxType == im.b.getI64Type())
    return operands.indices;
  auto i64 = RankedTensorType::get(operands.idxShape, im.b.getI64Type());
  return ConvertOp::create(im.b, loc, i64, operands.indices);
}

/// Run-time int64 `indices` into a dimension of `size`, the negative ones
/// counted from its end (ONNX's rule).
static Value wrapNegative(Importer &im, Value indices, int64_t size,
                          Location loc) {
  auto type = cast<RankedTensorType>(indices.getType());
  Value negative = CompareOp::create(im.b, loc, ComparisonDirection::lt,
                                     indices, im.splat(0, type, loc));
  return SelectOp::create(
      im.b, loc, negative,
      AddOp::create(im.b, loc, indices, im.splat(size, type, loc)), indices);
}

/// Flat positions into the data of the elements GatherElements and
/// ScatterElements address: element p of the indices names the data element
/// at p's coordinates with its `axis` coordinate replaced by indices[p]
/// (negative ones counted from the end). Known indices give checked
/// constant positions (`known`), run-time ones positions computed from
/// iotas (`value`). Also checks the shapes and reads `axis`.
struct ElementPositions {
  std::optional<ConstTensor> known;
  Value value;
  int64_t total = 0; // elements of the data
};

static FailureOr<ElementPositions>
elementPositions(Importer &im, const onnx::NodeProto &node,
                 const GatherOperands &operands) {
  ArrayRef<int64_t> dataShape = operands.dataShape,
                    idxShape = operands.idxShape;
  int64_t rank = dataShape.size();
  if (rank == 0 || static_cast<int64_t>(idxShape.size()) != rank)
    return im.nodeError(node) << "indices of shape " << formatDims(idxShape)
                              << " must have the rank of data, "
                              << formatDims(dataShape) << " (at least 1)";
  FailureOr<int64_t> axis =
      im.normalizeAxis(node, im.intAttr(node, "axis", 0), rank);
  if (failed(axis))
    return failure();
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && idxShape[d] > dataShape[d])
      return im.nodeError(node)
             << "indices of shape " << formatDims(idxShape)
             << " exceed data of shape " << formatDims(dataShape)
             << " in dimension " << d;
  std::optional<int64_t> total = numElements(dataShape);
  std::optional<int64_t> count = numElements(idxShape);
  if (!total || !count)
    return im.nodeError(node) << "shapes " << formatDims(dataShape) << " and "
                              << formatDims(idxShape) << " are too large";
  SmallVector<int64_t> strides = computeStrides(dataShape);
  SmallVector<int64_t> idxStrides = computeStrides(idxShape);
  int64_t size = dataShape[*axis];
  Location loc = im.nodeLoc(node);
  ElementPositions result;
  result.total = *total;

  if (const ConstTensor *cidx = operands.cidx) {
    if (*count > kMaxFoldElements && !operands.cdata)
      return im.nodeError(node) << "constant indices of " << *count
                                << " elements are too large to import";
    ConstTensor flat = ConstTensor::make(im.b.getI64Type(), idxShape);
    for (int64_t p = 0; p < *count; ++p) {
      int64_t v = cidx->i[p];
      if (v < -size || v >= size)
        return im.nodeError(node) << "index " << v << " is out of range for "
                                  << "dimension " << *axis << " of size "
                                  << size;
      if (v < 0)
        v += size;
      int64_t pos = 0;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t coord = (p / idxStrides[d]) % idxShape[d];
        pos += (d == *axis ? v : coord) * strides[d];
      }
      flat.i[p] = pos;
    }
    result.known = std::move(flat);
    return result;
  }
  // Run-time indices: wrap negative ones, then
  // position = index * stride(axis) + sum over d != axis of iota_d * stride(d).
  Value indices = wrapNegative(im, widenedIndices(im, operands, loc), size, loc);
  auto i64 = cast<RankedTensorType>(indices.getType());
  if (strides[*axis] != 1)
    indices =
        MulOp::create(im.b, loc, indices, im.splat(strides[*axis], i64, loc));
  for (int64_t d = 0; d < rank; ++d) {
    if (d == *axis || idxShape[d] == 1)
      continue;
    Value coord = IotaOp::create(im.b, loc, i64, d);
    if (strides[d] != 1)
      coord = MulOp::create(im.b, loc, coord, im.splat(strides[d], i64, loc));
    indices = AddOp::create(im.b, loc, indices, coord);
  }
  result.value = indices;
  return result;
}

/// GatherElements(data, indices, axis): out[p] = data[p with its `axis`
/// coordinate replaced by indices[p]]. Known data and indices fold; else one
/// loom.gather on the flattened data at the elements' positions (whose VJP
/// is a scatter_add).
static LogicalResult importGatherElements(Importer &im,
                                          const onnx::NodeProto &node) {
  FailureOr<GatherOperands> operands = readGatherOperands(im, node);
  if (failed(operands))
    return failure();
  FailureOr<ElementPositions> positions =
      elementPositions(im, node, *operands);
  if (failed(positions))
    return failure();
  Location loc = im.nodeLoc(node);
  if (positions->known && operands->cdata) {
    ConstTensor c =
        ConstTensor::make(operands->cdata->elementType, operands->idxShape);
    for (int64_t p = 0, n = c.size(); p < n; ++p)
      copyElement(*operands->cdata, positions->known->i[p], c, p);
    im.defineConst(node, 0, std::move(c));
    return success();
  }
  Value indices = positions->known ? im.materialize(*positions->known, loc)
                                   : positions->value;
  FailureOr<Value> data = im.input(node, 0);
  if (failed(data))
    return failure();
  Value flatData = im.reshape(*data, {positions->total}, loc);
  return im.defineResult(
      node, 0, im.create<GatherOp>(loc, flatData, indices, int64_t(0)));
}

/// The `reduction` of a ScatterElements/ScatterND node: none, add, mul,
/// max or min.
static FailureOr<std::string> scatterReduction(Importer &im,
                                               const onnx::NodeProto &node) {
  std::string reduction = im.stringAttr(node, "reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      reduction != "max" && reduction != "min")
    return im.nodeError(node) << "reduction '" << reduction
                              << "' is not supported (none, add, mul, max "
                                 "and min are)";
  return reduction;
}

/// Elements of the [updates, rows, ...] mask a max/min scatter lowers to;
/// larger scatters are refused rather than made quadratic.
constexpr int64_t kDenseScatterLimit = int64_t(1) << 26;

/// Updates a product scatter multiplies in one after another; more are
/// refused rather than unrolled.
constexpr int64_t kProductScatterLimit = 1024;

/// The [U, R, rest...] mask of which of the U updates (`indices` along axis
/// 0 of `target`) lands on which of the R rows, the updates spread over it
/// and `fill` elsewhere. Refused past kDenseScatterLimit elements.
static FailureOr<Value> spreadUpdates(Importer &im,
                                      const onnx::NodeProto &node,
                                      StringRef reduction, Value target,
                                      Value indices, Value updates,
                                      double fill) {
  Location loc = im.nodeLoc(node);
  RankedTensorType targetType = im.typeOf(target);
  ArrayRef<int64_t> rest = targetType.getShape().drop_front();
  int64_t rows = targetType.getDimSize(0);
  int64_t count = 1;
  for (int64_t d : im.typeOf(indices).getShape())
    count *= d;
  int64_t restElements = 1;
  for (int64_t d : rest)
    restElements *= d;
  if (count * rows * restElements > kDenseScatterLimit)
    return im.nodeError(node)
           << "reduction '" << reduction << "' scatters " << count
           << " updates into " << rows
           << " rows through a dense mask, which would need "
           << count * rows * restElements << " elements (the limit is "
           << kDenseScatterLimit << "); this scatter is not supported";
  SmallVector<int64_t> updShape{count};
  llvm::append_range(updShape, rest);
  Value flatIndices = im.reshape(indices, {count}, loc);
  Value flatUpdates = im.reshape(updates, updShape, loc);
  SmallVector<int64_t> maskShape{count, rows};
  llvm::append_range(maskShape, rest);
  auto indexType = RankedTensorType::get(
      maskShape, im.typeOf(flatIndices).getElementType());
  auto valueType = RankedTensorType::get(maskShape,
                                         targetType.getElementType());
  Value row = IotaOp::create(im.b, loc, indexType, 1);
  Value at = BroadcastOp::create(im.b, loc, indexType, flatIndices,
                                 ArrayRef<int64_t>{0});
  Value hit = CompareOp::create(im.b, loc, ComparisonDirection::eq, row, at);
  SmallVector<int64_t> updDims{0};
  for (int64_t d = 0; d < static_cast<int64_t>(rest.size()); ++d)
    updDims.push_back(2 + d);
  Value spread = BroadcastOp::create(im.b, loc, valueType, flatUpdates,
                                     updDims);
  return Value(
      SelectOp::create(im.b, loc, hit, spread, im.splat(fill, valueType, loc)));
}

/// `target` with each update multiplied into the elements it lands on
/// (ONNX's `reduction` mul): the spread updates (1 where an update does not
/// land) multiplied into the target one update after another, in the
/// order ONNX's reference applies them. Float data; at most
/// kProductScatterLimit updates. Trains through the products and selects.
static FailureOr<Value> scatterProduct(Importer &im,
                                       const onnx::NodeProto &node,
                                       Value target, Value indices,
                                       Value updates) {
  Location loc = im.nodeLoc(node);
  RankedTensorType targetType = im.typeOf(target);
  if (!isa<FloatType>(targetType.getElementType()))
    return im.nodeError(node)
           << "reduction 'mul' on " << targetType.getElementType()
           << " data is not supported (float data only)";
  int64_t count = 1;
  for (int64_t d : im.typeOf(indices).getShape())
    count *= d;
  if (count > kProductScatterLimit)
    return im.nodeError(node)
           << "reduction 'mul' multiplies " << count
           << " updates in one after another (the limit is "
           << kProductScatterLimit << "); this scatter is not supported";
  FailureOr<Value> spread =
      spreadUpdates(im, node, "mul", target, indices, updates, 1.0);
  if (failed(spread))
    return failure();
  ArrayRef<int64_t> maskShape = im.typeOf(*spread).getShape();
  SmallVector<int64_t> strides(maskShape.size(), 1);
  Value result = target;
  for (int64_t u = 0; u < count; ++u) {
    SmallVector<int64_t> start(maskShape.size(), 0), limit(maskShape);
    start[0] = u;
    limit[0] = u + 1;
    FailureOr<SliceOp> factor = im.create<SliceOp>(
        loc, *spread, ArrayRef<int64_t>(start), ArrayRef<int64_t>(limit),
        ArrayRef<int64_t>(strides));
    if (failed(factor))
      return failure();
    result = MulOp::create(
        im.b, loc, result,
        im.reshape(*factor, targetType.getShape(), loc));
  }
  return result;
}

/// `target` with `updates` scattered along axis 0 at `indices` keeping the
/// larger (max) or smaller (min) value at each element: densely, as a
/// [U, R, rest...] mask of which of the U updates lands on which of the R
/// rows, the updates spread over it (-inf elsewhere), reduced over the
/// updates and combined with the target. Float data only (min: max of the
/// negations). Trains through the reductions' and selects' gradients.
static FailureOr<Value> scatterExtreme(Importer &im,
                                       const onnx::NodeProto &node, bool min,
                                       Value target, Value indices,
                                       Value updates) {
  Location loc = im.nodeLoc(node);
  RankedTensorType targetType = im.typeOf(target);
  if (!isa<FloatType>(targetType.getElementType()))
    return im.nodeError(node) << "reduction '" << (min ? "min" : "max")
                              << "' on " << targetType.getElementType()
                              << " data is not supported (float data only)";
  if (min) {
    updates = NegOp::create(im.b, loc, updates);
    target = NegOp::create(im.b, loc, target);
  }
  FailureOr<Value> masked =
      spreadUpdates(im, node, min ? "min" : "max", target, indices, updates,
                    -std::numeric_limits<double>::infinity());
  if (failed(masked))
    return failure();
  FailureOr<ReduceMaxOp> best =
      im.create<ReduceMaxOp>(loc, *masked, ArrayRef<int64_t>{0}, false);
  if (failed(best))
    return failure();
  Value result = MaxOp::create(im.b, loc, target, *best);
  if (min)
    result = NegOp::create(im.b, loc, result);
  return result;
}

/// `target` with `updates` scattered along axis 0 at `indices` (loom.
/// scatter_add's form: updates shaped indices ++ target's other
/// dimensions), ONNX's `reduction` being `max` or `min` (scatterExtreme),
/// `mul` (scatterProduct), `add` (one scatter_add) or `none`
/// (the updates and a count of writes scatter_added into zeros, the written
/// elements selected; duplicate indices, for which ONNX leaves `none`
/// undefined, add up). Shared by ScatterElements and ScatterND.
static FailureOr<Value> scatterInto(Importer &im, const onnx::NodeProto &node,
                                    StringRef reduction, Value target,
                                    Value indices, Value updates) {
  Location loc = im.nodeLoc(node);
  RankedTensorType targetType = im.typeOf(target);
  auto scatter = [&](Value into, Value values) {
    return im.create<ScatterAddOp>(loc, into, indices, values, int64_t(0));
  };
  if (reduction == "max" || reduction == "min")
    return scatterExtreme(im, node, reduction == "min", target, indices,
                          updates);
  if (reduction == "mul")
    return scatterProduct(im, node, target, indices, updates);
  if (reduction == "add") {
    FailureOr<ScatterAddOp> added = scatter(target, updates);
    if (failed(added))
      return failure();
    return Value(*added);
  }
  FailureOr<ScatterAddOp> values =
      scatter(im.splat(0, targetType, loc), updates);
  auto countType = targetType.clone(im.b.getI32Type());
  FailureOr<ScatterAddOp> writes = scatter(
      im.splat(0, countType, loc),
      im.splat(1, im.typeOf(updates).clone(im.b.getI32Type()), loc));
  if (failed(values) || failed(writes))
    return failure();
  Value written = CompareOp::create(im.b, loc, ComparisonDirection::gt,
                                    *writes, im.splat(0, countType, loc));
  return Value(SelectOp::create(im.b, loc, written, *values, target));
}

/// ScatterElements(data, indices, updates, axis, reduction): the data with
/// updates[p] written (`none`) or added (`add`) at the element
/// GatherElements would read for p. On the flattened data: `add` is one
/// loom.scatter_add; `none` scatter_adds the updates and a count of writes
/// into zeros and selects the written elements (duplicate indices, for
/// which ONNX leaves `none` undefined, add up).
static LogicalResult importScatterElements(Importer &im,
                                           const onnx::NodeProto &node) {
  FailureOr<std::string> reduction = scatterReduction(im, node);
  if (failed(reduction))
    return failure();
  FailureOr<GatherOperands> operands = readGatherOperands(im, node);
  if (failed(operands))
    return failure();
  FailureOr<Value> updates = im.input(node, 2);
  if (failed(updates))
    return failure();
  if (im.typeOf(*updates).getShape() != ArrayRef<int64_t>(operands->idxShape))
    return im.nodeError(node)
           << "updates of shape "
           << formatDims(im.typeOf(*updates).getShape())
           << " must have the shape of indices, "
           << formatDims(operands->idxShape);
  FailureOr<ElementPositions> positions =
      elementPositions(im, node, *operands);
  if (failed(positions))
    return failure();
  Location loc = im.nodeLoc(node);
  Value indices = positions->known ? im.materialize(*positions->known, loc)
                                   : positions->value;
  FailureOr<Value> data = im.input(node, 0);
  if (failed(data))
    return failure();
  RankedTensorType dataType = im.typeOf(*data);
  if (im.typeOf(*updates).getElementType() != dataType.getElementType())
    return im.nodeError(node) << "updates must have the element type of data, "
                              << dataType.getElementType();
  Value flatData = im.reshape(*data, {positions->total}, loc);
  FailureOr<Value> result =
      scatterInto(im, node, *reduction, flatData, indices, *updates);
  if (failed(result))
    return failure();
  im.define(node, 0, im.reshape(*result, dataType.getShape(), loc));
  return success();
}

//===----------------------------------------------------------------------===//
// GatherND
//===----------------------------------------------------------------------===//

/// The rows of the data flattened over its leading b + K dimensions that
/// GatherND/ScatterND index vectors address (K the last dimension of the
/// indices, b the batch dimensions): each vector's flat position, its batch
/// coordinates from iotas and its K coordinates wrapped when negative.
/// Known indices give checked constant positions (`known`), run-time ones
/// i64 positions (`value`), shaped like the indices without their last
/// dimension (`posShape`); `rest` are the data dimensions after the indexed
/// ones. Also checks the shapes.
struct NDPositions {
  std::optional<ConstTensor> known;
  Value value;
  SmallVector<int64_t> posShape, rest;
  int64_t leadCount = 0, restCount = 0, count = 0;
};

static FailureOr<NDPositions> ndPositions(Importer &im,
                                          const onnx::NodeProto &node,
                                          const GatherOperands &operands,
                                          int64_t batchDims) {
  const ConstTensor *cidx = operands.cidx;
  ArrayRef<int64_t> dataShape = operands.dataShape,
                    idxShape = operands.idxShape;
  int64_t rank = dataShape.size(), idxRank = idxShape.size();
  if (idxRank < 1 || batchDims < 0 || batchDims >= std::min(rank, idxRank))
    return im.nodeError(node)
           << "batch_dims " << batchDims << " must be below the ranks of data "
           << formatDims(dataShape) << " and indices " << formatDims(idxShape);
  int64_t k = idxShape.back();
  if (k < 1 || batchDims + k > rank)
    return im.nodeError(node)
           << "index vectors of " << k << " coordinates (the last dimension "
           << "of indices " << formatDims(idxShape) << ") must index 1 to "
           << rank - batchDims << " dimensions of data "
           << formatDims(dataShape) << " after its " << batchDims
           << " batch dimensions";
  for (int64_t d = 0; d < batchDims; ++d)
    if (idxShape[d] != dataShape[d])
      return im.nodeError(node)
             << "batch dimension " << d << " of indices "
             << formatDims(idxShape) << " differs from data's "
             << formatDims(dataShape);
  NDPositions r;
  ArrayRef<int64_t> lead = dataShape.take_front(batchDims + k);
  r.rest.assign(dataShape.begin() + batchDims + k, dataShape.end());
  r.posShape.assign(idxShape.begin(), idxShape.end() - 1);
  std::optional<int64_t> leadCount = numElements(lead);
  std::optional<int64_t> restCount = numElements(r.rest);
  std::optional<int64_t> count = numElements(r.posShape);
  if (!leadCount || !restCount || !count)
    return im.nodeError(node) << "shapes " << formatDims(dataShape) << " and "
                              << formatDims(idxShape) << " are too large";
  r.leadCount = *leadCount;
  r.restCount = *restCount;
  r.count = *count;
  SmallVector<int64_t> leadStrides = computeStrides(lead);
  SmallVector<int64_t> posStrides = computeStrides(r.posShape);
  Location loc = im.nodeLoc(node);

  if (cidx) {
    if (*count > kMaxFoldElements && !operands.cdata)
      return im.nodeError(node) << "constant indices of " << *count * k
                                << " elements are too large to import";
    ConstTensor flat = ConstTensor::make(im.b.getI64Type(), r.posShape);
    for (int64_t p = 0; p < *count; ++p) {
      int64_t pos = 0;
      for (int64_t d = 0; d < batchDims; ++d)
        pos += (p / posStrides[d]) % r.posShape[d] * leadStrides[d];
      for (int64_t j = 0; j < k; ++j) {
        int64_t size = lead[batchDims + j];
        int64_t v = cidx->i[p * k + j];
        if (v < -size || v >= size)
          return im.nodeError(node)
                 << "index " << v << " is out of range for dimension "
                 << batchDims + j << " of size " << size;
        pos += (v < 0 ? v + size : v) * leadStrides[batchDims + j];
      }
      flat.i[p] = pos;
    }
    r.known = std::move(flat);
    return r;
  }
  // position = sum over batch dims of iota * stride
  //          + sum over j of wrap(indices[..., j]) * stride(b + j).
  Value indices = widenedIndices(im, operands, loc);
  auto posType = RankedTensorType::get(r.posShape, im.b.getI64Type());
  Value position;
  auto accumulate = [&](Value term, int64_t stride) {
    if (stride != 1)
      term = MulOp::create(im.b, loc, term, im.splat(stride, posType, loc));
    position =
        position ? Value(AddOp::create(im.b, loc, position, term)) : term;
  };
  for (int64_t d = 0; d < batchDims; ++d)
    accumulate(IotaOp::create(im.b, loc, posType, d), leadStrides[d]);
  for (int64_t j = 0; j < k; ++j) {
    SmallVector<int64_t> start(idxRank, 0), limit(idxShape), step(idxRank, 1);
    start.back() = j;
    limit.back() = j + 1;
    FailureOr<SliceOp> column =
        im.create<SliceOp>(loc, indices, ArrayRef<int64_t>(start),
                           ArrayRef<int64_t>(limit), ArrayRef<int64_t>(step));
    if (failed(column))
      return failure();
    Value coord = wrapNegative(im, im.reshape(*column, r.posShape, loc),
                               lead[batchDims + j], loc);
    accumulate(coord, leadStrides[batchDims + j]);
  }
  r.value = position;
  return r;
}

/// GatherND(data, indices, batch_dims = b): out[B, M] = data[B, indices[B,
/// M, 0..K), ...], B the b batch coordinates: one loom.gather (whose VJP is
/// a scatter_add) of the rows ndPositions gives from the data flattened over
/// its leading b + K dimensions. Known data and indices fold.
static LogicalResult importGatherND(Importer &im, const onnx::NodeProto &node) {
  FailureOr<GatherOperands> operands = readGatherOperands(im, node);
  if (failed(operands))
    return failure();
  FailureOr<NDPositions> positions =
      ndPositions(im, node, *operands, im.intAttr(node, "batch_dims", 0));
  if (failed(positions))
    return failure();
  Location loc = im.nodeLoc(node);
  if (positions->known && operands->cdata) {
    int64_t rows = positions->count, width = positions->restCount;
    if (rows * width > kMaxFoldElements)
      return im.nodeError(node) << "a result of " << rows * width
                                << " elements is too large to fold";
    SmallVector<int64_t> outShape(positions->posShape);
    llvm::append_range(outShape, positions->rest);
    ConstTensor c = ConstTensor::make(operands->cdata->elementType, outShape);
    for (int64_t p = 0; p < rows; ++p)
      for (int64_t e = 0; e < width; ++e)
        copyElement(*operands->cdata, positions->known->i[p] * width + e, c,
                    p * width + e);
    im.defineConst(node, 0, std::move(c));
    return success();
  }
  Value indices = positions->known ? im.materialize(*positions->known, loc)
                                   : positions->value;
  FailureOr<Value> data = im.input(node, 0);
  if (failed(data))
    return failure();
  SmallVector<int64_t> flatShape{positions->leadCount};
  llvm::append_range(flatShape, positions->rest);
  Value flatData = im.reshape(*data, flatShape, loc);
  return im.defineResult(
      node, 0, im.create<GatherOp>(loc, flatData, indices, int64_t(0)));
}

/// ScatterND(data, indices, updates, reduction): the data with each update
/// slice updates[M] written (`none`) or added (`add`) at the row
/// GatherND would read for indices[M] (no batch dimensions): scatterInto
/// along axis 0 of the data flattened over its indexed dimensions.
static LogicalResult importScatterND(Importer &im,
                                     const onnx::NodeProto &node) {
  FailureOr<std::string> reduction = scatterReduction(im, node);
  if (failed(reduction))
    return failure();
  FailureOr<GatherOperands> operands = readGatherOperands(im, node);
  if (failed(operands))
    return failure();
  FailureOr<NDPositions> positions = ndPositions(im, node, *operands, 0);
  if (failed(positions))
    return failure();
  FailureOr<Value> data = im.input(node, 0);
  FailureOr<Value> updates = im.input(node, 2);
  if (failed(data) || failed(updates))
    return failure();
  RankedTensorType dataType = im.typeOf(*data);
  SmallVector<int64_t> updatesShape(positions->posShape);
  llvm::append_range(updatesShape, positions->rest);
  RankedTensorType updatesType = im.typeOf(*updates);
  if (updatesType.getShape() != ArrayRef<int64_t>(updatesShape) ||
      updatesType.getElementType() != dataType.getElementType())
    return im.nodeError(node)
           << "updates of type " << updatesType << " must be "
           << formatDims(updatesShape) << " of " << dataType.getElementType()
           << " (the indices' shape without its last dimension, then the "
              "data dimensions they do not index)";
  Location loc = im.nodeLoc(node);
  Value indices = positions->known ? im.materialize(*positions->known, loc)
                                   : positions->value;
  SmallVector<int64_t> flatShape{positions->leadCount};
  llvm::append_range(flatShape, positions->rest);
  FailureOr<Value> result =
      scatterInto(im, node, *reduction, im.reshape(*data, flatShape, loc),
                  indices, *updates);
  if (failed(result))
    return failure();
  im.define(node, 0, im.reshape(*result, dataType.getShape(), loc));
  return success();
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

enum class PadMode { Constant, Edge, Reflect, Wrap };

/// The source index along a dimension of size `n` of padded position `i`
/// (counted from the first original element, so negative before it), or -1
/// where constant mode fills in the value. Reflect and wrap repeat
/// periodically for pads longer than the dimension, as numpy.pad does.
static int64_t padSource(PadMode mode, int64_t i, int64_t n) {
  if (i >= 0 && i < n)
    return i;
  switch (mode) {
  case PadMode::Constant:
    return -1;
  case PadMode::Edge:
    return i < 0 ? 0 : n - 1;
  case PadMode::Wrap:
    return ((i % n) + n) % n;
  case PadMode::Reflect: {
    if (n == 1)
      return 0;
    int64_t period = 2 * (n - 1);
    int64_t m = ((i % period) + period) % period;
    return m < n ? m : period - m;
  }
  }
  return -1;
}

/// Pad (opset 13+: pads, constant_value and axes are inputs). Negative pads
/// crop first (one slice); then each padded dimension grows by a concat of
/// constant blocks (constant mode) or a gather at constant source indices
/// (edge, reflect, wrap). Known data folds.
static LogicalResult importPad(Importer &im, const onnx::NodeProto &node) {
  std::string modeName = im.stringAttr(node, "mode", "constant");
  PadMode mode;
  if (modeName == "constant")
    mode = PadMode::Constant;
  else if (modeName == "edge")
    mode = PadMode::Edge;
  else if (modeName == "reflect")
    mode = PadMode::Reflect;
  else if (modeName == "wrap")
    mode = PadMode::Wrap;
  else
    return im.nodeError(node) << "mode '" << modeName
                              << "' is not supported (Loom imports "
                                 "'constant', 'edge', 'reflect', 'wrap')";
  const ConstTensor *cdata = im.constInput(node, 0);
  Value x;
  if (!cdata) {
    FailureOr<Value> v = im.input(node, 0);
    if (failed(v))
      return failure();
    x = *v;
  }
  SmallVector<int64_t> shape =
      cdata ? cdata->shape : SmallVector<int64_t>(im.typeOf(x).getShape());
  Type elementType = cdata ? cdata->elementType : im.typeOf(x).getElementType();
  int64_t rank = shape.size();
  FailureOr<ConstTensor> padsT = im.requireConst(node, 1, "pads");
  if (failed(padsT))
    return failure();
  if (padsT->isFloat() || padsT->shape.size() != 1)
    return im.nodeError(node) << "pads must be a 1-D int64 tensor";
  SmallVector<int64_t> axes;
  if (im.hasInput(node, 3)) {
    FailureOr<ConstTensor> a = im.requireConst(node, 3, "axes");
    if (failed(a))
      return failure();
    if (a->isFloat() || a->shape.size() > 1)
      return im.nodeError(node) << "axes must be a 1-D integer tensor";
    axes = *constAxes(&*a);
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  int64_t naxes = axes.size();
  if (padsT->size() != 2 * naxes)
    return im.nodeError(node) << "pads has " << padsT->size()
                              << " entries; " << naxes << " axes need "
                              << 2 * naxes;
  SmallVector<int64_t> before(rank, 0), after(rank, 0);
  SmallVector<bool> seen(rank, false);
  for (int64_t k = 0; k < naxes; ++k) {
    FailureOr<int64_t> axis =
        im.normalizeAxis(node, axes[k], rank, "axes entry");
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return im.nodeError(node)
             << "axes " << formatDims(axes) << " repeat dimension " << *axis;
    seen[*axis] = true;
    before[*axis] = padsT->i[k];
    after[*axis] = padsT->i[naxes + k];
  }
  // Sizes after cropping and after padding; pads are bounded so that the
  // arithmetic cannot overflow.
  SmallVector<int64_t> cropped(shape), padded(shape);
  for (int64_t d = 0; d < rank; ++d) {
    constexpr int64_t kLimit = int64_t(1) << 40;
    if (std::abs(before[d]) > kLimit || std::abs(after[d]) > kLimit)
      return im.nodeError(node) << "pads " << before[d] << ", " << after[d]
                                << " of dimension " << d << " are too large";
    cropped[d] = shape[d] + std::min<int64_t>(before[d], 0) +
                 std::min<int64_t>(after[d], 0);
    if (cropped[d] < 0)
      return im.nodeError(node)
             << "pads " << before[d] << ", " << after[d] << " remove more "
             << "than the " << shape[d] << " elements of dimension " << d;
    padded[d] = cropped[d] + std::max<int64_t>(before[d], 0) +
                std::max<int64_t>(after[d], 0);
    if (mode != PadMode::Constant && cropped[d] == 0 && padded[d] > 0)
      return im.nodeError(node) << "cannot pad the empty dimension " << d
                                << " in '" << modeName << "' mode";
  }
  if (!numElements(padded))
    return im.nodeError(node) << "the padded shape " << formatDims(padded)
                              << " is too large";

  // The constant value: known (a scalar) or computed at run time.
  double constant = 0;
  Value runtimeConstant;
  if (mode == PadMode::Constant && im.hasInput(node, 2)) {
    if (const ConstTensor *c = im.constInput(node, 2)) {
      if (c->size() != 1)
        return im.nodeError(node) << "constant_value must hold one element, "
                                  << "not " << c->size();
      if (c->elementType != elementType)
        return im.nodeError(node) << "constant_value has element type "
                                  << c->elementType << ", the data "
                                  << elementType;
      constant = c->asDouble(0);
    } else {
      FailureOr<Value> v = im.input(node, 2);
      if (failed(v))
        return failure();
      if (im.typeOf(*v).getElementType() != elementType ||
          im.typeOf(*v).getNumElements() != 1)
        return im.nodeError(node)
               << "constant_value must be one element of the data's type "
               << elementType << ", not " << im.typeOf(*v);
      runtimeConstant = im.reshape(*v, {}, im.nodeLoc(node));
    }
  }

  if (cdata && !runtimeConstant &&
      *numElements(padded) <= kMaxFoldElements) {
    ConstTensor c = ConstTensor::make(elementType, padded);
    SmallVector<int64_t> inStrides = computeStrides(shape);
    SmallVector<int64_t> outStrides = computeStrides(padded);
    for (int64_t p = 0, e = c.size(); p < e; ++p) {
      int64_t src = 0;
      for (int64_t d = 0; d < rank && src >= 0; ++d) {
        int64_t coord = (p / outStrides[d]) % padded[d];
        // Position in the cropped dimension, then in the original one.
        int64_t j = padSource(mode, coord - std::max<int64_t>(before[d], 0),
                              cropped[d]);
        src = j < 0 ? -1 : src + (j - std::min<int64_t>(before[d], 0)) *
                                     inStrides[d];
      }
      if (src >= 0)
        copyElement(*cdata, src, c, p);
      else if (c.isFloat())
        c.f[p] = constant;
      else
        c.i[p] = static_cast<int64_t>(constant);
    }
    im.defineConst(node, 0, std::move(c));
    return success();
  }

  Location loc = im.nodeLoc(node);
  if (cdata)
    x = *im.input(node, 0);
  // Crop.
  if (cropped != shape) {
    SmallVector<int64_t> start(rank), limit(rank), stride(rank, 1);
    for (int64_t d = 0; d < rank; ++d) {
      start[d] = -std::min<int64_t>(before[d], 0);
      limit[d] = start[d] + cropped[d];
    }
    FailureOr<SliceOp> slice =
        im.create<SliceOp>(loc, x, ArrayRef<int64_t>(start),
                           ArrayRef<int64_t>(limit), ArrayRef<int64_t>(stride));
    if (failed(slice))
      return failure();
    x = *slice;
  }
  // Pad one dimension at a time.
  for (int64_t d = 0; d < rank; ++d) {
    int64_t lo = std::max<int64_t>(before[d], 0);
    int64_t hi = std::max<int64_t>(after[d], 0);
    if (lo == 0 && hi == 0)
      continue;
    RankedTensorType type = im.typeOf(x);
    if (mode == PadMode::Constant) {
      auto block = [&](int64_t n) -> Value {
        SmallVector<int64_t> blockShape(type.getShape());
        blockShape[d] = n;
        auto blockType = type.clone(blockShape);
        if (runtimeConstant)
          return BroadcastOp::create(im.b, loc, blockType, runtimeConstant,
                                     ArrayRef<int64_t>{});
        return im.splat(constant, blockType, loc);
      };
      SmallVector<Value> pieces;
      if (lo)
        pieces.push_back(block(lo));
      pieces.push_back(x);
      if (hi)
        pieces.push_back(block(hi));
      FailureOr<ConcatOp> concat =
          im.create<ConcatOp>(loc, ValueRange(pieces), d);
      if (failed(concat))
        return failure();
      x = *concat;
      continue;
    }
    int64_t n = cropped[d];
    if (padded[d] > kMaxFoldElements)
      return im.nodeError(node) << "dimension " << d << " padded to "
                                << padded[d] << " is too large";
    ConstTensor idx = ConstTensor::make(im.b.getI64Type(), {padded[d]});
    for (int64_t j = 0; j < padded[d]; ++j)
      idx.i[j] = padSource(mode, j - lo, n);
    FailureOr<GatherOp> gather =
        im.create<GatherOp>(loc, x, im.materialize(idx, loc), d);
    if (failed(gather))
      return failure();
    x = *gather;
  }
  im.define(node, 0, x);
  return success();
}

//===----------------------------------------------------------------------===//
// Trilu
//===----------------------------------------------------------------------===//

/// Trilu: keeps the elements of the last two dimensions with
/// `col - row >= k` (upper) or `col - row <= k` (lower), zeroes the others:
/// a select under a mask built from two iotas (and a run-time k, if k is
/// not known). Known input and k fold.
static LogicalResult importTrilu(Importer &im, const onnx::NodeProto &node) {
  bool upper = im.intAttr(node, "upper", 1) != 0;
  int64_t k = 0;
  Value runtimeK;
  if (const ConstTensor *kT = im.constInput(node, 1)) {
    if (kT->isFloat() || kT->elementType.isInteger(1) || kT->size() != 1)
      return im.nodeError(node) << "k must be one integer";
    k = kT->i[0];
  } else if (im.hasInput(node, 1)) {
    FailureOr<Value> v = im.input(node, 1);
    if (failed(v))
      return failure();
    RankedTensorType kType = im.typeOf(*v);
    if (!kType.getElementType().isInteger(64) || kType.getNumElements() != 1)
      return im.nodeError(node) << "k must be one int64, not " << kType;
    runtimeK = im.reshape(*v, {}, im.nodeLoc(node));
  }
  const ConstTensor *cx = runtimeK ? nullptr : im.constInput(node, 0);
  SmallVector<int64_t> shape;
  Value x;
  if (cx) {
    shape = cx->shape;
  } else {
    FailureOr<Value> v = im.input(node, 0);
    if (failed(v))
      return failure();
    x = *v;
    shape.assign(im.typeOf(x).getShape().begin(), im.typeOf(x).getShape().end());
  }
  int64_t rank = shape.size();
  if (rank < 2)
    return im.nodeError(node) << "the input must have rank 2 or more, not "
                              << rank;
  int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  auto keep = [&](int64_t r, int64_t c) {
    // In 128 bits: k may be anything.
    __int128 diff = static_cast<__int128>(c) - r;
    return upper ? diff >= k : diff <= k;
  };
  if (cx) {
    ConstTensor c = *cx;
    for (int64_t p = 0, e = c.size(); p < e; ++p) {
      int64_t col = p % std::max<int64_t>(cols, 1);
      int64_t row = (p / std::max<int64_t>(cols, 1)) % std::max<int64_t>(rows, 1);
      if (!keep(row, col)) {
        if (c.isFloat())
          c.f[p] = 0;
        else
          c.i[p] = 0;
      }
    }
    im.defineConst(node, 0, std::move(c));
    return success();
  }
  Location loc = im.nodeLoc(node);
  RankedTensorType type = im.typeOf(x);
  // The mask is all-true or all-false when k lies beyond every diagonal.
  int64_t kept = runtimeK ? 1 : 0;
  if (rows > 0 && cols > 0 && !runtimeK)
    for (int64_t r : {int64_t(0), rows - 1})
      for (int64_t c : {int64_t(0), cols - 1})
        kept += keep(r, c);
  if (kept == 4 || rows == 0 || cols == 0) {
    im.define(node, 0, x);
    return success();
  }
  Value zeros = im.splat(0, type, loc);
  if (kept == 0) {
    im.define(node, 0, zeros);
    return success();
  }
  auto i64 = RankedTensorType::get({rows, cols}, im.b.getI64Type());
  Value row = IotaOp::create(im.b, loc, i64, 0);
  Value col = IotaOp::create(im.b, loc, i64, 1);
  Value diff = SubOp::create(im.b, loc, col, row);
  Value kValue = runtimeK ? im.broadcastTo(runtimeK, i64.getShape(), loc)
                          : im.splat(static_cast<double>(k), i64, loc);
  Value mask = CompareOp::create(
      im.b, loc, upper ? ComparisonDirection::ge : ComparisonDirection::le,
      diff, kValue);
  mask = im.broadcastTo(mask, type.getShape(), loc);
  return im.defineResult(node, 0, im.create<SelectOp>(loc, mask, x, zeros));
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
      {"SplitToSequence", importSplitToSequence},
      {"SequenceAt", importSequenceAt},
      {"Slice", importSlice},
      {"Gather", importGather},
      {"GatherElements", importGatherElements},
      {"GatherND", importGatherND},
      {"ScatterElements", importScatterElements},
      {"ScatterND", importScatterND},
      {"Pad", importPad},
      {"Trilu", importTrilu},
  });
}
