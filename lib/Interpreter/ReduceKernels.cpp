//===- ReduceKernels.cpp - reduce_sum, reduce_mean, reduce_max ------------===//

#include "Kernels.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace loom {
namespace interp {

std::string reduce(ReduceKind kind, const Tensor &x, ArrayRef<int64_t> dims,
                   bool keepdims, Tensor &out) {
  SmallVector<bool> reduced(x.rank(), false);
  for (int64_t d : dims) {
    if (std::string err = checkDim(d, x.rank(), "reduced dimension");
        !err.empty())
      return err;
    if (reduced[d])
      return "reduced dimension " + std::to_string(d) + " appears twice";
    reduced[d] = true;
  }
  if (kind == ReduceKind::Mean && !x.isFloat())
    return std::string("reduce_mean expects a floating-point operand, got ") +
           getKindName(x.kind);
  if (x.kind == ElementKind::I1)
    return "expects a numeric operand, got i1";

  // Accumulate into the keepdims shape: operand index with reduced
  // dimensions set to 0.
  SmallVector<int64_t> kept, squeezed;
  for (int64_t d = 0; d < x.rank(); ++d) {
    kept.push_back(reduced[d] ? 1 : x.shape[d]);
    if (!reduced[d])
      squeezed.push_back(x.shape[d]);
  }
  SmallVector<int64_t> keptStrides = computeStrides(kept);
  int64_t outCount = getElementCount(kept).value_or(0);
  int64_t perOutput = outCount ? x.size() / outCount : 0;

  std::vector<double> floats;
  std::vector<int64_t> ints;
  if (x.isFloat())
    floats.assign(outCount, kind == ReduceKind::Max
                                ? -std::numeric_limits<double>::infinity()
                                : 0.0);
  else
    ints.assign(outCount, kind == ReduceKind::Max
                              ? (x.kind == ElementKind::I32
                                     ? std::numeric_limits<int32_t>::min()
                                     : std::numeric_limits<int64_t>::min())
                              : 0);
  int64_t i = 0;
  forEachIndex(x.shape, [&](ArrayRef<int64_t> index) {
    int64_t to = 0;
    for (int64_t d = 0; d < x.rank(); ++d)
      if (!reduced[d])
        to += index[d] * keptStrides[d];
    if (x.isFloat()) {
      double v = x.floats[i];
      double &acc = floats[to];
      if (kind != ReduceKind::Max)
        acc += v;
      else if (std::isnan(v) || std::isnan(acc))
        acc = std::numeric_limits<double>::quiet_NaN();
      else if (v > acc)
        acc = v;
    } else {
      int64_t v = x.ints[i];
      int64_t &acc = ints[to];
      if (kind == ReduceKind::Max)
        acc = v > acc ? v : acc;
      else // wraps
        acc = static_cast<int64_t>(static_cast<uint64_t>(acc) +
                                   static_cast<uint64_t>(v));
    }
    ++i;
  });

  out = Tensor::zeros(x.kind, keepdims ? ArrayRef<int64_t>(kept)
                                       : ArrayRef<int64_t>(squeezed));
  for (int64_t o = 0; o < outCount; ++o) {
    if (x.isFloat())
      out.floats[o] = roundTo(x.kind, kind == ReduceKind::Mean
                                          ? floats[o] / perOutput
                                          : floats[o]);
    else
      out.ints[o] = wrapTo(x.kind, ints[o]);
  }
  return "";
}

} // namespace interp
} // namespace loom
} // namespace mlir
