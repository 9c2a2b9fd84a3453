//===- EmitCpp.cpp - loomrt to C++ for the CPU backend --------------------===//
//
// The CPU translation unit: the runtime's headers and the scalar helpers
// of generated loops (the prologue), then the module driver
// (emit::emitModule) with one Emitter (Emitter.h) per function.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Cpp/EmitCpp.h"

#include "Emitter.h"

using namespace mlir;
using namespace mlir::loom;

namespace {

/// The shared part of every translation unit: includes and helpers.
void printPrologue(llvm::raw_ostream &out) {
  out << "#include \"loom/Runtime/Comm.h\"\n"
      << "#include \"loom/Runtime/CpuKernels.h\"\n"
      << "#include \"loom/Runtime/Runtime.h\"\n"
      << "#include \"loom/Runtime/VecMath.h\"\n\n"
      << "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n"
      << "#include <limits>\n\n"
      << "// Generated loops are functions (one per distinct loop) that the\n"
      << "// step calls: out of line, so the step stays quick to compile.\n"
      << "#define LOOM_KERNEL __attribute__((noinline))\n\n"
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

} // namespace

LogicalResult mlir::loom::emitCpp(ModuleOp module, llvm::raw_ostream &os,
                                  const EmitCppOptions &options) {
  return emit::emitModule(
      module, os, {"emit-cpp", "CPU"}, options.batchSize, printPrologue,
      [&](func::FuncOp func, llvm::raw_ostream &out, int64_t batchSize,
          int64_t stage) {
        return emit_cpp::Emitter(func, out, options, batchSize, stage).emit();
      });
}
