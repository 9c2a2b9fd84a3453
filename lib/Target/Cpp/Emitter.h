//===- Emitter.h - Shared parts of the loomrt to C++ emitter ----*- C++ -*-===//
//
// Internal to lib/Target/Cpp. One Emitter prints one planned loomrt
// function, one op at a time, in program order: buffers become pointers
// (arguments, arena offsets, views, static constants), generated kernels
// become loop nests, library ops become calls into lib/Runtime. Names come
// from the ops (`t12_add_gelu`) and every statement is preceded by a
// comment naming the loom ops it came from, so the code reads like the IR.
//
// The families of ops live in their own files: Kernels.cpp (generated
// loops and the runtime's normalisation and loss kernels), Contraction.cpp
// (gemm), DataMovement.cpp (arena buffers, views, constants, copies, gather
// and scatter_add), Communication.cpp (transfers, waits and grid indices).
// Function.cpp holds the function driver (arguments, the op dispatch, the
// TensorSpecs and ProgramSpec) and the naming and C++ text helpers;
// EmitCpp.cpp the module driver (one program, or the pipeline's stages).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TARGET_CPP_EMITTER_H
#define LOOM_LIB_TARGET_CPP_EMITTER_H

#include "loom/Target/Cpp/EmitCpp.h"

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Support/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace loom {
namespace emit_cpp {

//===----------------------------------------------------------------------===//
// Naming and C++ text (Function.cpp)
//===----------------------------------------------------------------------===//

int64_t numElements(ArrayRef<int64_t> shape);
/// `name` as a C++ identifier: other characters become `_`, and a leading
/// digit gets a `_` before it.
std::string sanitize(StringRef name);
/// `text` as a C++ string literal.
std::string cppQuote(StringRef text);
/// The C++ type of an element type the CPU backend supports, else null.
const char *cppType(Type type);
/// The runtime's DType of a tensor element type, else null.
const char *dtypeName(Type type);
/// The runtime's communicator of a mesh axis (loomrt collectives name the
/// axis of @mesh they run on).
const char *groupEnum(::loom::MeshAxis axis);
/// Index and label types the runtime's library kernels take.
bool isIndexType(Type type);
int64_t elementBytes(Type type);
/// A float literal that reads back as `value` (f32).
std::string formatFloat(double value);
/// `offset + i0*s0 + i1*s1 ...` (zero strides left out).
std::string indexExpr(StringRef prefix, ArrayRef<int64_t> strides,
                      int64_t offset = 0);

/// Prints `for` loops over `shape` with index variables `prefix0...`, and
/// closes them.
class LoopNest {
public:
  LoopNest(llvm::raw_ostream &os, ArrayRef<int64_t> shape, StringRef prefix,
           int indent, bool parallel);
  int bodyIndent() const { return indent + 2 * rank; }
  ~LoopNest();

private:
  llvm::raw_ostream &os;
  int64_t rank;
  int indent;
};

//===----------------------------------------------------------------------===//
// The emitter of one function
//===----------------------------------------------------------------------===//

class Emitter {
public:
  /// `stage`: the pipeline stage (loom.stage) when the module holds several
  /// stage programs, else -1.
  Emitter(func::FuncOp func, llvm::raw_ostream &out,
          const EmitCppOptions &options, int64_t stage = -1)
      : func(func), out(out), os(body), options(options), stage(stage) {}

  /// Prints the step's constants, the step function and its TensorSpecs and
  /// ProgramSpec (kProgram) to `out`.
  LogicalResult emit();

private:
  // The function driver (Function.cpp).
  LogicalResult emitOp(Operation *op);
  LogicalResult emitSpecs();

  /// emitOp, and for ops that compute a span of the --trace timeline
  /// around it (Function.cpp).
  LogicalResult emitTimedOp(Operation *op);

  // Generated loops and the runtime's kernels (Kernels.cpp).
  LogicalResult emitKernel(loomrt::KernelOp op);
  LogicalResult emitScalar(Operation *op, DenseMap<Value, std::string> &names,
                           int indent);
  LogicalResult emitReduce(loomrt::ReduceOp op);
  LogicalResult emitIota(loomrt::IotaOp op);
  LogicalResult emitSoftmax(loomrt::SoftmaxOp op);
  LogicalResult emitLayerNorm(loomrt::LayerNormOp op);
  LogicalResult emitCrossEntropy(loomrt::CrossEntropyOp op);

  // BLAS (Contraction.cpp).
  LogicalResult emitGemm(loomrt::GemmOp op);

  // Buffers and data movement (DataMovement.cpp).
  LogicalResult emitAlloc(loomrt::AllocOp op);
  LogicalResult emitDealloc(loomrt::DeallocOp op);
  LogicalResult emitView(loomrt::ViewOp op);
  LogicalResult emitConstant(loomrt::ConstantOp op);
  LogicalResult emitCopy(loomrt::CopyOp op);
  LogicalResult emitGather(loomrt::GatherOp op);
  LogicalResult emitScatterAdd(loomrt::ScatterAddOp op);

  // Communication (Communication.cpp).
  LogicalResult emitAllReduceStart(loomrt::AllReduceStartOp op);
  /// loomrt.send_start or loomrt.recv_start.
  template <typename StartOp>
  LogicalResult emitTransferStart(StartOp op);
  LogicalResult emitGridIndex(loomrt::GridIndexOp op);
  LogicalResult emitWait(loomrt::WaitOp op);

  std::string name(Value value) { return names.lookup(value); }
  ArrayRef<int64_t> shape(Value value) {
    return cast<MemRefType>(value.getType()).getShape();
  }
  Type elementType(Value value) {
    return cast<MemRefType>(value.getType()).getElementType();
  }
  std::string newName(StringRef hint) {
    return ("t" + Twine(counter++) + "_" + sanitize(hint)).str();
  }
  llvm::raw_ostream &line() { return os.indent(2); }
  /// The comment line naming where the next statement came from.
  void origin(StringRef text) { line() << "// " << text << "\n"; }

  func::FuncOp func;
  /// Where the translation unit goes; the step body is printed into `body`
  /// first (via `os`) because constants are collected on the way.
  llvm::raw_ostream &out;
  std::string body;
  llvm::raw_string_ostream os;
  const EmitCppOptions &options;
  DenseMap<Value, std::string> names;
  std::string constants;
  int counter = 0;
  /// Names the trace clocks (tc0, tc1, ...), apart from `counter` so that
  /// the buffers keep their names.
  int traceCounter = 0;
  int64_t alignment = 64;
  int64_t stage;
};

} // namespace emit_cpp
} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_TARGET_CPP_EMITTER_H
