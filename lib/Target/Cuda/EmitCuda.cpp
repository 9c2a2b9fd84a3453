//===- EmitCuda.cpp - loomrt to CUDA for the CUDA backend -----------------===//
//
// The CUDA translation unit: loom/Runtime/CudaProgram.h (the runtime's
// CUDA API and LOOM_LAUNCH, for nvcc or for the host emulation) and the
// scalar helpers of generated kernels (the prologue), then the module
// driver (emit::emitModule) with one Emitter (Emitter.h) per function.
//
// The step function runs with trainMain's host buffers: its first call
// initialises the device (cuda::init: streams, cuBLAS, NCCL; it fails with
// a clear error when there is no device) and makes the device arena (the
// memory plan's size), one device buffer per argument and result, and the
// constants' device copies. Each step copies the batch in, enqueues the
// kernels and library calls on the compute stream, waits for them
// (cuda::synchronize reports what failed on the device), and copies the
// loss out. Parameters and optimizer state updated in place stay on the
// device: uploaded when the host's are newer (the first step, a resume:
// hostStateChanged), downloaded only before a checkpoint
// (stateWantedOnHost).
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Cuda/EmitCuda.h"

#include "Emitter.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit;
using mlir::loomrt::bufferBytes;
using mlir::loom::emit_cuda::Emitter;

namespace {

void printPrologue(llvm::raw_ostream &out) {
  out << "#include \"loom/Runtime/CudaProgram.h\"\n\n"
      << "#include <cmath>\n#include <cstdint>\n#include <limits>\n\n"
      << "// Scalar helpers of the kernels (outside the anonymous namespace:\n"
      << "// nvcc warns about unused internal ones).\n"
      << "// NaN-propagating max/min, as the loom ops define them.\n"
      << "__host__ __device__ inline float loom_maxf(float a, float b) {\n"
      << "  return (a != a || a > b) ? a : (b != b ? b : (a == b ? a : b));\n}\n"
      << "__host__ __device__ inline float loom_minf(float a, float b) {\n"
      << "  return (a != a || a < b) ? a : (b != b ? b : (a == b ? a : b));\n}\n"
      << "template <typename T> __host__ __device__ inline T loom_maxi(T a, T b) {\n"
      << "  return a < b ? b : a;\n}\n"
      << "template <typename T> __host__ __device__ inline T loom_mini(T a, T b) {\n"
      << "  return b < a ? b : a;\n}\n"
      << "// The range of the integer types of loom_ftoi.\n"
      << "template <typename T> struct LoomIntRange;\n"
      << "template <> struct LoomIntRange<int64_t> {\n"
      << "  static constexpr int64_t lo = INT64_MIN, hi = INT64_MAX;\n};\n"
      << "template <> struct LoomIntRange<int32_t> {\n"
      << "  static constexpr int32_t lo = INT32_MIN, hi = INT32_MAX;\n};\n"
      << "// Float to integer: toward zero, NaN to 0, saturating.\n"
      << "template <typename T> __host__ __device__ inline T loom_ftoi(float x) {\n"
      << "  if (x != x) return 0;\n"
      << "  if (x <= static_cast<float>(LoomIntRange<T>::lo)) return LoomIntRange<T>::lo;\n"
      << "  if (x >= static_cast<float>(LoomIntRange<T>::hi)) return LoomIntRange<T>::hi;\n"
      << "  return static_cast<T>(x);\n}\n"
      << "// Integer division; a kernel cannot stop the run, so division by\n"
      << "// zero gives 0 here (the CPU program fails with an error).\n"
      << "template <typename T> __host__ __device__ inline T loom_divi(T a, T b) {\n"
      << "  return b == 0 ? T(0) : a / b;\n}\n\n"
      << "namespace {\n\nusing namespace loom::rt;\n\n";
}

} // namespace

std::string Emitter::floatLiteral(double value) {
  // <cmath>'s macros work in device code, std::numeric_limits does not.
  if (std::isnan(value))
    return "NAN";
  if (std::isinf(value))
    return value > 0 ? "INFINITY" : "-INFINITY";
  return formatFloat(value);
}

std::string Emitter::libraryCall(StringRef fn, bool) {
  return ("cuda::" + fn + "(ctx, ").str();
}

void Emitter::bindArgument(BlockArgument arg, StringRef n, bool isResult,
                           unsigned index) {
  const char *type = cppType(elementType(arg));
  line() << type << " *" << n << " = static_cast<" << type << " *>(device."
         << (isResult ? "results[" : "args[") << index << "]); // "
         << arg.getType() << "\n";
}

LogicalResult Emitter::emitGridIndex(loomrt::GridIndexOp index) {
  const char *group = groupEnum(index.getMeshAxis());
  const char *type = cppType(elementType(index.getOutput()));
  line() << "{\n";
  line() << "  const " << type << " index = static_cast<" << type
         << ">(groupRank(ctx, " << group << "));\n";
  line() << "  cuda::copyToDevice(ctx, " << name(index.getOutput())
         << ", &index, sizeof index);\n";
  line() << "}\n";
  return success();
}

void Emitter::printStep() {
  unsigned numInputs =
      func->getAttrOfType<IntegerAttr>("loomrt.num_inputs").getInt();
  unsigned numArgs = func.getNumArguments();
  int64_t arenaBytes =
      func->getAttrOfType<IntegerAttr>("loomrt.arena_bytes").getInt();
  auto slots = [](size_t n) { return std::max<size_t>(n, 1); };

  if (!constants.empty())
    out << "// Constants of the step (host copies; the first step puts them "
           "in device memory).\n"
        << constants << "\n";
  if (!kernels.empty())
    out << "// Kernels of the step.\n\n" << kernels;

  out << "// The step's device memory, made by its first call: the arena (as\n"
      << "// planned), the arguments, the results and the constants.\n"
      << "struct Device {\n"
      << "  char *arena = nullptr;\n"
      << "  void *args[" << slots(numInputs) << "] = {};\n"
      << "  void *results[" << slots(numArgs - numInputs) << "] = {};\n"
      << "  void *constants[" << slots(constantBuffers.size()) << "] = {};\n"
      << "};\n\n"
      << "Device &deviceOf(Context &ctx) {\n"
      << "  // One per process: a rank runs one program (pipeline stage).\n"
      << "  static Device device;\n"
      << "  if (device.arena)\n"
      << "    return device;\n"
      << "  cuda::init(ctx);\n"
      << "  device.arena = static_cast<char *>(cuda::deviceAlloc(ctx, "
      << arenaBytes << "));\n";
  for (unsigned i = 0; i < numArgs; ++i) {
    bool isResult = i >= numInputs;
    out << "  device." << (isResult ? "results[" : "args[")
        << (isResult ? i - numInputs : i) << "] = ";
    // An update written in place (loom-in-place-updates) is its argument's
    // device buffer.
    if (isResult && func.getArgAttr(i, "loomrt.in_place"))
      out << "device.args["
          << func.getArgAttrOfType<IntegerAttr>(
                     i, mlir::loom::LoomDialect::getUpdatesAttrName())
                 .getInt()
          << "];\n";
    else
      out << "cuda::deviceAlloc(ctx, "
          << bufferBytes(func.getArgument(i).getType()) << ");\n";
  }
  for (auto [k, buffer] : llvm::enumerate(constantBuffers)) {
    int64_t bytes = bufferBytes(buffer.getType());
    out << "  device.constants[" << k << "] = cuda::deviceAlloc(ctx, " << bytes
        << ");\n"
        << "  cuda::copyToDevice(ctx, device.constants[" << k << "], "
        << constantStorage(name(buffer)) << ", " << bytes << ");\n";
  }
  out << "  return device;\n}\n\n";

  out << "void step(Context &ctx, void *const *args, void *const *results,\n"
      << "          char *hostStepArena) {\n"
      << "  (void)hostStepArena; // the arena is the device's\n"
      << "  (void)args; // a stage may take no arguments\n"
      << "  Device &device = deviceOf(ctx);\n"
      << "  [[maybe_unused]] char *arena = device.arena;\n";
  if (!kernels.empty())
    out << "  cudaStream_t stream = "
           "static_cast<cudaStream_t>(cuda::computeStream(ctx));\n";
  // Parameters and optimizer state whose every update is written in
  // place stay on the device between steps: uploaded when the host's are
  // newer (the first step, a resume), downloaded when a checkpoint
  // follows. The rest (the batch, values a step swaps) move every step.
  SmallVector<bool> resident(numArgs, false);
  for (unsigned i = 0; i < numInputs; ++i)
    resident[i] =
        func.getArgAttr(i, mlir::loom::LoomDialect::getParamAttrName()) ||
        func.getArgAttr(i, mlir::loom::LoomDialect::getStateAttrName());
  for (unsigned i = numInputs; i < numArgs; ++i)
    if (auto u = func.getArgAttrOfType<IntegerAttr>(
            i, mlir::loom::LoomDialect::getUpdatesAttrName())) {
      bool inPlace = static_cast<bool>(func.getArgAttr(i, "loomrt.in_place"));
      resident[i] = inPlace && resident[u.getInt()];
      if (!inPlace)
        resident[u.getInt()] = false;
    }
  // A result resident only if its argument stayed resident.
  for (unsigned i = numInputs; i < numArgs; ++i)
    if (auto u = func.getArgAttrOfType<IntegerAttr>(
            i, mlir::loom::LoomDialect::getUpdatesAttrName()))
      resident[i] = resident[i] && resident[u.getInt()];
  if (llvm::any_of(ArrayRef<bool>(resident).take_front(numInputs),
                   [](bool r) { return r; }))
    out << "  // The inputs to the device: the batch every step, parameters "
           "and\n"
        << "  // state only when the host's are newer.\n"
        << "  const bool upload = hostStateChanged(ctx);\n";
  for (unsigned i = 0; i < numInputs; ++i)
    out << "  " << (resident[i] ? "if (upload) " : "")
        << "cuda::copyToDevice(ctx, device.args[" << i << "], args[" << i
        << "], " << bufferBytes(func.getArgument(i).getType()) << ");\n";
  if (numInputs)
    out << "  deviceStateLoaded(ctx);\n";
  for (auto [k, buffer] : llvm::enumerate(constantBuffers)) {
    const char *type = cppType(elementType(buffer));
    out << "  " << type << " *" << name(buffer) << " = static_cast<" << type
        << " *>(device.constants[" << k << "]);\n";
  }
  out << body
      << "  // The results to the host, once the device reported its "
         "errors.\n"
      << "  cuda::synchronize(ctx);\n";
  if (llvm::any_of(llvm::drop_begin(resident, numInputs),
                   [](bool r) { return r; }))
    out << "  // Updates kept on the device go back only for a checkpoint.\n"
        << "  const bool download = stateWantedOnHost(ctx);\n";
  for (unsigned i = numInputs; i < numArgs; ++i)
    out << "  " << (resident[i] ? "if (download) " : "")
        << "cuda::copyToHost(ctx, results[" << i - numInputs
        << "], device.results[" << i - numInputs << "], "
        << bufferBytes(func.getArgument(i).getType()) << ");\n";
  out << "}\n\n";
}

LogicalResult mlir::loom::emitCuda(ModuleOp module, llvm::raw_ostream &os,
                                   const EmitCudaOptions &options) {
  if (options.blockSize < 32 || options.blockSize > 1024 ||
      options.blockSize % 32 != 0 || options.maxBlocks < 1)
    return module.emitError()
           << "emit-cuda: the block size must be a multiple of 32 in [32, "
              "1024] and the block limit at least 1, got "
           << options.blockSize << " and " << options.maxBlocks;
  return emit::emitModule(
      module, os, {"emit-cuda", "CUDA"}, options.batchSize, printPrologue,
      [&](func::FuncOp func, llvm::raw_ostream &out, int64_t batchSize,
          int64_t stage) {
        return Emitter(func, out, options, batchSize, stage).emit();
      });
}
