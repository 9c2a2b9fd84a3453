//===- EmitterBase.cpp - The function driver of the emitters --------------===//
//
// Names the arguments (`a0_x` inputs, `r0_loss` results), dispatches each
// op to the shared printers (Buffers.cpp, Library.cpp) or the target's
// hooks, puts --trace spans around compute ops, prints the scalar bodies
// of fused kernels, and the step's TensorSpecs and ProgramSpec.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/EmitterBase.h"

#include "loom/Dialect/Loom/IR/LocationName.h"
#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit;

/// Whether `handle` is a swap copy's (a CopyHandle; else a CommHandle).
static bool isCopyHandle(Value handle) {
  return isa_and_present<loomrt::SwapOutOp, loomrt::SwapInOp>(
      handle.getDefiningOp());
}

/// Ops that compute (loops and library calls): each gets a span on the
/// compute track of a --trace timeline.
LogicalResult EmitterBase::emitTimedOp(Operation *op) {
  if (!loomrt::isComputeOp(op))
    return emitOp(op);
  // traceMark and traceOp return at once unless the run writes a --trace.
  line() << "traceMark(ctx);\n";
  if (failed(emitOp(op)))
    return failure();
  line() << "traceOp(ctx, " << cppQuote(loomrt::traceSpanName(op)) << ");\n";
  return success();
}

LogicalResult EmitterBase::emitOp(Operation *op) {
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
      .Case([&](loomrt::NormGradOp o) { return emitNormGrad(o); })
      .Case([&](loomrt::CrossEntropyOp o) { return emitCrossEntropy(o); })
      .Case([&](loomrt::GatherOp o) { return emitGather(o); })
      .Case([&](loomrt::ScatterAddOp o) { return emitScatterAdd(o); })
      .Case([&](loomrt::AllReduceStartOp o) { return emitAllReduceStart(o); })
      .Case([&](loomrt::SendStartOp o) { return emitTransferStart(o); })
      .Case([&](loomrt::RecvStartOp o) { return emitTransferStart(o); })
      .Case([&](loomrt::GridIndexOp o) { return emitGridIndex(o); })
      .Case([&](loomrt::WaitOp o) { return emitWait(o); })
      .Case([&](loomrt::SwapOutOp o) {
        return emitSwap(o, o.getSource(), o.getTarget(), o.getHandle(),
                        /*out=*/true);
      })
      .Case([&](loomrt::SwapInOp o) {
        return emitSwap(o, o.getSource(), o.getTarget(), o.getHandle(),
                        /*out=*/false);
      })
      .Case([&](func::ReturnOp) { return success(); })
      .Default([&](Operation *) -> LogicalResult {
        return error(op) << "cannot print this op (lower it with "
                            "convert-loom-to-loomrt first)";
      });
}

LogicalResult EmitterBase::emit() {
  auto numInputsAttr = func->getAttrOfType<IntegerAttr>("loomrt.num_inputs");
  auto arenaAttr = func->getAttrOfType<IntegerAttr>("loomrt.arena_bytes");
  auto peakAttr = func->getAttrOfType<IntegerAttr>("loomrt.peak_live_bytes");
  if (!numInputsAttr || !arenaAttr || !peakAttr)
    return error(func) << "expects a function lowered by "
                          "convert-loom-to-loomrt and planned by "
                          "loom-memory-plan";
  if (auto a = func->getAttrOfType<IntegerAttr>("loomrt.alignment"))
    alignment = a.getInt();
  unsigned numInputs = numInputsAttr.getInt();

  for (BlockArgument arg : func.getArguments()) {
    if (!cppType(elementType(arg)))
      return error(func) << "argument #" << arg.getArgNumber()
                         << " has element type " << elementType(arg)
                         << "; the " << target.backend
                         << " backend supports f32, i64 and i32";
  }

  // Buffer names: inputs from `args`, result buffers from `results`.
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto nameAttr =
        func.getArgAttrOfType<StringAttr>(i, LoomDialect::getNameAttrName());
    std::string hint =
        nameAttr ? nameAttr.getValue().str() : ("arg" + Twine(i)).str();
    bool isResult = i >= numInputs;
    unsigned index = isResult ? i - numInputs : i;
    std::string n =
        (isResult ? "r" : "a") + std::to_string(index) + "_" + sanitize(hint);
    names[arg] = n;
    bindArgument(arg, n, isResult, index);
  }
  // Every in-flight transfer and copy is an element of one array, so that
  // a handle started in one iteration of a rolled loop can be waited on in
  // another, or after the loop.
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front()) {
    ops.push_back(&op);
    for (Value result : op.getResults())
      if (isa<loomrt::HandleType>(result.getType()))
        handleSlots[result] =
            isCopyHandle(result) ? numCopyHandles++ : numCommHandles++;
  }
  if (numCommHandles)
    line() << "CommHandle comm[" << numCommHandles
           << "]; // in-flight transfers\n";
  if (numCopyHandles)
    line() << "CopyHandle copies[" << numCopyHandles
           << "]; // in-flight swap copies\n";
  if (failed(emitOps(ops)))
    return failure();

  printStep();
  return emitSpecs();
}

LogicalResult EmitterBase::emitSpecs() {
  unsigned numInputs =
      func->getAttrOfType<IntegerAttr>("loomrt.num_inputs").getInt();
  int64_t batch = batchSize;
  auto spec = [&](unsigned i) -> FailureOr<std::string> {
    BlockArgument arg = func.getArgument(i);
    bool isResult = i >= numInputs;
    auto nameAttr =
        func.getArgAttrOfType<StringAttr>(i, LoomDialect::getNameAttrName());
    std::string n =
        nameAttr ? nameAttr.getValue().str() : ("arg" + Twine(i)).str();
    const char *role = "Role::Data";
    int64_t updates = -1;
    // The param a weight shadow (loom-weight-shadows) rounds, or -1.
    auto shadowOf = [&](unsigned index) -> int64_t {
      auto of = func.getArgAttrOfType<IntegerAttr>(
          index, LoomDialect::getShadowOfAttrName());
      return of ? of.getInt() : -1;
    };
    if (isResult) {
      role = "Role::Other";
      if (auto u = func.getArgAttrOfType<IntegerAttr>(
              i, LoomDialect::getUpdatesAttrName())) {
        updates = u.getInt();
        role = func.getArgAttr(updates, LoomDialect::getParamAttrName())
                   ? "Role::Param"
               : shadowOf(updates) >= 0 ? "Role::Shadow"
                                        : "Role::State";
      } else if (n == "loss") {
        role = "Role::Loss";
      }
    } else if (func.getArgAttr(i, LoomDialect::getParamAttrName())) {
      role = "Role::Param";
    } else if (shadowOf(i) >= 0) {
      role = "Role::Shadow";
    } else if (func.getArgAttr(i, LoomDialect::getStateAttrName())) {
      role = "Role::State";
    }
    Type element = elementType(arg);
    bool shadow = StringRef(role) == "Role::Shadow";
    if (shadow && element.isBF16()) {
      // The one bf16 tensor a program exchanges with the runtime.
    } else if (!dtypeName(element))
      return error(func) << "argument '" << n << "' has element type "
                         << element
                         << "; programs take f32, i64 and i32 tensors (for "
                            "bf16 arithmetic, give f32 tensors and use "
                            "--precision bf16)";
    ArrayRef<int64_t> s = shape(arg);
    if (s.size() > 8)
      return error(func) << "argument '" << n << "' has rank " << s.size()
                         << " (max 8)";
    if (!isResult && StringRef(role) == "Role::Data") {
      if (s.empty())
        return error(func) << "data input '" << n
                           << "' is a scalar; data inputs need a batch "
                              "dimension";
      if (batchSize == 0 && batch == 0)
        batch = s[0];
      else if (batchSize == 0 && batch != s[0])
        return error(func) << "data inputs disagree on the batch "
                              "dimension: '"
                           << n << "' has " << s[0]
                           << " rows, an earlier one " << batch;
    }
    std::string text;
    llvm::raw_string_ostream ts(text);
    bool inPlace = isResult && func.getArgAttr(i, "loomrt.in_place");
    ts << "    {" << cppQuote(n) << ", " << role << ", "
       << (shadow ? "DType::BF16" : dtypeName(element)) << ", " << s.size()
       << ", {" << joinInts(s) << "}, " << updates << ", "
       << (inPlace ? "true" : "false");
    if (shadow && !isResult)
      ts << ", /*shadowOf=*/" << shadowOf(i);
    ts << "},\n";
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
  // The memory plan's device peak and the budget (absent: 0).
  auto intAttrOr = [&](StringRef name) -> int64_t {
    auto attr = func->getAttrOfType<IntegerAttr>(name);
    return attr ? attr.getInt() : 0;
  };
  // The device mesh the program runs on: the module's @mesh.
  FailureOr<::loom::Mesh> mesh = getMesh(func->getParentOfType<ModuleOp>());
  if (failed(mesh))
    return failure();
  int64_t dp = mesh->dp, tp = mesh->tp, pp = mesh->pp;
  out << "const TensorSpec kArgs[] = {\n"
      << args << "};\n"
      << "const TensorSpec kResults[] = {\n"
      << results << "};\n"
      << "const ProgramSpec kProgram = {\n"
      << "    " << cppQuote(func.getName()) << ", kArgs, " << numInputs
      << ", kResults, " << numResults << ",\n"
      << "    /*arenaBytes=*/"
      << func->getAttrOfType<IntegerAttr>("loomrt.arena_bytes").getInt()
      << ", /*plannedPeakBytes=*/"
      << func->getAttrOfType<IntegerAttr>("loomrt.peak_live_bytes").getInt()
      << ",\n    /*batchSize=*/" << batch << ", &step,\n"
      << "    /*dp=*/" << dp << ", /*tp=*/" << tp << ", /*pp=*/" << pp
      << ", /*stage=*/" << std::max<int64_t>(stage, 0) << ",\n"
      << "    /*plannedDevicePeakBytes=*/" << intAttrOr("loomrt.device_peak_bytes")
      << ", /*deviceMemoryBytes=*/" << intAttrOr("loomrt.device_memory_bytes")
      << ", /*hostArenaBytes=*/" << intAttrOr("loomrt.host_arena_bytes")
      << "};\n\n";
  return success();
}

//===----------------------------------------------------------------------===//
// Kernel bodies
//===----------------------------------------------------------------------===//

LogicalResult EmitterBase::printReduceStep(
    loomrt::ReduceOp op, const ReduceGeometry &g, StringRef accType,
    bool isFloat, llvm::raw_ostream &s, int indent, StringRef acc,
    StringRef column, StringRef reducedIndex) {
  std::string reduced = reducedIndex.empty()
                            ? indexExpr("r", g.reducedStrides)
                            : reducedIndex.str();
  std::string index = ("base + " + reduced + (column.empty() ? "" : " + ") +
                       column)
                          .str();
  if (!op.isFused()) {
    s.indent(indent) << "const " << accType << " x = "
                     << loadElement(name(op.getInput()), index,
                                    elementType(op.getInput()))
                     << ";\n";
  } else {
    // The fused elementwise ops compute the element from every input at
    // the same index (they are all of the reduced shape).
    s.indent(indent) << "const int64_t e = " << index << ";\n";
    Block &body = op.getBody().front();
    DenseMap<Value, std::string> scalars;
    for (auto [arg, in] : llvm::zip(body.getArguments(), op.getIns())) {
      std::string x = "x" + std::to_string(scalars.size());
      s.indent(indent) << "const " << scalarType(arg.getType()) << " " << x
                       << " = " << loadElement(name(in), "e", arg.getType())
                       << ";\n";
      scalars[arg] = x;
    }
    for (Operation &inner : body.without_terminator())
      if (failed(emitScalar(&inner, scalars, s, indent)))
        return failure();
    Value folded = cast<loomrt::YieldOp>(body.getTerminator()).getValues()[0];
    s.indent(indent) << "const " << accType << " x = "
                     << scalars.lookup(folded) << ";\n";
  }
  s.indent(indent) << foldStatement(op, isFloat, acc, "x") << "\n";
  return success();
}

std::string EmitterBase::foldStatement(loomrt::ReduceOp op, bool isFloat,
                                       StringRef acc, StringRef x) {
  if (op.getKind() != loomrt::ReduceKind::max)
    return (acc + " += " + x + ";").str();
  if (isFloat)
    return ("if (" + acc + " == " + acc + " && (" + x + " != " + x + " || " +
            x + " > " + acc + ")) " + acc + " = " + x + ";")
        .str();
  return ("if (" + x + " > " + acc + ") " + acc + " = " + x + ";").str();
}

SmallVector<Value> EmitterBase::reduceParams(loomrt::ReduceOp op) {
  SmallVector<Value> buffers(op.getIns());
  buffers.push_back(op.getOutput());
  return distinct(buffers);
}

std::string EmitterBase::reduceResult(loomrt::ReduceOp op,
                                      const ReduceGeometry &g, StringRef acc) {
  if (op.getKind() == loomrt::ReduceKind::mean)
    return (acc + " / " + Twine(numElements(g.reducedSizes)) + ".0").str();
  return acc.str();
}

std::string EmitterBase::mathCall(StringRef fn, StringRef arg) {
  if (fn == "rsqrt")
    return ("1.0f / std::sqrt(" + arg + ")").str();
  return ("std::" + fn + "(" + arg + ")").str();
}

LogicalResult EmitterBase::emitScalar(Operation *op,
                                      DenseMap<Value, std::string> &scalars,
                                      llvm::raw_ostream &s, int indent) {
  auto v = [&](unsigned i) { return scalars.lookup(op->getOperand(i)); };
  std::string expr;
  llvm::raw_string_ostream e(expr);
  Type resultType = op->getResult(0).getType();
  bool ok = true;
  TypeSwitch<Operation *>(op)
      .Case([&](arith::ConstantOp c) {
        Attribute value = c.getValue();
        if (auto f = dyn_cast<FloatAttr>(value))
          e << floatLiteral(f.getValueAsDouble());
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
      .Case<arith::DivSIOp>([&](auto) { e << intDivision(v(0), v(1)); })
      .Case<arith::NegFOp>([&](auto) { e << "-" << v(0); })
      .Case<arith::MaximumFOp>([&](auto) { e << "loom_maxf(" << v(0) << ", " << v(1) << ")"; })
      .Case<arith::MinimumFOp>([&](auto) { e << "loom_minf(" << v(0) << ", " << v(1) << ")"; })
      .Case<arith::MaxSIOp>([&](auto) { e << intMax() << "(" << v(0) << ", " << v(1) << ")"; })
      .Case<arith::MinSIOp>([&](auto) { e << intMin() << "(" << v(0) << ", " << v(1) << ")"; })
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
            arith::TruncIOp, arith::ExtFOp, arith::TruncFOp>([&](auto cast) {
        // A bool widened without sign (a mask or a one-hot compare) as a
        // select: GCC vectorises no loop that converts a bool computed
        // from 64-bit integers into a float (the cross-entropy gradient's
        // one-hot `labels == iota`), but vectorises the select.
        if (isa<arith::UIToFPOp, arith::ExtUIOp>(cast) &&
            cast->getOperand(0).getType().isInteger(1)) {
          std::string type = scalarType(resultType);
          e << "(" << v(0) << " ? static_cast<" << type
            << ">(1) : static_cast<" << type << ">(0))";
          return;
        }
        e << "static_cast<" << scalarType(resultType) << ">(" << v(0) << ")";
      })
      .Case<arith::FPToSIOp>([&](auto) {
        e << "loom_ftoi<" << cppType(resultType) << ">(" << v(0) << ")";
      })
      .Case<math::ExpOp>([&](auto) { e << mathCall("exp", v(0)); })
      .Case<math::LogOp>([&](auto) { e << mathCall("log", v(0)); })
      .Case<math::SqrtOp>([&](auto) { e << mathCall("sqrt", v(0)); })
      .Case<math::RsqrtOp>([&](auto) { e << mathCall("rsqrt", v(0)); })
      .Case<math::TanhOp>([&](auto) { e << mathCall("tanh", v(0)); })
      .Case<math::CosOp>([&](auto) { e << mathCall("cos", v(0)); })
      .Case<math::SinOp>([&](auto) { e << mathCall("sin", v(0)); })
      .Case<math::ErfOp>([&](auto) { e << mathCall("erf", v(0)); })
      .Case<math::PowFOp>([&](auto) { e << "std::pow(" << v(0) << ", " << v(1) << ")"; })
      .Case<math::AbsFOp>([&](auto) { e << "std::fabs(" << v(0) << ")"; })
      .Case<math::AbsIOp>([&](auto) {
        e << "(" << v(0) << " < 0 ? -" << v(0) << " : " << v(0) << ")";
      })
      .Default([&](Operation *) { ok = false; });
  if (!ok || !cppType(resultType))
    return error(op) << "cannot print this scalar op";
  // A bf16 result is its float value rounded (exact ops round to
  // themselves).
  if (resultType.isBF16())
    expr = "bf16::roundToFloat(" + expr + ")";
  std::string result = "v" + std::to_string(scalars.size());
  s.indent(indent) << "const " << scalarType(resultType) << " " << result
                   << " = " << expr << ";\n";
  scalars[op->getResult(0)] = result;
  return success();
}

LogicalResult EmitterBase::emitKernelBody(
    loomrt::KernelOp op, llvm::raw_ostream &s, int indent,
    llvm::function_ref<std::string(unsigned)> inIndex, StringRef outIndex) {
  Block &kernelBody = op.getBody().front();
  DenseMap<Value, std::string> scalars;
  for (auto [k, arg, in] :
       llvm::enumerate(kernelBody.getArguments(), op.getIns())) {
    std::string x = "x" + std::to_string(scalars.size());
    s.indent(indent) << "const " << scalarType(arg.getType()) << " " << x
                     << " = " << loadElement(name(in), inIndex(k), arg.getType())
                     << ";\n";
    scalars[arg] = x;
  }
  for (Operation &inner : kernelBody.without_terminator())
    if (failed(emitScalar(&inner, scalars, s, indent)))
      return failure();
  auto yield = cast<loomrt::YieldOp>(kernelBody.getTerminator());
  for (auto [value, buffer] : llvm::zip(yield.getValues(), op.getOuts()))
    s.indent(indent) << storeElement(name(buffer), outIndex,
                                     elementType(buffer),
                                     scalars.lookup(value))
                     << "\n";
  return success();
}

//===----------------------------------------------------------------------===//
// Kernel functions
//===----------------------------------------------------------------------===//

std::string EmitterBase::name(Value value) {
  auto it = overrides.find(value);
  if (it != overrides.end())
    return it->second;
  if (templating && !iterationValues.contains(value))
    return globalName(value);
  return names.lookup(value);
}

std::string EmitterBase::hole(int64_t value) {
  if (!templating)
    return std::to_string(value);
  return "\x01" + std::to_string(value) + "\x02";
}

std::string EmitterBase::globalName(Value value) {
  auto slot = handleSlots.find(value);
  if (slot != handleSlots.end())
    return (isCopyHandle(value) ? "copies[" : "comm[") + hole(slot->second) +
           "]";
  if (auto view = value.getDefiningOp<loomrt::ViewOp>())
    return globalName(view.getSource());
  if (auto alloc = value.getDefiningOp<loomrt::AllocOp>();
      alloc && alloc.getOffset()) {
    const char *type = cppType(elementType(value));
    const char *base =
        alloc.getCategory() == "swap" ? "hostArena(ctx)" : "arena";
    return ("reinterpret_cast<" + Twine(type) + " *>(" + base + " + " +
            hole(*alloc.getOffset()) + ")")
        .str();
  }
  // Arguments, results and constants: names of the whole step.
  return names.lookup(value);
}

std::string EmitterBase::offsetName(Value value, int64_t offset) {
  if (offset == 0)
    return name(value);
  return "(" + name(value) + " + " + hole(offset) + ")";
}

EmitterBase::CopyPointers::CopyPointers(EmitterBase &emitter,
                                        loomrt::CopyOp copy)
    : sourceOffset(copy.getSourceOffset()),
      targetOffset(copy.getTargetOffset()), emitter(emitter), copy(copy),
      moved(copy.getSource() != copy.getTarget()) {
  if (!moved)
    return;
  std::string source = emitter.offsetName(copy.getSource(), sourceOffset);
  std::string target = emitter.offsetName(copy.getTarget(), targetOffset);
  emitter.overrides[copy.getSource()] = source;
  emitter.overrides[copy.getTarget()] = target;
  sourceOffset = targetOffset = 0;
}

EmitterBase::CopyPointers::~CopyPointers() {
  if (!moved)
    return;
  emitter.overrides.erase(copy.getSource());
  emitter.overrides.erase(copy.getTarget());
}

EmitterBase::KernelPointers::KernelPointers(EmitterBase &emitter,
                                            loomrt::KernelOp kernel)
    : emitter(emitter) {
  for (auto [k, in] : llvm::enumerate(kernel.getIns())) {
    offsets.push_back(loomrt::inputOffset(kernel, k));
    auto isIn = [&](Value v) { return v == in; };
    if (offsets.back() == 0 ||
        llvm::count_if(kernel.getIns(), isIn) +
                llvm::count_if(kernel.getOuts(), isIn) !=
            1)
      continue;
    emitter.overrides[in] = emitter.offsetName(in, offsets.back());
    moved.push_back(in);
    offsets.back() = 0;
  }
}

EmitterBase::KernelPointers::~KernelPointers() {
  for (Value in : moved)
    emitter.overrides.erase(in);
}

FailureOr<std::string> EmitterBase::outlineKernel(
    StringRef hint, StringRef prefix, StringRef leading,
    ArrayRef<Value> params, ArrayRef<Value> written,
    llvm::function_ref<LogicalResult(llvm::raw_ostream &)> print) {
  SmallVector<std::string> signature;
  if (!leading.empty())
    signature.push_back(leading.str());
  // The step's names of the parameters (an override of the caller's, such
  // as a copy's offset pointer, included) are restored after.
  DenseMap<Value, std::string> saved;
  for (Value buffer : params)
    if (auto it = overrides.find(buffer); it != overrides.end())
      saved[buffer] = it->second;
  for (auto [k, buffer] : llvm::enumerate(params)) {
    std::string p = "p" + std::to_string(k);
    signature.push_back(
        (llvm::is_contained(written, buffer) ? "" : "const ") +
        std::string(cppType(elementType(buffer))) + " *" + p);
    overrides[buffer] = p;
  }
  std::string text;
  llvm::raw_string_ostream ts(text);
  LogicalResult printed = print(ts);
  for (Value buffer : params)
    overrides.erase(buffer);
  for (auto &[buffer, n] : saved)
    overrides[buffer] = n;
  if (failed(printed))
    return failure();
  std::string definition =
      "(" + llvm::join(signature, ", ") + ") {\n" + text + "}\n";
  auto [it, inserted] =
      kernelByText.try_emplace(prefix.str() + " " + definition, "");
  if (inserted) {
    it->second = "k" + std::to_string(kernelCounter++) + "_" + sanitize(hint);
    kernels += prefix.str() + " " + it->second + definition + "\n";
  }
  return it->second;
}

std::string EmitterBase::joinNames(ArrayRef<Value> values) {
  return llvm::join(llvm::map_range(values, [&](Value v) { return name(v); }),
                    ", ");
}
