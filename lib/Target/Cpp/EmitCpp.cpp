//===- EmitCpp.cpp - loomrt to C++ for the CPU backend --------------------===//
//
// One loomrt op at a time: buffers become pointers (arguments, arena
// offsets, views, static constants), generated kernels become loop nests,
// library ops become calls into lib/Runtime. Names come from the ops
// (`t12_add_gelu`) and every statement is preceded by a comment naming the
// loom ops it came from, so the code reads like the IR.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Cpp/EmitCpp.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::loom;

namespace {

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string sanitize(StringRef name) {
  std::string out;
  for (char c : name)
    out += llvm::isAlnum(c) ? c : '_';
  if (out.empty() || llvm::isDigit(out[0]))
    out = "_" + out;
  return out;
}

std::string cppQuote(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

const char *cppType(Type type) {
  if (type.isF32())
    return "float";
  if (type.isInteger(64))
    return "int64_t";
  if (type.isInteger(32))
    return "int32_t";
  if (type.isInteger(1))
    return "bool";
  return nullptr;
}

const char *dtypeName(Type type) {
  if (type.isF32())
    return "DType::F32";
  if (type.isInteger(64))
    return "DType::I64";
  if (type.isInteger(32))
    return "DType::I32";
  return nullptr;
}

/// The runtime's communicator of a mesh axis (loomrt collectives name the
/// axis of @mesh they run on).
const char *groupEnum(::loom::MeshAxis axis) {
  switch (axis) {
  case ::loom::MeshAxis::Dp:
    return "Group::Dp";
  case ::loom::MeshAxis::Pp:
    return "Group::Pp";
  case ::loom::MeshAxis::Tp:
    return "Group::Tp";
  }
  return "Group::World";
}

/// Index and label types the runtime's library kernels take.
bool isIndexType(Type type) {
  return type.isInteger(64) || type.isInteger(32);
}

int64_t elementBytes(Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits == 1 ? 1 : bits / 8;
}

std::string formatFloat(double value) {
  if (std::isnan(value))
    return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<float>::infinity()"
                     : "-std::numeric_limits<float>::infinity()";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.9g", value);
  if (text.find_first_of(".en") == std::string::npos)
    text += ".0";
  return text + "f";
}

/// Prints `for` loops over `shape` with index variables `prefix0...`, and
/// closes them.
class LoopNest {
public:
  LoopNest(llvm::raw_ostream &os, ArrayRef<int64_t> shape, StringRef prefix,
           int indent, bool parallel)
      : os(os), rank(shape.size()), indent(indent) {
    for (int64_t d = 0; d < rank; ++d) {
      if (d == 0 && parallel)
        os.indent(indent) << "#pragma omp parallel for\n";
      os.indent(indent + 2 * d) << "for (int64_t " << prefix << d << " = 0; "
                                << prefix << d << " < " << shape[d] << "; ++"
                                << prefix << d << ") {\n";
    }
  }
  int bodyIndent() const { return indent + 2 * rank; }
  ~LoopNest() {
    for (int64_t d = rank - 1; d >= 0; --d)
      os.indent(indent + 2 * d) << "}\n";
  }

private:
  llvm::raw_ostream &os;
  int64_t rank;
  int indent;
};

/// `offset + i0*s0 + i1*s1 ...` (zero strides left out).
std::string indexExpr(StringRef prefix, ArrayRef<int64_t> strides,
                      int64_t offset = 0) {
  std::string expr;
  llvm::raw_string_ostream os(expr);
  bool first = true;
  if (offset != 0) {
    os << offset;
    first = false;
  }
  for (auto [d, s] : llvm::enumerate(strides)) {
    if (s == 0)
      continue;
    if (!first)
      os << " + ";
    first = false;
    os << prefix << d;
    if (s != 1)
      os << " * " << s;
  }
  if (first)
    os << "0";
  return expr;
}

class Emitter {
public:
  /// `stage`: the pipeline stage (loom.stage) when the module holds several
  /// stage programs, else -1.
  Emitter(func::FuncOp func, llvm::raw_ostream &out,
          const EmitCppOptions &options, int64_t stage = -1)
      : func(func), out(out), os(body), options(options), stage(stage) {}

  /// Prints the step's constants, the step function and its TensorSpecs and
  /// ProgramSpec (kProgram) to `out`.
  LogicalResult emit();

private:
  LogicalResult emitOp(Operation *op);
  LogicalResult emitKernel(loomrt::KernelOp op);
  LogicalResult emitScalar(Operation *op, DenseMap<Value, std::string> &names,
                           int indent);
  LogicalResult emitReduce(loomrt::ReduceOp op);
  LogicalResult emitSpecs();

  std::string name(Value value) { return names.lookup(value); }
  ArrayRef<int64_t> shape(Value value) {
    return cast<MemRefType>(value.getType()).getShape();
  }
  Type elementType(Value value) {
    return cast<MemRefType>(value.getType()).getElementType();
  }
  std::string newName(StringRef hint) {
    return ("t" + Twine(counter++) + "_" + sanitize(hint)).str();
  }
  llvm::raw_ostream &line() { return os.indent(2); }

  func::FuncOp func;
  /// Where the translation unit goes; the step body is printed into `body`
  /// first (via `os`) because constants are collected on the way.
  llvm::raw_ostream &out;
  std::string body;
  llvm::raw_string_ostream os;
  const EmitCppOptions &options;
  DenseMap<Value, std::string> names;
  std::string constants;
  int counter = 0;
  int64_t alignment = 64;
  int64_t stage;
};

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

LogicalResult Emitter::emitOp(Operation *op) {
  auto origin = [&](StringRef text) {
    line() << "// " << text << "\n";
  };
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](loomrt::AllocOp alloc) -> LogicalResult {
        if (!alloc.getOffset())
          return alloc.emitError("emit-cpp: buffer has no arena offset; run "
                                 "loom-memory-plan first");
        int64_t offset = *alloc.getOffset();
        int64_t bytes = llvm::alignTo(
            numElements(shape(alloc.getBuffer())) *
                elementBytes(elementType(alloc.getBuffer())),
            alignment);
        std::string n = newName(alloc.getCategory());
        names[alloc.getBuffer()] = n;
        line() << cppType(elementType(alloc.getBuffer())) << " *" << n
               << " = reinterpret_cast<"
               << cppType(elementType(alloc.getBuffer())) << " *>(arena + "
               << offset << "); // " << alloc.getType() << "\n";
        line() << "arenaAcquire(ctx, " << offset << ", " << bytes << ");\n";
        return success();
      })
      .Case([&](loomrt::DeallocOp dealloc) -> LogicalResult {
        auto alloc = dealloc.getBuffer().getDefiningOp<loomrt::AllocOp>();
        if (!alloc || !alloc.getOffset())
          return dealloc.emitError("emit-cpp: dealloc of a buffer that is not "
                                   "a planned alloc");
        int64_t bytes = llvm::alignTo(
            numElements(shape(alloc.getBuffer())) *
                elementBytes(elementType(alloc.getBuffer())),
            alignment);
        line() << "arenaRelease(ctx, " << *alloc.getOffset() << ", " << bytes
               << "); // " << name(alloc.getBuffer()) << "\n";
        return success();
      })
      .Case([&](loomrt::ViewOp view) -> LogicalResult {
        std::string n = newName("view");
        names[view.getResult()] = n;
        line() << cppType(elementType(view.getResult())) << " *" << n << " = "
               << name(view.getSource()) << "; // " << view.getResult().getType()
               << "\n";
        return success();
      })
      .Case([&](loomrt::ConstantOp constant) -> LogicalResult {
        std::string n = newName("constant");
        names[constant.getBuffer()] = n;
        Type type = elementType(constant.getBuffer());
        llvm::raw_string_ostream cs(constants);
        int64_t count = numElements(shape(constant.getBuffer()));
        cs << "alignas(64) " << cppType(type) << " " << n << "[" << std::max<int64_t>(count, 1)
           << "] = {";
        auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
        if (!dense)
          return constant.emitError("emit-cpp: only dense constants are supported");
        int64_t i = 0;
        if (type.isF32()) {
          for (APFloat v : dense.getValues<APFloat>())
            cs << (i++ % 8 == 0 ? "\n    " : " ")
               << formatFloat(v.convertToDouble()) << ",";
        } else if (type.isInteger(1)) {
          for (bool v : dense.getValues<bool>())
            cs << (i++ % 16 == 0 ? "\n    " : " ") << (v ? "true" : "false") << ",";
        } else {
          for (APInt v : dense.getValues<APInt>())
            cs << (i++ % 16 == 0 ? "\n    " : " ") << v.getSExtValue() << ",";
        }
        cs << "};\n";
        return success();
      })
      .Case([&](loomrt::KernelOp kernel) { return emitKernel(kernel); })
      .Case([&](loomrt::ReduceOp reduce) { return emitReduce(reduce); })
      .Case([&](loomrt::CopyOp copy) -> LogicalResult {
        origin(("copy (" + copy.getOrigin() + ") " + name(copy.getSource()) +
                " -> " + name(copy.getTarget()))
                   .str());
        LoopNest nest(os, copy.getShape(), "i", 2,
                      numElements(copy.getShape()) >= options.parallelThreshold);
        os.indent(nest.bodyIndent())
            << name(copy.getTarget()) << "["
            << indexExpr("i", copy.getTargetStrides(), copy.getTargetOffset())
            << "] = " << name(copy.getSource()) << "["
            << indexExpr("i", copy.getSourceStrides(), copy.getSourceOffset())
            << "];\n";
        return success();
      })
      .Case([&](loomrt::IotaOp iota) -> LogicalResult {
        origin("iota -> " + name(iota.getOutput()));
        ArrayRef<int64_t> s = shape(iota.getOutput());
        LoopNest nest(os, s, "i", 2, false);
        os.indent(nest.bodyIndent())
            << name(iota.getOutput()) << "[" << indexExpr("i", computeStrides(s))
            << "] = static_cast<" << cppType(elementType(iota.getOutput()))
            << ">(i" << iota.getDim() << ");\n";
        return success();
      })
      .Case([&](loomrt::GemmOp gemm) -> LogicalResult {
        origin((gemm.getOrigin() + " -> " + name(gemm.getC())).str());
        int64_t m = gemm.getM(), n = gemm.getN(), k = gemm.getK();
        line() << "cpu::gemm(" << (gemm.getTransA() ? "true" : "false") << ", "
               << (gemm.getTransB() ? "true" : "false") << ", "
               << gemm.getBatch() << ", " << m << ", " << n << ", " << k << ", "
               << name(gemm.getA()) << ", " << (gemm.getABatched() ? m * k : 0)
               << ", " << name(gemm.getB()) << ", "
               << (gemm.getBBatched() ? k * n : 0) << ", " << name(gemm.getC())
               << ", " << m * n << ");\n";
        return success();
      })
      .Case([&](loomrt::SoftmaxOp softmax) -> LogicalResult {
        origin((softmax.getOrigin() + " -> " + name(softmax.getOutput())).str());
        ArrayRef<int64_t> s = shape(softmax.getInput());
        int64_t axis = softmax.getAxis();
        line() << "cpu::softmax(" << name(softmax.getInput()) << ", "
               << name(softmax.getOutput()) << ", "
               << numElements(s.take_front(axis)) << ", " << s[axis] << ", "
               << numElements(s.drop_front(axis + 1)) << ", "
               << (softmax.getLog() ? "true" : "false") << ");\n";
        return success();
      })
      .Case([&](loomrt::LayerNormOp norm) -> LogicalResult {
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
                 << ", " << name(norm.getOutput()) << ", " << rows << ", "
                 << cols << ", " << eps << ");\n";
        } else {
          std::string bias = norm.getBias() ? name(norm.getBias()) : "nullptr";
          line() << "cpu::layerNorm(" << name(norm.getInput()) << ", " << scale
                 << ", " << bias << ", " << name(norm.getOutput()) << ", "
                 << rows << ", " << cols << ", " << eps << ");\n";
        }
        return success();
      })
      .Case([&](loomrt::CrossEntropyOp ce) -> LogicalResult {
        origin((ce.getOrigin() + " -> " + name(ce.getOutput())).str());
        // cpu::crossEntropy, gather and scatterAdd are overloaded on the
        // index pointer type (i64 and i32), so the call is the same.
        if (!isIndexType(elementType(ce.getLabels())))
          return ce.emitError("emit-cpp: cross_entropy labels must be i64 or i32");
        ArrayRef<int64_t> s = shape(ce.getLogits());
        int64_t classes = s.back();
        StringRef reduction = ce.getReduction();
        const char *kind = reduction == "none"   ? "Reduction::None"
                           : reduction == "sum" ? "Reduction::Sum"
                                                : "Reduction::Mean";
        IntegerAttr ignore = ce.getIgnoreIndexAttr();
        line() << "cpu::crossEntropy(ctx, " << cppQuote(ce.getOrigin()) << ", "
               << name(ce.getLogits()) << ", " << name(ce.getLabels()) << ", "
               << name(ce.getOutput()) << ", " << numElements(s) / classes
               << ", " << classes << ", cpu::" << kind << ", "
               << (ignore ? "true" : "false") << ", "
               << (ignore ? ignore.getInt() : 0) << ");\n";
        return success();
      })
      .Case([&](loomrt::GatherOp gather) -> LogicalResult {
        origin((gather.getOrigin() + " -> " + name(gather.getOutput())).str());
        if (!isIndexType(elementType(gather.getIndices())))
          return gather.emitError("emit-cpp: gather indices must be i64 or i32");
        ArrayRef<int64_t> s = shape(gather.getData());
        int64_t axis = gather.getAxis();
        line() << "cpu::gather(ctx, " << cppQuote(gather.getOrigin()) << ", "
               << name(gather.getData()) << ", "
               << elementBytes(elementType(gather.getData())) << ", "
               << name(gather.getIndices()) << ", " << name(gather.getOutput())
               << ", " << numElements(s.take_front(axis)) << ", " << s[axis]
               << ", " << numElements(s.drop_front(axis + 1)) << ", "
               << numElements(shape(gather.getIndices())) << ");\n";
        return success();
      })
      .Case([&](loomrt::ScatterAddOp scatter) -> LogicalResult {
        origin((scatter.getOrigin() + " -> " + name(scatter.getOutput())).str());
        if (!isIndexType(elementType(scatter.getIndices())))
          return scatter.emitError(
              "emit-cpp: scatter_add indices must be i64 or i32");
        ArrayRef<int64_t> s = shape(scatter.getTarget());
        int64_t axis = scatter.getAxis();
        line() << "cpu::scatterAdd(ctx, " << cppQuote(scatter.getOrigin())
               << ", " << name(scatter.getTarget()) << ", "
               << name(scatter.getIndices()) << ", " << name(scatter.getUpdates())
               << ", " << name(scatter.getOutput()) << ", "
               << numElements(s.take_front(axis)) << ", " << s[axis] << ", "
               << numElements(s.drop_front(axis + 1)) << ", "
               << numElements(shape(scatter.getIndices())) << ");\n";
        return success();
      })
      .Case([&](loomrt::AllReduceStartOp start) -> LogicalResult {
        std::string n = newName("handle");
        names[start.getHandle()] = n;
        StringRef reduction = start.getReduction();
        const char *op = reduction == "max"   ? "ReduceOp::Max"
                         : reduction == "min" ? "ReduceOp::Min"
                         : reduction == "avg" ? "ReduceOp::Avg"
                                              : "ReduceOp::Sum";
        const char *group = groupEnum(start.getMeshAxis());
        line() << "const CommHandle " << n << " = allReduceStart(ctx, "
               << name(start.getBuffer()) << ", "
               << numElements(shape(start.getBuffer())) << ", " << op << ", "
               << group << ");\n";
        return success();
      })
      .Case<loomrt::SendStartOp, loomrt::RecvStartOp>(
          [&](auto start) -> LogicalResult {
            constexpr bool isSend =
                std::is_same_v<decltype(start), loomrt::SendStartOp>;
            const char *group = groupEnum(start.getMeshAxis());
            std::string n = newName(isSend ? "send" : "recv");
            names[start.getHandle()] = n;
            Value buffer = start.getBuffer();
            line() << "const CommHandle " << n << " = "
                   << (isSend ? "sendStart" : "recvStart") << "(ctx, "
                   << name(buffer) << ", "
                   << numElements(shape(buffer)) *
                          elementBytes(elementType(buffer))
                   << ", " << start.getPeer() << ", " << start.getTag() << ", "
                   << group << ");\n";
            return success();
          })
      .Case([&](loomrt::GridIndexOp index) -> LogicalResult {
        const char *group = groupEnum(index.getMeshAxis());
        line() << name(index.getOutput())
               << "[0] = static_cast<int64_t>(groupRank(ctx, " << group
               << "));\n";
        return success();
      })
      .Case([&](loomrt::WaitOp w) -> LogicalResult {
        line() << "wait(ctx, " << name(w.getHandle()) << ");\n";
        return success();
      })
      .Case([&](func::ReturnOp) { return success(); })
      .Default([&](Operation *) -> LogicalResult {
        return op->emitError("emit-cpp: cannot print this op (lower it with "
                             "convert-loom-to-loomrt first)");
      });
}

LogicalResult Emitter::emit() {
  auto numInputsAttr = func->getAttrOfType<IntegerAttr>("loomrt.num_inputs");
  auto arenaAttr = func->getAttrOfType<IntegerAttr>("loomrt.arena_bytes");
  auto peakAttr = func->getAttrOfType<IntegerAttr>("loomrt.peak_live_bytes");
  if (!numInputsAttr || !arenaAttr || !peakAttr)
    return func.emitError("emit-cpp: expects a function lowered by "
                          "convert-loom-to-loomrt and planned by "
                          "loom-memory-plan");
  if (auto a = func->getAttrOfType<IntegerAttr>("loomrt.alignment"))
    alignment = a.getInt();
  unsigned numInputs = numInputsAttr.getInt();

  for (BlockArgument arg : func.getArguments()) {
    if (!cppType(elementType(arg)))
      return func.emitError("emit-cpp: argument #")
             << arg.getArgNumber() << " has element type " << elementType(arg)
             << "; the CPU backend supports f32, i64 and i32";
  }

  // Buffer names: inputs from `args`, result buffers from `results`.
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto nameAttr = func.getArgAttrOfType<StringAttr>(i, LoomDialect::getNameAttrName());
    std::string hint = nameAttr ? nameAttr.getValue().str()
                                : ("arg" + Twine(i)).str();
    bool isResult = i >= numInputs;
    std::string n = (isResult ? "r" : "a") +
                    std::to_string(isResult ? i - numInputs : i) + "_" +
                    sanitize(hint);
    names[arg] = n;
    line() << cppType(elementType(arg)) << " *" << n << " = static_cast<"
           << cppType(elementType(arg)) << " *>("
           << (isResult ? "results[" : "args[")
           << (isResult ? i - numInputs : i) << "]); // " << arg.getType()
           << "\n";
  }
  for (Operation &op : func.getBody().front())
    if (failed(emitOp(&op)))
      return failure();

  if (!constants.empty())
    out << "// Constants of the step.\n" << constants << "\n";
  out << "void step(Context &ctx, void *const *args, void *const *results,\n"
      << "          char *arena) {\n"
      << "  (void)arena;\n"
      << body << "}\n\n";
  return emitSpecs();
}

LogicalResult Emitter::emitSpecs() {
  unsigned numInputs =
      func->getAttrOfType<IntegerAttr>("loomrt.num_inputs").getInt();
  int64_t batch = options.batchSize;
  auto spec = [&](unsigned i) -> FailureOr<std::string> {
    BlockArgument arg = func.getArgument(i);
    bool isResult = i >= numInputs;
    auto nameAttr = func.getArgAttrOfType<StringAttr>(i, LoomDialect::getNameAttrName());
    std::string n = nameAttr ? nameAttr.getValue().str()
                             : ("arg" + Twine(i)).str();
    const char *role = "Role::Data";
    int64_t updates = -1;
    if (isResult) {
      role = "Role::Other";
      if (auto u = func.getArgAttrOfType<IntegerAttr>(i, LoomDialect::getUpdatesAttrName())) {
        updates = u.getInt();
        role = func.getArgAttr(updates, LoomDialect::getParamAttrName()) ? "Role::Param"
                                                      : "Role::State";
      } else if (n == "loss") {
        role = "Role::Loss";
      }
    } else if (func.getArgAttr(i, LoomDialect::getParamAttrName())) {
      role = "Role::Param";
    } else if (func.getArgAttr(i, LoomDialect::getStateAttrName())) {
      role = "Role::State";
    }
    Type element = elementType(arg);
    if (!dtypeName(element))
      return func.emitError("emit-cpp: argument '")
             << n << "' has element type " << element
             << "; programs take f32, i64 and i32 tensors";
    ArrayRef<int64_t> s = shape(arg);
    if (s.size() > 8)
      return func.emitError("emit-cpp: argument '") << n << "' has rank "
                                                    << s.size() << " (max 8)";
    if (!isResult && StringRef(role) == "Role::Data") {
      if (s.empty())
        return func.emitError("emit-cpp: data input '")
               << n << "' is a scalar; data inputs need a batch dimension";
      if (options.batchSize == 0 && batch == 0)
        batch = s[0];
      else if (options.batchSize == 0 && batch != s[0])
        return func.emitError("emit-cpp: data inputs disagree on the batch "
                              "dimension: '")
               << n << "' has " << s[0] << " rows, an earlier one " << batch;
    }
    std::string text;
    llvm::raw_string_ostream ts(text);
    ts << "    {" << cppQuote(n) << ", " << role << ", " << dtypeName(element)
       << ", " << s.size() << ", {"
       << llvm::join(llvm::map_range(s, [](int64_t d) { return std::to_string(d); }),
                     ", ")
       << "}, " << updates << "},\n";
    return text;
  };
  std::string args, results;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    FailureOr<std::string> text = spec(i);
    if (failed(text))
      return failure();
    (i < numInputs ? args : results) += *text;
  }
  unsigned numResults = func.getNumArguments() - numInputs;
  // The device mesh the program runs on: the module's @mesh.
  FailureOr<::loom::Mesh> mesh =
      getMesh(func->getParentOfType<ModuleOp>());
  if (failed(mesh))
    return failure();
  int64_t dp = mesh->dp, tp = mesh->tp, pp = mesh->pp;
  out << "const TensorSpec kArgs[] = {\n" << args << "};\n"
      << "const TensorSpec kResults[] = {\n" << results << "};\n"
      << "const ProgramSpec kProgram = {\n"
      << "    " << cppQuote(func.getName()) << ", kArgs, " << numInputs
      << ", kResults, " << numResults << ",\n"
      << "    /*arenaBytes=*/"
      << func->getAttrOfType<IntegerAttr>("loomrt.arena_bytes").getInt()
      << ", /*plannedPeakBytes=*/"
      << func->getAttrOfType<IntegerAttr>("loomrt.peak_live_bytes").getInt()
      << ",\n    /*batchSize=*/" << batch << ", &step,\n"
      << "    /*dp=*/" << dp << ", /*tp=*/" << tp << ", /*pp=*/" << pp
      << ", /*stage=*/" << std::max<int64_t>(stage, 0) << "};\n\n";
  return success();
}

} // namespace

namespace {

/// The shared part of every translation unit: includes and helpers.
void printPrologue(llvm::raw_ostream &out) {
  out << "#include \"loom/Runtime/Comm.h\"\n"
      << "#include \"loom/Runtime/CpuKernels.h\"\n"
      << "#include \"loom/Runtime/Runtime.h\"\n\n"
      << "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n"
      << "#include <limits>\n\n"
      << "namespace {\n\nusing namespace loom::rt;\n\n"
      << "// NaN-propagating max/min, as the loom ops define them.\n"
      << "inline float loom_maxf(float a, float b) {\n"
      << "  return (a != a || a > b) ? a : (b != b ? b : (a == b ? a : b));\n}\n"
      << "inline float loom_minf(float a, float b) {\n"
      << "  return (a != a || a < b) ? a : (b != b ? b : (a == b ? a : b));\n}\n"
      << "// Float to integer: toward zero, NaN to 0, saturating.\n"
      << "template <typename T> inline T loom_ftoi(float x) {\n"
      << "  if (x != x) return 0;\n"
      << "  if (x <= static_cast<float>(std::numeric_limits<T>::lowest()))\n"
      << "    return std::numeric_limits<T>::lowest();\n"
      << "  if (x >= static_cast<float>(std::numeric_limits<T>::max()))\n"
      << "    return std::numeric_limits<T>::max();\n"
      << "  return static_cast<T>(x);\n}\n"
      << "template <typename T> inline T loom_divi(Context &ctx, T a, T b) {\n"
      << "  if (b == 0) fail(ctx, \"div\", \"integer division by zero\");\n"
      << "  return a / b;\n}\n\n";
}

int64_t intAttr(func::FuncOp func, StringRef name) {
  auto attr = func->getAttrOfType<IntegerAttr>(name);
  return attr ? attr.getInt() : -1;
}

/// The pipeline's stage programs, in stage order: each function has
/// `loom.stage = k`, and the stages are exactly 0..P-1 for the P of the
/// module's @mesh.
FailureOr<SmallVector<func::FuncOp>> orderStages(ModuleOp module,
                                                ArrayRef<func::FuncOp> funcs) {
  int64_t pp = static_cast<int64_t>(funcs.size());
  FailureOr<::loom::Mesh> mesh = getMesh(module);
  if (failed(mesh))
    return failure();
  int64_t meshStages = mesh->pp;
  SmallVector<func::FuncOp> stages(funcs.size());
  for (func::FuncOp f : funcs) {
    int64_t stage = intAttr(f, LoomDialect::StageAttrHelper::getNameStr());
    if (stage < 0)
      return f.emitError("emit-cpp: the module holds ")
             << funcs.size()
             << " functions, so each must be a pipeline stage program with "
                "`loom.stage = k : i64` (this one has none)";
    
    if (stage >= pp || stages[stage])
      return f.emitError("emit-cpp: stage ")
             << stage << (stage >= pp ? " is out of range" : " appears twice")
             << " (the stages of pp = " << pp << " are 0 to " << pp - 1 << ")";
    stages[stage] = f;
  }
  if (meshStages != pp)
    return stages.front().emitError("emit-cpp: the module holds ")
           << pp << " stage programs, but its device mesh @" << kMeshGridName
           << " has " << meshStages << " pipeline stages (pp axis)";
  return stages;
}

/// The rows per step of the stages' data inputs (they must agree); 0 when
/// no stage has one.
FailureOr<int64_t> commonBatch(ArrayRef<func::FuncOp> stages) {
  int64_t batch = 0;
  func::FuncOp first;
  for (func::FuncOp f : stages) {
    auto numInputs = f->getAttrOfType<IntegerAttr>("loomrt.num_inputs");
    if (!numInputs)
      continue; // reported by the Emitter
    for (unsigned i = 0; i < numInputs.getInt() && i < f.getNumArguments();
         ++i) {
      if (f.getArgAttr(i, LoomDialect::getParamAttrName()) || f.getArgAttr(i, LoomDialect::getStateAttrName()))
        continue;
      auto type = dyn_cast<MemRefType>(f.getArgument(i).getType());
      if (!type || type.getRank() == 0)
        continue; // reported by the Emitter
      if (batch == 0) {
        batch = type.getDimSize(0);
        first = f;
      } else if (batch != type.getDimSize(0)) {
        return f.emitError("emit-cpp: the stages' data inputs disagree on the "
                           "batch dimension: argument #")
               << i << " has " << type.getDimSize(0) << " rows, @"
               << first.getName() << "'s " << batch;
      }
    }
  }
  return batch;
}

} // namespace

LogicalResult mlir::loom::emitCpp(ModuleOp module, llvm::raw_ostream &os,
                                  const EmitCppOptions &options) {
  SmallVector<func::FuncOp> funcs;
  for (func::FuncOp f : module.getOps<func::FuncOp>())
    if (!f.isExternal())
      funcs.push_back(f);
  if (funcs.empty())
    return module.emitError("emit-cpp: expects the lowered step function, "
                            "found none");

  // One program (not a pipeline stage): trainMain.
  if (funcs.size() == 1 &&
      !funcs.front()->hasAttr(LoomDialect::StageAttrHelper::getNameStr())) {
    func::FuncOp func = funcs.front();
    std::string unit;
    llvm::raw_string_ostream us(unit);
    if (failed(Emitter(func, us, options).emit()))
      return failure();
    os << "// Generated by Loom (loom-translate --emit-cpp) from @"
       << func.getName() << ". Do not edit.\n"
       << "// Arena: " << intAttr(func, "loomrt.arena_bytes")
       << " bytes, peak live " << intAttr(func, "loomrt.peak_live_bytes")
       << " bytes.\n\n";
    printPrologue(os);
    os << unit << "} // namespace\n\n"
       << "int main(int argc, char **argv) {\n"
       << "  return loom::rt::trainMain(argc, argv, kProgram);\n}\n";
    return success();
  }

  // Pipeline stage programs: one namespace each (their constants and
  // specs would collide), and trainMainStages.
  FailureOr<SmallVector<func::FuncOp>> stages = orderStages(module, funcs);
  if (failed(stages))
    return failure();
  EmitCppOptions stageOptions = options;
  if (stageOptions.batchSize == 0) {
    FailureOr<int64_t> batch = commonBatch(*stages);
    if (failed(batch))
      return failure();
    stageOptions.batchSize = *batch;
  }
  std::string units;
  llvm::raw_string_ostream us(units);
  for (auto [k, func] : llvm::enumerate(*stages)) {
    us << "namespace stage" << k << " {\n\n";
    if (failed(Emitter(func, us, stageOptions, static_cast<int64_t>(k)).emit()))
      return failure();
    us << "} // namespace stage" << k << "\n\n";
  }
  os << "// Generated by Loom (loom-translate --emit-cpp) from "
     << llvm::join(llvm::map_range(*stages,
                                   [](func::FuncOp f) {
                                     return ("@" + f.getName()).str();
                                   }),
                   ", ")
     << ": " << stages->size() << " pipeline stages. Do not edit.\n";
  for (auto [k, func] : llvm::enumerate(*stages))
    os << "// Stage " << k << " arena: " << intAttr(func, "loomrt.arena_bytes")
       << " bytes, peak live " << intAttr(func, "loomrt.peak_live_bytes")
       << " bytes.\n";
  os << "\n";
  printPrologue(os);
  os << units << "const ProgramSpec *const kStages[] = {";
  for (size_t k = 0; k < stages->size(); ++k)
    os << (k ? ", " : "") << "&stage" << k << "::kProgram";
  os << "};\n\n} // namespace\n\n"
     << "int main(int argc, char **argv) {\n"
     << "  return loom::rt::trainMainStages(argc, argv, kStages, "
     << stages->size() << ");\n}\n";
  return success();
}
