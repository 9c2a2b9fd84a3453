//===- Buffers.cpp - Arena buffers, views and constants -------------------===//
//
// A planned loomrt.alloc is a pointer into the arena at its offset (with
// arenaAcquire/arenaRelease around its lifetime, which the runtime checks),
// a view is its source's pointer, a loomrt.constant a static array of the
// translation unit. The arena is the host's (CPU) or the device's (CUDA):
// the memory plan is the same.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/EmitterBase.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit;

LogicalResult EmitterBase::emitAlloc(loomrt::AllocOp alloc) {
  if (!alloc.getOffset())
    return error(alloc) << "buffer has no arena offset; run "
                           "loom-memory-plan first";
  int64_t offset = *alloc.getOffset();
  int64_t bytes =
      llvm::alignTo(numElements(shape(alloc.getBuffer())) *
                        elementBytes(elementType(alloc.getBuffer())),
                    alignment);
  std::string n = newName(alloc.getCategory());
  names[alloc.getBuffer()] = n;
  if (alloc.getCategory() == "swap") {
    // The host pool of loom-swap (its own plan; not an arena buffer).
    line() << cppType(elementType(alloc.getBuffer())) << " *" << n
           << " = reinterpret_cast<" << cppType(elementType(alloc.getBuffer()))
           << " *>(hostArena(ctx) + " << hole(offset) << "); // "
           << alloc.getType() << " in the host pool\n";
    return success();
  }
  line() << cppType(elementType(alloc.getBuffer())) << " *" << n
         << " = reinterpret_cast<" << cppType(elementType(alloc.getBuffer()))
         << " *>(arena + " << hole(offset) << "); // " << alloc.getType()
         << "\n";
  line() << "arenaAcquire(ctx, " << hole(offset) << ", " << bytes << ");\n";
  return success();
}

LogicalResult EmitterBase::emitDealloc(loomrt::DeallocOp dealloc) {
  auto alloc = dealloc.getBuffer().getDefiningOp<loomrt::AllocOp>();
  if (!alloc || !alloc.getOffset())
    return error(dealloc) << "dealloc of a buffer that is not a planned alloc";
  if (alloc.getCategory() == "swap") {
    line() << "// " << name(alloc.getBuffer())
           << " (host pool) is free from here\n";
    return success();
  }
  int64_t bytes =
      llvm::alignTo(numElements(shape(alloc.getBuffer())) *
                        elementBytes(elementType(alloc.getBuffer())),
                    alignment);
  line() << "arenaRelease(ctx, " << hole(*alloc.getOffset()) << ", " << bytes
         << "); // " << name(alloc.getBuffer()) << "\n";
  return success();
}

LogicalResult EmitterBase::emitView(loomrt::ViewOp view) {
  std::string n = newName("view");
  names[view.getResult()] = n;
  line() << cppType(elementType(view.getResult())) << " *" << n << " = "
         << name(view.getSource()) << "; // " << view.getResult().getType()
         << "\n";
  return success();
}

LogicalResult EmitterBase::emitConstant(loomrt::ConstantOp constant) {
  std::string n = newName("constant");
  names[constant.getBuffer()] = n;
  constantBuffers.push_back(constant.getBuffer());
  Type type = elementType(constant.getBuffer());
  llvm::raw_string_ostream cs(constants);
  int64_t count = numElements(shape(constant.getBuffer()));
  cs << "alignas(64) " << cppType(type) << " " << constantStorage(n) << "["
     << std::max<int64_t>(count, 1) << "] = {";
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense)
    return error(constant) << "only dense constants are supported";
  int64_t i = 0;
  if (type.isF32() || type.isBF16()) { // a bf16 literal is exact in float
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
