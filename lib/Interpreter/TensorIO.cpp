//===- TensorIO.cpp - Tensors from and to .npy and safetensors ------------===//

#include "loom/Interpreter/TensorIO.h"

#include "loom/Support/HalfFloat.h"

#include <cstring>

namespace mlir {
namespace loom {
namespace interp {

namespace {

size_t kindSize(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
  case ElementKind::I32:
    return 4;
  case ElementKind::I64:
    return 8;
  case ElementKind::F16:
  case ElementKind::BF16:
    return 2;
  case ElementKind::I1:
    return 1;
  }
  return 1;
}

/// Decodes little-endian `bytes` (element count from `shape`) as `kind`.
Tensor decode(const std::vector<uint8_t> &bytes, ArrayRef<int64_t> shape,
              ElementKind kind) {
  Tensor t = Tensor::zeros(kind, shape);
  size_t width = kindSize(kind);
  for (int64_t i = 0, e = t.size(); i < e; ++i) {
    uint64_t bits = 0;
    for (size_t b = 0; b < width; ++b)
      bits |= static_cast<uint64_t>(bytes[i * width + b]) << (8 * b);
    switch (kind) {
    case ElementKind::F32: {
      uint32_t word = static_cast<uint32_t>(bits);
      std::memcpy(&t.floats[i], &word, sizeof(word));
      break;
    }
    case ElementKind::F16:
      t.floats[i] = ::loom::halfBitsToFloat(static_cast<uint16_t>(bits));
      break;
    case ElementKind::BF16:
      t.floats[i] = ::loom::bfloat16BitsToFloat(static_cast<uint16_t>(bits));
      break;
    case ElementKind::I64:
      t.ints[i] = static_cast<int64_t>(bits);
      break;
    case ElementKind::I32:
      t.ints[i] = wrapTo(ElementKind::I32, static_cast<int64_t>(bits));
      break;
    case ElementKind::I1:
      t.ints[i] = bits != 0;
      break;
    }
  }
  return t;
}

/// Encodes a tensor as little-endian bytes.
std::vector<uint8_t> encode(const Tensor &t) {
  size_t width = kindSize(t.kind);
  std::vector<uint8_t> bytes(static_cast<size_t>(t.size()) * width);
  for (int64_t i = 0, e = t.size(); i < e; ++i) {
    uint64_t bits = 0;
    switch (t.kind) {
    case ElementKind::F32: {
      uint32_t word;
      std::memcpy(&word, &t.floats[i], sizeof(word));
      bits = word;
      break;
    }
    case ElementKind::F16:
      bits = ::loom::floatToHalfBits(t.floats[i]);
      break;
    case ElementKind::BF16:
      bits = ::loom::floatToBFloat16Bits(t.floats[i]);
      break;
    case ElementKind::I64:
    case ElementKind::I32:
    case ElementKind::I1:
      bits = static_cast<uint64_t>(t.ints[i]);
      break;
    }
    for (size_t b = 0; b < width; ++b)
      bytes[i * width + b] = static_cast<uint8_t>((bits >> (8 * b)) & 0xFF);
  }
  return bytes;
}

} // namespace

std::optional<ElementKind> getNpyKind(::loom::npy::DType dtype,
                                      ElementKind expected) {
  using ::loom::npy::DType;
  switch (dtype) {
  case DType::F32:
    return ElementKind::F32;
  case DType::F16:
    return ElementKind::F16;
  case DType::I64:
    return ElementKind::I64;
  case DType::I32:
    return ElementKind::I32;
  case DType::Bool:
    return ElementKind::I1;
  case DType::Opaque2:
    if (expected == ElementKind::BF16)
      return ElementKind::BF16;
    return std::nullopt;
  }
  return std::nullopt;
}

Tensor fromNpy(const ::loom::npy::Array &array, ElementKind kind) {
  return decode(array.data, array.shape, kind);
}

::loom::npy::Array toNpy(const Tensor &tensor) {
  using ::loom::npy::DType;
  ::loom::npy::Array array;
  switch (tensor.kind) {
  case ElementKind::F32:
    array.dtype = DType::F32;
    break;
  case ElementKind::F16:
    array.dtype = DType::F16;
    break;
  case ElementKind::BF16:
    array.dtype = DType::Opaque2;
    break;
  case ElementKind::I64:
    array.dtype = DType::I64;
    break;
  case ElementKind::I32:
    array.dtype = DType::I32;
    break;
  case ElementKind::I1:
    array.dtype = DType::Bool;
    break;
  }
  array.shape.assign(tensor.shape.begin(), tensor.shape.end());
  array.data = encode(tensor);
  return array;
}

std::optional<ElementKind> getSafetensorsKind(const std::string &dtype) {
  if (dtype == "F32")
    return ElementKind::F32;
  if (dtype == "F16")
    return ElementKind::F16;
  if (dtype == "BF16")
    return ElementKind::BF16;
  if (dtype == "I64")
    return ElementKind::I64;
  if (dtype == "I32")
    return ElementKind::I32;
  if (dtype == "BOOL")
    return ElementKind::I1;
  return std::nullopt;
}

Tensor fromSafetensors(const ::loom::safetensors::Tensor &tensor,
                       ElementKind kind) {
  return decode(tensor.data, tensor.shape, kind);
}

} // namespace interp
} // namespace loom
} // namespace mlir
