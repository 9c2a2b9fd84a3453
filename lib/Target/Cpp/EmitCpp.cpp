//===- EmitCpp.cpp - loomrt to C++ for the CPU backend --------------------===//
//
// The module driver of the emitter: one planned loomrt function becomes a
// translation unit with trainMain, the pipeline's stage programs (each
// marked loom.stage) one namespace each with trainMainStages. The functions
// themselves are printed by the Emitter (Emitter.h: Function.cpp and one
// file per op family).
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Cpp/EmitCpp.h"

#include "Emitter.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::loom;
using emit_cpp::Emitter;

namespace {

/// The shared part of every translation unit: includes and helpers.
void printPrologue(llvm::raw_ostream &out) {
  out << "#include \"loom/Runtime/Comm.h\"\n"
      << "#include \"loom/Runtime/CpuKernels.h\"\n"
      << "#include \"loom/Runtime/Runtime.h\"\n"
      << "#include \"loom/Runtime/VecMath.h\"\n\n"
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
