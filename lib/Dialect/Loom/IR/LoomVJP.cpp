//===- LoomVJP.cpp - Vector-Jacobian products of the loom ops -------------===//
//
// Implements VJPInterface (LoomInterfaces.td) for every loom op. Each VJP is
// built from loom ops only, so backward graphs run in loom-run and go through
// the same lowering as forward graphs. Composite ops (softmax, norms, gelu,
// cross-entropy) are decomposed into primitives; the forward statistics they
// need (mean, rstd, softmax) are recomputed from the op's operands.
//
// All shapes are static when a VJP is built (loom-autodiff checks this), and
// elementwise loom ops never broadcast, so every broadcast below is an
// explicit loom.broadcast.
//
// No argument list builds two ops: C++ leaves the order in which arguments
// are evaluated unspecified (g++ goes right to left, clang left to right),
// and the order ops are created in is the order they print in, so the
// output would depend on the compiler Loom was built with. Such operands
// are built into named values first, in the order the IR shows them.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace mlir;
using namespace mlir::loom;

namespace {

/// The state of one buildVJP call: a builder at the op's location, the
/// result cotangents, and the operand cotangents being filled. Enforces the
/// interface contract: one entry per operand, null for operands the op does
/// not differentiate.
class VJP {
public:
  VJP(Operation *op, OpBuilder &builder, ArrayRef<Value> resultCotangents,
      SmallVectorImpl<Value> &operandCotangents)
      : b(op->getLoc(), builder), op(op), resultCotangents(resultCotangents),
        operandCotangents(operandCotangents),
        first(operandCotangents.size()) {
    operandCotangents.append(op->getNumOperands(), Value());
  }

  /// True when some operand can receive a gradient.
  bool anyDifferentiable() const {
    auto iface = cast<VJPInterface>(op);
    for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
      if (iface.isOperandDifferentiable(i))
        return true;
    return false;
  }

  /// The cotangent of result `i`, materialised as zeros when it is null.
  Value cotangent(unsigned i = 0) {
    if (i < resultCotangents.size() && resultCotangents[i])
      return resultCotangents[i];
    return zeros(op->getResult(i).getType());
  }

  /// Records the cotangent of operand `i` (dropped when that operand is not
  /// differentiable).
  void set(unsigned i, Value cotangent) {
    if (cast<VJPInterface>(op).isOperandDifferentiable(i))
      operandCotangents[first + i] = cotangent;
  }

  //===--- Constants ------------------------------------------------------===//

  /// A splat constant of tensor type `type` with float elements.
  Value splat(Type type, double value) {
    auto tensor = cast<RankedTensorType>(type);
    return constant(tensor, b.getFloatAttr(tensor.getElementType(), value));
  }
  /// A splat constant of tensor type `type` with integer elements.
  Value splatInt(Type type, int64_t value) {
    auto tensor = cast<RankedTensorType>(type);
    return constant(tensor, b.getIntegerAttr(tensor.getElementType(), value));
  }
  Value constant(RankedTensorType type, Attribute scalar) {
    return ConstantOp::create(
        b, cast<ElementsAttr>(DenseElementsAttr::get(type, scalar)));
  }
  Value zeros(Type type) { return splat(type, 0.0); }
  Value splatLike(Value like, double value) {
    return splat(like.getType(), value);
  }

  //===--- Elementwise ----------------------------------------------------===//

  Value add(Value x, Value y) { return AddOp::create(b, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, x, y); }
  Value neg(Value x) { return NegOp::create(b, x); }
  Value scale(Value x, double factor) { return mul(x, splatLike(x, factor)); }
  Value addScalar(Value x, double c) { return add(x, splatLike(x, c)); }
  /// `c - x`.
  Value rsubScalar(double c, Value x) { return sub(splatLike(x, c), x); }
  Value compare(ComparisonDirection direction, Value x, Value y) {
    return CompareOp::create(b, direction, x, y);
  }
  Value select(Value pred, Value onTrue, Value onFalse) {
    return SelectOp::create(b, pred, onTrue, onFalse);
  }
  /// `pred ? x : 0`.
  Value maskOr0(Value pred, Value x) {
    return select(pred, x, zeros(x.getType()));
  }
  Value convert(Value x, Type elementType) {
    auto type = cast<RankedTensorType>(x.getType());
    return ConvertOp::create(b, type.clone(elementType), x);
  }

  //===--- Shapes ---------------------------------------------------------===//

  /// `x` broadcast to `type`, operand dimension `i` going to `dims[i]`.
  Value broadcast(Value x, Type type, ArrayRef<int64_t> dims) {
    if (x.getType() == type)
      return x;
    return BroadcastOp::create(b, type, x, dims);
  }
  /// `x`, of the rank of `type` with some sizes 1, broadcast to `type`.
  Value expand(Value x, Type type) {
    SmallVector<int64_t> identity(cast<RankedTensorType>(type).getRank());
    std::iota(identity.begin(), identity.end(), 0);
    return broadcast(x, type, identity);
  }
  Value reshape(Value x, Type type) {
    if (x.getType() == type)
      return x;
    return ReshapeOp::create(b, type, x);
  }
  Value reduceSum(Value x, ArrayRef<int64_t> dims, bool keepdims) {
    if (dims.empty())
      return x;
    return ReduceSumOp::create(b, x, dims, keepdims);
  }
  Value reduceMean(Value x, ArrayRef<int64_t> dims, bool keepdims) {
    if (dims.empty())
      return x;
    return ReduceMeanOp::create(b, x, dims, keepdims);
  }
  /// Sum over `dims` of `x`, broadcast back to the shape of `x`.
  Value sumExpanded(Value x, ArrayRef<int64_t> dims) {
    return expand(reduceSum(x, dims, /*keepdims=*/true), x.getType());
  }
  Value meanExpanded(Value x, ArrayRef<int64_t> dims) {
    return expand(reduceMean(x, dims, /*keepdims=*/true), x.getType());
  }

  ImplicitLocOpBuilder b;

private:
  Operation *op;
  ArrayRef<Value> resultCotangents;
  SmallVectorImpl<Value> &operandCotangents;
  size_t first;
};

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// `[from, to)`.
SmallVector<int64_t> range(int64_t from, int64_t to) {
  SmallVector<int64_t> dims;
  for (int64_t d = from; d < to; ++d)
    dims.push_back(d);
  return dims;
}

/// The shape of a reduction's operand with the reduced dimensions kept as 1.
RankedTensorType keepdimsType(RankedTensorType operand,
                              ArrayRef<int64_t> dims) {
  SmallVector<int64_t> shape(operand.getShape());
  for (int64_t d : dims)
    shape[d] = 1;
  return operand.clone(shape);
}

/// A unary elementwise op whose cotangent is `g * derivative(x, y)`.
template <typename Fn>
LogicalResult unaryVJP(Operation *op, OpBuilder &builder,
                       ArrayRef<Value> resultCotangents,
                       SmallVectorImpl<Value> &operandCotangents,
                       Fn derivative) {
  VJP v(op, builder, resultCotangents, operandCotangents);
  if (!v.anyDifferentiable())
    return success();
  Value g = v.cotangent();
  v.set(0, v.mul(g, derivative(v, op->getOperand(0), op->getResult(0))));
  return success();
}

/// Appends null cotangents: the op has no float operand to differentiate.
LogicalResult noGradient(Operation *op, SmallVectorImpl<Value> &cotangents) {
  cotangents.append(op->getNumOperands(), Value());
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value g = v.cotangent();
  v.set(0, g);
  v.set(1, g);
  return success();
}

LogicalResult SubOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value g = v.cotangent();
  v.set(0, g);
  v.set(1, v.neg(g));
  return success();
}

LogicalResult MulOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value g = v.cotangent();
  v.set(0, v.mul(g, getRhs()));
  v.set(1, v.mul(g, getLhs()));
  return success();
}

LogicalResult DivOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  // d(a/b)/da = 1/b; d(a/b)/db = -a/b^2 = -(1/b) * (a/b).
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value gOverB = v.div(v.cotangent(), getRhs());
  v.set(0, gOverB);
  v.set(1, v.neg(v.mul(gOverB, getResult())));
  return success();
}

LogicalResult PowOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  // As PyTorch: d/da = b * a^(b-1), taken as 0 where b == 0;
  // d/db = a^b * log(a), taken as 0 where a == 0 and b >= 0.
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value a = getLhs(), e = getRhs(), g = v.cotangent();
  Value zero = v.zeros(a.getType());
  Value da = v.mul(e, PowOp::create(v.b, a, v.addScalar(e, -1.0)));
  Value gda = v.mul(g, da);
  v.set(0, v.select(v.compare(ComparisonDirection::eq, e, zero), zero, gda));
  Value logA = LogOp::create(v.b, a);
  Value db = v.mul(v.mul(g, getResult()), logA);
  Value baseZero = v.compare(ComparisonDirection::eq, a, zero);
  Value no = v.splatInt(baseZero.getType(), 0);
  Value baseZeroExpNonNeg =
      v.select(baseZero, v.compare(ComparisonDirection::ge, e, zero), no);
  v.set(1, v.select(baseZeroExpNonNeg, zero, db));
  return success();
}

/// max/min: the cotangent goes to the operand that is selected; tied
/// operands get half each (PyTorch's maximum/minimum).
static LogicalResult extremumVJP(Operation *op, OpBuilder &builder,
                                 ArrayRef<Value> cts,
                                 SmallVectorImpl<Value> &out,
                                 ComparisonDirection lhsWins) {
  VJP v(op, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value a = op->getOperand(0), c = op->getOperand(1), g = v.cotangent();
  ComparisonDirection rhsWins = lhsWins == ComparisonDirection::gt
                                    ? ComparisonDirection::lt
                                    : ComparisonDirection::gt;
  Value half = v.scale(g, 0.5);
  Value tie = v.maskOr0(v.compare(ComparisonDirection::eq, a, c), half);
  v.set(0, v.select(v.compare(lhsWins, a, c), g, tie));
  v.set(1, v.select(v.compare(rhsWins, a, c), g, tie));
  return success();
}

LogicalResult MaxOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  return extremumVJP(*this, builder, cts, out, ComparisonDirection::gt);
}

LogicalResult MinOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  return extremumVJP(*this, builder, cts, out, ComparisonDirection::lt);
}

LogicalResult NegOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (v.anyDifferentiable())
    v.set(0, v.neg(v.cotangent()));
  return success();
}

LogicalResult AbsOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  // g * sign(x), with sign(0) = 0.
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value x = getOperand(), g = v.cotangent(), zero = v.zeros(x.getType());
  Value negG = v.neg(g);
  Value negative =
      v.maskOr0(v.compare(ComparisonDirection::lt, x, zero), negG);
  v.set(0, v.select(v.compare(ComparisonDirection::gt, x, zero), g, negative));
  return success();
}

LogicalResult ExpOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  return unaryVJP(*this, builder, cts, out,
                  [](VJP &, Value, Value y) { return y; });
}

LogicalResult LogOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (v.anyDifferentiable())
    v.set(0, v.div(v.cotangent(), getOperand()));
  return success();
}

LogicalResult SqrtOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                               SmallVectorImpl<Value> &out) {
  // g / (2 sqrt(x)).
  VJP v(*this, builder, cts, out);
  if (v.anyDifferentiable())
    v.set(0, v.div(v.scale(v.cotangent(), 0.5), getResult()));
  return success();
}

LogicalResult RsqrtOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                SmallVectorImpl<Value> &out) {
  // d x^(-1/2) / dx = -1/2 x^(-3/2) = -1/2 y^3.
  return unaryVJP(*this, builder, cts, out, [](VJP &v, Value, Value y) {
    return v.scale(v.mul(y, v.mul(y, y)), -0.5);
  });
}

LogicalResult TanhOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                               SmallVectorImpl<Value> &out) {
  return unaryVJP(*this, builder, cts, out, [](VJP &v, Value, Value y) {
    return v.rsubScalar(1.0, v.mul(y, y));
  });
}

LogicalResult CosOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  // d cos(x) / dx = -sin(x).
  return unaryVJP(*this, builder, cts, out, [](VJP &v, Value x, Value) {
    return v.neg(SinOp::create(v.b, x));
  });
}

LogicalResult SinOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  // d sin(x) / dx = cos(x).
  return unaryVJP(*this, builder, cts, out, [](VJP &v, Value x, Value) {
    return Value(CosOp::create(v.b, x));
  });
}

LogicalResult SigmoidOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                  SmallVectorImpl<Value> &out) {
  return unaryVJP(*this, builder, cts, out, [](VJP &v, Value, Value y) {
    return v.mul(y, v.rsubScalar(1.0, y));
  });
}

LogicalResult ErfOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                              SmallVectorImpl<Value> &out) {
  // 2 / sqrt(pi) * exp(-x^2).
  return unaryVJP(*this, builder, cts, out, [](VJP &v, Value x, Value) {
    Value e = ExpOp::create(v.b, v.neg(v.mul(x, x)));
    return v.scale(e, 2.0 * llvm::numbers::inv_sqrtpi);
  });
}

LogicalResult ErfInvOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                 SmallVectorImpl<Value> &out) {
  // 1 / erf'(y) = sqrt(pi) / 2 * exp(y^2), y = erf_inv(x).
  return unaryVJP(*this, builder, cts, out, [](VJP &v, Value, Value y) {
    Value e = ExpOp::create(v.b, v.mul(y, y));
    return v.scale(e, 0.5 / llvm::numbers::inv_sqrtpi);
  });
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

LogicalResult ReluOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                               SmallVectorImpl<Value> &out) {
  // g where x > 0, else 0 (derivative 0 at 0, as PyTorch).
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value x = getOperand(), zero = v.zeros(x.getType());
  Value g = v.cotangent();
  v.set(0, v.select(v.compare(ComparisonDirection::gt, x, zero), g, zero));
  return success();
}

LogicalResult SiluOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                               SmallVectorImpl<Value> &out) {
  // d(x s(x))/dx = s (1 + x (1 - s)).
  return unaryVJP(*this, builder, cts, out, [](VJP &v, Value x, Value) {
    Value s = SigmoidOp::create(v.b, x);
    return v.mul(s, v.addScalar(v.mul(x, v.rsubScalar(1.0, s)), 1.0));
  });
}

LogicalResult GeluOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                               SmallVectorImpl<Value> &out) {
  // One loom.gelu_grad (its description has both derivatives): a backward
  // gemm can apply it as an epilogue (loom-fuse-gemm-bias).
  VJP v(*this, builder, cts, out);
  if (v.anyDifferentiable())
    v.set(0, GeluGradOp::create(v.b, getOperand(), v.cotangent(),
                                getApproximate()));
  return success();
}

LogicalResult GeluGradOp::buildVJP(OpBuilder &, ArrayRef<Value>,
                                   SmallVectorImpl<Value> &) {
  return emitOpError() << "has no vector-Jacobian product: second "
                          "derivatives are not supported";
}

//===----------------------------------------------------------------------===//
// Comparison, selection, conversion
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::buildVJP(OpBuilder &, ArrayRef<Value>,
                                  SmallVectorImpl<Value> &out) {
  // An i1 result carries no gradient.
  return noGradient(*this, out);
}

LogicalResult SelectOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                 SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value g = v.cotangent(), zero = v.zeros(g.getType());
  v.set(1, v.select(getPred(), g, zero));
  v.set(2, v.select(getPred(), zero, g));
  return success();
}

LogicalResult ConvertOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                  SmallVectorImpl<Value> &out) {
  // Float to float: the cotangent converted back. Conversions from or to
  // integers are not differentiable (the default rule).
  VJP v(*this, builder, cts, out);
  if (v.anyDifferentiable())
    v.set(0, v.convert(v.cotangent(),
                       tensorType(getOperand()).getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                  SmallVectorImpl<Value> &out) {
  // y * (g - sum(g * y)) along the axis.
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value y = getResult(), g = v.cotangent();
  int64_t axis = getAxis();
  v.set(0, v.mul(y, v.sub(g, v.sumExpanded(v.mul(g, y), {axis}))));
  return success();
}

LogicalResult LogSoftmaxOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                     SmallVectorImpl<Value> &out) {
  // g - exp(y) * sum(g) along the axis.
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value g = v.cotangent();
  int64_t axis = getAxis();
  Value softmax = ExpOp::create(v.b, getResult());
  v.set(0, v.sub(g, v.mul(softmax, v.sumExpanded(g, {axis}))));
  return success();
}

namespace {
/// The normalised values `xhat = x * rstd` of a layer or RMS norm over
/// `normDims`, `rstd` broadcast to the shape of `x`.
struct Normalised {
  Value xhat, rstd;
};
} // namespace

/// Recomputes layer_norm's (`centre`) or rms_norm's statistics from `x`.
static Normalised normalise(VJP &v, Value x, ArrayRef<int64_t> normDims,
                            double epsilon, bool centre) {
  Value centred = centre ? v.sub(x, v.meanExpanded(x, normDims)) : x;
  Value variance =
      v.reduceMean(v.mul(centred, centred), normDims, /*keepdims=*/true);
  Value rstd = v.expand(RsqrtOp::create(v.b, v.addScalar(variance, epsilon)),
                        x.getType());
  return {v.mul(centred, rstd), rstd};
}

/// The cotangent of a norm's input and scale. With `gh = g * scale`:
/// layer norm: `rstd * (gh - mean(gh) - xhat * mean(gh * xhat))`;
/// RMS norm:   `rstd * (gh - xhat * mean(gh * xhat))`;
/// the scale gets `sum over the leading dimensions of g * xhat`.
static void normVJP(VJP &v, Value x, Value scale, unsigned scaleIndex,
                    Value g, int64_t axis, double epsilon, bool centre) {
  auto type = tensorType(x);
  SmallVector<int64_t> normDims = range(axis, type.getRank());
  SmallVector<int64_t> leadDims = range(0, axis);
  Normalised n = normalise(v, x, normDims, epsilon, centre);
  Value gh = scale ? v.mul(g, v.broadcast(scale, type, normDims)) : g;
  Value inner = v.sub(gh, v.mul(n.xhat, v.meanExpanded(v.mul(gh, n.xhat),
                                                        normDims)));
  if (centre)
    inner = v.sub(inner, v.meanExpanded(gh, normDims));
  v.set(0, v.mul(n.rstd, inner));
  if (scale)
    v.set(scaleIndex, v.reduceSum(v.mul(g, n.xhat), leadDims,
                                  /*keepdims=*/false));
}

/// Whether a norm of `x` gets one loom.norm_grad: an f32 norm, the only
/// kind the backends' norm_grad kernels take (the mixed-precision pass
/// keeps norms in f32). Other precisions get the derivative spelled out.
static bool hasNormGradKernel(Value x) {
  return tensorType(x).getElementType().isF32();
}

LogicalResult LayerNormOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                    SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value g = v.cotangent();
  int64_t axis = getAxis();
  unsigned biasIndex = getScale() ? 2 : 1;
  if (hasNormGradKernel(getInput())) {
    auto grad = NormGradOp::create(v.b, getInput(), g, getScale(),
                                   getAxisAttr(), getEpsilonAttr(),
                                   /*rms=*/UnitAttr());
    v.set(0, grad.getInputGrad());
    if (getScale())
      v.set(1, grad.getScaleGrad());
    if (getBias())
      v.set(biasIndex, grad.getBiasGrad());
    return success();
  }
  normVJP(v, getInput(), getScale(), /*scaleIndex=*/1, g, axis,
          getEpsilon().convertToDouble(), /*centre=*/true);
  if (getBias())
    v.set(biasIndex, v.reduceSum(g, range(0, axis), /*keepdims=*/false));
  return success();
}

LogicalResult RmsNormOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                  SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  if (hasNormGradKernel(getInput())) {
    auto grad = NormGradOp::create(v.b, getInput(), v.cotangent(), getScale(),
                                   getAxisAttr(), getEpsilonAttr(),
                                   /*rms=*/v.b.getUnitAttr());
    v.set(0, grad.getInputGrad());
    if (getScale())
      v.set(1, grad.getScaleGrad());
    return success();
  }
  normVJP(v, getInput(), getScale(), /*scaleIndex=*/1, v.cotangent(),
          getAxis(), getEpsilon().convertToDouble(), /*centre=*/false);
  return success();
}

LogicalResult NormGradOp::buildVJP(OpBuilder &, ArrayRef<Value>,
                                   SmallVectorImpl<Value> &) {
  return emitOpError() << "has no vector-Jacobian product: second "
                          "derivatives are not supported";
}

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

/// The cotangent of one dot_general operand ("self") from the result
/// cotangent `g` and the other operand. `g`'s dimensions are
/// [batch, lhs free, rhs free]; contracting those of `g` that come from the
/// other operand's free dimensions with them gives, in the order
/// (g, other): [batch, self free, self contracting], or in the order
/// (other, g): [batch, self contracting, self free], where the contracting
/// dimensions come in the other operand's order. The order that needs no
/// transpose back to self's layout is used (a plain matmul never needs one),
/// else (g, other) and a transpose.
static Value dotOperandCotangent(VJP &v, Value g, Value other,
                                 ArrayRef<int64_t> selfBatch,
                                 ArrayRef<int64_t> selfContract,
                                 ArrayRef<int64_t> otherBatch,
                                 ArrayRef<int64_t> otherContract,
                                 ArrayRef<int64_t> selfFree,
                                 ArrayRef<int64_t> otherFree,
                                 int64_t otherFreeStart) {
  SmallVector<int64_t> gBatch = range(0, selfBatch.size());
  SmallVector<int64_t> gOther =
      range(otherFreeStart, otherFreeStart + otherFree.size());
  // Self's contracting dimensions in the order the other operand's
  // remaining (contracting) dimensions appear in the product.
  SmallVector<int64_t> sortedOtherContract(otherContract);
  llvm::sort(sortedOtherContract);
  SmallVector<int64_t> contractInOrder;
  for (int64_t d : sortedOtherContract)
    contractInOrder.push_back(
        selfContract[llvm::find(otherContract, d) - otherContract.begin()]);
  // The permutation that puts a product whose dimension i is self's
  // dimension `selfDimOf[i]` back in self's layout.
  auto permutationFor = [](ArrayRef<int64_t> selfDimOf) {
    SmallVector<int64_t> perm(selfDimOf.size());
    for (auto [pos, dim] : llvm::enumerate(selfDimOf))
      perm[dim] = pos;
    return perm;
  };
  auto isIdentity = [](ArrayRef<int64_t> perm) {
    return llvm::equal(perm, range(0, perm.size()));
  };

  SmallVector<int64_t> otherFirst(selfBatch);
  llvm::append_range(otherFirst, contractInOrder);
  llvm::append_range(otherFirst, selfFree);
  if (isIdentity(permutationFor(otherFirst)))
    return DotGeneralOp::create(v.b, other, g, otherBatch, gBatch, otherFree,
                                gOther);

  SmallVector<int64_t> gFirst(selfBatch);
  llvm::append_range(gFirst, selfFree);
  llvm::append_range(gFirst, contractInOrder);
  Value t = DotGeneralOp::create(v.b, g, other, gBatch, otherBatch, gOther,
                                 otherFree);
  SmallVector<int64_t> perm = permutationFor(gFirst);
  if (isIdentity(perm))
    return t;
  return TransposeOp::create(v.b, t, perm);
}

static SmallVector<int64_t> dotFreeDims(int64_t rank, ArrayRef<int64_t> batch,
                                        ArrayRef<int64_t> contracting) {
  SmallVector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(batch, d) && !llvm::is_contained(contracting, d))
      free.push_back(d);
  return free;
}

LogicalResult DotGeneralOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                     SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value g = v.cotangent();
  ArrayRef<int64_t> lb = getLhsBatchingDims(), rb = getRhsBatchingDims();
  ArrayRef<int64_t> lc = getLhsContractingDims(),
                    rc = getRhsContractingDims();
  SmallVector<int64_t> lf =
      dotFreeDims(tensorType(getLhs()).getRank(), lb, lc);
  SmallVector<int64_t> rf =
      dotFreeDims(tensorType(getRhs()).getRank(), rb, rc);
  int64_t numBatch = lb.size();
  v.set(0, dotOperandCotangent(v, g, getRhs(), lb, lc, rb, rc, lf,
                               rf, numBatch + lf.size()));
  v.set(1, dotOperandCotangent(v, g, getLhs(), rb, rc, lb, lc, rf,
                               lf, numBatch));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                  SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (v.anyDifferentiable())
    v.set(0, v.reshape(v.cotangent(), getOperand().getType()));
  return success();
}

LogicalResult TransposeOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                    SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  v.set(0, TransposeOp::create(v.b, v.cotangent(), inverse));
  return success();
}

LogicalResult BroadcastOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                    SmallVectorImpl<Value> &out) {
  // Sum over the dimensions the broadcast created or expanded from 1; a
  // reshape restores the operand's size-1 dimensions.
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  RankedTensorType in = getOperand().getType(), res = getType();
  ArrayRef<int64_t> dims = getDims();
  SmallVector<int64_t> summed;
  for (int64_t d = 0; d < res.getRank(); ++d) {
    auto *it = llvm::find(dims, d);
    if (it == dims.end() ||
        (in.getDimSize(it - dims.begin()) == 1 && res.getDimSize(d) != 1))
      summed.push_back(d);
  }
  Value reduced = v.reduceSum(v.cotangent(), summed, /*keepdims=*/false);
  v.set(0, v.reshape(reduced, in));
  return success();
}

LogicalResult SliceOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                SmallVectorImpl<Value> &out) {
  // Scatter the cotangent back into zeros, one dimension at a time: padding
  // with zeros (concat) for unit strides, scatter_add at the taken indices
  // for larger ones.
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  RankedTensorType in = getOperand().getType();
  ArrayRef<int64_t> start = getStart(), strides = getStrides();
  Value current = v.cotangent();
  for (int64_t d = 0; d < in.getRank(); ++d) {
    RankedTensorType curType = tensorType(current);
    int64_t taken = curType.getDimSize(d), size = in.getDimSize(d);
    if (taken == size)
      continue;
    SmallVector<int64_t> shape(curType.getShape());
    shape[d] = size;
    RankedTensorType grown = curType.clone(shape);
    if (strides[d] == 1 || taken <= 1) {
      SmallVector<Value> pieces;
      auto zeroPiece = [&](int64_t n) {
        SmallVector<int64_t> pieceShape(curType.getShape());
        pieceShape[d] = n;
        pieces.push_back(v.zeros(curType.clone(pieceShape)));
      };
      if (start[d] > 0)
        zeroPiece(start[d]);
      pieces.push_back(current);
      if (int64_t after = size - start[d] - taken; after > 0)
        zeroPiece(after);
      current = ConcatOp::create(v.b, pieces, d);
      continue;
    }
    SmallVector<int64_t> indices;
    for (int64_t k = 0; k < taken; ++k)
      indices.push_back(start[d] + k * strides[d]);
    auto indexType = RankedTensorType::get({taken}, v.b.getI64Type());
    auto indexAttr =
        DenseElementsAttr::get(indexType, ArrayRef<int64_t>(indices));
    Value indexConst =
        ConstantOp::create(v.b, cast<ElementsAttr>(indexAttr));
    current = ScatterAddOp::create(v.b, v.zeros(grown), indexConst, current, d);
  }
  v.set(0, current);
  return success();
}

LogicalResult ConcatOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                 SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  int64_t dim = getDim();
  SmallVector<int64_t> sizes;
  for (Value input : getInputs())
    sizes.push_back(tensorType(input).getDimSize(dim));
  auto split = SplitOp::create(v.b, v.cotangent(), dim, sizes);
  for (auto [i, piece] : llvm::enumerate(split.getResults()))
    v.set(i, piece);
  return success();
}

LogicalResult SplitOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  SmallVector<Value> pieces;
  for (unsigned i = 0, e = getNumResults(); i < e; ++i)
    pieces.push_back(v.cotangent(i));
  v.set(0, ConcatOp::create(v.b, pieces, getDim()));
  return success();
}

LogicalResult GatherOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                 SmallVectorImpl<Value> &out) {
  // Rows taken several times accumulate (scatter_add).
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value g = v.cotangent();
  v.set(0, ScatterAddOp::create(v.b, v.zeros(getData().getType()),
                                getIndices(), g, getAxis()));
  return success();
}

LogicalResult ScatterAddOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                     SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value g = v.cotangent();
  v.set(0, g);
  v.set(2, GatherOp::create(v.b, g, getIndices(), getAxis()));
  return success();
}

LogicalResult IotaOp::buildVJP(OpBuilder &, ArrayRef<Value>,
                               SmallVectorImpl<Value> &out) {
  return noGradient(*this, out);
}

LogicalResult ConstantOp::buildVJP(OpBuilder &, ArrayRef<Value>,
                                   SmallVectorImpl<Value> &out) {
  return noGradient(*this, out);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The cotangent of a reduction's result, reshaped to keep the reduced
/// dimensions as size 1 and broadcast to the operand's shape.
static Value expandReduced(VJP &v, Value g, RankedTensorType operand,
                           ArrayRef<int64_t> dims) {
  return v.expand(v.reshape(g, keepdimsType(operand, dims)), operand);
}

LogicalResult ReduceSumOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                    SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (v.anyDifferentiable())
    v.set(0, expandReduced(v, v.cotangent(), getOperand().getType(),
                           getDims()));
  return success();
}

LogicalResult ReduceMeanOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                     SmallVectorImpl<Value> &out) {
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  RankedTensorType in = getOperand().getType();
  int64_t count = 1;
  for (int64_t d : getDims())
    count *= in.getDimSize(d);
  Value g = v.scale(v.cotangent(), 1.0 / static_cast<double>(count));
  v.set(0, expandReduced(v, g, in, getDims()));
  return success();
}

LogicalResult ReduceMaxOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                    SmallVectorImpl<Value> &out) {
  // The cotangent is shared evenly by the elements equal to the maximum
  // (PyTorch's amax).
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  RankedTensorType in = getOperand().getType();
  ArrayRef<int64_t> dims = getDims();
  Value x = getOperand();
  Value isMax = v.compare(ComparisonDirection::eq, x,
                          expandReduced(v, getResult(), in, dims));
  Value count = v.reduceSum(v.convert(isMax, in.getElementType()), dims,
                            /*keepdims=*/true);
  Value share = v.div(v.reshape(v.cotangent(), keepdimsType(in, dims)), count);
  v.set(0, v.maskOr0(isMax, v.expand(share, in)));
  return success();
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::buildVJP(OpBuilder &builder,
                                       ArrayRef<Value> cts,
                                       SmallVectorImpl<Value> &out) {
  // d loss_i / d logits_i = softmax(logits_i) - onehot(label_i), weighted by
  // the cotangent of sample i: g (none), broadcast g (sum) or
  // g / #samples not ignored (mean); ignored samples get 0.
  VJP v(*this, builder, cts, out);
  if (!v.anyDifferentiable())
    return success();
  Value logits = getLogits(), labels = getLabels();
  RankedTensorType logitsType = tensorType(logits),
                   labelsType = tensorType(labels);
  Type floatType = logitsType.getElementType();
  int64_t classDim = logitsType.getRank() - 1;
  SmallVector<int64_t> sampleDims = range(0, classDim);
  RankedTensorType perSample = labelsType.clone(floatType);

  // The class index of each logit: one row of indices, broadcast (read
  // with stride 0 by the kernel that compares it, not stored per sample:
  // [tokens, vocab] int64s would be the largest buffer of an LM's step).
  Value classes = v.broadcast(
      IotaOp::create(v.b,
                     RankedTensorType::get({logitsType.getDimSize(classDim)},
                                           labelsType.getElementType()),
                     0),
      logitsType.clone(labelsType.getElementType()), {classDim});
  Value onehot = v.convert(
      v.compare(ComparisonDirection::eq, classes,
                v.broadcast(labels, classes.getType(), sampleDims)),
      floatType);

  Value valid;
  if (IntegerAttr ignore = getIgnoreIndexAttr())
    valid = v.compare(ComparisonDirection::ne, labels,
                      v.splatInt(labelsType, ignore.getInt()));
  Value g = v.cotangent();
  Value weight;
  switch (getReduction()) {
  case LossReduction::none:
    weight = g;
    break;
  case LossReduction::sum:
    weight = v.broadcast(g, perSample, {});
    break;
  case LossReduction::mean: {
    Value count =
        valid ? v.reduceSum(v.convert(valid, floatType),
                            range(0, labelsType.getRank()), /*keepdims=*/false)
              : v.splat(g.getType(),
                        static_cast<double>(labelsType.getNumElements()));
    weight = v.broadcast(v.div(g, count), perSample, {});
    break;
  }
  }
  if (valid)
    weight = v.maskOr0(valid, weight);
  Value probs = SoftmaxOp::create(v.b, logits, classDim);
  Value perClass = v.broadcast(weight, logitsType, sampleDims);
  v.set(0, v.mul(v.sub(probs, onehot), perClass));
  return success();
}

//===----------------------------------------------------------------------===//
// Tensor parallelism: Megatron-LM's conjugate f and g
//===----------------------------------------------------------------------===//

LogicalResult TpCopyOp::buildVJP(OpBuilder &builder, ArrayRef<Value> cts,
                                 SmallVectorImpl<Value> &out) {
  // f: the identity forward; each rank's cotangent is one term of the sum
  // over the ranks, so the backward pass all-reduces it. The one VJP that
  // builds a non-loom op: the collective is upstream's.
  VJP v(*this, builder, cts, out);
  if (v.anyDifferentiable())
    v.set(0, shard::AllReduceOp::create(builder, getLoc(), getType(),
                                        getGrid(), getGridAxes(),
                                        v.cotangent()));
  return success();
}

LogicalResult GridIndexOp::buildVJP(OpBuilder &, ArrayRef<Value>,
                                    SmallVectorImpl<Value> &out) {
  // An integer result carries no gradient.
  return noGradient(*this, out);
}

namespace {
/// g, the conjugate of `loom.tp_copy`: a sum `shard.all_reduce` whose result
/// is replicated, so every rank holds the full cotangent of the result and
/// each rank's operand, one term of the sum, gets it unchanged.
struct AllReduceVJPModel
    : public VJPInterface::ExternalModel<AllReduceVJPModel,
                                         shard::AllReduceOp> {
  bool isOperandDifferentiable(Operation *op, unsigned index) const {
    // A max/min marked loom.stop_gradient is a constant for the gradient.
    auto allReduce = cast<shard::AllReduceOp>(op);
    if (allReduce.getReduction() != shard::ReductionKind::Sum &&
        op->hasAttr(LoomDialect::getStopGradientAttrName()))
      return false;
    return ::mlir::loom::detail::isFloatToFloatOperand(op, index);
  }
  LogicalResult buildVJP(Operation *op, OpBuilder &builder,
                         ArrayRef<Value> cts,
                         SmallVectorImpl<Value> &out) const {
    auto allReduce = cast<shard::AllReduceOp>(op);
    if (allReduce.getReduction() != shard::ReductionKind::Sum &&
        op->hasAttr(LoomDialect::getStopGradientAttrName()))
      return noGradient(op, out);
    if (allReduce.getReduction() != shard::ReductionKind::Sum)
      return op->emitOpError()
             << "has no vector-Jacobian product: only a sum all-reduce is "
                "differentiable (a max or min one marked loom.stop_gradient "
                "is a constant), this one is '"
             << shard::stringifyReductionKind(allReduce.getReduction())
             << "'";
    if (allReduce.getInput().getType() != allReduce.getType())
      return op->emitOpError() << "has no vector-Jacobian product: the "
                                "operand and result types differ";
    VJP v(op, builder, cts, out);
    if (v.anyDifferentiable())
      v.set(0, v.cotangent());
    return success();
  }
};
} // namespace

void mlir::loom::registerShardVJPModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, shard::ShardDialect *) {
    shard::AllReduceOp::attachInterface<AllReduceVJPModel>(*ctx);
  });
}
