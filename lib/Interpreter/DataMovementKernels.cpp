//===- DataMovementKernels.cpp - Shape and data movement loom ops ---------===//
//
// transpose, broadcast and slice are strided views of their operand: result
// element `index` (row-major) is operand element
// `offset + sum(index[d] * strides[d])`, copied by copyStrided(). gather
// computes the operand index of each result element explicitly; scatter_add
// is its dual, adding each update element at the target index gather would
// read it from.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "loom/Support/HalfFloat.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

#include <cstring>

namespace mlir {
namespace loom {
namespace interp {

Tensor gatherElements(const Tensor &x, ArrayRef<int64_t> shape,
                      ArrayRef<int64_t> sourceIndex) {
  Tensor out = Tensor::zeros(x.kind, shape);
  for (size_t i = 0; i < sourceIndex.size(); ++i) {
    if (x.isFloat())
      out.floats[i] = x.floats[sourceIndex[i]];
    else
      out.ints[i] = x.ints[sourceIndex[i]];
  }
  return out;
}

Tensor copyStrided(const Tensor &x, ArrayRef<int64_t> shape,
                   ArrayRef<int64_t> strides, int64_t offset) {
  Tensor out = Tensor::zeros(x.kind, shape);
  int64_t rank = static_cast<int64_t>(shape.size());
  SmallVector<int64_t> index(rank, 0);
  int64_t source = offset;
  for (int64_t i = 0, e = out.size(); i < e; ++i) {
    if (out.isFloat())
      out.floats[i] = x.floats[source];
    else
      out.ints[i] = x.ints[source];
    // Next index in row-major order, updating the source offset.
    for (int64_t d = rank - 1; d >= 0; --d) {
      source += strides[d];
      if (++index[d] < shape[d])
        break;
      source -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return out;
}

namespace {
std::string checkCount(ArrayRef<int64_t> shape) {
  if (getElementCount(shape))
    return "";
  return "result shape " + formatShape(shape) + " has a negative or too "
                                                "large size";
}
} // namespace

std::string reshape(const Tensor &x, ArrayRef<int64_t> shape, Tensor &out) {
  SmallVector<int64_t> sizes(shape);
  int64_t known = 1, dynamic = -1;
  for (auto [i, d] : llvm::enumerate(sizes)) {
    if (d == ShapedType::kDynamic) {
      if (dynamic >= 0)
        return "the result type " + formatShape(shape) +
               " has more than one dynamic size; run loom-shape-inference "
               "(with arg-shapes=...) first";
      dynamic = static_cast<int64_t>(i);
    } else {
      known *= d;
    }
  }
  if (dynamic >= 0) {
    if (known == 0 || x.size() % known)
      return "cannot infer the dynamic size of result " + formatShape(shape) +
             " from " + std::to_string(x.size()) + " elements";
    sizes[dynamic] = x.size() / known;
  }
  std::optional<int64_t> count = getElementCount(sizes);
  if (!count || *count != x.size())
    return "cannot reshape " + formatShape(x.shape) + " (" +
           std::to_string(x.size()) + " elements) into " + formatShape(sizes);
  out = x;
  out.shape = sizes;
  return "";
}

std::string transpose(const Tensor &x, ArrayRef<int64_t> permutation,
                      Tensor &out) {
  if (static_cast<int64_t>(permutation.size()) != x.rank())
    return "permutation has " + std::to_string(permutation.size()) +
           " entries for an operand of rank " + std::to_string(x.rank());
  SmallVector<bool> seen(x.rank(), false);
  SmallVector<int64_t> shape, strides;
  SmallVector<int64_t> operandStrides = computeStrides(x.shape);
  for (int64_t p : permutation) {
    if (p < 0 || p >= x.rank() || seen[p])
      return "permutation " + formatShape(permutation) +
             " is not a permutation of [0, " + std::to_string(x.rank()) + ")";
    seen[p] = true;
    shape.push_back(x.shape[p]);
    strides.push_back(operandStrides[p]);
  }
  out = copyStrided(x, shape, strides, 0);
  return "";
}

std::string broadcast(const Tensor &x, ArrayRef<int64_t> dims,
                      ArrayRef<int64_t> shape, Tensor &out) {
  if (static_cast<int64_t>(dims.size()) != x.rank())
    return "dims has " + std::to_string(dims.size()) +
           " entries for an operand of rank " + std::to_string(x.rank());
  SmallVector<int64_t> sizes(shape);
  SmallVector<int64_t> strides(sizes.size(), 0);
  SmallVector<int64_t> operandStrides = computeStrides(x.shape);
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= static_cast<int64_t>(sizes.size()) ||
        (i > 0 && d <= dims[i - 1]))
      return "dims " + formatShape(dims) +
             " must be strictly increasing and within the result rank " +
             std::to_string(sizes.size());
    int64_t size = x.shape[i];
    if (sizes[d] == ShapedType::kDynamic && size != 1)
      sizes[d] = size;
    if (size != 1 && size != sizes[d])
      return "operand dimension " + std::to_string(i) + " of size " +
             std::to_string(size) + " cannot broadcast to size " +
             (sizes[d] == ShapedType::kDynamic ? std::string("?")
                                               : std::to_string(sizes[d]));
    if (size != 1)
      strides[d] = operandStrides[i];
  }
  if (llvm::is_contained(sizes, ShapedType::kDynamic))
    return "the result type " + formatShape(shape) +
           " has dynamic sizes that the operand does not determine; run "
           "loom-shape-inference (with arg-shapes=...) first";
  if (std::string err = checkCount(sizes); !err.empty())
    return err;
  out = copyStrided(x, sizes, strides, 0);
  return "";
}

std::string slice(const Tensor &x, ArrayRef<int64_t> start,
                  ArrayRef<int64_t> limit, ArrayRef<int64_t> strides,
                  Tensor &out) {
  int64_t rank = x.rank();
  if (static_cast<int64_t>(start.size()) != rank ||
      static_cast<int64_t>(limit.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return "start, limit and strides need one entry per dimension (rank " +
           std::to_string(rank) + ")";
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > x.shape[d] ||
        strides[d] < 1)
      return "dimension " + std::to_string(d) + " of size " +
             std::to_string(x.shape[d]) + ": start " +
             std::to_string(start[d]) + ", limit " + std::to_string(limit[d]) +
             ", stride " + std::to_string(strides[d]) +
             " do not satisfy 0 <= start <= limit <= size, stride >= 1";
    shape.push_back((limit[d] - start[d] + strides[d] - 1) / strides[d]);
  }
  SmallVector<int64_t> operandStrides = computeStrides(x.shape);
  SmallVector<int64_t> steps;
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    steps.push_back(strides[d] * operandStrides[d]);
    offset += start[d] * operandStrides[d];
  }
  out = copyStrided(x, shape, steps, offset);
  return "";
}

std::string concat(ArrayRef<const Tensor *> inputs, int64_t dim, Tensor &out) {
  if (inputs.empty())
    return "expects at least one input";
  const Tensor &first = *inputs.front();
  if (std::string err = checkDim(dim, first.rank(), "dim"); !err.empty())
    return err;
  SmallVector<int64_t> shape(first.shape);
  shape[dim] = 0;
  for (auto [i, t] : llvm::enumerate(inputs)) {
    bool compatible = t->kind == first.kind && t->rank() == first.rank();
    for (int64_t d = 0; compatible && d < first.rank(); ++d)
      compatible = d == dim || t->shape[d] == first.shape[d];
    if (!compatible)
      return "input " + std::to_string(i) + " " + t->typeString() +
             " does not match input 0 " + first.typeString() +
             " outside dimension " + std::to_string(dim);
    shape[dim] += t->shape[dim];
  }
  out = Tensor::zeros(first.kind, shape);
  // Each input is a run of `outer` blocks of `t.shape[dim] * inner` elements.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (int64_t d = dim + 1; d < first.rank(); ++d)
    inner *= shape[d];
  int64_t offset = 0;
  for (const Tensor *t : inputs) {
    int64_t block = t->shape[dim] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      int64_t to = o * shape[dim] * inner + offset;
      if (out.isFloat())
        std::copy_n(t->floats.begin() + o * block, block,
                    out.floats.begin() + to);
      else
        std::copy_n(t->ints.begin() + o * block, block, out.ints.begin() + to);
    }
    offset += block;
  }
  return "";
}

std::string split(const Tensor &x, int64_t dim, ArrayRef<int64_t> sizes,
                  SmallVectorImpl<Tensor> &outs) {
  if (std::string err = checkDim(dim, x.rank(), "dim"); !err.empty())
    return err;
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return "sizes " + formatShape(sizes) + " has a negative entry";
    total += s;
  }
  if (total != x.shape[dim])
    return "sizes " + formatShape(sizes) + " add up to " +
           std::to_string(total) + ", not the operand's size " +
           std::to_string(x.shape[dim]) + " along dim " + std::to_string(dim);
  SmallVector<int64_t> start(x.rank(), 0), limit(x.shape), strides(x.rank(), 1);
  outs.clear();
  for (int64_t s : sizes) {
    limit[dim] = start[dim] + s;
    Tensor piece;
    if (std::string err = slice(x, start, limit, strides, piece); !err.empty())
      return err;
    outs.push_back(std::move(piece));
    start[dim] = limit[dim];
  }
  return "";
}

namespace {
/// Checks that `indices` are integers in [0, size) for axis `axis` of
/// `tensor` (called `what` in the message).
std::string checkIndices(const Tensor &indices, int64_t size, int64_t axis,
                         const char *what, const Tensor &tensor) {
  if (indices.isFloat() || indices.kind == ElementKind::I1)
    return std::string("expects integer indices, got ") +
           getKindName(indices.kind);
  for (int64_t p = 0; p < indices.size(); ++p) {
    int64_t index = indices.ints[p];
    if (index < 0 || index >= size) {
      SmallVector<int64_t> at(indices.rank());
      int64_t rest = p;
      for (int64_t d = indices.rank() - 1; d >= 0; --d) {
        at[d] = rest % indices.shape[d];
        rest /= indices.shape[d];
      }
      return "index " + std::to_string(index) + " at position " +
             formatShape(at) + " of the indices is out of range [0, " +
             std::to_string(size) + ") for axis " + std::to_string(axis) +
             " of the " + what + " " + tensor.typeString();
    }
  }
  return "";
}
} // namespace

std::string gather(const Tensor &data, const Tensor &indices, int64_t axis,
                   Tensor &out) {
  if (std::string err = checkDim(axis, data.rank(), "axis"); !err.empty())
    return err;
  ArrayRef<int64_t> dataShape = data.shape;
  SmallVector<int64_t> shape(dataShape.take_front(axis));
  shape.append(indices.shape.begin(), indices.shape.end());
  shape.append(dataShape.begin() + axis + 1, dataShape.end());
  int64_t outer = 1, inner = 1, size = dataShape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= dataShape[d];
  for (int64_t d = axis + 1; d < data.rank(); ++d)
    inner *= dataShape[d];
  if (std::string err = checkIndices(indices, size, axis, "data", data);
      !err.empty())
    return err;
  std::vector<int64_t> source;
  source.reserve(outer * indices.size() * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p = 0; p < indices.size(); ++p)
      for (int64_t i = 0; i < inner; ++i)
        source.push_back((o * size + indices.ints[p]) * inner + i);
  out = gatherElements(data, shape, source);
  return "";
}

std::string scatterAdd(const Tensor &target, const Tensor &indices,
                       const Tensor &updates, int64_t axis, Tensor &out) {
  if (std::string err = checkDim(axis, target.rank(), "axis"); !err.empty())
    return err;
  if (updates.kind != target.kind)
    return std::string("updates element type ") + getKindName(updates.kind) +
           " differs from the target element type " +
           getKindName(target.kind);
  ArrayRef<int64_t> targetShape = target.shape;
  SmallVector<int64_t> expected(targetShape.take_front(axis));
  expected.append(indices.shape.begin(), indices.shape.end());
  expected.append(targetShape.begin() + axis + 1, targetShape.end());
  if (ArrayRef<int64_t>(updates.shape) != ArrayRef<int64_t>(expected))
    return "updates " + updates.typeString() + " must have shape " +
           formatShape(expected) +
           " (target[:axis] ++ indices ++ target[axis+1:])";
  int64_t outer = 1, inner = 1, size = targetShape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= targetShape[d];
  for (int64_t d = axis + 1; d < target.rank(); ++d)
    inner *= targetShape[d];
  if (std::string err = checkIndices(indices, size, axis, "target", target);
      !err.empty())
    return err;
  // Accumulate in double (or int64) per target element, in update order,
  // then round (or wrap) once.
  bool isFloat = target.isFloat();
  std::vector<double> sums;
  std::vector<int64_t> isums;
  if (isFloat)
    sums.assign(target.floats.begin(), target.floats.end());
  else
    isums = target.ints;
  int64_t u = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p = 0; p < indices.size(); ++p) {
      int64_t base = (o * size + indices.ints[p]) * inner;
      for (int64_t i = 0; i < inner; ++i, ++u) {
        if (isFloat)
          sums[base + i] += updates.floats[u];
        else
          isums[base + i] = static_cast<int64_t>(
              static_cast<uint64_t>(isums[base + i]) +
              static_cast<uint64_t>(updates.ints[u]));
      }
    }
  out = Tensor::zeros(target.kind, targetShape);
  for (int64_t e = 0, n = out.size(); e < n; ++e) {
    if (isFloat)
      out.floats[e] = roundTo(target.kind, sums[e]);
    else
      out.ints[e] = wrapTo(target.kind, isums[e]);
  }
  return "";
}

std::string iota(ElementKind kind, ArrayRef<int64_t> shape, int64_t dim,
                 Tensor &out) {
  if (llvm::is_contained(shape, ShapedType::kDynamic))
    return "the result type " + formatShape(shape) +
           " has dynamic sizes; run loom-shape-inference first";
  if (std::string err = checkDim(dim, static_cast<int64_t>(shape.size()), "dim");
      !err.empty())
    return err;
  if (std::string err = checkCount(shape); !err.empty())
    return err;
  out = Tensor::zeros(kind, shape);
  int64_t i = 0;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    if (out.isFloat())
      out.floats[i] = roundTo(kind, static_cast<double>(index[dim]));
    else
      out.ints[i] = wrapTo(kind, index[dim]);
    ++i;
  });
  return "";
}

std::string constant(ElementsAttr value, Tensor &out) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  std::optional<ElementKind> kind =
      type ? getElementKind(type.getElementType()) : std::nullopt;
  if (!kind || !type.hasStaticShape())
    return "the constant's type " +
           (type ? std::string("is not a static tensor of f32, f16, bf16, "
                               "i64, i32 or i1")
                 : std::string("is not a ranked tensor"));
  if (std::string err = checkCount(type.getShape()); !err.empty())
    return err;
  out = Tensor::zeros(*kind, type.getShape());
  int64_t count = out.size();

  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (out.isFloat()) {
      int64_t i = 0;
      for (APFloat v : dense.getValues<APFloat>()) {
        bool lost;
        v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
        out.floats[i++] = v.convertToFloat();
      }
    } else {
      int64_t i = 0;
      for (const APInt &v : dense.getValues<APInt>())
        out.ints[i++] = *kind == ElementKind::I1 ? !v.isZero()
                                                 : v.getSExtValue();
    }
    return "";
  }

  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return "the dense_resource constant has no data (was the file's "
             "resource section dropped?)";
    ArrayRef<char> bytes = blob->getData();
    size_t width = *kind == ElementKind::F32 || *kind == ElementKind::I32 ? 4
                   : *kind == ElementKind::I64                            ? 8
                   : *kind == ElementKind::I1                             ? 1
                                                                          : 2;
    if (bytes.size() != static_cast<size_t>(count) * width)
      return "the dense_resource constant has " + std::to_string(bytes.size()) +
             " bytes; its type needs " + std::to_string(count * width);
    for (int64_t i = 0; i < count; ++i) {
      const char *p = bytes.data() + i * width;
      uint64_t bits = 0;
      for (size_t b = 0; b < width; ++b) // little-endian
        bits |= static_cast<uint64_t>(static_cast<unsigned char>(p[b]))
                << (8 * b);
      switch (*kind) {
      case ElementKind::F32: {
        uint32_t word = static_cast<uint32_t>(bits);
        float f;
        std::memcpy(&f, &word, sizeof(f));
        out.floats[i] = f;
        break;
      }
      case ElementKind::F16:
        out.floats[i] = ::loom::halfBitsToFloat(static_cast<uint16_t>(bits));
        break;
      case ElementKind::BF16:
        out.floats[i] =
            ::loom::bfloat16BitsToFloat(static_cast<uint16_t>(bits));
        break;
      case ElementKind::I64:
        out.ints[i] = static_cast<int64_t>(bits);
        break;
      case ElementKind::I32:
        out.ints[i] = wrapTo(ElementKind::I32, static_cast<int64_t>(bits));
        break;
      case ElementKind::I1:
        out.ints[i] = bits != 0;
        break;
      }
    }
    return "";
  }
  return "constant attributes other than dense<...> and dense_resource<...> "
         "are not supported by the interpreter";
}

} // namespace interp
} // namespace loom
} // namespace mlir
