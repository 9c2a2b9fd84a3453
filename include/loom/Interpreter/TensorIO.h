//===- TensorIO.h - Tensors from and to .npy and safetensors ----*- C++ -*-===//

#ifndef LOOM_INTERPRETER_TENSORIO_H
#define LOOM_INTERPRETER_TENSORIO_H

#include "loom/Interpreter/Tensor.h"
#include "loom/Support/Npy.h"
#include "loom/Support/Safetensors.h"

namespace mlir {
namespace loom {
namespace interp {

/// The element kind an .npy dtype holds. NumPy has no bfloat16: the opaque
/// 2-byte dtype of ml_dtypes' bfloat16 ('<V2') is bf16 only when
/// `expected` is bf16, else nullopt.
std::optional<ElementKind> getNpyKind(::loom::npy::DType dtype,
                                      ElementKind expected);
/// The tensor an .npy array holds, as `kind` (from getNpyKind()).
Tensor fromNpy(const ::loom::npy::Array &array, ElementKind kind);
/// The .npy array of a tensor (bf16 as ml_dtypes' '<V2').
::loom::npy::Array toNpy(const Tensor &tensor);

/// The element kind of a safetensors dtype ("F32", ..., "BOOL"), if Loom
/// has one.
std::optional<ElementKind> getSafetensorsKind(const std::string &dtype);
/// The tensor a safetensors entry holds, as `kind` (from
/// getSafetensorsKind()).
Tensor fromSafetensors(const ::loom::safetensors::Tensor &tensor,
                       ElementKind kind);

} // namespace interp
} // namespace loom
} // namespace mlir

#endif // LOOM_INTERPRETER_TENSORIO_H
