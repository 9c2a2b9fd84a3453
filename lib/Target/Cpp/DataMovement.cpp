//===- DataMovement.cpp - Buffers, views, constants, copies, gather -------===//
//
// A planned loomrt.alloc is a pointer into the arena at its offset (with
// arenaAcquire/arenaRelease around its lifetime, which the runtime checks),
// a view is its source's pointer, a loomrt.constant a static array of the
// translation unit. loomrt.copy is a strided loop nest; gather and
// scatter_add call the runtime library.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit_cpp;

LogicalResult Emitter::emitAlloc(loomrt::AllocOp alloc) {
  if (!alloc.getOffset())
    return alloc.emitError("emit-cpp: buffer has no arena offset; run "
                           "loom-memory-plan first");
  int64_t offset = *alloc.getOffset();
  int64_t bytes =
      llvm::alignTo(numElements(shape(alloc.getBuffer())) *
                        elementBytes(elementType(alloc.getBuffer())),
                    alignment);
  std::string n = newName(alloc.getCategory());
  names[alloc.getBuffer()] = n;
  line() << cppType(elementType(alloc.getBuffer())) << " *" << n
         << " = reinterpret_cast<" << cppType(elementType(alloc.getBuffer()))
         << " *>(arena + " << offset << "); // " << alloc.getType() << "\n";
  line() << "arenaAcquire(ctx, " << offset << ", " << bytes << ");\n";
  return success();
}

LogicalResult Emitter::emitDealloc(loomrt::DeallocOp dealloc) {
  auto alloc = dealloc.getBuffer().getDefiningOp<loomrt::AllocOp>();
  if (!alloc || !alloc.getOffset())
    return dealloc.emitError("emit-cpp: dealloc of a buffer that is not "
                             "a planned alloc");
  int64_t bytes =
      llvm::alignTo(numElements(shape(alloc.getBuffer())) *
                        elementBytes(elementType(alloc.getBuffer())),
                    alignment);
  line() << "arenaRelease(ctx, " << *alloc.getOffset() << ", " << bytes
         << "); // " << name(alloc.getBuffer()) << "\n";
  return success();
}

LogicalResult Emitter::emitView(loomrt::ViewOp view) {
  std::string n = newName("view");
  names[view.getResult()] = n;
  line() << cppType(elementType(view.getResult())) << " *" << n << " = "
         << name(view.getSource()) << "; // " << view.getResult().getType()
         << "\n";
  return success();
}

LogicalResult Emitter::emitConstant(loomrt::ConstantOp constant) {
  std::string n = newName("constant");
  names[constant.getBuffer()] = n;
  Type type = elementType(constant.getBuffer());
  llvm::raw_string_ostream cs(constants);
  int64_t count = numElements(shape(constant.getBuffer()));
  cs << "alignas(64) " << cppType(type) << " " << n << "["
     << std::max<int64_t>(count, 1) << "] = {";
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense)
    return constant.emitError("emit-cpp: only dense constants are supported");
  int64_t i = 0;
  if (type.isF32()) {
    for (APFloat v : dense.getValues<APFloat>())
      cs << (i++ % 8 == 0 ? "\n    " : " ") << formatFloat(v.convertToDouble())
         << ",";
  } else if (type.isInteger(1)) {
    for (bool v : dense.getValues<bool>())
      cs << (i++ % 16 == 0 ? "\n    " : " ") << (v ? "true" : "false") << ",";
  } else {
    for (APInt v : dense.getValues<APInt>())
      cs << (i++ % 16 == 0 ? "\n    " : " ") << v.getSExtValue() << ",";
  }
  cs << "};\n";
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

LogicalResult Emitter::emitGather(loomrt::GatherOp gather) {
  origin((gather.getOrigin() + " -> " + name(gather.getOutput())).str());
  if (!isIndexType(elementType(gather.getIndices())))
    return gather.emitError("emit-cpp: gather indices must be i64 or i32");
  ArrayRef<int64_t> s = shape(gather.getData());
  int64_t axis = gather.getAxis();
  line() << "cpu::gather(ctx, " << cppQuote(gather.getOrigin()) << ", "
         << name(gather.getData()) << ", "
         << elementBytes(elementType(gather.getData())) << ", "
         << name(gather.getIndices()) << ", " << name(gather.getOutput())
         << ", " << numElements(s.take_front(axis)) << ", " << s[axis] << ", "
         << numElements(s.drop_front(axis + 1)) << ", "
         << numElements(shape(gather.getIndices())) << ");\n";
  return success();
}

LogicalResult Emitter::emitScatterAdd(loomrt::ScatterAddOp scatter) {
  origin((scatter.getOrigin() + " -> " + name(scatter.getOutput())).str());
  if (!isIndexType(elementType(scatter.getIndices())))
    return scatter.emitError(
        "emit-cpp: scatter_add indices must be i64 or i32");
  ArrayRef<int64_t> s = shape(scatter.getTarget());
  int64_t axis = scatter.getAxis();
  line() << "cpu::scatterAdd(ctx, " << cppQuote(scatter.getOrigin()) << ", "
         << name(scatter.getTarget()) << ", " << name(scatter.getIndices())
         << ", " << name(scatter.getUpdates()) << ", "
         << name(scatter.getOutput()) << ", "
         << numElements(s.take_front(axis)) << ", " << s[axis] << ", "
         << numElements(s.drop_front(axis + 1)) << ", "
         << numElements(shape(scatter.getIndices())) << ");\n";
  return success();
}
