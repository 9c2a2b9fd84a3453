//===- Tensor.h - Values of the reference interpreter -----------*- C++ -*-===//
//
// A tensor as `loom-run` holds it: an element type, a shape and the
// elements in row-major order. Floating-point elements (f32, f16, bf16) are
// stored as float, always holding a value of the element type (an f16
// tensor holds floats that are exactly f16 values); integer elements (i64,
// i32, i1) are stored as int64_t, always in the element type's range (i1 is
// 0 or 1). Kernels compute in double/float or int64 and round or wrap each
// result element to the element type with roundTo() / wrapTo().
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_TENSOR_H
#define LOOM_INTERPRETER_TENSOR_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace loom {
namespace interp {

enum class ElementKind { F32, F16, BF16, I64, I32, I1 };

/// The element kind of an MLIR element type, if the interpreter has one.
std::optional<ElementKind> getElementKind(Type type);
/// The MLIR element type of a kind.
Type getElementType(ElementKind kind, MLIRContext *context);
/// "f32", "f16", "bf16", "i64", "i32", "i1".
const char *getKindName(ElementKind kind);

inline bool isFloatKind(ElementKind kind) {
  return kind == ElementKind::F32 || kind == ElementKind::F16 ||
         kind == ElementKind::BF16;
}

/// `value` rounded to the nearest value of the float kind `kind` (to
/// nearest, ties to even; out of range gives infinity).
float roundTo(ElementKind kind, double value);
/// `value` wrapped into the integer kind `kind` (two's complement for i32;
/// `value != 0` for i1).
int64_t wrapTo(ElementKind kind, int64_t value);

/// Number of elements of `shape`, or nullopt for a negative size or
/// overflow.
std::optional<int64_t> getElementCount(ArrayRef<int64_t> shape);
/// "[2, 3]"
std::string formatShape(ArrayRef<int64_t> shape);

struct Tensor {
  ElementKind kind = ElementKind::F32;
  SmallVector<int64_t> shape;
  std::vector<float> floats;  // float kinds
  std::vector<int64_t> ints;  // integer kinds

  /// A zero-filled tensor. `shape` must have a valid element count.
  static Tensor zeros(ElementKind kind, ArrayRef<int64_t> shape);

  bool isFloat() const { return isFloatKind(kind); }
  int64_t size() const {
    return static_cast<int64_t>(isFloat() ? floats.size() : ints.size());
  }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  /// "tensor<2x3xf32>"
  std::string typeString() const;
  /// The MLIR type of this tensor.
  RankedTensorType getType(MLIRContext *context) const;
};

/// Whether `tensor` can be a value of `type`: same element type, same rank
/// and equal sizes wherever `type` has a static size.
bool matchesType(const Tensor &tensor, RankedTensorType type);

/// Calls `fn(index)` for each multi-index of `shape` in row-major order.
template <typename Fn> void forEachIndex(ArrayRef<int64_t> shape, Fn fn) {
  for (int64_t d : shape)
    if (d == 0)
      return;
  SmallVector<int64_t> index(shape.size(), 0);
  while (true) {
    fn(ArrayRef<int64_t>(index));
    int64_t d = static_cast<int64_t>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

} // namespace interp
} // namespace loom
} // namespace mlir

#endif // LOOM_INTERPRETER_TENSOR_H
