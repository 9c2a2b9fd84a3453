//===- Kernels.cpp - Generated loops and the step function (CPU) ----------===//
//
// A loomrt.kernel becomes one loop (flat, or a nest with strided reads)
// whose body prints the scalar arith/math ops as C++ expressions;
// loomrt.reduce is a loop nest with a double (or int64) accumulator, iota
// and copy loop nests of their index. Library calls are the runtime's
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
  out << "void step(Context &ctx, void *const *args, void *const *results,\n"
      << "          char *arena) {\n"
      << "  (void)arena;\n"
      << body << "}\n\n";
}

std::string Emitter::libraryCall(StringRef fn, bool cpuTakesCtx) {
  // Comm.h's operations are loom::rt's own; the kernels are in cpu::.
  bool comm = fn == "allReduceStart" || fn == "rowSparseAllReduceStart" ||
              fn == "sendStart" || fn == "recvStart" || fn == "wait";
  return ((comm ? "" : "cpu::") + fn + "(" + (cpuTakesCtx ? "ctx, " : ""))
      .str();
}

LogicalResult Emitter::emitKernel(loomrt::KernelOp op) {
  Value out = op.getOuts().front();
  ArrayRef<int64_t> loopShape = shape(out);
  int64_t n = numElements(loopShape);
  bool parallel = n >= options.parallelThreshold;
  line() << "// kernel " << op.getOrigin() << " -> " << name(out) << "\n";
  auto strided = op.getInStridesAttr();
  if (!strided) {
    // One flat loop over the elements.
    if (parallel)
      line() << "#pragma omp parallel for\n";
    line() << "for (int64_t i = 0; i < " << n << "; ++i) {\n";
    if (failed(emitKernelBody(
            op, os, 4, [](unsigned) { return std::string("i"); }, "i")))
      return failure();
    line() << "}\n";
    return success();
  }
  LoopNest nest(os, loopShape, "i", 2, parallel);
  return emitKernelBody(
      op, os, nest.bodyIndent(),
      [&](unsigned k) {
        return indexExpr("i", cast<DenseI64ArrayAttr>(strided[k]).asArrayRef());
      },
      indexExpr("i", computeStrides(loopShape)));
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

LogicalResult Emitter::emitReduce(loomrt::ReduceOp op) {
  ArrayRef<int64_t> dims = op.getDims();
  ReduceGeometry g(op);
  Type type = elementType(op.getInput());
  bool isFloat = type.isF32();
  const char *acc = isFloat ? "double" : "int64_t";
  line() << "// reduce " << stringifyEnum(op.getKind()) << " over ["
         << joinInts(dims) << "] (" << op.getOrigin() << ") -> "
         << name(op.getOutput()) << "\n";
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
  if (unsigned inner = keptInnerDims(op))
    return emitColumnReduce(op, g, inner, acc, init);
  int64_t outN = numElements(g.keptSizes);
  // A full reduction has no outer loop: a block scopes its locals.
  bool scoped = g.keptSizes.empty();
  if (scoped)
    os.indent(2) << "{\n";
  LoopNest outer(os, g.keptSizes, "k", scoped ? 4 : 2,
                 outN >= options.parallelThreshold / 64);
  int indent = outer.bodyIndent();
  os.indent(indent) << acc << " acc = " << init << ";\n";
  // Base offset from the kept indices.
  os.indent(indent) << "const int64_t base = " << indexExpr("k", g.keptStrides)
                    << ";\n";
  {
    LoopNest inner(os, g.reducedSizes, "r", indent, false);
    printReduceStep(op, g, acc, isFloat, os, inner.bodyIndent());
  }
  std::string value = reduceResult(op, g);
  os.indent(indent) << name(op.getOutput()) << "["
                    << indexExpr("k", g.outStrides) << "] = static_cast<"
                    << cppType(type) << ">(" << value << ");\n";
  if (scoped)
    os.indent(2) << "}\n";
  return success();
}

LogicalResult Emitter::emitColumnReduce(loomrt::ReduceOp op,
                                        const ReduceGeometry &g,
                                        unsigned inner, StringRef accType,
                                        StringRef init) {
  // The kept innermost dimensions are `columns` contiguous elements of each
  // reduced row: walk the rows in order (the other loop nest's order, so
  // results are the same bit for bit) and fold each row's columns into a
  // tile of accumulators. The reads are contiguous and vectorise; the other
  // nest reads one element per row and column.
  constexpr int64_t kTile = 256;
  ArrayRef<int64_t> keptSizes = g.keptSizes;
  size_t outerDims = keptSizes.size() - inner;
  int64_t columns = numElements(keptSizes.drop_front(outerDims));
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
  LoopNest outer(os, loops, "k", 2, parallel);
  int indent = outer.bodyIndent();
  std::string t = "k" + std::to_string(loops.size() - 1);
  std::string width =
      columns % tile == 0
          ? std::to_string(tile)
          : "std::min<int64_t>(" + std::to_string(tile) + ", " +
                std::to_string(columns) + " - " + t + " * " +
                std::to_string(tile) + ")";
  os.indent(indent) << "const int64_t width = " << width << ";\n";
  os.indent(indent) << accType << " acc[" << tile << "];\n";
  os.indent(indent) << "for (int64_t c = 0; c < width; ++c) acc[c] = " << init
                    << ";\n";
  os.indent(indent) << "const int64_t base = " << indexExpr("k", inStrides)
                    << ";\n";
  {
    LoopNest rows(os, g.reducedSizes, "r", indent, false);
    int body = rows.bodyIndent();
    os.indent(body) << "for (int64_t c = 0; c < width; ++c) {\n";
    printReduceStep(op, g, accType, elementType(op.getInput()).isF32(), os,
                    body + 2, "acc[c]", "c");
    os.indent(body) << "}\n";
  }
  os.indent(indent) << "for (int64_t c = 0; c < width; ++c)\n";
  os.indent(indent + 2) << name(op.getOutput()) << "["
                        << indexExpr("k", outStrides)
                        << " + c] = static_cast<"
                        << cppType(elementType(op.getInput())) << ">("
                        << reduceResult(op, g, "acc[c]") << ");\n";
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

LogicalResult Emitter::emitCopy(loomrt::CopyOp copy) {
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
}

LogicalResult Emitter::emitGridIndex(loomrt::GridIndexOp index) {
  const char *group = groupEnum(index.getMeshAxis());
  line() << name(index.getOutput())
         << "[0] = static_cast<int64_t>(groupRank(ctx, " << group << "));\n";
  return success();
}
