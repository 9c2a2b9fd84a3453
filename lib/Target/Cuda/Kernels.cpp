//===- Kernels.cpp - Generated __global__ kernels (CUDA) ------------------===//
//
// Every generated op is one __global__ function with a grid-stride loop
// over a flat index `i`, from which the loop indices its strides read are
// recovered (`i0 = i / 8`, `i1 = i % 8`): a loomrt.kernel computes one
// element per iteration (the same scalar body as the CPU's), loomrt.reduce
// one output per iteration (its reduced dimensions a serial loop nest with
// a double or int64 accumulator, in the CPU's order, so the sums are the
// CPU's bit for bit), iota and copy one element. A reduction of at least
// 256 elements per output (a bias gradient over many rows, a norm over a
// weight) would leave most of the GPU idle that way: it is one block per
// output instead, each thread folding a strided slice, the partials halved
// in shared memory down to one warp whose lanes fold them with
// __shfl_down_sync (double or int64, so only the order of the additions
// differs from the CPU's), launched with LOOM_LAUNCH_SYNC (the emulation
// runs its threads as fibers, CudaEmulation.h). The step
// launches each other kernel with LOOM_LAUNCH(kernel, grid, block, stream,
// buffers...) on the runtime's compute stream: `block` threads (256, fewer
// for small ops, a multiple of 32) and enough blocks to give each thread
// one element, at most EmitCudaOptions::maxBlocks.
//
// The parameters of a kernel are the buffers it reads and writes (p0,
// p1, ...: EmitterBase::outlineKernel), so identical kernels of different
// layers and micro-batches are one function, launched on each's buffers.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit;
using mlir::loom::emit_cuda::Emitter;

/// Prints `const int64_t <prefix>d = ...;` from the flat index `flat`
/// of a dense `shape`, for the dimensions d that some stride list in
/// `uses` reads (non-zero stride); the others would be unused variables.
static void printUnflatten(llvm::raw_ostream &s, int indent, StringRef prefix,
                           ArrayRef<int64_t> shape,
                           ArrayRef<ArrayRef<int64_t>> uses,
                           StringRef flat = "i") {
  SmallVector<int64_t> dense = computeStrides(shape);
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (llvm::none_of(uses, [&](ArrayRef<int64_t> u) {
          return d < static_cast<int64_t>(u.size()) && u[d] != 0;
        }))
      continue;
    std::string expr = dense[d] == 1
                           ? flat.str()
                           : (flat + " / " + Twine(dense[d])).str();
    if (d > 0)
      expr = (dense[d] == 1 ? expr : "(" + expr + ")") + " % " +
             std::to_string(shape[d]);
    s.indent(indent) << "const int64_t " << prefix << d << " = " << expr
                     << ";\n";
  }
}

LogicalResult Emitter::emitGlobal(
    StringRef hint, StringRef comment, int64_t n, ArrayRef<Value> params,
    ArrayRef<Value> written,
    llvm::function_ref<LogicalResult(llvm::raw_ostream &)> printBody) {
  line() << "// " << comment << "\n";
  if (n == 0) {
    line() << "// no elements: no kernel\n";
    return success();
  }
  FailureOr<std::string> kernel = outlineKernel(
      hint, "__global__ void", "", params, written,
      [&](llvm::raw_ostream &ks) {
        ks << "  for (int64_t i = static_cast<int64_t>(blockIdx.x) * "
              "blockDim.x + threadIdx.x; i < "
           << n << ";\n"
           << "       i += static_cast<int64_t>(blockDim.x) * gridDim.x) "
              "{\n";
        if (failed(printBody(ks)))
          return failure();
        ks << "  }\n";
        return success();
      });
  if (failed(kernel))
    return failure();

  int64_t block = std::min<int64_t>(options.blockSize, llvm::alignTo(n, 32));
  int64_t grid = std::min<int64_t>(llvm::divideCeil(n, block), options.maxBlocks);
  line() << "LOOM_LAUNCH(" << *kernel << ", " << grid << ", " << block
         << ", stream, " << joinNames(params) << ");\n";
  line() << "cuda::checkKernelLaunch(ctx, " << cppQuote(*kernel) << ");\n";
  return success();
}

LogicalResult Emitter::emitKernel(loomrt::KernelOp op) {
  Value out = op.getOuts().front();
  ArrayRef<int64_t> loopShape = shape(out);
  SmallVector<Value> buffers(op.getIns());
  llvm::append_range(buffers, op.getOuts());
  SmallVector<Value> outs(op.getOuts());
  auto strided = op.getInStridesAttr();
  KernelPointers pointers(*this, op);
  std::string comment =
      ("kernel " + op.getOrigin() + " -> " + name(out)).str();
  return emitGlobal(
      op.getOrigin(), comment, numElements(loopShape), distinct(buffers), outs,
      [&](llvm::raw_ostream &s) {
        if (!strided)
          return emitKernelBody(
              op, s, 4, [](unsigned) { return std::string("i"); }, "i");
        // The output is dense: its index is `i`; the inputs read with
        // their strides.
        SmallVector<ArrayRef<int64_t>> uses;
        for (Attribute a : strided)
          uses.push_back(cast<DenseI64ArrayAttr>(a).asArrayRef());
        printUnflatten(s, 4, "i", loopShape, uses);
        return emitKernelBody(
            op, s, 4,
            [&](unsigned k) {
              return indexExpr("i", uses[k], pointers.offset(k));
            },
            "i");
      });
}

LogicalResult Emitter::emitReduce(loomrt::ReduceOp op) {
  ReduceGeometry g(op);
  Type type = elementType(op.getOutput());
  bool isFloat = isa<FloatType>(type);
  const char *acc = isFloat ? "double" : "int64_t";
  std::string comment = ("reduce " + stringifyEnum(op.getKind()) + " over [" +
                         joinInts(op.getDims()) + "] (" + op.getOrigin() +
                         ") -> " + name(op.getOutput()))
                            .str();
  std::string init;
  switch (op.getKind()) {
  case loomrt::ReduceKind::sum:
  case loomrt::ReduceKind::mean:
    init = "0";
    break;
  case loomrt::ReduceKind::max:
    init = isFloat ? "-HUGE_VAL" : "INT64_MIN";
    break;
  }
  int64_t outputs = numElements(g.keptSizes);
  int64_t reduced = numElements(g.reducedSizes);
  if (reduced >= kBlockReduceMin && outputs <= kMaxGridX)
    return emitBlockReduce(op, g, comment, acc, init);
  // One thread per output element; the reduced dimensions in the CPU's
  // order.
  return emitGlobal(
      ("reduce_" + stringifyEnum(op.getKind())).str(), comment,
      numElements(g.keptSizes), reduceParams(op),
      {op.getOutput()}, [&](llvm::raw_ostream &s) {
        printUnflatten(s, 4, "k", g.keptSizes, {g.keptStrides});
        s.indent(4) << acc << " acc = " << init << ";\n";
        s.indent(4) << "const int64_t base = " << indexExpr("k", g.keptStrides)
                    << ";\n";
        {
          LoopNest inner(s, g.reducedSizes, "r", 4, false);
          if (failed(printReduceStep(op, g, acc, isFloat, s,
                                     inner.bodyIndent())))
            return failure();
        }
        std::string value = reduceResult(op, g);
        s.indent(4) << name(op.getOutput()) << "[i] = static_cast<"
                    << cppType(type) << ">(" << value << ");\n";
        return success();
      });
}

LogicalResult Emitter::emitBlockReduce(loomrt::ReduceOp op,
                                       const ReduceGeometry &g,
                                       StringRef comment, StringRef acc,
                                       StringRef init) {
  Type type = elementType(op.getOutput());
  bool isFloat = isa<FloatType>(type);
  // A power of two for the tree, within CUDA's 1024 threads per block.
  int64_t threads = static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(
      std::clamp<int64_t>(options.blockSize, 32, 1024))));
  int64_t outputs = numElements(g.keptSizes);
  int64_t reduced = numElements(g.reducedSizes);
  SmallVector<Value> params = reduceParams(op);
  line() << "// " << comment << "\n";
  FailureOr<std::string> kernel = outlineKernel(
      ("reduce_" + stringifyEnum(op.getKind()) + "_block").str(),
      "__global__ void", "", params, {op.getOutput()},
      [&](llvm::raw_ostream &s) {
        s << "  // One block per output: its threads fold strided slices of "
             "the reduced\n"
             "  // elements, the partials are halved in shared memory down "
             "to one warp,\n"
             "  // whose lanes fold them with shuffles.\n";
        s << "  __shared__ " << acc << " partial[" << threads << "];\n";
        s << "  const int64_t i = blockIdx.x;\n";
        printUnflatten(s, 2, "k", g.keptSizes, {g.keptStrides});
        s << "  const int64_t base = " << indexExpr("k", g.keptStrides)
          << ";\n";
        s << "  " << acc << " acc = " << init << ";\n";
        s << "  for (int64_t j = threadIdx.x; j < " << reduced
          << "; j += blockDim.x) {\n";
        printUnflatten(s, 4, "r", g.reducedSizes, {g.reducedStrides}, "j");
        if (failed(printReduceStep(op, g, acc, isFloat, s, 4)))
          return failure();
        s << "  }\n";
        s << "  partial[threadIdx.x] = acc;\n";
        s << "  __syncthreads();\n";
        s << "  for (unsigned half = blockDim.x / 2; half >= 32; half /= 2) "
             "{\n";
        s << "    if (threadIdx.x < half) {\n";
        s << "      const " << acc << " x = partial[threadIdx.x + half];\n";
        s << "      " << foldStatement(op, isFloat, "partial[threadIdx.x]", "x")
          << "\n";
        s << "    }\n";
        s << "    __syncthreads();\n";
        s << "  }\n";
        s << "  if (threadIdx.x < 32) {\n";
        s << "    " << acc << " v = partial[threadIdx.x];\n";
        s << "    for (unsigned offset = 16; offset > 0; offset /= 2) {\n";
        s << "      const " << acc
          << " x = __shfl_down_sync(0xffffffffu, v, offset);\n";
        s << "      " << foldStatement(op, isFloat, "v", "x") << "\n";
        s << "    }\n";
        s << "    if (threadIdx.x == 0)\n";
        s << "      " << name(op.getOutput()) << "[i] = static_cast<"
          << cppType(type) << ">(" << reduceResult(op, g, "v") << ");\n";
        s << "  }\n";
        return success();
      });
  if (failed(kernel))
    return failure();
  line() << "LOOM_LAUNCH_SYNC(" << *kernel << ", " << outputs << ", "
         << threads << ", stream, " << joinNames(params) << ");\n";
  line() << "cuda::checkKernelLaunch(ctx, " << cppQuote(*kernel) << ");\n";
  return success();
}

LogicalResult Emitter::emitIota(loomrt::IotaOp iota) {
  ArrayRef<int64_t> s = shape(iota.getOutput());
  SmallVector<int64_t> use(s.size(), 0);
  if (static_cast<int64_t>(iota.getDim()) < static_cast<int64_t>(s.size()))
    use[iota.getDim()] = 1;
  return emitGlobal(
      "iota", "iota -> " + name(iota.getOutput()), numElements(s),
      {iota.getOutput()}, {iota.getOutput()}, [&](llvm::raw_ostream &k) {
        printUnflatten(k, 4, "i", s, {use});
        k.indent(4) << name(iota.getOutput()) << "[i] = static_cast<"
                    << cppType(elementType(iota.getOutput())) << ">(i"
                    << iota.getDim() << ");\n";
        return success();
      });
}

LogicalResult Emitter::emitCopy(loomrt::CopyOp copy) {
  std::string comment = ("copy (" + copy.getOrigin() + ") " +
                         name(copy.getSource()) + " -> " +
                         name(copy.getTarget()))
                            .str();
  CopyPointers pointers(*this, copy);
  return emitGlobal(
      "copy", comment, numElements(copy.getShape()),
      distinct({copy.getSource(), copy.getTarget()}), {copy.getTarget()},
      [&](llvm::raw_ostream &s) {
        printUnflatten(s, 4, "i", copy.getShape(),
                       {copy.getSourceStrides(), copy.getTargetStrides()});
        s.indent(4) << name(copy.getTarget()) << "["
                    << indexExpr("i", copy.getTargetStrides(),
                                 pointers.targetOffset)
                    << "] = " << name(copy.getSource()) << "["
                    << indexExpr("i", copy.getSourceStrides(),
                                 pointers.sourceOffset)
                    << "];\n";
        return success();
      });
}
