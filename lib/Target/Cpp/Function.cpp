//===- Function.cpp - One loomrt function as a C++ step function ----------===//
//
// The function driver of the emitter: names the arguments (`a0_x` inputs,
// `r0_loss` results), dispatches each op to its family (Kernels.cpp,
// Contraction.cpp, DataMovement.cpp, Communication.cpp), and prints the
// step's constants, the step function and its TensorSpecs and ProgramSpec.
// Also the naming and C++ text helpers the families share.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit_cpp;

//===----------------------------------------------------------------------===//
// Naming and C++ text
//===----------------------------------------------------------------------===//

int64_t emit_cpp::numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string emit_cpp::sanitize(StringRef name) {
  std::string out;
  for (char c : name)
    out += llvm::isAlnum(c) ? c : '_';
  if (out.empty() || llvm::isDigit(out[0]))
    out = "_" + out;
  return out;
}

std::string emit_cpp::cppQuote(StringRef text) {
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

const char *emit_cpp::cppType(Type type) {
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

const char *emit_cpp::dtypeName(Type type) {
  if (type.isF32())
    return "DType::F32";
  if (type.isInteger(64))
    return "DType::I64";
  if (type.isInteger(32))
    return "DType::I32";
  return nullptr;
}

const char *emit_cpp::groupEnum(::loom::MeshAxis axis) {
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

bool emit_cpp::isIndexType(Type type) {
  return type.isInteger(64) || type.isInteger(32);
}

int64_t emit_cpp::elementBytes(Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits == 1 ? 1 : bits / 8;
}

std::string emit_cpp::formatFloat(double value) {
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

LoopNest::LoopNest(llvm::raw_ostream &os, ArrayRef<int64_t> shape,
                   StringRef prefix, int indent, bool parallel)
    : os(os), rank(shape.size()), indent(indent) {
  for (int64_t d = 0; d < rank; ++d) {
    if (d == 0 && parallel)
      os.indent(indent) << "#pragma omp parallel for\n";
    os.indent(indent + 2 * d) << "for (int64_t " << prefix << d << " = 0; "
                              << prefix << d << " < " << shape[d] << "; ++"
                              << prefix << d << ") {\n";
  }
}

LoopNest::~LoopNest() {
  for (int64_t d = rank - 1; d >= 0; --d)
    os.indent(indent + 2 * d) << "}\n";
}

std::string emit_cpp::indexExpr(StringRef prefix, ArrayRef<int64_t> strides,
                                int64_t offset) {
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

//===----------------------------------------------------------------------===//
// The function driver
//===----------------------------------------------------------------------===//

/// Ops that compute (loops and library calls): each gets a span on the
/// compute track of a --trace timeline.
static bool isComputeOp(Operation *op) {
  return isa<loomrt::KernelOp, loomrt::ReduceOp, loomrt::CopyOp,
             loomrt::IotaOp, loomrt::GemmOp, loomrt::SoftmaxOp,
             loomrt::LayerNormOp, loomrt::CrossEntropyOp, loomrt::GatherOp,
             loomrt::ScatterAddOp>(op);
}

/// The first name in `loc` (an ONNX node's, a JAX op's), or "".
static StringRef locationName(Location loc) {
  if (auto named = dyn_cast<NameLoc>(loc))
    return named.getName().getValue();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (StringRef name = locationName(inner); !name.empty())
        return name;
  if (auto site = dyn_cast<CallSiteLoc>(loc))
    return locationName(site.getCallee());
  return "";
}

/// A compute op's span name: what it computes (its `origin`, else its
/// kind) and, where the model named it, the model's name.
static std::string spanName(Operation *op) {
  std::string text = op->getName().stripDialect().str();
  if (auto origin = op->getAttrOfType<StringAttr>("origin"))
    text += " " + origin.getValue().str();
  if (StringRef name = locationName(op->getLoc()); !name.empty())
    text += " (" + name.str() + ")";
  return text;
}

LogicalResult Emitter::emitTimedOp(Operation *op) {
  if (!isComputeOp(op))
    return emitOp(op);
  // traceClock is 0 and traceOp returns at once unless the run writes a
  // --trace.
  std::string clock = "tc" + std::to_string(traceCounter++);
  line() << "const double " << clock << " = traceClock(ctx);\n";
  if (failed(emitOp(op)))
    return failure();
  line() << "traceOp(ctx, " << cppQuote(spanName(op)) << ", " << clock
         << ");\n";
  return success();
}

LogicalResult Emitter::emitOp(Operation *op) {
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](loomrt::AllocOp o) { return emitAlloc(o); })
      .Case([&](loomrt::DeallocOp o) { return emitDealloc(o); })
      .Case([&](loomrt::ViewOp o) { return emitView(o); })
      .Case([&](loomrt::ConstantOp o) { return emitConstant(o); })
      .Case([&](loomrt::KernelOp o) { return emitKernel(o); })
      .Case([&](loomrt::ReduceOp o) { return emitReduce(o); })
      .Case([&](loomrt::CopyOp o) { return emitCopy(o); })
      .Case([&](loomrt::IotaOp o) { return emitIota(o); })
      .Case([&](loomrt::GemmOp o) { return emitGemm(o); })
      .Case([&](loomrt::SoftmaxOp o) { return emitSoftmax(o); })
      .Case([&](loomrt::LayerNormOp o) { return emitLayerNorm(o); })
      .Case([&](loomrt::CrossEntropyOp o) { return emitCrossEntropy(o); })
      .Case([&](loomrt::GatherOp o) { return emitGather(o); })
      .Case([&](loomrt::ScatterAddOp o) { return emitScatterAdd(o); })
      .Case([&](loomrt::AllReduceStartOp o) { return emitAllReduceStart(o); })
      .Case([&](loomrt::SendStartOp o) { return emitTransferStart(o); })
      .Case([&](loomrt::RecvStartOp o) { return emitTransferStart(o); })
      .Case([&](loomrt::GridIndexOp o) { return emitGridIndex(o); })
      .Case([&](loomrt::WaitOp o) { return emitWait(o); })
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
    if (failed(emitTimedOp(&op)))
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
