//===- Kernels.cpp - Generated loops and the runtime's kernels ------------===//
//
// A loomrt.kernel becomes one loop (flat, or a nest with strided reads)
// whose body prints the scalar arith/math ops as C++ expressions;
// loomrt.reduce is a loop nest with a double (or int64) accumulator, iota
// a loop nest of its index. Softmax, the norms and cross-entropy call the
// runtime library (cpu::softmax, cpu::layerNorm, cpu::rmsNorm,
// cpu::crossEntropy).
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <optional>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit_cpp;

LogicalResult Emitter::emitScalar(Operation *op,
                                  DenseMap<Value, std::string> &scalars,
                                  int indent) {
  auto v = [&](unsigned i) { return scalars.lookup(op->getOperand(i)); };
  std::string expr;
  llvm::raw_string_ostream e(expr);
  Type resultType = op->getResult(0).getType();
  bool ok = true;
  TypeSwitch<Operation *>(op)
      .Case([&](arith::ConstantOp c) {
        Attribute value = c.getValue();
        if (auto f = dyn_cast<FloatAttr>(value))
          e << formatFloat(f.getValueAsDouble());
        else if (auto i = dyn_cast<IntegerAttr>(value))
          e << (resultType.isInteger(1)
                    ? (i.getValue().isZero() ? "false" : "true")
                    : (Twine("static_cast<") + cppType(resultType) + ">(" +
                       Twine(i.getValue().getSExtValue()) + "LL)")
                          .str());
        else
          ok = false;
      })
      .Case<arith::AddFOp, arith::AddIOp>([&](auto) { e << v(0) << " + " << v(1); })
      .Case<arith::SubFOp, arith::SubIOp>([&](auto) { e << v(0) << " - " << v(1); })
      .Case<arith::MulFOp, arith::MulIOp>([&](auto) { e << v(0) << " * " << v(1); })
      .Case<arith::DivFOp>([&](auto) { e << v(0) << " / " << v(1); })
      .Case<arith::DivSIOp>([&](auto) {
        e << "loom_divi(ctx, " << v(0) << ", " << v(1) << ")";
      })
      .Case<arith::NegFOp>([&](auto) { e << "-" << v(0); })
      .Case<arith::MaximumFOp>([&](auto) { e << "loom_maxf(" << v(0) << ", " << v(1) << ")"; })
      .Case<arith::MinimumFOp>([&](auto) { e << "loom_minf(" << v(0) << ", " << v(1) << ")"; })
      .Case<arith::MaxSIOp>([&](auto) { e << "std::max(" << v(0) << ", " << v(1) << ")"; })
      .Case<arith::MinSIOp>([&](auto) { e << "std::min(" << v(0) << ", " << v(1) << ")"; })
      .Case([&](arith::CmpFOp c) {
        const char *sym = nullptr;
        bool negate = false;
        switch (c.getPredicate()) {
        case arith::CmpFPredicate::OEQ: sym = "=="; break;
        case arith::CmpFPredicate::UNE: sym = "!="; break;
        case arith::CmpFPredicate::OLT: sym = "<"; break;
        case arith::CmpFPredicate::OLE: sym = "<="; break;
        case arith::CmpFPredicate::OGT: sym = ">"; break;
        case arith::CmpFPredicate::OGE: sym = ">="; break;
        case arith::CmpFPredicate::UGT: sym = "<="; negate = true; break;
        default: ok = false; return;
        }
        e << (negate ? "!(" : "(") << v(0) << " " << sym << " " << v(1) << ")";
      })
      .Case([&](arith::CmpIOp c) {
        const char *sym = nullptr;
        switch (c.getPredicate()) {
        case arith::CmpIPredicate::eq: sym = "=="; break;
        case arith::CmpIPredicate::ne: sym = "!="; break;
        case arith::CmpIPredicate::slt: sym = "<"; break;
        case arith::CmpIPredicate::sle: sym = "<="; break;
        case arith::CmpIPredicate::sgt: sym = ">"; break;
        case arith::CmpIPredicate::sge: sym = ">="; break;
        default: ok = false; return;
        }
        e << "(" << v(0) << " " << sym << " " << v(1) << ")";
      })
      .Case<arith::SelectOp>([&](auto) {
        e << "(" << v(0) << " ? " << v(1) << " : " << v(2) << ")";
      })
      .Case<arith::SIToFPOp, arith::UIToFPOp, arith::ExtUIOp, arith::ExtSIOp,
            arith::TruncIOp>([&](auto) {
        e << "static_cast<" << cppType(resultType) << ">(" << v(0) << ")";
      })
      .Case<arith::FPToSIOp>([&](auto) {
        e << "loom_ftoi<" << cppType(resultType) << ">(" << v(0) << ")";
      })
      .Case<math::ExpOp>([&](auto) { e << "std::exp(" << v(0) << ")"; })
      .Case<math::LogOp>([&](auto) { e << "std::log(" << v(0) << ")"; })
      .Case<math::SqrtOp>([&](auto) { e << "std::sqrt(" << v(0) << ")"; })
      .Case<math::RsqrtOp>([&](auto) { e << "1.0f / std::sqrt(" << v(0) << ")"; })
      .Case<math::TanhOp>([&](auto) { e << "std::tanh(" << v(0) << ")"; })
      .Case<math::CosOp>([&](auto) { e << "std::cos(" << v(0) << ")"; })
      .Case<math::SinOp>([&](auto) { e << "std::sin(" << v(0) << ")"; })
      .Case<math::ErfOp>([&](auto) { e << "std::erf(" << v(0) << ")"; })
      .Case<math::PowFOp>([&](auto) { e << "std::pow(" << v(0) << ", " << v(1) << ")"; })
      .Case<math::AbsFOp>([&](auto) { e << "std::fabs(" << v(0) << ")"; })
      .Case<math::AbsIOp>([&](auto) {
        e << "(" << v(0) << " < 0 ? -" << v(0) << " : " << v(0) << ")";
      })
      .Default([&](Operation *) { ok = false; });
  if (!ok || !cppType(resultType))
    return op->emitError("emit-cpp: cannot print this scalar op");
  std::string result = "v" + std::to_string(scalars.size());
  os.indent(indent) << "const " << cppType(resultType) << " " << result
                    << " = " << expr << ";\n";
  scalars[op->getResult(0)] = result;
  return success();
}

LogicalResult Emitter::emitKernel(loomrt::KernelOp op) {
  Value out = op.getOuts().front();
  ArrayRef<int64_t> loopShape = shape(out);
  int64_t n = numElements(loopShape);
  bool parallel = n >= options.parallelThreshold;
  line() << "// kernel " << op.getOrigin() << " -> " << name(out) << "\n";
  Block &body = op.getBody().front();
  DenseMap<Value, std::string> scalars;
  auto strided = op.getInStridesAttr();
  std::optional<LoopNest> nest;
  int indent;
  std::string outIndex;
  if (!strided) {
    // One flat loop over the elements.
    if (parallel)
      line() << "#pragma omp parallel for\n";
    line() << "for (int64_t i = 0; i < " << n << "; ++i) {\n";
    indent = 4;
    outIndex = "i";
    for (auto [arg, in] : llvm::zip(body.getArguments(), op.getIns())) {
      std::string s = "x" + std::to_string(scalars.size());
      os.indent(indent) << "const " << cppType(arg.getType()) << " " << s
                        << " = " << name(in) << "[i];\n";
      scalars[arg] = s;
    }
  } else {
    nest.emplace(os, loopShape, "i", 2, parallel);
    indent = nest->bodyIndent();
    outIndex = indexExpr("i", computeStrides(loopShape));
    for (auto [arg, in, s] :
         llvm::zip(body.getArguments(), op.getIns(), strided)) {
      std::string x = "x" + std::to_string(scalars.size());
      os.indent(indent) << "const " << cppType(arg.getType()) << " " << x
                        << " = " << name(in) << "["
                        << indexExpr("i", cast<DenseI64ArrayAttr>(s).asArrayRef())
                        << "];\n";
      scalars[arg] = x;
    }
  }
  for (Operation &inner : body.without_terminator())
    if (failed(emitScalar(&inner, scalars, indent)))
      return failure();
  auto yield = cast<loomrt::YieldOp>(body.getTerminator());
  for (auto [value, buffer] : llvm::zip(yield.getValues(), op.getOuts()))
    os.indent(indent) << name(buffer) << "[" << outIndex
                      << "] = " << scalars.lookup(value) << ";\n";
  if (!strided)
    line() << "}\n";
  return success();
}

LogicalResult Emitter::emitReduce(loomrt::ReduceOp op) {
  ArrayRef<int64_t> inShape = shape(op.getInput());
  ArrayRef<int64_t> dims = op.getDims();
  SmallVector<int64_t> inStrides = computeStrides(inShape);
  // Kept dimensions in order, and the output's (dense) strides for them.
  SmallVector<int64_t> kept, keptSizes, reduced, reducedSizes;
  for (int64_t d = 0; d < static_cast<int64_t>(inShape.size()); ++d) {
    if (llvm::is_contained(dims, d)) {
      reduced.push_back(d);
      reducedSizes.push_back(inShape[d]);
    } else {
      kept.push_back(d);
      keptSizes.push_back(inShape[d]);
    }
  }
  SmallVector<int64_t> outStrides = computeStrides(keptSizes);
  Type type = elementType(op.getInput());
  bool isFloat = type.isF32();
  const char *acc = isFloat ? "double" : "int64_t";
  line() << "// reduce " << stringifyEnum(op.getKind()) << " over ["
         << llvm::join(llvm::map_range(dims, [](int64_t d) {
              return std::to_string(d);
            }), ", ")
         << "] (" << op.getOrigin() << ") -> " << name(op.getOutput()) << "\n";
  int64_t outN = numElements(keptSizes);
  // A full reduction has no outer loop: a block scopes its locals.
  bool scoped = keptSizes.empty();
  if (scoped)
    os.indent(2) << "{\n";
  LoopNest outer(os, keptSizes, "k", scoped ? 4 : 2,
                 outN >= options.parallelThreshold / 64);
  int indent = outer.bodyIndent();
  std::string init;
  switch (op.getKind()) {
  case loomrt::ReduceKind::sum:
  case loomrt::ReduceKind::mean:
    init = "0";
    break;
  case loomrt::ReduceKind::max:
    init = isFloat ? "-std::numeric_limits<double>::infinity()"
                   : "std::numeric_limits<int64_t>::lowest()";
    break;
  }
  os.indent(indent) << acc << " acc = " << init << ";\n";
  // Base offset from the kept indices.
  std::string base;
  {
    SmallVector<int64_t> keptStrides;
    for (int64_t d : kept)
      keptStrides.push_back(inStrides[d]);
    base = indexExpr("k", keptStrides);
  }
  os.indent(indent) << "const int64_t base = " << base << ";\n";
  {
    LoopNest inner(os, reducedSizes, "r", indent, false);
    SmallVector<int64_t> reducedStrides;
    for (int64_t d : reduced)
      reducedStrides.push_back(inStrides[d]);
    int in = inner.bodyIndent();
    os.indent(in) << "const " << acc << " x = " << name(op.getInput())
                  << "[base + " << indexExpr("r", reducedStrides) << "];\n";
    if (op.getKind() == loomrt::ReduceKind::max) {
      if (isFloat)
        os.indent(in) << "if (acc == acc && (x != x || x > acc)) acc = x;\n";
      else
        os.indent(in) << "if (x > acc) acc = x;\n";
    } else {
      os.indent(in) << "acc += x;\n";
    }
  }
  std::string value = "acc";
  if (op.getKind() == loomrt::ReduceKind::mean)
    value = "acc / " + std::to_string(numElements(reducedSizes)) + ".0";
  os.indent(indent) << name(op.getOutput()) << "[" << indexExpr("k", outStrides)
                    << "] = static_cast<" << cppType(type) << ">(" << value
                    << ");\n";
  if (scoped)
    os.indent(2) << "}\n";
  return success();
}

LogicalResult Emitter::emitIota(loomrt::IotaOp iota) {
  origin("iota -> " + name(iota.getOutput()));
  ArrayRef<int64_t> s = shape(iota.getOutput());
  LoopNest nest(os, s, "i", 2, false);
  os.indent(nest.bodyIndent())
      << name(iota.getOutput()) << "[" << indexExpr("i", computeStrides(s))
      << "] = static_cast<" << cppType(elementType(iota.getOutput()))
      << ">(i" << iota.getDim() << ");\n";
  return success();
}

LogicalResult Emitter::emitSoftmax(loomrt::SoftmaxOp softmax) {
  origin((softmax.getOrigin() + " -> " + name(softmax.getOutput())).str());
  ArrayRef<int64_t> s = shape(softmax.getInput());
  int64_t axis = softmax.getAxis();
  line() << "cpu::softmax(" << name(softmax.getInput()) << ", "
         << name(softmax.getOutput()) << ", "
         << numElements(s.take_front(axis)) << ", " << s[axis] << ", "
         << numElements(s.drop_front(axis + 1)) << ", "
         << (softmax.getLog() ? "true" : "false") << ");\n";
  return success();
}

LogicalResult Emitter::emitLayerNorm(loomrt::LayerNormOp norm) {
  origin((norm.getOrigin() + " -> " + name(norm.getOutput())).str());
  ArrayRef<int64_t> s = shape(norm.getInput());
  int64_t axis = norm.getAxis();
  std::string scale = norm.getScale() ? name(norm.getScale()) : "nullptr";
  std::string rows = std::to_string(numElements(s.take_front(axis)));
  std::string cols = std::to_string(numElements(s.drop_front(axis)));
  std::string eps;
  llvm::raw_string_ostream(eps)
      << llvm::format("%.17g", norm.getEpsilon().convertToDouble());
  if (norm.getRms()) {
    line() << "cpu::rmsNorm(" << name(norm.getInput()) << ", " << scale
           << ", " << name(norm.getOutput()) << ", " << rows << ", " << cols
           << ", " << eps << ");\n";
  } else {
    std::string bias = norm.getBias() ? name(norm.getBias()) : "nullptr";
    line() << "cpu::layerNorm(" << name(norm.getInput()) << ", " << scale
           << ", " << bias << ", " << name(norm.getOutput()) << ", " << rows
           << ", " << cols << ", " << eps << ");\n";
  }
  return success();
}

LogicalResult Emitter::emitCrossEntropy(loomrt::CrossEntropyOp ce) {
  origin((ce.getOrigin() + " -> " + name(ce.getOutput())).str());
  // cpu::crossEntropy, gather and scatterAdd are overloaded on the index
  // pointer type (i64 and i32), so the call is the same.
  if (!isIndexType(elementType(ce.getLabels())))
    return ce.emitError("emit-cpp: cross_entropy labels must be i64 or i32");
  ArrayRef<int64_t> s = shape(ce.getLogits());
  int64_t classes = s.back();
  StringRef reduction = ce.getReduction();
  const char *kind = reduction == "none"  ? "Reduction::None"
                     : reduction == "sum" ? "Reduction::Sum"
                                          : "Reduction::Mean";
  IntegerAttr ignore = ce.getIgnoreIndexAttr();
  line() << "cpu::crossEntropy(ctx, " << cppQuote(ce.getOrigin()) << ", "
         << name(ce.getLogits()) << ", " << name(ce.getLabels()) << ", "
         << name(ce.getOutput()) << ", " << numElements(s) / classes << ", "
         << classes << ", cpu::" << kind << ", "
         << (ignore ? "true" : "false") << ", "
         << (ignore ? ignore.getInt() : 0) << ");\n";
  return success();
}
