//===- Kernels.cpp - Generated loops and the step function (CPU) ----------===//
//
// A loomrt.kernel becomes one loop (flat, or a nest with strided reads)
// whose body prints the scalar arith/math ops as C++ expressions;
// loomrt.reduce is a loop nest with a double (or int64) accumulator, iota
// and copy loop nests of their index. Each is a function of its buffers,
// one per distinct text (EmitterBase::outlineKernel), which the step calls. Library calls are the runtime's
// cpu:: kernels and Comm.h's operations; the step function binds its
// arguments from `args` and `results` and uses the host arena.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/ADT/StringExtras.h"

#include <optional>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit;
using mlir::loom::emit_cpp::Emitter;

void Emitter::bindArgument(BlockArgument arg, StringRef n, bool isResult,
                           unsigned index) {
  const char *type = cppType(elementType(arg));
  line() << type << " *" << n << " = static_cast<" << type << " *>("
         << (isResult ? "results[" : "args[") << index << "]); // "
         << arg.getType() << "\n";
}

void Emitter::printStep() {
  if (!constants.empty())
    out << "// Constants of the step.\n" << constants << "\n";
  if (!kernels.empty())
    out << "// Kernels of the step, one function per distinct loop (each "
           "called\n// wherever its loop recurs).\n\n"
        << kernels;
  out << "void step(Context &ctx, void *const *args, void *const *results,\n"
      << "          char *arena) {\n"
      << "  (void)args; // a stage may take no arguments\n"
      << "  (void)arena;\n"
      << body << "}\n\n";
}

std::string Emitter::libraryCall(StringRef fn, bool cpuTakesCtx) {
  // Comm.h's operations are loom::rt's own; the kernels are in cpu::.
  bool comm = fn == "allReduceStart" || fn == "rowSparseAllReduceStart" ||
              fn == "sendStart" || fn == "recvStart" || fn == "wait" ||
              fn == "swapOutStart" || fn == "swapInStart";
  return ((comm ? "" : "cpu::") + fn + "(" + (cpuTakesCtx ? "ctx, " : ""))
      .str();
}

LogicalResult
Emitter::emitFunction(StringRef hint, StringRef comment, ArrayRef<Value> params,
                      ArrayRef<Value> written,
                      llvm::function_ref<LogicalResult(llvm::raw_ostream &)>
                          printBody) {
  line() << "// " << comment << "\n";
  FailureOr<std::string> kernel =
      outlineKernel(hint, "static LOOM_KERNEL void",
                    "[[maybe_unused]] Context &ctx", params, written, printBody);
  if (failed(kernel))
    return failure();
  line() << *kernel << "(ctx, " << joinNames(params) << ");\n";
  return success();
}

LogicalResult Emitter::emitKernel(loomrt::KernelOp op) {
  Value out = op.getOuts().front();
  ArrayRef<int64_t> loopShape = shape(out);
  int64_t n = numElements(loopShape);
  bool parallel = n >= options.parallelThreshold;
  SmallVector<Value> buffers(op.getIns());
  llvm::append_range(buffers, op.getOuts());
  SmallVector<Value> outs(op.getOuts());
  auto strided = op.getInStridesAttr();
  KernelPointers pointers(*this, op);
  return emitFunction(
      op.getOrigin(), ("kernel " + op.getOrigin() + " -> " + name(out)).str(),
      distinct(buffers), outs, [&](llvm::raw_ostream &s) {
        if (!strided) {
          // One flat loop over the elements.
          // Elementwise: no iteration reads what another writes (LoopNest).
          s.indent(2) << (parallel ? "#pragma omp parallel for simd\n"
                                   : "#pragma GCC ivdep\n");
          s.indent(2) << "for (int64_t i = 0; i < " << n << "; ++i) {\n";
          if (failed(emitKernelBody(
                  op, s, 4, [](unsigned) { return std::string("i"); }, "i")))
            return failure();
          s.indent(2) << "}\n";
          return success();
        }
        LoopNest nest(s, loopShape, "i", 2, parallel, /*independent=*/true);
        return emitKernelBody(
            op, s, nest.bodyIndent(),
            [&](unsigned k) {
              return indexExpr(
                  "i", cast<DenseI64ArrayAttr>(strided[k]).asArrayRef(),
                  pointers.offset(k));
            },
            indexExpr("i", computeStrides(loopShape)));
      });
}

/// The number of innermost input dimensions `op` keeps (0 when it reduces
/// the innermost one).
static unsigned keptInnerDims(loomrt::ReduceOp op) {
  int64_t rank = cast<MemRefType>(op.getInput().getType()).getRank();
  unsigned n = 0;
  for (int64_t d = rank - 1; d >= 0 && !llvm::is_contained(op.getDims(), d);
       --d)
    ++n;
  return n;
}

/// Whether `op` reduces the input's trailing dimensions: each output's
/// elements are contiguous.
static bool reducesTrailingDims(loomrt::ReduceOp op) {
  int64_t rank = cast<MemRefType>(op.getInput().getType()).getRank();
  SmallVector<int64_t> dims(op.getDims());
  llvm::sort(dims);
  for (auto [i, d] : llvm::enumerate(dims))
    if (d != rank - static_cast<int64_t>(dims.size()) +
                 static_cast<int64_t>(i))
      return false;
  return true;
}

LogicalResult Emitter::emitReduce(loomrt::ReduceOp op) {
  ArrayRef<int64_t> dims = op.getDims();
  ReduceGeometry g(op);
  Type type = elementType(op.getOutput());
  bool isFloat = isa<FloatType>(type);
  const char *acc = isFloat ? "double" : "int64_t";
  std::string comment =
      ("reduce " + stringifyEnum(op.getKind()) + " over [" + joinInts(dims) +
       "] (" + op.getOrigin() + ") -> " + name(op.getOutput()))
          .str();
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
  unsigned inner = keptInnerDims(op);
  int64_t reduced = numElements(g.reducedSizes);
  return emitFunction(
      ("reduce_" + stringifyEnum(op.getKind())).str(), comment,
      reduceParams(op), {op.getOutput()},
      [&](llvm::raw_ostream &s) {
        if (inner)
          return printColumnReduce(s, op, g, inner, acc, init);
        int64_t outN = numElements(g.keptSizes);
        // A full reduction has no outer loop: a block scopes its locals.
        bool scoped = g.keptSizes.empty();
        if (scoped)
          s.indent(2) << "{\n";
        {
          LoopNest outer(s, g.keptSizes, "k", scoped ? 4 : 2,
                         outN >= options.parallelThreshold / 64);
          int indent = outer.bodyIndent();
          bool lanes = reduced >= kLanes * 2 && reducesTrailingDims(op);
          if (!lanes)
            s.indent(indent) << acc << " acc = " << init << ";\n";
          // Base offset from the kept indices.
          s.indent(indent) << "const int64_t base = "
                           << indexExpr("k", g.keptStrides) << ";\n";
          if (lanes) {
            if (failed(printLaneReduce(s, op, g, indent, acc, init,
                                       isFloat)))
              return failure();
          } else {
            LoopNest rows(s, g.reducedSizes, "r", indent, false);
            if (failed(printReduceStep(op, g, acc, isFloat, s,
                                       rows.bodyIndent())))
              return failure();
          }
          s.indent(indent) << name(op.getOutput()) << "["
                           << indexExpr("k", g.outStrides)
                           << "] = static_cast<" << cppType(type) << ">("
                           << reduceResult(op, g) << ");\n";
        }
        if (scoped)
          s.indent(2) << "}\n";
        return success();
      });
}

LogicalResult Emitter::printLaneReduce(llvm::raw_ostream &s,
                                       loomrt::ReduceOp op,
                                       const ReduceGeometry &g, int indent,
                                       StringRef accType, StringRef init,
                                       bool isFloat) {
  // The contiguous elements of each output, folded into kLanes
  // accumulators (element j into lane j % kLanes; the tail into lane 0),
  // which the compiler vectorises, then the lanes in a fixed tree. One
  // serial chain of double additions was the row reductions' bottleneck
  // (a layer norm's mean, a softmax gradient's row sum). The order is
  // fixed, so every thread count gives the same bits.
  int64_t reduced = numElements(g.reducedSizes);
  s.indent(indent) << accType << " lane[" << kLanes << "];\n";
  s.indent(indent) << "for (int64_t l = 0; l < " << kLanes
                   << "; ++l) lane[l] = " << init << ";\n";
  // Both bounds are constants: no tail loop when the lanes divide the
  // count (GCC warned of undefined behaviour in such a dead loop).
  int64_t whole = reduced - reduced % kLanes;
  s.indent(indent) << "for (int64_t j = 0; j < " << whole
                   << "; j += " << kLanes << ") {\n";
  s.indent(indent + 2) << "for (int64_t l = 0; l < " << kLanes
                       << "; ++l) {\n";
  if (failed(printReduceStep(op, g, accType, isFloat, s, indent + 4,
                             "lane[l]", "", "j + l")))
    return failure();
  s.indent(indent + 2) << "}\n";
  s.indent(indent) << "}\n";
  if (whole < reduced) {
    s.indent(indent) << "for (int64_t j = " << whole << "; j < " << reduced
                     << "; ++j) {\n";
    if (failed(printReduceStep(op, g, accType, isFloat, s, indent + 2,
                               "lane[0]", "", "j")))
      return failure();
    s.indent(indent) << "}\n";
  }
  // Pairwise: lanes l and l + width, halving the width.
  for (int64_t width = kLanes / 2; width >= 1; width /= 2)
    for (int64_t l = 0; l < width; ++l) {
      std::string a = "lane[" + std::to_string(l) + "]";
      std::string b = "lane[" + std::to_string(l + width) + "]";
      s.indent(indent) << foldStatement(op, isFloat, a, b) << "\n";
    }
  s.indent(indent) << accType << " acc = lane[0];\n";
  return success();
}

LogicalResult Emitter::printColumnReduce(llvm::raw_ostream &s,
                                         loomrt::ReduceOp op,
                                         const ReduceGeometry &g,
                                         unsigned inner, StringRef accType,
                                         StringRef init) {
  // The kept innermost dimensions are `columns` contiguous elements of each
  // reduced row: walk the rows in order (the other loop nest's order, so
  // results are the same bit for bit) and fold each row's columns into a
  // tile of accumulators. The reads are contiguous and vectorise; the other
  // nest reads one element per row and column.
  // Tiles of 512 columns where that leaves four or more (a GPT MLP's bias
  // gradient over 2048 columns: 25% faster than 256, each row's read twice
  // as long), else 256, so that narrower rows still spread over threads.
  ArrayRef<int64_t> keptSizes = g.keptSizes;
  size_t outerDims = keptSizes.size() - inner;
  int64_t columns = numElements(keptSizes.drop_front(outerDims));
  const int64_t kTile = columns >= 4 * 512 ? 512 : 256;
  int64_t tile = std::min(columns, kTile);
  int64_t tiles = llvm::divideCeil(columns, tile);
  SmallVector<int64_t> loops(keptSizes.take_front(outerDims));
  loops.push_back(tiles);
  SmallVector<int64_t> inStrides(g.keptStrides.begin(),
                                 g.keptStrides.begin() + outerDims);
  inStrides.push_back(tile);
  SmallVector<int64_t> outStrides(g.outStrides.begin(),
                                  g.outStrides.begin() + outerDims);
  outStrides.push_back(tile);
  int64_t inN =
      numElements(cast<MemRefType>(op.getInput().getType()).getShape());
  bool parallel = inN >= options.parallelThreshold && numElements(loops) > 1;
  LoopNest outer(s, loops, "k", 2, parallel);
  int indent = outer.bodyIndent();
  std::string t = "k" + std::to_string(loops.size() - 1);
  std::string width =
      columns % tile == 0
          ? std::to_string(tile)
          : "std::min<int64_t>(" + std::to_string(tile) + ", " +
                std::to_string(columns) + " - " + t + " * " +
                std::to_string(tile) + ")";
  s.indent(indent) << "const int64_t width = " << width << ";\n";
  s.indent(indent) << accType << " acc[" << tile << "];\n";
  s.indent(indent) << "for (int64_t c = 0; c < width; ++c) acc[c] = " << init
                   << ";\n";
  s.indent(indent) << "const int64_t base = " << indexExpr("k", inStrides)
                   << ";\n";
  {
    LoopNest rows(s, g.reducedSizes, "r", indent, false);
    int body = rows.bodyIndent();
    s.indent(body) << "for (int64_t c = 0; c < width; ++c) {\n";
    if (failed(printReduceStep(op, g, accType,
                               isa<FloatType>(elementType(op.getOutput())), s,
                               body + 2, "acc[c]", "c")))
      return failure();
    s.indent(body) << "}\n";
  }
  s.indent(indent) << "for (int64_t c = 0; c < width; ++c)\n";
  s.indent(indent + 2) << name(op.getOutput()) << "["
                       << indexExpr("k", outStrides) << " + c] = static_cast<"
                       << cppType(elementType(op.getOutput())) << ">("
                       << reduceResult(op, g, "acc[c]") << ");\n";
  return success();
}

LogicalResult Emitter::emitIota(loomrt::IotaOp iota) {
  Value out = iota.getOutput();
  return emitFunction("iota", "iota -> " + name(out), {out}, {out},
                      [&](llvm::raw_ostream &s) {
                        ArrayRef<int64_t> sizes = shape(out);
                        LoopNest nest(s, sizes, "i", 2, false);
                        s.indent(nest.bodyIndent())
                            << name(out) << "["
                            << indexExpr("i", computeStrides(sizes))
                            << "] = static_cast<"
                            << cppType(elementType(out)) << ">(i"
                            << iota.getDim() << ");\n";
                        return success();
                      });
}

LogicalResult Emitter::emitCopy(loomrt::CopyOp copy) {
  std::string comment =
      ("copy (" + copy.getOrigin() + ") " + name(copy.getSource()) + " -> " +
       name(copy.getTarget()))
          .str();
  CopyPointers pointers(*this, copy);
  return emitFunction(
      "copy", comment, distinct({copy.getSource(), copy.getTarget()}),
      {copy.getTarget()}, [&](llvm::raw_ostream &s) {
        LoopNest nest(s, copy.getShape(), "i", 2,
                      numElements(copy.getShape()) >=
                          options.parallelThreshold);
        s.indent(nest.bodyIndent())
            << name(copy.getTarget()) << "["
            << indexExpr("i", copy.getTargetStrides(), pointers.targetOffset)
            << "] = " << name(copy.getSource()) << "["
            << indexExpr("i", copy.getSourceStrides(), pointers.sourceOffset)
            << "];\n";
        return success();
      });
}

LogicalResult Emitter::emitGridIndex(loomrt::GridIndexOp index) {
  const char *group = groupEnum(index.getMeshAxis());
  line() << name(index.getOutput())
         << "[0] = static_cast<int64_t>(groupRank(ctx, " << group << "));\n";
  return success();
}
