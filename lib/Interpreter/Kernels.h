//===- Kernels.h - One kernel per loom op ------------------------*- C++ -*-===//
//
// The kernels of the reference interpreter: plain loops over Tensors, one
// per op (dot_general uses BLAS for f32). They know nothing of MLIR ops: the
// interpreter reads the op's attributes and calls them. Each returns an
// empty string on success, else what is wrong with its operands (the
// interpreter reports it at the op); they never assert on their inputs,
// since shapes that are dynamic in the IR are only checked here.
//
// Numerics: float elements are computed in double from the stored values
// and rounded once to the result's element type (for +, -, *, / and sqrt
// that is exactly IEEE arithmetic in the element type); sums accumulate in
// double; f32 dot_general is cblas_sgemm (float accumulation). Integers
// wrap (two's complement), division rounds toward zero, and division by
// zero is an error.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_INTERPRETER_KERNELS_H
#define LOOM_LIB_INTERPRETER_KERNELS_H

#include "loom/Interpreter/Tensor.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"

#include <optional>
#include <string>

namespace mlir {
namespace loom {
namespace interp {

//===- Elementwise (ElementwiseKernels.cpp) -------------------------------===//

enum class UnaryKind {
  Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Cos, Sin, Sigmoid, Erf, ErfInv, Relu,
  Silu,
  GeluErf, GeluTanh
};
/// GeluGrad*: lhs is GELU's input, rhs the cotangent (loom.gelu_grad).
enum class BinaryKind {
  Add, Sub, Mul, Div, Pow, Max, Min, GeluGradErf, GeluGradTanh
};
enum class CompareKind { Eq, Ne, Lt, Le, Gt, Ge };

std::string unary(UnaryKind kind, const Tensor &x, Tensor &out);
std::string binary(BinaryKind kind, const Tensor &lhs, const Tensor &rhs,
                   Tensor &out);
/// i1 result; floats compare as IEEE (NaN is unordered: only `ne` holds).
std::string compare(CompareKind kind, const Tensor &lhs, const Tensor &rhs,
                    Tensor &out);
std::string select(const Tensor &pred, const Tensor &onTrue,
                   const Tensor &onFalse, Tensor &out);
/// Float -> integer rounds toward zero (NaN gives 0, out-of-range values
/// saturate); to i1 is `x != 0`; i1 -> number is 0 or 1; integer ->
/// integer wraps; -> float rounds to nearest.
std::string convert(const Tensor &x, ElementKind to, Tensor &out);

//===- Normalisation and loss (NormKernels.cpp) ---------------------------===//

/// `exp(x - max) / sum(exp(x - max))`, or with `log`
/// `x - max - log(sum(exp(x - max)))`, along `axis`.
std::string softmax(const Tensor &x, int64_t axis, bool log, Tensor &out);
/// Over dimensions [axis, rank): `(x - mean) / sqrt(var + eps) * scale +
/// bias` with the biased variance; scale and bias may be null.
std::string layerNorm(const Tensor &x, const Tensor *scale, const Tensor *bias,
                      int64_t axis, double epsilon, Tensor &out);
/// Over dimensions [axis, rank): `x / sqrt(mean(x^2) + eps) * scale`.
std::string rmsNorm(const Tensor &x, const Tensor *scale, int64_t axis,
                    double epsilon, Tensor &out);

/// The gradients of a layer norm (`rms` false) or RMS norm over [axis,
/// rank) of `x` with cotangent `g`: the input's, then the sums over the
/// leading dimensions of `g * xhat` (the scale's) and of `g` (a layer
/// norm's bias's), appended to `results`. `scale` may be null.
std::string normGrad(const Tensor &x, const Tensor &g, const Tensor *scale,
                     int64_t axis, double epsilon, bool rms,
                     SmallVectorImpl<Tensor> &results);

enum class LossKind { None, Mean, Sum };
/// Per sample `logsumexp(logits) - logits[label]`; samples labelled
/// `ignoreIndex` count 0 and are left out of the mean's denominator.
std::string crossEntropy(const Tensor &logits, const Tensor &labels,
                         LossKind reduction, std::optional<int64_t> ignoreIndex,
                         Tensor &out);

//===- Contraction (DotGeneral.cpp) ----------------------------------------===//

std::string dotGeneral(const Tensor &lhs, const Tensor &rhs,
                       ArrayRef<int64_t> lhsBatch, ArrayRef<int64_t> rhsBatch,
                       ArrayRef<int64_t> lhsContract,
                       ArrayRef<int64_t> rhsContract, Tensor &out);

//===- Data movement (DataMovementKernels.cpp) -----------------------------===//

/// `shape` may hold one ShapedType::kDynamic, computed from the size.
std::string reshape(const Tensor &x, ArrayRef<int64_t> shape, Tensor &out);
std::string transpose(const Tensor &x, ArrayRef<int64_t> permutation,
                      Tensor &out);
/// `shape` may hold ShapedType::kDynamic where an operand dimension of size
/// other than 1 maps to it.
std::string broadcast(const Tensor &x, ArrayRef<int64_t> dims,
                      ArrayRef<int64_t> shape, Tensor &out);
std::string slice(const Tensor &x, ArrayRef<int64_t> start,
                  ArrayRef<int64_t> limit, ArrayRef<int64_t> strides,
                  Tensor &out);
std::string concat(ArrayRef<const Tensor *> inputs, int64_t dim, Tensor &out);
std::string split(const Tensor &x, int64_t dim, ArrayRef<int64_t> sizes,
                  SmallVectorImpl<Tensor> &outs);
/// ONNX Gather; an index outside [0, data.shape[axis]) is an error.
std::string gather(const Tensor &data, const Tensor &indices, int64_t axis,
                   Tensor &out);
/// The dual of gather: `target` with each `updates` slice added at its
/// index (duplicates accumulate, in double for floats, rounded once); an
/// index outside [0, target.shape[axis]) is an error.
std::string scatterAdd(const Tensor &target, const Tensor &indices,
                       const Tensor &updates, int64_t axis, Tensor &out);
std::string iota(ElementKind kind, ArrayRef<int64_t> shape, int64_t dim,
                 Tensor &out);
/// The value of a constant attribute (dense<...> or dense_resource<...>).
std::string constant(ElementsAttr value, Tensor &out);

//===- Reductions (ReduceKernels.cpp) --------------------------------------===//

/// Sum, mean or max (NaN-propagating) over `dims`. An empty reduction gives
/// 0 (sum), NaN (mean) or the lowest value (-inf for floats).
enum class ReduceKind { Sum, Mean, Max };
std::string reduce(ReduceKind kind, const Tensor &x, ArrayRef<int64_t> dims,
                   bool keepdims, Tensor &out);

//===- Shared helpers -------------------------------------------------------===//

/// Error text when `a` and `b` differ in shape ("" when they agree).
std::string checkSameShape(const Tensor &a, const Tensor &b, const char *what);
/// Checks `0 <= dim < rank` ("" when it holds).
std::string checkDim(int64_t dim, int64_t rank, const char *what);
/// A tensor of `shape` whose element `index` is the element of `x` at
/// linear position `offset + sum(index[d] * strides[d])`.
Tensor copyStrided(const Tensor &x, ArrayRef<int64_t> shape,
                   ArrayRef<int64_t> strides, int64_t offset);
/// Copies the elements of `x` at `sourceIndex` (one per result element)
/// into a tensor of `shape`.
Tensor gatherElements(const Tensor &x, ArrayRef<int64_t> shape,
                      ArrayRef<int64_t> sourceIndex);

} // namespace interp
} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_INTERPRETER_KERNELS_H
