//===- Interpreter.cpp - The reference interpreter of loom IR -------------===//

#include "loom/Interpreter/Interpreter.h"

#include "Kernels.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <new>

namespace mlir {
namespace loom {
namespace interp {

namespace {

/// "[1, 2]" for the linear index `linear` of `shape`.
std::string indexString(ArrayRef<int64_t> shape, int64_t linear) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return formatShape(index);
}

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

/// Runs the kernel of one op. Returns "" on success (with `results`
/// filled), an error message, or `kUnsupported`.
const char kUnsupported[] = "\x01unsupported";

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
      .Case([&](SigmoidOp) { return unaryOp(UnaryKind::Sigmoid); })
      .Case([&](ErfOp) { return unaryOp(UnaryKind::Erf); })
      .Case([&](ReluOp) { return unaryOp(UnaryKind::Relu); })
      .Case([&](SiluOp) { return unaryOp(UnaryKind::Silu); })
      .Case([&](GeluOp g) {
        return unaryOp(g.getApproximate() == GeluApproximation::tanh
                           ? UnaryKind::GeluTanh
                           : UnaryKind::GeluErf);
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

} // namespace

FailureOr<SmallVector<Tensor>> Interpreter::run(func::FuncOp func,
                                                SmallVector<Tensor> args) {
  callStack.clear();
  SmallVector<TensorRef> refs;
  for (Tensor &t : args)
    refs.push_back(std::make_shared<const Tensor>(std::move(t)));
  FailureOr<SmallVector<TensorRef>> results = call(func, refs, /*depth=*/0);
  if (failed(results))
    return failure();
  SmallVector<Tensor> out;
  for (const TensorRef &r : *results)
    out.push_back(*r);
  return out;
}

LogicalResult Interpreter::withCallStack(InFlightDiagnostic &&diagnostic) {
  constexpr size_t kShown = 4;
  size_t shown = std::min(callStack.size(), kShown);
  for (size_t i = 0; i < shown; ++i)
    diagnostic.attachNote(callStack[callStack.size() - 1 - i]->getLoc())
        << "called from here";
  if (callStack.size() > shown)
    diagnostic.attachNote() << "and " << callStack.size() - shown
                            << " more enclosing calls";
  return failure();
}

FailureOr<SmallVector<Interpreter::TensorRef>>
Interpreter::call(func::FuncOp func, ArrayRef<TensorRef> args, unsigned depth) {
  if (func.isExternal())
    return withCallStack(func.emitOpError()
                         << "@" << func.getSymName()
                         << " has no body to interpret");
  Region &body = func.getBody();
  if (!llvm::hasSingleElement(body))
    return withCallStack(
        func.emitOpError()
        << "has " << body.getBlocks().size()
        << " blocks; the interpreter runs single-block functions only");
  Block &block = body.front();
  if (args.size() != block.getNumArguments())
    return withCallStack(func.emitOpError()
                         << "expects " << block.getNumArguments()
                         << " arguments, got " << args.size());

  DenseMap<Value, TensorRef> values;
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !matchesType(*args[i], type))
      return withCallStack(func.emitOpError()
                           << "argument " << i << " has type " << arg.getType()
                           << " but the interpreter was given "
                           << args[i]->typeString());
    values[arg] = args[i];
  }

  for (Operation &op : block) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<TensorRef> results;
      for (Value v : ret.getOperands())
        results.push_back(values.lookup(v));
      return results;
    }
    if (failed(execute(&op, values, depth)))
      return failure();
  }
  return withCallStack(func.emitOpError() << "ends without func.return");
}

LogicalResult Interpreter::execute(Operation *op,
                                   DenseMap<Value, TensorRef> &values,
                                   unsigned depth) {
  SmallVector<const Tensor *> in;
  SmallVector<TensorRef> operands;
  for (Value v : op->getOperands()) {
    auto it = values.find(v);
    if (it == values.end())
      return withCallStack(
          op->emitOpError()
          << "uses a value the interpreter has not computed (an operand "
             "defined outside the function body?)");
    in.push_back(it->second.get());
    operands.push_back(it->second);
  }
  for (Type t : op->getResultTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !getElementKind(tensor.getElementType()))
      return withCallStack(
          op->emitOpError()
          << "has a result of type " << t
          << "; the interpreter supports ranked tensors of f32, f16, bf16, "
             "i64, i32 and i1");
  }

  if (op->getName().getDialectNamespace() == "check")
    return executeCheck(op, in); // CheckKernels.cpp
  SmallVector<Tensor> results;
  if (auto callOp = dyn_cast<func::CallOp>(op)) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        op, callOp.getCalleeAttr());
    if (!callee)
      return withCallStack(op->emitOpError()
                           << "calls @" << callOp.getCallee()
                           << ", which is not a func.func in the module");
    if (depth + 1 > options.maxCallDepth)
      return withCallStack(op->emitOpError()
                           << "nests calls deeper than "
                           << options.maxCallDepth
                           << " (recursion?); the interpreter stops here");
    callStack.push_back(op);
    FailureOr<SmallVector<TensorRef>> called =
        call(callee, operands, depth + 1);
    callStack.pop_back();
    if (failed(called))
      return failure();
    for (const TensorRef &r : *called)
      results.push_back(*r);
  } else {
    std::string error;
    try {
      error = runKernel(op, in, results);
    } catch (const std::bad_alloc &) {
      // Only reached when the tool lets operator new throw (see
      // Interpreter.h); LLVM's default new-handler aborts instead.
      results.clear();
      error = "ran out of memory computing its results (the interpreter "
              "keeps every value in memory; use smaller shapes)";
    }
    if (error == kUnsupported)
      return withCallStack(
          op->emitOpError()
          << "is not supported by the interpreter (loom-run runs loom ops, "
             "func.call, func.return and arith.constant)");
    if (!error.empty())
      return withCallStack(op->emitOpError() << error);
  }
  if (failed(checkResults(op, results)))
    return failure();
  for (auto [value, tensor] : llvm::zip(op->getResults(), results))
    values[value] = std::make_shared<const Tensor>(std::move(tensor));
  return success();
}

LogicalResult Interpreter::checkResults(Operation *op,
                                        ArrayRef<Tensor> results) {
  if (results.size() != op->getNumResults())
    return withCallStack(op->emitOpError()
                         << "computed " << results.size() << " results for "
                         << op->getNumResults() << " result types");
  for (auto [i, pair] : llvm::enumerate(llvm::zip(op->getResults(), results))) {
    auto [value, tensor] = pair;
    auto type = cast<RankedTensorType>(value.getType());
    if (!matchesType(tensor, type))
      return withCallStack(
          op->emitOpError()
          << "computed result " << i << " as " << tensor.typeString()
          << ", which does not match its type " << type
          << " (inconsistent IR: run loom-shape-inference to check it)");
    if (!options.checkFinite || !tensor.isFloat())
      continue;
    for (size_t e = 0; e < tensor.floats.size(); ++e) {
      float v = tensor.floats[e];
      if (std::isfinite(v))
        continue;
      return withCallStack(
          op->emitOpError()
          << "produced " << (std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf")
          << " at index "
          << indexString(tensor.shape, static_cast<int64_t>(e))
          << " of result " << i << " (" << tensor.typeString()
          << "), the first non-finite value (--check-finite)");
    }
  }
  return success();
}

} // namespace interp
} // namespace loom
} // namespace mlir
