//===- Dispatch.cpp - Each loom op to its kernel --------------------------===//
//
// Reads a loom op's operands and attributes and calls its kernel
// (Kernels.h): the elementwise, normalisation, loss, contraction, data
// movement and reduction ops, and tensor constants (loom.constant and
// arith.constant). The kernels know nothing of MLIR ops; this is where the
// op's enums become theirs.
//
//===----------------------------------------------------------------------===//

#include "Execution.h"
#include "Kernels.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace loom {
namespace interp {

namespace {

CompareKind toCompareKind(ComparisonDirection direction) {
  switch (direction) {
  case ComparisonDirection::eq:
    return CompareKind::Eq;
  case ComparisonDirection::ne:
    return CompareKind::Ne;
  case ComparisonDirection::lt:
    return CompareKind::Lt;
  case ComparisonDirection::le:
    return CompareKind::Le;
  case ComparisonDirection::gt:
    return CompareKind::Gt;
  case ComparisonDirection::ge:
    return CompareKind::Ge;
  }
  return CompareKind::Eq;
}

LossKind toLossKind(LossReduction reduction) {
  switch (reduction) {
  case LossReduction::none:
    return LossKind::None;
  case LossReduction::mean:
    return LossKind::Mean;
  case LossReduction::sum:
    return LossKind::Sum;
  }
  return LossKind::Mean;
}

} // namespace

std::string runKernel(Operation *op, ArrayRef<const Tensor *> in,
                      SmallVectorImpl<Tensor> &results) {
  Tensor &out = results.emplace_back();
  auto unaryOp = [&](UnaryKind kind) { return unary(kind, *in[0], out); };
  auto binaryOp = [&](BinaryKind kind) {
    return binary(kind, *in[0], *in[1], out);
  };
  auto resultKind = [&](Value v) {
    return *getElementKind(cast<RankedTensorType>(v.getType()).getElementType());
  };
  auto reduceOp = [&](ReduceKind kind, auto op) {
    return reduce(kind, *in[0], op.getDims(), op.getKeepdims(), out);
  };
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case([&](AddOp) { return binaryOp(BinaryKind::Add); })
      .Case([&](SubOp) { return binaryOp(BinaryKind::Sub); })
      .Case([&](MulOp) { return binaryOp(BinaryKind::Mul); })
      .Case([&](DivOp) { return binaryOp(BinaryKind::Div); })
      .Case([&](PowOp) { return binaryOp(BinaryKind::Pow); })
      .Case([&](MaxOp) { return binaryOp(BinaryKind::Max); })
      .Case([&](MinOp) { return binaryOp(BinaryKind::Min); })
      .Case([&](NegOp) { return unaryOp(UnaryKind::Neg); })
      .Case([&](AbsOp) { return unaryOp(UnaryKind::Abs); })
      .Case([&](ExpOp) { return unaryOp(UnaryKind::Exp); })
      .Case([&](LogOp) { return unaryOp(UnaryKind::Log); })
      .Case([&](SqrtOp) { return unaryOp(UnaryKind::Sqrt); })
      .Case([&](RsqrtOp) { return unaryOp(UnaryKind::Rsqrt); })
      .Case([&](TanhOp) { return unaryOp(UnaryKind::Tanh); })
      .Case([&](CosOp) { return unaryOp(UnaryKind::Cos); })
      .Case([&](SinOp) { return unaryOp(UnaryKind::Sin); })
      .Case([&](SigmoidOp) { return unaryOp(UnaryKind::Sigmoid); })
      .Case([&](ErfOp) { return unaryOp(UnaryKind::Erf); })
      .Case([&](ErfInvOp) { return unaryOp(UnaryKind::ErfInv); })
      .Case([&](ReluOp) { return unaryOp(UnaryKind::Relu); })
      .Case([&](SiluOp) { return unaryOp(UnaryKind::Silu); })
      .Case([&](GeluOp g) {
        return unaryOp(g.getApproximate() == GeluApproximation::tanh
                           ? UnaryKind::GeluTanh
                           : UnaryKind::GeluErf);
      })
      .Case([&](GeluGradOp g) {
        return binaryOp(g.getApproximate() == GeluApproximation::tanh
                            ? BinaryKind::GeluGradTanh
                            : BinaryKind::GeluGradErf);
      })
      .Case([&](CompareOp c) {
        return compare(toCompareKind(c.getDirection()), *in[0], *in[1], out);
      })
      .Case([&](SelectOp) { return select(*in[0], *in[1], *in[2], out); })
      .Case([&](ConvertOp c) {
        return convert(*in[0], resultKind(c.getResult()), out);
      })
      .Case([&](SoftmaxOp s) {
        return softmax(*in[0], static_cast<int64_t>(s.getAxis()),
                       /*log=*/false, out);
      })
      .Case([&](LogSoftmaxOp s) {
        return softmax(*in[0], static_cast<int64_t>(s.getAxis()),
                       /*log=*/true, out);
      })
      .Case([&](LayerNormOp n) {
        size_t next = 1;
        const Tensor *scale = n.getScale() ? in[next++] : nullptr;
        const Tensor *bias = n.getBias() ? in[next++] : nullptr;
        return layerNorm(*in[0], scale, bias, static_cast<int64_t>(n.getAxis()),
                         n.getEpsilon().convertToDouble(), out);
      })
      .Case([&](RmsNormOp n) {
        const Tensor *scale = n.getScale() ? in[1] : nullptr;
        return rmsNorm(*in[0], scale, static_cast<int64_t>(n.getAxis()),
                       n.getEpsilon().convertToDouble(), out);
      })
      .Case([&](NormGradOp n) {
        results.clear();
        return normGrad(*in[0], *in[1], n.getScale() ? in[2] : nullptr,
                        static_cast<int64_t>(n.getAxis()),
                        n.getEpsilon().convertToDouble(), n.getRms(), results);
      })
      .Case([&](CrossEntropyOp c) {
        std::optional<int64_t> ignore;
        if (std::optional<uint64_t> i = c.getIgnoreIndex())
          ignore = static_cast<int64_t>(*i);
        return crossEntropy(*in[0], *in[1], toLossKind(c.getReduction()),
                            ignore, out);
      })
      .Case([&](DotGeneralOp d) {
        return dotGeneral(*in[0], *in[1], d.getLhsBatchingDims(),
                          d.getRhsBatchingDims(), d.getLhsContractingDims(),
                          d.getRhsContractingDims(), out);
      })
      .Case([&](ReshapeOp r) {
        return reshape(*in[0], r.getType().getShape(), out);
      })
      // Megatron's f: the identity; its all-reduce is in the backward pass.
      .Case([&](TpCopyOp c) {
        return reshape(*in[0], c.getType().getShape(), out);
      })
      .Case([&](TransposeOp t) {
        return transpose(*in[0], t.getPermutation(), out);
      })
      .Case([&](BroadcastOp b) {
        return broadcast(*in[0], b.getDims(), b.getType().getShape(), out);
      })
      .Case([&](SliceOp s) {
        return slice(*in[0], s.getStart(), s.getLimit(), s.getStrides(), out);
      })
      .Case([&](ConcatOp c) {
        return concat(in, static_cast<int64_t>(c.getDim()), out);
      })
      .Case([&](SplitOp s) {
        results.clear();
        return split(*in[0], static_cast<int64_t>(s.getDim()), s.getSizes(),
                     results);
      })
      .Case([&](GatherOp g) {
        return gather(*in[0], *in[1], static_cast<int64_t>(g.getAxis()), out);
      })
      .Case([&](ScatterAddOp s) {
        return scatterAdd(*in[0], *in[1], *in[2],
                          static_cast<int64_t>(s.getAxis()), out);
      })
      .Case([&](IotaOp i) {
        return iota(resultKind(i.getResult()), i.getType().getShape(),
                    static_cast<int64_t>(i.getDim()), out);
      })
      .Case([&](ConstantOp c) { return constant(c.getValue(), out); })
      .Case([&](ReduceSumOp r) { return reduceOp(ReduceKind::Sum, r); })
      .Case([&](ReduceMeanOp r) { return reduceOp(ReduceKind::Mean, r); })
      .Case([&](ReduceMaxOp r) { return reduceOp(ReduceKind::Max, r); })
      .Case([&](arith::ConstantOp c) -> std::string {
        auto value = dyn_cast<ElementsAttr>(c.getValue());
        if (!value)
          return "only tensor constants are supported by the interpreter "
                 "(this one is a scalar " +
                 std::string(c.getType().getAbstractType().getName()) + ")";
        return constant(value, out);
      })
      .Default([&](Operation *) { return std::string(kUnsupported); });
}

} // namespace interp
} // namespace loom
} // namespace mlir
