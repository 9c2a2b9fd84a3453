//===- Tensor.cpp - Values of the reference interpreter -------------------===//

#include "loom/Interpreter/Tensor.h"

#include "loom/Support/HalfFloat.h"

#include "mlir/IR/MLIRContext.h"

#include <limits>

namespace mlir {
namespace loom {
namespace interp {

std::optional<ElementKind> getElementKind(Type type) {
  if (type.isF32())
    return ElementKind::F32;
  if (type.isF16())
    return ElementKind::F16;
  if (type.isBF16())
    return ElementKind::BF16;
  if (type.isSignlessInteger(64))
    return ElementKind::I64;
  if (type.isSignlessInteger(32))
    return ElementKind::I32;
  if (type.isSignlessInteger(1))
    return ElementKind::I1;
  return std::nullopt;
}

Type getElementType(ElementKind kind, MLIRContext *context) {
  switch (kind) {
  case ElementKind::F32:
    return Float32Type::get(context);
  case ElementKind::F16:
    return Float16Type::get(context);
  case ElementKind::BF16:
    return BFloat16Type::get(context);
  case ElementKind::I64:
    return IntegerType::get(context, 64);
  case ElementKind::I32:
    return IntegerType::get(context, 32);
  case ElementKind::I1:
    return IntegerType::get(context, 1);
  }
  return {};
}

const char *getKindName(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
    return "f32";
  case ElementKind::F16:
    return "f16";
  case ElementKind::BF16:
    return "bf16";
  case ElementKind::I64:
    return "i64";
  case ElementKind::I32:
    return "i32";
  case ElementKind::I1:
    return "i1";
  }
  return "?";
}

float roundTo(ElementKind kind, double value) {
  // double -> float rounds to nearest; for f16/bf16 the float is rounded
  // again (a double rounding that can differ from rounding once only in
  // ties of the second rounding created by the first, a 2^-29 relative
  // window).
  float f = static_cast<float>(value);
  switch (kind) {
  case ElementKind::F16:
    return ::loom::roundToHalf(f);
  case ElementKind::BF16:
    return ::loom::roundToBFloat16(f);
  default:
    return f;
  }
}

int64_t wrapTo(ElementKind kind, int64_t value) {
  switch (kind) {
  case ElementKind::I32: {
    uint32_t low = static_cast<uint32_t>(static_cast<uint64_t>(value));
    return low >= (1u << 31) ? static_cast<int64_t>(low) - (int64_t(1) << 32)
                             : static_cast<int64_t>(low);
  }
  case ElementKind::I1:
    return value != 0;
  default:
    return value;
  }
}

std::optional<int64_t> getElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      return std::nullopt;
    count *= d;
  }
  return count;
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += shape[i] == ShapedType::kDynamic ? "?" : std::to_string(shape[i]);
  }
  return out + "]";
}

Tensor Tensor::zeros(ElementKind kind, ArrayRef<int64_t> shape) {
  Tensor t;
  t.kind = kind;
  t.shape.assign(shape.begin(), shape.end());
  size_t count = static_cast<size_t>(getElementCount(shape).value_or(0));
  if (t.isFloat())
    t.floats.assign(count, 0.0f);
  else
    t.ints.assign(count, 0);
  return t;
}

std::string Tensor::typeString() const {
  std::string out = "tensor<";
  for (int64_t d : shape)
    out += std::to_string(d) + "x";
  return out + getKindName(kind) + ">";
}

RankedTensorType Tensor::getType(MLIRContext *context) const {
  return RankedTensorType::get(shape, getElementType(kind, context));
}

bool matchesType(const Tensor &tensor, RankedTensorType type) {
  std::optional<ElementKind> kind = getElementKind(type.getElementType());
  if (!kind || *kind != tensor.kind || type.getRank() != tensor.rank())
    return false;
  for (auto [want, have] : llvm::zip(type.getShape(), tensor.shape))
    if (want != ShapedType::kDynamic && want != have)
      return false;
  return true;
}

} // namespace interp
} // namespace loom
} // namespace mlir
