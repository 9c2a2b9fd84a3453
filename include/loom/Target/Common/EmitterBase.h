//===- EmitterBase.h - What the C++ and CUDA emitters share -----*- C++ -*-===//
//
// The target-neutral half of printing a planned loomrt step (library
// LoomTargetCommon, lib/Target/Common), shared by the C++ emitter
// (lib/Target/Cpp, --emit-cpp) and the CUDA emitter (lib/Target/Cuda,
// --emit-cuda): naming and C++ text, the function driver (arguments, op
// dispatch, --trace spans), the buffer plan (arena offsets, views,
// constants), the calls into the runtime library (gemm, softmax, norms,
// cross-entropy, gather, scatter-add, communication), the scalar bodies
// of fused kernels, the TensorSpecs and ProgramSpec, and the module driver
// (one program or the pipeline's stages).
//
// A target supplies what differs (EmitterBase's pure virtual hooks): how
// the step function binds its arguments and is printed around the body,
// the generated kernels (loomrt.kernel, reduce, copy, iota: loops on the
// CPU, __global__ functions on CUDA), grid_index, the namespace of the
// library calls (cpu:: or cuda::), and a few scalar spellings.
//
// Not a public API: only lib/Target's libraries include it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_COMMON_EMITTERBASE_H
#define LOOM_TARGET_COMMON_EMITTERBASE_H

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Support/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace loom {
namespace emit {

//===----------------------------------------------------------------------===//
// Naming and C++ text (Text.cpp)
//===----------------------------------------------------------------------===//

int64_t numElements(ArrayRef<int64_t> shape);
/// `name` as a C++ identifier: other characters become `_`, and a leading
/// digit gets a `_` before it.
std::string sanitize(StringRef name);
/// `text` as a C++ string literal.
std::string cppQuote(StringRef text);
/// The C++ type of an element type the backends support, else null.
const char *cppType(Type type);
/// The C++ type generated loops hold a value of `type` in: cppType, but
/// float for bf16 (loom/Runtime/BFloat16.h: exact; loops that copy the
/// bf16 struct are not vectorised).
const char *scalarType(Type type);
/// `buffer[index]` read into a scalar of scalarType(element) (a bf16 or a
/// bool through its bits: loops that load the struct or a bool are not
/// vectorised).
std::string loadElement(StringRef buffer, StringRef index, Type element);
/// The statement writing a scalar `value` to `buffer[index]`. A kernel
/// yields its outputs' element types (the verifier's rule), so a value
/// stored into a bf16 buffer is a bf16 scalar, already a bf16 value (loaded,
/// or rounded where computed): it is stored by its bits, not rounded again.
std::string storeElement(StringRef buffer, StringRef index, Type element,
                         StringRef value);
/// The runtime's DType of a tensor element type, else null.
const char *dtypeName(Type type);
/// The runtime's communicator of a mesh axis (loomrt collectives name the
/// axis of @mesh they run on).
const char *groupEnum(::loom::MeshAxis axis);
/// Index and label types the runtime's library kernels take.
bool isIndexType(Type type);
int64_t elementBytes(Type type);
/// A float literal that reads back as `value` (f32); NaN and infinities
/// through std::numeric_limits.
std::string formatFloat(double value);
/// `offset + i0*s0 + i1*s1 ...` (zero strides left out).
std::string indexExpr(StringRef prefix, ArrayRef<int64_t> strides,
                      int64_t offset = 0);
/// Comma-separated decimal integers.
std::string joinInts(ArrayRef<int64_t> values);
/// `values` without repeats, in order.
SmallVector<Value> distinct(ArrayRef<Value> values);

/// Prints `for` loops over `shape` with index variables `prefix0...`, and
/// closes them. `parallel`: the outermost loop is an OpenMP parallel loop.
/// `independent`: no iteration reads what another writes (an elementwise
/// kernel: every output element is written by its own iteration, which
/// reads an input it overwrites only at that element), which the innermost
/// loop tells the compiler (`#pragma GCC ivdep`): with several outputs
/// and inputs it otherwise gives up vectorising for the pointers' overlap
/// checks.
class LoopNest {
public:
  LoopNest(llvm::raw_ostream &os, ArrayRef<int64_t> shape, StringRef prefix,
           int indent, bool parallel, bool independent = false);
  int bodyIndent() const { return indent + 2 * rank; }
  ~LoopNest();

private:
  llvm::raw_ostream &os;
  int64_t rank;
  int indent;
};

/// The dimensions of a loomrt.reduce: the kept ones (the output's, in
/// order) and the reduced ones, with the input's strides for each and the
/// output's dense strides.
struct ReduceGeometry {
  explicit ReduceGeometry(loomrt::ReduceOp op);
  SmallVector<int64_t> keptSizes, keptStrides;       ///< input strides
  SmallVector<int64_t> reducedSizes, reducedStrides; ///< input strides
  SmallVector<int64_t> outStrides;
};

//===----------------------------------------------------------------------===//
// The emitter of one function
//===----------------------------------------------------------------------===//

/// What names the target in diagnostics and banners.
struct TargetInfo {
  /// The translation ("emit-cpp"): prefixes every diagnostic.
  const char *tool;
  /// "CPU" or "CUDA", in diagnostics about what a backend supports.
  const char *backend;
};

class EmitterBase {
public:
  /// `stage`: the pipeline stage (loom.stage) when the module holds several
  /// stage programs, else -1. `batchSize`: rows of each data input per
  /// step, 0 for the data inputs' common leading dimension.
  EmitterBase(func::FuncOp func, llvm::raw_ostream &out, TargetInfo target,
              int64_t batchSize, int64_t stage)
      : func(func), out(out), os(body), target(target), batchSize(batchSize),
        stage(stage) {}
  virtual ~EmitterBase() = default;

  /// Prints the step function with everything it needs (constants,
  /// kernels) and its TensorSpecs and ProgramSpec (kProgram) to `out`.
  LogicalResult emit();

protected:
  //===--- What a target supplies ---------------------------------------===//

  /// Prints (to `os`, the body) the binding of argument `arg` to the
  /// variable `n`: `args[index]` when an input, `results[index]` when a
  /// result buffer.
  virtual void bindArgument(BlockArgument arg, StringRef n, bool isResult,
                            unsigned index) = 0;
  /// Prints, after the body was emitted, the step function around `body`
  /// and what it uses (`constants`, kernels) to `out`.
  virtual void printStep() = 0;

  virtual LogicalResult emitKernel(loomrt::KernelOp op) = 0;
  virtual LogicalResult emitReduce(loomrt::ReduceOp op) = 0;
  virtual LogicalResult emitIota(loomrt::IotaOp op) = 0;
  virtual LogicalResult emitCopy(loomrt::CopyOp op) = 0;
  virtual LogicalResult emitGridIndex(loomrt::GridIndexOp op) = 0;

  /// The start of a call of the runtime library's `fn` (e.g. "cpu::gemm(",
  /// "cuda::gemm(ctx, "): the qualified name, the parenthesis and, where
  /// the target's function takes the Context first, `ctx, `. `cpuTakesCtx`:
  /// whether the CPU runtime's function takes it (the CUDA ones always do).
  /// `fn` names a kernel of CpuKernels.h/CudaKernels.h or an operation of
  /// Comm.h (allReduceStart, sendStart, recvStart, wait).
  virtual std::string libraryCall(StringRef fn, bool cpuTakesCtx) = 0;

  /// The name of the static array that holds constant `n`'s values.
  virtual std::string constantStorage(StringRef n) { return n.str(); }

  /// Scalar spellings in kernel bodies.
  virtual std::string floatLiteral(double value) { return formatFloat(value); }
  virtual std::string intDivision(StringRef a, StringRef b) {
    return ("loom_divi(ctx, " + a + ", " + b + ")").str();
  }
  /// The float math function `fn` (exp, log, sqrt, rsqrt, tanh, cos, sin,
  /// erf) of `arg`; by default <cmath>'s (1 / sqrt for rsqrt).
  virtual std::string mathCall(StringRef fn, StringRef arg);
  virtual const char *intMax() { return "std::max"; }
  virtual const char *intMin() { return "std::min"; }

  //===--- Shared -------------------------------------------------------===//

  /// Prints the scalar op `op` of a kernel body to `s` as
  /// `const T vN = ...;`, its operands named by `scalars`.
  LogicalResult emitScalar(Operation *op, DenseMap<Value, std::string> &scalars,
                           llvm::raw_ostream &s, int indent);
  /// Prints the body of a reduction's inner loop to `s` at `indent`: load
  /// element `x` (of type `accType`) of the reduced input at
  /// `base + <reduced index> + column` and fold it into `acc` (sum/mean
  /// add; max keeps NaN); a fused reduction computes the element with its
  /// body first. Both targets reduce in this order.
  /// `reducedIndex`, when given, replaces the reduced dimensions' index
  /// (a flat index into trailing reduced dimensions).
  LogicalResult printReduceStep(loomrt::ReduceOp op, const ReduceGeometry &g,
                                StringRef accType, bool isFloat,
                                llvm::raw_ostream &s, int indent,
                                StringRef acc = "acc", StringRef column = "",
                                StringRef reducedIndex = "");
  /// The statement folding `x` into accumulator `acc` (sum/mean add; max
  /// keeps NaN), for a step and for combining partial accumulators.
  static std::string foldStatement(loomrt::ReduceOp op, bool isFloat,
                                   StringRef acc, StringRef x);
  /// The buffers a reduction's function takes: its inputs, then its
  /// output.
  static SmallVector<Value> reduceParams(loomrt::ReduceOp op);
  /// The reduction's result expression from `acc` (mean divides).
  static std::string reduceResult(loomrt::ReduceOp op, const ReduceGeometry &g,
                                  StringRef acc = "acc");
  /// Prints a kernel's body (loads, scalar ops, stores) to `s`: the inputs
  /// are read at `inIndex(k)` for input k, the outputs written at
  /// `outIndex`.
  LogicalResult
  emitKernelBody(loomrt::KernelOp op, llvm::raw_ostream &s, int indent,
                 llvm::function_ref<std::string(unsigned)> inIndex,
                 StringRef outIndex);

  /// A generated kernel as a function of its buffers, shared by identical
  /// kernels (the same loop over same-shaped buffers recurs in every layer
  /// and micro-batch, so the program's code grows with the distinct
  /// kernels, not with the ops). `print` prints the function's body with
  /// the buffers `params` named p0, p1, ... (their names in the step are
  /// restored after); the function is `<prefix> <name>(<leading>const T
  /// *p0, T *p1, ...)`, a buffer const unless in `written`. Returns the
  /// name of an earlier function with the same text, else of a new one,
  /// `k<N>_<hint>`, appended to `kernels`.
  FailureOr<std::string>
  outlineKernel(StringRef hint, StringRef prefix, StringRef leading,
                ArrayRef<Value> params, ArrayRef<Value> written,
                llvm::function_ref<LogicalResult(llvm::raw_ostream &)> print);
  /// While alive, a copy between two buffers names them by their pointers
  /// moved by the copy's offsets (the slices of every micro-batch then
  /// share one function, called on other pointers); `sourceOffset` and
  /// `targetOffset` are what the loop itself still adds (0, or the
  /// offsets of a copy within one buffer).
  class CopyPointers {
  public:
    CopyPointers(EmitterBase &emitter, loomrt::CopyOp copy);
    ~CopyPointers();
    int64_t sourceOffset, targetOffset;

  private:
    EmitterBase &emitter;
    loomrt::CopyOp copy;
    bool moved;
  };

  /// While alive, a kernel's input read from an offset (`in_offsets`) is
  /// named by its pointer moved by the offset, as CopyPointers does (the
  /// micro-batches' loops over their slices of a batch then share one
  /// function); `offset(k)` is what the loop still adds to input `k`'s
  /// index: 0, or the offset of a buffer the kernel also reads or writes
  /// elsewhere, which one name cannot serve.
  class KernelPointers {
  public:
    KernelPointers(EmitterBase &emitter, loomrt::KernelOp kernel);
    ~KernelPointers();
    int64_t offset(unsigned k) const { return offsets[k]; }

  private:
    EmitterBase &emitter;
    SmallVector<int64_t> offsets;
    SmallVector<Value> moved;
  };

  /// `names` of `values`, comma-separated.
  std::string joinNames(ArrayRef<Value> values);

  /// An error at `op`, prefixed with the translation's name.
  InFlightDiagnostic error(Operation *op) {
    return op->emitError() << target.tool << ": ";
  }

  /// The C++ expression of `value` at the current point: an override
  /// (outlineKernel's parameters), else, while an iteration of a rolled
  /// loop is printed, the value's own name when that iteration defined it
  /// and its globalName otherwise, else its name in the step.
  std::string name(Value value);
  /// An expression of `value` that is valid anywhere in the step after its
  /// definition: an argument's or constant's variable, an arena buffer's
  /// address (`arena + offset`), a handle's element of `comm`/`copies`.
  /// Its integers are holes.
  std::string globalName(Value value);
  /// `value`'s name moved by `offset` elements (a hole; none when 0).
  std::string offsetName(Value value, int64_t offset);
  /// An integer of the step that may differ between the iterations of a
  /// rolled loop (arena offsets, tags, handle slots): `value` in decimal,
  /// or, while an iteration is printed for rolling, a marker that
  /// Repeats.cpp turns into a literal or an element of the loop's table.
  std::string hole(int64_t value);
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

  /// Temporary names that win over everything else (see name()).
  DenseMap<Value, std::string> overrides;

  func::FuncOp func;
  /// Where the translation unit goes; the step body is printed into `body`
  /// first (via `os`) because constants and kernels are collected on the
  /// way.
  llvm::raw_ostream &out;
  std::string body;
  llvm::raw_string_ostream os;
  TargetInfo target;
  int64_t batchSize;
  DenseMap<Value, std::string> names;
  /// Definitions of the step's constants (`alignas(64) T name[N] = {...};`).
  std::string constants;
  /// The constant buffers in the order they were defined.
  SmallVector<Value> constantBuffers;
  /// The generated kernels' functions (outlineKernel), in the order the
  /// step first calls them, and the name of each by its text.
  std::string kernels;
  llvm::StringMap<std::string> kernelByText;
  int kernelCounter = 0;
  int counter = 0;
  int64_t alignment = 64;
  int64_t stage;
  /// Whether runs of repeated ops become loops (Repeats.cpp).
  bool rollRepeats = true;

private:
  // Rolling repeated runs of ops into loops (Repeats.cpp).
  /// Prints `ops`, each run of at least two repeats of the same ops on
  /// other buffers (micro-batches of a pipeline schedule) as one loop.
  LogicalResult emitOps(ArrayRef<Operation *> ops);
  /// Prints the first `repeats` runs of `period` ops of `ops` as a loop if
  /// at least two of them print the same but for their holes; returns how
  /// many ops it printed (0: none, the caller prints them one by one).
  FailureOr<size_t> emitLoop(ArrayRef<Operation *> ops, size_t period,
                             size_t repeats);
  /// While an iteration is printed for rolling: the values it defined.
  bool templating = false;
  llvm::DenseSet<Value> iterationValues;
  /// Each handle's element of `comm` (loomrt transfers) or `copies`
  /// (swaps), and how many of each the step has.
  DenseMap<Value, int64_t> handleSlots;
  int64_t numCommHandles = 0, numCopyHandles = 0;
  int loopCounter = 0;

  LogicalResult emitOp(Operation *op);
  /// emitOp, and for ops that compute a span of the --trace timeline
  /// around it.
  LogicalResult emitTimedOp(Operation *op);
  LogicalResult emitSpecs();

  // Buffers (Buffers.cpp).
  LogicalResult emitAlloc(loomrt::AllocOp op);
  LogicalResult emitDealloc(loomrt::DeallocOp op);
  LogicalResult emitView(loomrt::ViewOp op);
  LogicalResult emitConstant(loomrt::ConstantOp op);

  // Calls into the runtime library (Library.cpp).
  LogicalResult emitGemm(loomrt::GemmOp op);
  LogicalResult emitSoftmax(loomrt::SoftmaxOp op);
  LogicalResult emitLayerNorm(loomrt::LayerNormOp op);
  LogicalResult emitNormGrad(loomrt::NormGradOp op);
  LogicalResult emitCrossEntropy(loomrt::CrossEntropyOp op);
  LogicalResult emitGather(loomrt::GatherOp op);
  LogicalResult emitScatterAdd(loomrt::ScatterAddOp op);
  LogicalResult emitAllReduceStart(loomrt::AllReduceStartOp op);
  /// loomrt.send_start or loomrt.recv_start.
  template <typename StartOp>
  LogicalResult emitTransferStart(StartOp op);
  LogicalResult emitWait(loomrt::WaitOp op);
  /// loomrt.swap_out or loomrt.swap_in: the runtime's swapOutStart or
  /// swapInStart (cpu: the copy thread; cuda: the copy stream).
  LogicalResult emitSwap(Operation *op, Value source, Value target,
                         Value handle, bool out);
};

//===----------------------------------------------------------------------===//
// The module driver (Module.cpp)
//===----------------------------------------------------------------------===//

/// Emits one function (`stage` as for EmitterBase) with `batchSize`.
using FunctionEmitter = llvm::function_ref<LogicalResult(
    func::FuncOp func, llvm::raw_ostream &out, int64_t batchSize,
    int64_t stage)>;

/// Prints the module's one planned loomrt function as a program (its
/// `main` calls trainMain), or its pipeline stage programs (each marked
/// loom.stage, one namespace each; `main` calls trainMainStages): a banner
/// naming the translation, `prologue` (includes and helpers, which opens
/// an anonymous namespace), the functions, and `main`.
LogicalResult emitModule(ModuleOp module, llvm::raw_ostream &os,
                         TargetInfo target, int64_t batchSize,
                         llvm::function_ref<void(llvm::raw_ostream &)> prologue,
                         FunctionEmitter emitFunction);

/// loom-translate's --batch-size option, which --emit-cpp and --emit-cuda
/// share (rows of each data input per step, 0 for the data inputs'
/// leading dimension). Registered by the first call; the translations'
/// registration functions call it.
int64_t translateBatchSize();
/// loom-translate's --roll-repeats option (EmitCppOptions::rollRepeats),
/// registered like translateBatchSize.
bool translateRollRepeats();

} // namespace emit
} // namespace loom
} // namespace mlir

#endif // LOOM_TARGET_COMMON_EMITTERBASE_H
