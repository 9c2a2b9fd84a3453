//===- OnnxImporter.cpp - Import ONNX models into the loom dialect --------===//
//
// Reads a ModelProto with the ONNX project's own protobuf definitions
// (Debian libonnx-dev) and builds one `func.func @main` of loom ops:
//
// * graph inputs become data arguments, initializers become arguments too
//   (floating-point ones `loom.param` unless frozen); their values go to a
//   safetensors file, never into the IR;
// * shape arithmetic on constants (Shape, Gather, Concat, Range, Cast, ...)
//   is evaluated at import time, so static shapes reach the ops that need
//   them (Reshape, Expand, Slice, ...);
// * ONNX's implicit (numpy) broadcasting becomes explicit loom.broadcast;
// * every node's result is checked against the type the model declares for
//   it (value_info, graph outputs), and nodes nothing uses are dropped.
//
// Every error names the node (its name and op type) and what to do, also
// when it comes from a loom op's own shape rule or verifier. Malformed or
// hostile input (wrong sizes, overflowing dimensions, truncated data) is a
// diagnostic, never an abort or an allocation of what the dimensions claim.
//
//===----------------------------------------------------------------------===//

#include "loom/Import/NamePatterns.h"
#include "loom/Import/Onnx.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"
#include "loom/Support/Safetensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include "onnx/onnx_pb.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>

using namespace mlir;
using namespace mlir::loom;

namespace {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

const char *onnxTypeName(int32_t type) {
  switch (type) {
  case onnx::TensorProto::FLOAT: return "float32";
  case onnx::TensorProto::UINT8: return "uint8";
  case onnx::TensorProto::INT8: return "int8";
  case onnx::TensorProto::UINT16: return "uint16";
  case onnx::TensorProto::INT16: return "int16";
  case onnx::TensorProto::INT32: return "int32";
  case onnx::TensorProto::INT64: return "int64";
  case onnx::TensorProto::STRING: return "string";
  case onnx::TensorProto::BOOL: return "bool";
  case onnx::TensorProto::FLOAT16: return "float16";
  case onnx::TensorProto::DOUBLE: return "float64";
  case onnx::TensorProto::UINT32: return "uint32";
  case onnx::TensorProto::UINT64: return "uint64";
  case onnx::TensorProto::COMPLEX64: return "complex64";
  case onnx::TensorProto::COMPLEX128: return "complex128";
  case onnx::TensorProto::BFLOAT16: return "bfloat16";
  default: return "an unknown element type";
  }
}

/// The loom element type for an ONNX one, or null when Loom has none.
Type convertElementType(int32_t type, MLIRContext *ctx) {
  Builder b(ctx);
  switch (type) {
  case onnx::TensorProto::FLOAT: return b.getF32Type();
  case onnx::TensorProto::FLOAT16: return b.getF16Type();
  case onnx::TensorProto::BFLOAT16: return b.getBF16Type();
  case onnx::TensorProto::INT64: return b.getI64Type();
  case onnx::TensorProto::INT32: return b.getI32Type();
  case onnx::TensorProto::BOOL: return b.getI1Type();
  default: return Type();
  }
}

/// The safetensors dtype of a loom element type.
const char *safetensorsDType(Type type) {
  if (type.isF32()) return "F32";
  if (type.isF16()) return "F16";
  if (type.isBF16()) return "BF16";
  if (type.isInteger(64)) return "I64";
  if (type.isInteger(32)) return "I32";
  return "BOOL";
}

int64_t byteWidth(Type type) {
  return type.isInteger(1) ? 1 : (type.getIntOrFloatBitWidth() + 7) / 8;
}

/// The number of elements of `shape`, or nullopt when a size is negative or
/// the count does not fit in int64 (malformed or hostile dimensions).
std::optional<int64_t> numElements(ArrayRef<int64_t> shape) {
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return std::nullopt;
  if (llvm::is_contained(shape, 0))
    return 0;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (n > std::numeric_limits<int64_t>::max() / d)
      return std::nullopt;
    n *= d;
  }
  return n;
}

/// The most elements a tensor that the importer evaluates itself (shape
/// arithmetic, fills, ranges) may have; larger results stay run-time values
/// or are reported.
constexpr int64_t kMaxFoldElements = 1 << 20;

//===----------------------------------------------------------------------===//
// Compile-time tensors
//===----------------------------------------------------------------------===//

/// A tensor whose value the importer knows: ONNX constants and the results
/// of shape arithmetic on them. Floats are kept as doubles, integers and
/// booleans as int64.
struct ConstTensor {
  Type elementType;
  SmallVector<int64_t> shape;
  std::vector<double> f;
  std::vector<int64_t> i;

  bool isFloat() const { return isa<FloatType>(elementType); }
  int64_t size() const {
    return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                           std::multiplies<int64_t>());
  }
  double asDouble(int64_t k) const {
    return isFloat() ? f[k] : static_cast<double>(i[k]);
  }
  int64_t asInt(int64_t k) const {
    return isFloat() ? static_cast<int64_t>(f[k]) : i[k];
  }
  static ConstTensor make(Type elementType, ArrayRef<int64_t> shape) {
    ConstTensor t;
    t.elementType = elementType;
    t.shape.assign(shape.begin(), shape.end());
    if (t.isFloat())
      t.f.assign(t.size(), 0.0);
    else
      t.i.assign(t.size(), 0);
    return t;
  }
};

/// A number as "%g" prints it (0.1, 1e-05).
std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

/// How diagnostics name a node: "node 'fc1'", or by its first output when
/// it has no name.
std::string nodeName(const onnx::NodeProto &node) {
  if (!node.name().empty())
    return "node '" + node.name() + "'";
  if (node.output_size() && !node.output(0).empty())
    return "unnamed node producing '" + node.output(0) + "'";
  return "unnamed node";
}

/// "node 'fc1' (Gemm)"
std::string nodeLabel(const onnx::NodeProto &node) {
  return nodeName(node) + " (" + node.op_type() + ")";
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Index into `t` (numpy-broadcast to `shape`) of the element at flat
/// position `k` of `shape`.
int64_t broadcastIndex(const ConstTensor &t, ArrayRef<int64_t> shape,
                       int64_t k) {
  SmallVector<int64_t> outStrides = stridesOf(shape);
  SmallVector<int64_t> inStrides = stridesOf(t.shape);
  int64_t offset = shape.size() - t.shape.size();
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t coord = (k / outStrides[d]) % std::max<int64_t>(shape[d], 1);
    int64_t td = static_cast<int64_t>(d) - offset;
    if (td >= 0 && t.shape[td] != 1)
      index += coord * inStrides[td];
  }
  return index;
}

/// Numpy broadcasting of two shapes.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    int64_t x = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    int64_t y = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (x == y || y == 1)
      out[k] = x;
    else if (x == 1)
      out[k] = y;
    else
      return failure();
  }
  return out;
}

//===----------------------------------------------------------------------===//
// The importer
//===----------------------------------------------------------------------===//

class Importer;
using Handler = LogicalResult (Importer::*)(const onnx::NodeProto &);

class Importer {
public:
  Importer(MLIRContext *ctx, const onnx::ModelProto &model,
           const OnnxImportOptions &options, StringRef fileName)
      : ctx(ctx), b(ctx), model(model), options(options),
        fileName(fileName.str()) {
    registerHandlers();
  }

  OwningOpRef<ModuleOp> run();

private:
  // --- setup ---------------------------------------------------------------
  void registerHandlers();
  LogicalResult checkModel();
  LogicalResult checkSupportedOps();
  SmallVector<StringRef> sortedHandlerNames() const;
  LogicalResult importInputs(SmallVectorImpl<Type> &argTypes,
                             SmallVectorImpl<DictionaryAttr> &argAttrs,
                             SmallVectorImpl<std::string> &argNames);
  LogicalResult importInitializers(SmallVectorImpl<Type> &argTypes,
                                   SmallVectorImpl<DictionaryAttr> &argAttrs,
                                   SmallVectorImpl<std::string> &argNames);
  bool isTrainable(StringRef name, Type elementType, int64_t rank);
  /// Reads the data of `t` (raw, typed fields or external file), checked
  /// against its shape; `what` names the tensor in diagnostics.
  LogicalResult readTensorBytes(const onnx::TensorProto &t, Type elementType,
                                StringRef what, Location loc,
                                std::vector<uint8_t> &bytes);
  FailureOr<ConstTensor> readConstTensor(const onnx::TensorProto &t,
                                         StringRef what, Location loc);

  // --- values ----------------------------------------------------------------
  Location nodeLoc(const onnx::NodeProto &node);
  InFlightDiagnostic nodeError(const onnx::NodeProto &node);
  bool hasInput(const onnx::NodeProto &node, int k) const {
    return k < node.input_size() && !node.input(k).empty();
  }
  FailureOr<Value> input(const onnx::NodeProto &node, int k);
  const ConstTensor *constInput(const onnx::NodeProto &node, int k) const;
  FailureOr<ConstTensor> requireConst(const onnx::NodeProto &node, int k,
                                      StringRef what);
  RankedTensorType typeOf(Value v) const {
    return cast<RankedTensorType>(v.getType());
  }
  Value materialize(const ConstTensor &t, Location loc);
  void define(const onnx::NodeProto &node, int k, Value v) {
    if (k < node.output_size() && !node.output(k).empty())
      values[node.output(k)] = v;
  }
  void defineConst(const onnx::NodeProto &node, int k, ConstTensor t) {
    if (k < node.output_size() && !node.output(k).empty())
      consts[node.output(k)] = std::move(t);
  }
  LogicalResult requireUnused(const onnx::NodeProto &node, int k,
                              StringRef what);
  /// Checks the imported type of output `name` of `node` against the type
  /// the model declares for it, if any.
  LogicalResult
  checkDeclaredType(const onnx::NodeProto &node, StringRef name,
                    const llvm::StringMap<const onnx::TypeProto *> &declared);

  // --- attributes --------------------------------------------------------------
  const onnx::AttributeProto *attr(const onnx::NodeProto &node,
                                   StringRef name) const {
    for (const auto &a : node.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  int64_t intAttr(const onnx::NodeProto &node, StringRef name,
                  int64_t defaultValue) const {
    const auto *a = attr(node, name);
    return a ? a->i() : defaultValue;
  }
  float floatAttr(const onnx::NodeProto &node, StringRef name,
                  float defaultValue) const {
    const auto *a = attr(node, name);
    return a ? a->f() : defaultValue;
  }
  std::string stringAttr(const onnx::NodeProto &node, StringRef name,
                         StringRef defaultValue) const {
    const auto *a = attr(node, name);
    return a ? a->s() : defaultValue.str();
  }
  std::optional<SmallVector<int64_t>> intsAttr(const onnx::NodeProto &node,
                                               StringRef name) const {
    const auto *a = attr(node, name);
    if (!a)
      return std::nullopt;
    return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
  }
  /// Normalises an axis in [-rank, rank) to [0, rank); fails with a node
  /// error otherwise.
  FailureOr<int64_t> normalizeAxis(const onnx::NodeProto &node, int64_t axis,
                                   int64_t rank, StringRef what = "axis");

  // --- building --------------------------------------------------------------
  /// Creates an op that infers its result types. The op's shape rule runs
  /// first: operands it rejects become a diagnostic (and failure) instead of
  /// the fatal error of the inferring builders.
  template <typename OpTy, typename... Args>
  FailureOr<OpTy> create(Location loc, Args &&...args) {
    OperationState state(loc, OpTy::getOperationName());
    OpTy::build(b, state, TypeRange(), std::forward<Args>(args)...);
    SmallVector<Type> types;
    if (failed(OpTy::inferReturnTypes(
            ctx, loc, state.operands, state.attributes.getDictionary(ctx),
            state.getRawProperties(), state.regions, types)))
      return failure();
    state.addTypes(types);
    return cast<OpTy>(b.create(state));
  }
  /// Defines output `k` of `node` as the single result of `op`.
  template <typename OpTy>
  LogicalResult defineResult(const onnx::NodeProto &node, int k,
                             FailureOr<OpTy> op) {
    if (failed(op))
      return failure();
    define(node, k, (*op)->getResult(0));
    return success();
  }
  Value broadcastTo(Value v, ArrayRef<int64_t> shape, Location loc);
  /// Broadcasts `v` (numpy rules, one direction) to `shape`, or reports that
  /// `what` cannot broadcast.
  FailureOr<Value> broadcastOneWay(const onnx::NodeProto &node, Value v,
                                   ArrayRef<int64_t> shape, StringRef what);
  FailureOr<std::pair<Value, Value>>
  broadcastPair(const onnx::NodeProto &node, Value a, Value b);
  Value reshape(Value v, ArrayRef<int64_t> shape, Location loc);
  Value splat(double value, RankedTensorType type, Location loc);

  // --- handlers -----------------------------------------------------------------
  template <typename OpTy>
  LogicalResult importUnary(const onnx::NodeProto &node);
  template <typename OpTy>
  LogicalResult importBinary(const onnx::NodeProto &node);
  LogicalResult importCompare(const onnx::NodeProto &node,
                              ComparisonDirection direction);
  LogicalResult importEqual(const onnx::NodeProto &n) {
    return importCompare(n, ComparisonDirection::eq);
  }
  LogicalResult importLess(const onnx::NodeProto &n) {
    return importCompare(n, ComparisonDirection::lt);
  }
  LogicalResult importLessOrEqual(const onnx::NodeProto &n) {
    return importCompare(n, ComparisonDirection::le);
  }
  LogicalResult importGreater(const onnx::NodeProto &n) {
    return importCompare(n, ComparisonDirection::gt);
  }
  LogicalResult importGreaterOrEqual(const onnx::NodeProto &n) {
    return importCompare(n, ComparisonDirection::ge);
  }
  LogicalResult importNot(const onnx::NodeProto &node);
  template <typename OpTy>
  LogicalResult importVariadic(const onnx::NodeProto &node);
  LogicalResult importReciprocal(const onnx::NodeProto &node);
  LogicalResult importGelu(const onnx::NodeProto &node);
  LogicalResult importSoftmax(const onnx::NodeProto &node);
  LogicalResult importLogSoftmax(const onnx::NodeProto &node);
  LogicalResult importLayerNorm(const onnx::NodeProto &node);
  LogicalResult importMatMul(const onnx::NodeProto &node);
  LogicalResult importGemm(const onnx::NodeProto &node);
  LogicalResult importReshape(const onnx::NodeProto &node);
  LogicalResult importTranspose(const onnx::NodeProto &node);
  LogicalResult importUnsqueeze(const onnx::NodeProto &node);
  LogicalResult importSqueeze(const onnx::NodeProto &node);
  LogicalResult importFlatten(const onnx::NodeProto &node);
  LogicalResult importExpand(const onnx::NodeProto &node);
  LogicalResult importConcat(const onnx::NodeProto &node);
  LogicalResult importSplit(const onnx::NodeProto &node);
  LogicalResult importSlice(const onnx::NodeProto &node);
  LogicalResult importGather(const onnx::NodeProto &node);
  LogicalResult importShape(const onnx::NodeProto &node);
  LogicalResult importConstant(const onnx::NodeProto &node);
  LogicalResult importConstantOfShape(const onnx::NodeProto &node);
  LogicalResult importRange(const onnx::NodeProto &node);
  LogicalResult importCast(const onnx::NodeProto &node);
  LogicalResult importWhere(const onnx::NodeProto &node);
  LogicalResult importIdentity(const onnx::NodeProto &node);
  LogicalResult importDropout(const onnx::NodeProto &node);
  template <typename OpTy>
  LogicalResult importReduce(const onnx::NodeProto &node);
  LogicalResult importSoftmaxCrossEntropy(const onnx::NodeProto &node);
  LogicalResult importNllLoss(const onnx::NodeProto &node);
  LogicalResult importCrossEntropy(const onnx::NodeProto &node, Value scores,
                                   Value labels);

  // --- constant folding of shape arithmetic ---------------------------------
  /// Evaluates `node` at import time when all its inputs are known and the
  /// op is one of the shape-arithmetic ops. Returns true when it did.
  FailureOr<bool> tryFold(const onnx::NodeProto &node);

  MLIRContext *ctx;
  OpBuilder b;
  const onnx::ModelProto &model;
  const OnnxImportOptions &options;
  std::string fileName;
  int64_t opset = 0;
  llvm::StringMap<Handler> handlers;
  llvm::StringMap<Value> values;
  llvm::StringMap<ConstTensor> consts;
  llvm::StringMap<const onnx::NodeProto *> producers;
  llvm::StringMap<unsigned> uses;
  std::vector<::loom::safetensors::Tensor> weights;
};

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

void Importer::registerHandlers() {
  handlers = {
      {"Add", &Importer::importBinary<AddOp>},
      {"Sub", &Importer::importBinary<SubOp>},
      {"Mul", &Importer::importBinary<MulOp>},
      {"Div", &Importer::importBinary<DivOp>},
      {"Pow", &Importer::importBinary<PowOp>},
      {"Max", &Importer::importVariadic<MaxOp>},
      {"Min", &Importer::importVariadic<MinOp>},
      {"Neg", &Importer::importUnary<NegOp>},
      {"Abs", &Importer::importUnary<AbsOp>},
      {"Exp", &Importer::importUnary<ExpOp>},
      {"Log", &Importer::importUnary<LogOp>},
      {"Sqrt", &Importer::importUnary<SqrtOp>},
      {"Tanh", &Importer::importUnary<TanhOp>},
      {"Sigmoid", &Importer::importUnary<SigmoidOp>},
      {"Erf", &Importer::importUnary<ErfOp>},
      {"Relu", &Importer::importUnary<ReluOp>},
      {"Reciprocal", &Importer::importReciprocal},
      {"Gelu", &Importer::importGelu},
      {"Equal", &Importer::importEqual},
      {"Less", &Importer::importLess},
      {"LessOrEqual", &Importer::importLessOrEqual},
      {"Greater", &Importer::importGreater},
      {"GreaterOrEqual", &Importer::importGreaterOrEqual},
      {"Not", &Importer::importNot},
      {"Where", &Importer::importWhere},
      {"Cast", &Importer::importCast},
      {"Softmax", &Importer::importSoftmax},
      {"LogSoftmax", &Importer::importLogSoftmax},
      {"LayerNormalization", &Importer::importLayerNorm},
      {"MatMul", &Importer::importMatMul},
      {"Gemm", &Importer::importGemm},
      {"Reshape", &Importer::importReshape},
      {"Transpose", &Importer::importTranspose},
      {"Unsqueeze", &Importer::importUnsqueeze},
      {"Squeeze", &Importer::importSqueeze},
      {"Flatten", &Importer::importFlatten},
      {"Expand", &Importer::importExpand},
      {"Concat", &Importer::importConcat},
      {"Split", &Importer::importSplit},
      {"Slice", &Importer::importSlice},
      {"Gather", &Importer::importGather},
      {"Shape", &Importer::importShape},
      {"Constant", &Importer::importConstant},
      {"ConstantOfShape", &Importer::importConstantOfShape},
      {"Range", &Importer::importRange},
      {"Identity", &Importer::importIdentity},
      {"Dropout", &Importer::importDropout},
      {"ReduceSum", &Importer::importReduce<ReduceSumOp>},
      {"ReduceMean", &Importer::importReduce<ReduceMeanOp>},
      {"ReduceMax", &Importer::importReduce<ReduceMaxOp>},
      {"SoftmaxCrossEntropyLoss", &Importer::importSoftmaxCrossEntropy},
      {"NegativeLogLikelihoodLoss", &Importer::importNllLoss},
  };
}

LogicalResult Importer::checkModel() {
  Location loc = FileLineColLoc::get(ctx, fileName, 0, 0);
  if (!model.has_graph() || model.ir_version() <= 0)
    return emitError(loc) << "'" << fileName
                          << "' is not an ONNX model: no graph or IR version "
                             "(empty, truncated or another format?)";
  bool found = false;
  for (const auto &entry : model.opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") {
      opset = entry.version();
      found = true;
    }
  }
  if (!found)
    return emitError(loc) << "the model imports no default-domain ONNX opset";
  if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset)
    return emitError(loc) << "ONNX opset " << opset
                          << " is not supported (supported: "
                          << kMinOnnxOpset << " to " << kMaxOnnxOpset
                          << "); convert the model with "
                             "onnx.version_converter.convert_version";
  return success();
}

SmallVector<StringRef> Importer::sortedHandlerNames() const {
  SmallVector<StringRef> names;
  for (const auto &entry : handlers)
    names.push_back(entry.first());
  llvm::sort(names);
  return names;
}

LogicalResult Importer::checkSupportedOps() {
  // Every unsupported op type, with the first node that uses it.
  SmallVector<std::pair<std::string, std::string>> unsupported;
  llvm::StringSet<> seen;
  for (const auto &node : model.graph().node()) {
    std::string type = node.domain().empty() || node.domain() == "ai.onnx"
                           ? node.op_type()
                           : node.domain() + "." + node.op_type();
    if (handlers.count(type) || seen.contains(type))
      continue;
    seen.insert(type);
    unsupported.push_back({type, nodeName(node)});
  }
  if (unsupported.empty())
    return success();
  InFlightDiagnostic diag =
      emitError(FileLineColLoc::get(ctx, fileName, 0, 0))
      << "the model uses " << unsupported.size()
      << " unsupported ONNX op type" << (unsupported.size() > 1 ? "s" : "")
      << ": ";
  llvm::interleaveComma(unsupported, diag, [&](const auto &entry) {
    diag << entry.first << " (first at " << entry.second << ")";
  });
  diag << "; Loom imports "
       << llvm::join(llvm::map_range(sortedHandlerNames(),
                                     [](StringRef n) { return n.str(); }),
                     ", ");
  return diag;
}

Location Importer::nodeLoc(const onnx::NodeProto &node) {
  std::string name =
      node.name().empty() ? node.op_type() + "(" +
                                (node.output_size() ? node.output(0) : "") +
                                ")"
                          : node.name();
  return NameLoc::get(StringAttr::get(ctx, name),
                      FileLineColLoc::get(ctx, fileName, 0, 0));
}

InFlightDiagnostic Importer::nodeError(const onnx::NodeProto &node) {
  return emitError(nodeLoc(node)) << nodeLabel(node) << ": ";
}

LogicalResult Importer::requireUnused(const onnx::NodeProto &node, int k,
                                      StringRef what) {
  if (k < node.output_size() && !node.output(k).empty() &&
      uses.lookup(node.output(k)) > 0)
    return nodeError(node) << "output " << k << " (" << what
                           << ") is used, which Loom does not support";
  return success();
}

/// The ONNX name of a loom element type ("float32").
static const char *onnxNameOf(Type type) {
  if (type.isF32()) return "float32";
  if (type.isF16()) return "float16";
  if (type.isBF16()) return "bfloat16";
  if (type.isInteger(64)) return "int64";
  if (type.isInteger(32)) return "int32";
  return "bool";
}

LogicalResult Importer::checkDeclaredType(
    const onnx::NodeProto &node, StringRef name,
    const llvm::StringMap<const onnx::TypeProto *> &declared) {
  const onnx::TypeProto *type = declared.lookup(name);
  if (!type || !type->has_tensor_type())
    return success();
  Type elementType;
  SmallVector<int64_t> shape;
  if (Value v = values.lookup(name)) {
    elementType = typeOf(v).getElementType();
    shape.assign(typeOf(v).getShape().begin(), typeOf(v).getShape().end());
  } else if (auto c = consts.find(name); c != consts.end()) {
    elementType = c->second.elementType;
    shape = c->second.shape;
  } else {
    return success(); // an output Loom does not produce (and nothing uses)
  }
  const auto &tt = type->tensor_type();
  bool typeOk = tt.elem_type() == onnx::TensorProto::UNDEFINED ||
                convertElementType(tt.elem_type(), ctx) == elementType;
  bool shapeOk = !tt.has_shape() || tt.shape().dim_size() ==
                                        static_cast<int>(shape.size());
  SmallVector<std::string> want;
  if (tt.has_shape()) {
    for (auto [k, dim] : llvm::enumerate(tt.shape().dim())) {
      want.push_back(dim.has_dim_value()
                         ? std::to_string(dim.dim_value())
                         : dim.dim_param().empty() ? "?" : dim.dim_param());
      if (shapeOk && dim.has_dim_value() && dim.dim_value() != shape[k])
        shapeOk = false;
    }
  }
  if (typeOk && shapeOk)
    return success();
  return nodeError(node) << "output '" << name << "' is imported as "
                         << formatDims(shape) << " " << onnxNameOf(elementType)
                         << " but the model declares "
                         << (tt.has_shape() ? "[" + llvm::join(want, ", ") + "]"
                                            : std::string("a tensor"))
                         << " " << onnxTypeName(tt.elem_type())
                         << "; the model is inconsistent (find where with "
                            "onnx.shape_inference.infer_shapes(model, "
                            "strict_mode=True)) or this is an importer bug";
}

FailureOr<int64_t> Importer::normalizeAxis(const onnx::NodeProto &node,
                                           int64_t axis, int64_t rank,
                                           StringRef what) {
  if (axis < -rank || axis >= rank) {
    nodeError(node) << what << " " << axis << " is out of range for rank "
                    << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Reading tensors
//===----------------------------------------------------------------------===//

/// Parses a non-negative decimal integer of an external-data entry.
static std::optional<int64_t> parseExternalInt(StringRef text) {
  int64_t v;
  if (text.getAsInteger(10, v) || v < 0)
    return std::nullopt;
  return v;
}

LogicalResult Importer::readTensorBytes(const onnx::TensorProto &t,
                                        Type elementType, StringRef what,
                                        Location loc,
                                        std::vector<uint8_t> &bytes) {
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  std::optional<int64_t> count = numElements(shape);
  int64_t width = byteWidth(elementType);
  if (!count || *count > std::numeric_limits<int64_t>::max() / width)
    return emitError(loc) << what << " has shape " << formatDims(shape)
                          << ", which "
                          << (count ? "is too large"
                                    : "has a negative or too large size")
                          << " (corrupt model?)";
  int64_t want = *count * width;
  std::string need = formatDims(shape) + " of " +
                     onnxTypeName(t.data_type()) + " needs " +
                     std::to_string(want) + " bytes";
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    std::optional<int64_t> offset = 0, length;
    for (const auto &kv : t.external_data()) {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        offset = parseExternalInt(kv.value());
      else if (kv.key() == "length")
        length = parseExternalInt(kv.value());
      if (!offset || (kv.key() == "length" && !length))
        return emitError(loc) << what << " has external data " << kv.key()
                              << " '" << kv.value()
                              << "', which is not a non-negative integer";
    }
    if (location.empty())
      return emitError(loc) << what << " is stored externally but names no "
                               "data file (no 'location' entry)";
    // Like onnx.load: data files live in the model's directory tree.
    if (llvm::sys::path::is_absolute(location) ||
        llvm::is_contained(llvm::make_range(llvm::sys::path::begin(location),
                                            llvm::sys::path::end(location)),
                           ".."))
      return emitError(loc) << what << " names external data file '"
                            << location
                            << "', which is not a relative path inside the "
                               "model's directory";
    SmallString<256> path(options.modelDir);
    llvm::sys::path::append(path, location);
    uint64_t fileSize = 0;
    if (llvm::sys::fs::file_size(path, fileSize))
      return emitError(loc) << "cannot open external data file '" << path
                            << "' of " << what
                            << " (it must be next to the model, as "
                               "onnx.save_model writes it)";
    if (length && *length != want)
      return emitError(loc) << what << " has " << *length
                            << " bytes of external data but its shape "
                            << need;
    if (static_cast<uint64_t>(*offset) > fileSize ||
        static_cast<uint64_t>(want) > fileSize - *offset)
      return emitError(loc) << "external data file '" << path << "' ("
                            << fileSize << " bytes) ends before the data of "
                            << what << " (offset " << *offset << ", "
                            << want << " bytes)";
    std::ifstream file(std::string(path), std::ios::binary);
    bytes.resize(want);
    if (file)
      file.seekg(*offset);
    if (file)
      file.read(reinterpret_cast<char *>(bytes.data()), want);
    if (!file || file.gcount() != want)
      return emitError(loc) << "cannot read " << want << " bytes at offset "
                            << *offset << " of external data file '" << path
                            << "' for " << what;
    return success();
  }
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != want)
      return emitError(loc) << what << " has " << t.raw_data().size()
                            << " bytes of raw data but its shape " << need
                            << " (truncated or corrupt model?)";
    bytes.assign(t.raw_data().begin(), t.raw_data().end());
    return success();
  }
  auto copy = [&](const auto &field, auto convert) -> LogicalResult {
    if (field.size() != *count)
      return emitError(loc) << what << " has " << field.size()
                            << " values but its shape " << formatDims(shape)
                            << " needs " << *count
                            << " (truncated or corrupt model?)";
    bytes.resize(want);
    for (int64_t k = 0; k < *count; ++k) {
      auto v = convert(field.Get(k));
      std::memcpy(bytes.data() + k * width, &v, width);
    }
    return success();
  };
  if (elementType.isF32())
    return copy(t.float_data(), [](float v) { return v; });
  if (elementType.isInteger(64))
    return copy(t.int64_data(), [](int64_t v) { return v; });
  if (elementType.isInteger(32))
    return copy(t.int32_data(), [](int32_t v) { return v; });
  if (elementType.isInteger(1))
    return copy(t.int32_data(), [](int32_t v) { return uint8_t(v != 0); });
  // float16 / bfloat16 are stored as their bit patterns in int32_data.
  return copy(t.int32_data(), [](int32_t v) { return uint16_t(v); });
}

/// Decodes little-endian element `k` of `bytes`.
double decodeFloat(const std::vector<uint8_t> &bytes, Type type, int64_t k) {
  if (type.isF32()) {
    float v;
    std::memcpy(&v, bytes.data() + 4 * k, 4);
    return v;
  }
  uint16_t bits;
  std::memcpy(&bits, bytes.data() + 2 * k, 2);
  const llvm::fltSemantics &sem = type.isF16() ? APFloat::IEEEhalf()
                                               : APFloat::BFloat();
  return APFloat(sem, APInt(16, bits)).convertToDouble();
}

FailureOr<ConstTensor> Importer::readConstTensor(const onnx::TensorProto &t,
                                                 StringRef what,
                                                 Location loc) {
  Type type = convertElementType(t.data_type(), ctx);
  if (!type) {
    emitError(loc) << what << " has element type "
                   << onnxTypeName(t.data_type())
                   << ", which Loom does not support (supported: float32, "
                      "float16, bfloat16, int64, int32, bool)";
    return failure();
  }
  // Reading validates the shape against the data actually present, so the
  // tensor below is never larger than the model file.
  std::vector<uint8_t> bytes;
  if (failed(readTensorBytes(t, type, what, loc, bytes)))
    return failure();
  ConstTensor c = ConstTensor::make(
      type, SmallVector<int64_t>(t.dims().begin(), t.dims().end()));
  for (int64_t k = 0, e = c.size(); k < e; ++k) {
    if (c.isFloat()) {
      c.f[k] = decodeFloat(bytes, type, k);
    } else if (type.isInteger(64)) {
      std::memcpy(&c.i[k], bytes.data() + 8 * k, 8);
    } else if (type.isInteger(32)) {
      int32_t v;
      std::memcpy(&v, bytes.data() + 4 * k, 4);
      c.i[k] = v;
    } else {
      c.i[k] = bytes[k] != 0;
    }
  }
  return c;
}

//===----------------------------------------------------------------------===//
// Inputs and initializers
//===----------------------------------------------------------------------===//

LogicalResult
Importer::importInputs(SmallVectorImpl<Type> &argTypes,
                       SmallVectorImpl<DictionaryAttr> &argAttrs,
                       SmallVectorImpl<std::string> &argNames) {
  llvm::StringSet<> initializers;
  for (const auto &init : model.graph().initializer())
    initializers.insert(init.name());
  // A name that is not an input is most likely a typo: say so first.
  SmallVector<StringRef> unknown;
  for (const auto &entry : options.inputShapes)
    if (!llvm::any_of(model.graph().input(), [&](const auto &in) {
          return in.name() == entry.first() &&
                 !initializers.contains(in.name());
        }))
      unknown.push_back(entry.first());
  if (!unknown.empty()) {
    llvm::sort(unknown);
    SmallVector<std::string> inputs;
    for (const auto &in : model.graph().input())
      if (!initializers.contains(in.name()))
        inputs.push_back("'" + in.name() + "'");
    return emitError(FileLineColLoc::get(ctx, fileName, 0, 0))
           << "--input-shape names '" << llvm::join(unknown, "', '")
           << "', which "
           << (unknown.size() > 1 ? "are not graph inputs" : "is not a graph input")
           << " (the graph inputs are: "
           << (inputs.empty() ? std::string("none") : llvm::join(inputs, ", "))
           << ")";
  }
  for (const auto &in : model.graph().input()) {
    // Older exporters list initializers as graph inputs too.
    if (initializers.contains(in.name()))
      continue;
    Location loc = NameLoc::get(StringAttr::get(ctx, in.name()),
                                FileLineColLoc::get(ctx, fileName, 0, 0));
    if (in.name().empty())
      return emitError(loc) << "a graph input has no name";
    if (values.count(in.name()))
      return emitError(loc) << "graph input '" << in.name()
                            << "' is declared twice";
    if (!in.type().has_tensor_type())
      return emitError(loc) << "graph input '" << in.name()
                            << "' is not a tensor (sequences, maps and "
                               "optionals are not supported)";
    const auto &tt = in.type().tensor_type();
    Type elementType = convertElementType(tt.elem_type(), ctx);
    if (!elementType)
      return emitError(loc) << "graph input '" << in.name()
                            << "' has element type "
                            << onnxTypeName(tt.elem_type())
                            << ", which Loom does not support (supported: "
                               "float32, float16, bfloat16, int64, int32, "
                               "bool); cast it in the model before export";
    auto binding = options.inputShapes.find(in.name());
    bool hasBinding = binding != options.inputShapes.end();
    if (!tt.has_shape() && !hasBinding)
      return emitError(loc) << "graph input '" << in.name()
                            << "' has no shape (not even a rank); give it "
                               "one with --input-shape "
                            << in.name() << "=DxDx...";
    SmallVector<int64_t> shape;
    if (tt.has_shape()) {
      for (const auto &dim : tt.shape().dim()) {
        if (dim.has_dim_value() && dim.dim_value() < 0)
          return emitError(loc) << "graph input '" << in.name()
                                << "' has negative dimension size "
                                << dim.dim_value();
        shape.push_back(dim.has_dim_value() ? dim.dim_value()
                                            : ShapedType::kDynamic);
      }
    }
    if (hasBinding) {
      SmallVector<int64_t> want(binding->second.begin(),
                                binding->second.end());
      FailureOr<SmallVector<int64_t>> met =
          tt.has_shape() ? meetShapes(shape, want)
                         : FailureOr<SmallVector<int64_t>>(want);
      if (failed(met) || llvm::any_of(want, [](int64_t d) { return d < 0; }))
        return emitError(loc)
               << "--input-shape " << in.name() << "="
               << llvm::join(llvm::map_range(want,
                                             [](int64_t d) {
                                               return std::to_string(d);
                                             }),
                             "x")
               << " does not match its declared shape " << formatDims(shape)
               << " (same rank; only dynamic dimensions may be bound)";
      shape = *met;
    }
    for (auto [d, size] : llvm::enumerate(shape)) {
      if (!ShapedType::isDynamic(size))
        continue;
      std::string param = tt.shape().dim(d).dim_param();
      std::string example;
      for (auto [k, s] : llvm::enumerate(shape))
        example += (k ? "x" : "") +
                   (ShapedType::isDynamic(s) ? std::string("N")
                                             : std::to_string(s));
      return emitError(loc)
             << "graph input '" << in.name() << "' has dynamic dimension "
             << d << (param.empty() ? "" : " ('" + param + "')")
             << "; bind it with --input-shape " << in.name() << "="
             << example << " (the full shape, N replaced by a size)";
    }
    values[in.name()] = Value(); // defined once the function exists
    argTypes.push_back(RankedTensorType::get(shape, elementType));
    argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
        LoomDialect::getNameAttrName(), b.getStringAttr(in.name()))));
    argNames.push_back(in.name());
  }
  return success();
}

bool Importer::isTrainable(StringRef name, Type elementType, int64_t rank) {
  // Default: floating-point tensors of rank >= 1. Exporters store scalar
  // constants (1/sqrt(d), 0.5, ...) as rank-0 initializers; they are not
  // weights.
  bool trainable = isa<FloatType>(elementType) && rank >= 1;
  if (mlir::loom::matchesNameOrPattern(name, options.frozen))
    trainable = false;
  else if (!options.trainable.empty())
    trainable = isa<FloatType>(elementType) &&
                mlir::loom::matchesNameOrPattern(name, options.trainable);
  return trainable;
}

LogicalResult
Importer::importInitializers(SmallVectorImpl<Type> &argTypes,
                             SmallVectorImpl<DictionaryAttr> &argAttrs,
                             SmallVectorImpl<std::string> &argNames) {
  Location fileLoc = FileLineColLoc::get(ctx, fileName, 0, 0);
  for (auto [flag, patterns] :
       {std::make_pair("--trainable", &options.trainable),
        std::make_pair("--frozen", &options.frozen)}) {
    for (const std::string &p : *patterns) {
      std::string error;
      if (!llvm::Regex("^(" + p + ")$").isValid(error))
        return emitError(fileLoc)
               << "invalid " << flag << " pattern '" << p << "': " << error;
    }
  }
  llvm::StringSet<> initNames;
  for (const auto &init : model.graph().initializer()) {
    Location loc = NameLoc::get(StringAttr::get(ctx, init.name()), fileLoc);
    std::string what = "initializer '" + init.name() + "'";
    if (init.name().empty())
      return emitError(loc) << "an initializer has no name";
    if (!initNames.insert(init.name()).second)
      return emitError(loc) << what << " is defined twice";
    if (init.has_data_location() &&
        init.data_location() == onnx::TensorProto::EXTERNAL &&
        init.has_raw_data())
      return emitError(loc) << what
                            << " has both raw data and external data";
    Type elementType = convertElementType(init.data_type(), ctx);
    if (!elementType)
      return emitError(loc) << what << " has element type "
                            << onnxTypeName(init.data_type())
                            << ", which Loom does not support (supported: "
                               "float32, float16, bfloat16, int64, int32, "
                               "bool); convert it before export";
    SmallVector<int64_t> shape(init.dims().begin(), init.dims().end());
    std::optional<int64_t> count = numElements(shape);
    if (!count)
      return emitError(loc) << what << " has shape " << formatDims(shape)
                            << ", which has a negative or too large size "
                               "(corrupt model?)";
    bool trainable = isTrainable(init.name(), elementType, shape.size());
    if (!isa<FloatType>(elementType) &&
        llvm::is_contained(options.trainable, init.name()))
      return emitError(loc) << what << " has element type "
                            << onnxTypeName(init.data_type())
                            << " and cannot be trained (--trainable "
                               "names only floating-point initializers)";
    if (!isa<FloatType>(elementType) || (!trainable && *count <= 1)) {
      // Integer and boolean initializers are program constants (shapes,
      // indices, masks): they are needed to import the graph at all. So are
      // non-trainable float scalars.
      FailureOr<ConstTensor> c = readConstTensor(init, what, loc);
      if (failed(c))
        return failure();
      consts[init.name()] = std::move(*c);
      continue;
    }
    auto type = RankedTensorType::get(shape, elementType);
    SmallVector<NamedAttribute> attrs = {b.getNamedAttr(
        LoomDialect::getNameAttrName(), b.getStringAttr(init.name()))};
    if (trainable)
      attrs.push_back(
          b.getNamedAttr(LoomDialect::getParamAttrName(), b.getUnitAttr()));
    values[init.name()] = Value();
    argTypes.push_back(type);
    argAttrs.push_back(b.getDictionaryAttr(attrs));
    argNames.push_back(init.name());
    if (options.noWeights)
      continue;
    ::loom::safetensors::Tensor t;
    t.name = init.name();
    t.dtype = safetensorsDType(elementType);
    t.shape.assign(shape.begin(), shape.end());
    if (failed(readTensorBytes(init, elementType, what, loc, t.data)))
      return failure();
    weights.push_back(std::move(t));
  }
  // A pattern that selects nothing is most likely a typo.
  for (auto [flag, patterns] :
       {std::make_pair("--trainable", &options.trainable),
        std::make_pair("--frozen", &options.frozen)}) {
    for (const std::string &p : *patterns)
      if (llvm::none_of(model.graph().initializer(), [&](const auto &init) {
            return mlir::loom::matchesNameOrPattern(init.name(), p);
          }))
        emitWarning(fileLoc) << flag << " '" << p
                             << "' matches no initializer";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

Value Importer::materialize(const ConstTensor &t, Location loc) {
  auto type = RankedTensorType::get(t.shape, t.elementType);
  DenseElementsAttr attr;
  if (t.isFloat()) {
    const llvm::fltSemantics &sem =
        cast<FloatType>(t.elementType).getFloatSemantics();
    SmallVector<APFloat> elems;
    for (double v : t.f) {
      APFloat x(v);
      bool lost;
      x.convert(sem, APFloat::rmNearestTiesToEven, &lost);
      elems.push_back(x);
    }
    attr = DenseElementsAttr::get(type, elems);
  } else {
    unsigned width = t.elementType.getIntOrFloatBitWidth();
    SmallVector<APInt> elems;
    for (int64_t v : t.i)
      elems.push_back(APInt(width, static_cast<uint64_t>(v), /*isSigned=*/true,
                            /*implicitTrunc=*/true));
    attr = DenseElementsAttr::get(type, elems);
  }
  return ConstantOp::create(b, loc, attr);
}

FailureOr<Value> Importer::input(const onnx::NodeProto &node, int k) {
  if (!hasInput(node, k)) {
    nodeError(node) << "input " << k << " is missing";
    return failure();
  }
  const std::string &name = node.input(k);
  auto it = values.find(name);
  if (it != values.end() && it->second)
    return it->second;
  auto c = consts.find(name);
  if (c != consts.end()) {
    Value v = materialize(c->second, nodeLoc(node));
    values[name] = v;
    return v;
  }
  nodeError(node) << "input '" << name
                  << "' is not produced by any earlier node, initializer or "
                     "graph input (is the graph topologically sorted?)";
  return failure();
}

const ConstTensor *Importer::constInput(const onnx::NodeProto &node,
                                        int k) const {
  if (!hasInput(node, k))
    return nullptr;
  auto it = consts.find(node.input(k));
  return it == consts.end() ? nullptr : &it->second;
}

FailureOr<ConstTensor> Importer::requireConst(const onnx::NodeProto &node,
                                              int k, StringRef what) {
  if (const ConstTensor *c = constInput(node, k))
    return *c;
  nodeError(node) << what << " (input " << k
                  << ") must be known at import time (a constant or shape "
                     "arithmetic on constants); it is computed at run time";
  return failure();
}

FailureOr<Value> Importer::broadcastOneWay(const onnx::NodeProto &node,
                                           Value v, ArrayRef<int64_t> shape,
                                           StringRef what) {
  ArrayRef<int64_t> in = typeOf(v).getShape();
  bool ok = in.size() <= shape.size();
  for (size_t k = 0; ok && k < in.size(); ++k) {
    int64_t d = in[in.size() - 1 - k], to = shape[shape.size() - 1 - k];
    ok = d == 1 || d == to;
  }
  if (!ok) {
    nodeError(node) << what << " of shape " << formatDims(in)
                    << " does not broadcast to " << formatDims(shape);
    return failure();
  }
  return broadcastTo(v, shape, nodeLoc(node));
}

Value Importer::broadcastTo(Value v, ArrayRef<int64_t> shape, Location loc) {
  RankedTensorType type = typeOf(v);
  if (type.getShape() == shape)
    return v;
  int64_t offset = shape.size() - type.getRank();
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back(offset + d);
  return BroadcastOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), v, dims);
}

FailureOr<std::pair<Value, Value>>
Importer::broadcastPair(const onnx::NodeProto &node, Value x, Value y) {
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(typeOf(x).getShape(), typeOf(y).getShape());
  if (failed(shape)) {
    nodeError(node) << "operand shapes " << formatDims(typeOf(x).getShape())
                    << " and " << formatDims(typeOf(y).getShape())
                    << " do not broadcast";
    return failure();
  }
  Location loc = nodeLoc(node);
  return std::make_pair(broadcastTo(x, *shape, loc),
                        broadcastTo(y, *shape, loc));
}

Value Importer::reshape(Value v, ArrayRef<int64_t> shape, Location loc) {
  RankedTensorType type = typeOf(v);
  if (type.getShape() == shape)
    return v;
  return ReshapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), v);
}

Value Importer::splat(double value, RankedTensorType type, Location loc) {
  Attribute element;
  if (auto ft = dyn_cast<FloatType>(type.getElementType()))
    element = b.getFloatAttr(ft, value);
  else
    element = b.getIntegerAttr(type.getElementType(),
                               static_cast<int64_t>(value));
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, element));
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// Checks that two operands share an element type, as ONNX requires.
static LogicalResult sameElementType(InFlightDiagnostic &&diag, Type x,
                                     Type y) {
  if (x == y) {
    diag.abandon();
    return success();
  }
  return diag << "operand element types " << x << " and " << y
              << " differ; insert a Cast";
}

template <typename OpTy>
LogicalResult Importer::importUnary(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  return defineResult(node, 0, create<OpTy>(nodeLoc(node), *x));
}

template <typename OpTy>
LogicalResult Importer::importBinary(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0), y = input(node, 1);
  if (failed(x) || failed(y))
    return failure();
  Type xt = typeOf(*x).getElementType(), yt = typeOf(*y).getElementType();
  if (std::is_same_v<OpTy, PowOp> && xt != yt) {
    // Pow alone lets the exponent have a type of its own (x ** 2 with an
    // integer 2); loom.pow takes it in the base's type.
    if (!isa<FloatType>(xt))
      return nodeError(node) << "an integer base (" << xt
                             << ") with a " << yt
                             << " exponent is not supported";
    y = ConvertOp::create(b, nodeLoc(node), typeOf(*y).clone(xt), *y)
            .getResult();
    yt = xt;
  }
  if (failed(sameElementType(nodeError(node), xt, yt)))
    return failure();
  auto pair = broadcastPair(node, *x, *y);
  if (failed(pair))
    return failure();
  return defineResult(node, 0,
                      create<OpTy>(nodeLoc(node), pair->first, pair->second));
}

template <typename OpTy>
LogicalResult Importer::importVariadic(const onnx::NodeProto &node) {
  FailureOr<Value> acc = input(node, 0);
  if (failed(acc))
    return failure();
  Value result = *acc;
  for (int k = 1; k < node.input_size(); ++k) {
    FailureOr<Value> y = input(node, k);
    if (failed(y) ||
        failed(sameElementType(nodeError(node), typeOf(result).getElementType(),
                               typeOf(*y).getElementType())))
      return failure();
    auto pair = broadcastPair(node, result, *y);
    if (failed(pair))
      return failure();
    FailureOr<OpTy> op = create<OpTy>(nodeLoc(node), pair->first,
                                      pair->second);
    if (failed(op))
      return failure();
    result = *op;
  }
  define(node, 0, result);
  return success();
}

LogicalResult Importer::importCompare(const onnx::NodeProto &node,
                                      ComparisonDirection direction) {
  FailureOr<Value> x = input(node, 0), y = input(node, 1);
  if (failed(x) || failed(y) ||
      failed(sameElementType(nodeError(node), typeOf(*x).getElementType(),
                             typeOf(*y).getElementType())))
    return failure();
  auto pair = broadcastPair(node, *x, *y);
  if (failed(pair))
    return failure();
  return defineResult(node, 0,
                      create<CompareOp>(nodeLoc(node), direction, pair->first,
                                        pair->second));
}

LogicalResult Importer::importNot(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  if (!typeOf(*x).getElementType().isInteger(1))
    return nodeError(node) << "the operand must be bool, not "
                           << typeOf(*x).getElementType();
  Value zero = splat(0, typeOf(*x), nodeLoc(node));
  return defineResult(node, 0,
                      create<CompareOp>(nodeLoc(node), ComparisonDirection::eq,
                                        *x, zero));
}

LogicalResult Importer::importReciprocal(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  if (!isa<FloatType>(typeOf(*x).getElementType()))
    return nodeError(node) << "the operand must be floating-point, not "
                           << typeOf(*x).getElementType();
  Value one = splat(1.0, typeOf(*x), nodeLoc(node));
  return defineResult(node, 0, create<DivOp>(nodeLoc(node), one, *x));
}

LogicalResult Importer::importGelu(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  std::string approx = stringAttr(node, "approximate", "none");
  if (approx != "none" && approx != "tanh")
    return nodeError(node) << "approximate = '" << approx
                           << "' is not one of 'none', 'tanh'";
  return defineResult(node, 0,
                      create<GeluOp>(nodeLoc(node), *x,
                                     approx == "tanh"
                                         ? GeluApproximation::tanh
                                         : GeluApproximation::none));
}

LogicalResult Importer::importWhere(const onnx::NodeProto &node) {
  FailureOr<Value> c = input(node, 0), x = input(node, 1), y = input(node, 2);
  if (failed(c) || failed(x) || failed(y) ||
      failed(sameElementType(nodeError(node), typeOf(*x).getElementType(),
                             typeOf(*y).getElementType())))
    return failure();
  if (!typeOf(*c).getElementType().isInteger(1))
    return nodeError(node) << "the condition must be bool, not "
                           << typeOf(*c).getElementType();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(typeOf(*c).getShape(), typeOf(*x).getShape());
  if (succeeded(shape))
    shape = broadcastShapes(*shape, typeOf(*y).getShape());
  if (failed(shape))
    return nodeError(node) << "condition and branch shapes "
                           << formatDims(typeOf(*c).getShape()) << ", "
                           << formatDims(typeOf(*x).getShape()) << " and "
                           << formatDims(typeOf(*y).getShape())
                           << " do not broadcast";
  Location loc = nodeLoc(node);
  return defineResult(node, 0,
                      create<SelectOp>(loc, broadcastTo(*c, *shape, loc),
                                       broadcastTo(*x, *shape, loc),
                                       broadcastTo(*y, *shape, loc)));
}

LogicalResult Importer::importCast(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  int64_t to = intAttr(node, "to", 0);
  Type elementType = convertElementType(to, ctx);
  if (!elementType)
    return nodeError(node) << "cast to " << onnxTypeName(to)
                           << " is not supported (Loom has float32, "
                              "float16, bfloat16, int64, int32, bool)";
  if (typeOf(*x).getElementType() == elementType) {
    define(node, 0, *x);
    return success();
  }
  define(node, 0,
         ConvertOp::create(b, nodeLoc(node),
                           typeOf(*x).clone(elementType), *x));
  return success();
}

LogicalResult Importer::importIdentity(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  define(node, 0, *x);
  return success();
}

LogicalResult Importer::importDropout(const onnx::NodeProto &node) {
  // Dropout is the identity in this release (inference-mode semantics);
  // the mask output must not be used. In training mode with a non-zero
  // ratio that changes what the model computes: say so.
  if (failed(requireUnused(node, 1, "the dropout mask")))
    return failure();
  if (hasInput(node, 2)) {
    const ConstTensor *training = constInput(node, 2);
    const ConstTensor *ratio = constInput(node, 1);
    double r = !hasInput(node, 1) ? 0.5 : ratio && ratio->size() == 1
                                               ? ratio->asDouble(0)
                                               : -1;
    if (!training || training->size() != 1)
      emitWarning(nodeLoc(node))
          << nodeLabel(node)
          << ": training_mode is computed at run time; imported as the "
             "identity (inference mode): Loom has no dropout yet";
    else if (training->asInt(0) && r != 0)
      emitWarning(nodeLoc(node))
          << nodeLabel(node) << ": imported as the identity: Loom has no "
          << "dropout yet, so training-mode dropout with ratio "
          << (r < 0 ? std::string("(run-time)") : formatNumber(r))
          << " is not applied (export with dropout p=0 to silence this)";
  }
  return importIdentity(node);
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

LogicalResult Importer::importSoftmax(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(node, intAttr(node, "axis", -1), typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  return defineResult(node, 0, create<SoftmaxOp>(nodeLoc(node), *x, *axis));
}

LogicalResult Importer::importLogSoftmax(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(node, intAttr(node, "axis", -1), typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  return defineResult(node, 0,
                      create<LogSoftmaxOp>(nodeLoc(node), *x, *axis));
}

LogicalResult Importer::importLayerNorm(const onnx::NodeProto &node) {
  if (failed(requireUnused(node, 1, "Mean")) ||
      failed(requireUnused(node, 2, "InvStdDev")))
    return failure();
  FailureOr<Value> x = input(node, 0), scale = input(node, 1);
  if (failed(x) || failed(scale))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  FailureOr<int64_t> axis = normalizeAxis(node, intAttr(node, "axis", -1), rank);
  if (failed(axis))
    return failure();
  // Scale and bias broadcast to the normalised dimensions.
  ArrayRef<int64_t> normalized = typeOf(*x).getShape().drop_front(*axis);
  FailureOr<Value> s = broadcastOneWay(node, *scale, normalized, "Scale");
  if (failed(s))
    return failure();
  Value bias;
  if (hasInput(node, 2)) {
    FailureOr<Value> bv = input(node, 2);
    if (failed(bv))
      return failure();
    bv = broadcastOneWay(node, *bv, normalized, "B (the bias)");
    if (failed(bv))
      return failure();
    bias = *bv;
  }
  double eps = floatAttr(node, "epsilon", 1e-5f);
  return defineResult(node, 0,
                      create<LayerNormOp>(nodeLoc(node), *x, *s, bias,
                                          b.getI64IntegerAttr(*axis),
                                          b.getF64FloatAttr(eps)));
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult Importer::importMatMul(const onnx::NodeProto &node) {
  FailureOr<Value> a = input(node, 0), bm = input(node, 1);
  if (failed(a) || failed(bm))
    return failure();
  Location loc = nodeLoc(node);
  Value lhs = *a, rhs = *bm;
  int64_t lr = typeOf(lhs).getRank(), rr = typeOf(rhs).getRank();
  if (lr == 0 || rr == 0)
    return nodeError(node) << "MatMul operands must have rank >= 1";
  // numpy: a vector operand gains a unit dimension that is dropped again.
  bool lhsVector = lr == 1, rhsVector = rr == 1;
  if (lhsVector)
    lhs = reshape(lhs, {1, typeOf(lhs).getDimSize(0)}, loc);
  if (rhsVector)
    rhs = reshape(rhs, {typeOf(rhs).getDimSize(0), 1}, loc);
  ArrayRef<int64_t> ls = typeOf(lhs).getShape(), rs = typeOf(rhs).getShape();
  lr = ls.size();
  rr = rs.size();
  if (ls.back() != rs[rr - 2])
    return nodeError(node) << "contracting sizes differ: "
                           << formatDims(typeOf(*a).getShape()) << " x "
                           << formatDims(typeOf(*bm).getShape());
  FailureOr<DotGeneralOp> dot;
  if (rr == 2) {
    // [..., M, K] x [K, N]: contract the last lhs dim with rhs dim 0.
    dot = create<DotGeneralOp>(loc, lhs, rhs, ArrayRef<int64_t>{},
                               ArrayRef<int64_t>{}, ArrayRef<int64_t>{lr - 1},
                               ArrayRef<int64_t>{0});
  } else {
    // Batched: broadcast the batch dimensions, then a batched dot.
    FailureOr<SmallVector<int64_t>> batch =
        broadcastShapes(ls.drop_back(2), rs.drop_back(2));
    if (failed(batch))
      return nodeError(node) << "batch dimensions of "
                             << formatDims(typeOf(*a).getShape()) << " and "
                             << formatDims(typeOf(*bm).getShape())
                             << " do not broadcast";
    SmallVector<int64_t> lt(*batch), rt(*batch);
    lt.append({ls[lr - 2], ls[lr - 1]});
    rt.append({rs[rr - 2], rs[rr - 1]});
    lhs = broadcastTo(lhs, lt, loc);
    rhs = broadcastTo(rhs, rt, loc);
    int64_t nb = batch->size();
    SmallVector<int64_t> bd(nb);
    std::iota(bd.begin(), bd.end(), 0);
    dot = create<DotGeneralOp>(loc, lhs, rhs, ArrayRef<int64_t>(bd),
                               ArrayRef<int64_t>(bd),
                               ArrayRef<int64_t>{nb + 1},
                               ArrayRef<int64_t>{nb});
  }
  if (failed(dot))
    return failure();
  Value result = *dot;
  if (lhsVector || rhsVector) {
    SmallVector<int64_t> shape(typeOf(result).getShape());
    if (rhsVector)
      shape.pop_back();
    if (lhsVector)
      shape.erase(shape.end() - (rhsVector ? 1 : 2));
    result = reshape(result, shape, loc);
  }
  define(node, 0, result);
  return success();
}

LogicalResult Importer::importGemm(const onnx::NodeProto &node) {
  FailureOr<Value> a = input(node, 0), bm = input(node, 1);
  if (failed(a) || failed(bm))
    return failure();
  if (typeOf(*a).getRank() != 2 || typeOf(*bm).getRank() != 2)
    return nodeError(node) << "Gemm operands must be matrices, not "
                           << formatDims(typeOf(*a).getShape()) << " and "
                           << formatDims(typeOf(*bm).getShape());
  Location loc = nodeLoc(node);
  bool transA = intAttr(node, "transA", 0), transB = intAttr(node, "transB", 0);
  double alpha = floatAttr(node, "alpha", 1.0f),
         beta = floatAttr(node, "beta", 1.0f);
  int64_t ka = transA ? 0 : 1, kb = transB ? 1 : 0;
  if (typeOf(*a).getDimSize(ka) != typeOf(*bm).getDimSize(kb))
    return nodeError(node) << "contracting sizes differ: "
                           << formatDims(typeOf(*a).getShape())
                           << (transA ? " (transposed)" : "") << " x "
                           << formatDims(typeOf(*bm).getShape())
                           << (transB ? " (transposed)" : "");
  FailureOr<DotGeneralOp> dot = create<DotGeneralOp>(
      loc, *a, *bm, ArrayRef<int64_t>{}, ArrayRef<int64_t>{},
      ArrayRef<int64_t>{ka}, ArrayRef<int64_t>{kb});
  if (failed(dot))
    return failure();
  Value y = *dot;
  if (alpha != 1.0)
    y = MulOp::create(b, loc, y, splat(alpha, typeOf(y), loc));
  if (hasInput(node, 2)) {
    FailureOr<Value> c = input(node, 2);
    if (failed(c))
      return failure();
    if (failed(sameElementType(nodeError(node), typeOf(y).getElementType(),
                               typeOf(*c).getElementType())))
      return failure();
    FailureOr<Value> cb =
        broadcastOneWay(node, *c, typeOf(y).getShape(), "C");
    if (failed(cb))
      return failure();
    Value cv = *cb;
    if (beta != 1.0)
      cv = MulOp::create(b, loc, cv, splat(beta, typeOf(cv), loc));
    y = AddOp::create(b, loc, y, cv);
  }
  define(node, 0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

/// ONNX Reshape's target: 0 copies the input size (unless allowzero), one
/// -1 is inferred.
static FailureOr<SmallVector<int64_t>>
reshapeTarget(ArrayRef<int64_t> in, const ConstTensor &shape, bool allowZero,
              std::string &error) {
  if (shape.shape.size() != 1) {
    error = "the target shape must be a 1-D tensor, not one of shape " +
            formatDims(shape.shape);
    return failure();
  }
  SmallVector<int64_t> out;
  int64_t known = 1, inferAt = -1;
  int64_t total = numElements(in).value_or(-1);
  for (int64_t k = 0, e = shape.size(); k < e; ++k) {
    int64_t d = shape.asInt(k);
    if (d == 0 && !allowZero) {
      if (k >= static_cast<int64_t>(in.size())) {
        error = "0 at position " + std::to_string(k) +
                " copies an input dimension that does not exist";
        return failure();
      }
      d = in[k];
    }
    if (d == -1) {
      if (inferAt >= 0) {
        error = "more than one -1";
        return failure();
      }
      inferAt = k;
      out.push_back(-1);
      continue;
    }
    if (d < 0) {
      error = "negative size " + std::to_string(d);
      return failure();
    }
    if (d != 0 && known > std::numeric_limits<int64_t>::max() / d) {
      error = "the target " + formatDims(shape.i) + " is too large";
      return failure();
    }
    known *= d;
    out.push_back(d);
  }
  if (inferAt >= 0) {
    if (known == 0 || total % known != 0) {
      error = "cannot infer the -1 in " + formatDims(shape.i) + " (" +
              std::to_string(total) + " elements)";
      return failure();
    }
    out[inferAt] = total / known;
  } else if (known != total) {
    error = "the target " + formatDims(out) + " has " +
            std::to_string(known) + " elements but the input has " +
            std::to_string(total);
    return failure();
  }
  return out;
}

LogicalResult Importer::importReshape(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  FailureOr<ConstTensor> shape = requireConst(node, 1, "the target shape");
  if (failed(x) || failed(shape))
    return failure();
  std::string error;
  auto target = reshapeTarget(typeOf(*x).getShape(), *shape,
                              intAttr(node, "allowzero", 0), error);
  if (failed(target))
    return nodeError(node) << "cannot reshape "
                           << formatDims(typeOf(*x).getShape()) << ": "
                           << error;
  define(node, 0, reshape(*x, *target, nodeLoc(node)));
  return success();
}

LogicalResult Importer::importTranspose(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> perm;
  if (auto p = intsAttr(node, "perm")) {
    perm = *p;
  } else {
    // The default reverses the dimensions.
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  }
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  bool isPermutation = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t d = 0; isPermutation && d < rank; ++d)
    isPermutation = sorted[d] == d;
  if (!isPermutation)
    return nodeError(node) << "perm " << formatDims(perm)
                           << " is not a permutation of the " << rank
                           << " input dimensions";
  return defineResult(node, 0, create<TransposeOp>(nodeLoc(node), *x,
                                                   ArrayRef<int64_t>(perm)));
}

/// Axes of Squeeze/Unsqueeze/Reduce*: an input since opset 13 (18 for most
/// reductions), an attribute before.
static std::optional<SmallVector<int64_t>> constAxes(const ConstTensor *c) {
  if (!c)
    return std::nullopt;
  SmallVector<int64_t> axes;
  for (int64_t k = 0, e = c->size(); k < e; ++k)
    axes.push_back(c->asInt(k));
  return axes;
}

/// Result shape of Unsqueeze(in, axes).
static FailureOr<SmallVector<int64_t>>
unsqueezedShape(ArrayRef<int64_t> in, ArrayRef<int64_t> axes,
                std::string &error) {
  int64_t outRank = in.size() + axes.size();
  SmallVector<bool> isNew(outRank, false);
  for (int64_t a : axes) {
    int64_t n = a < 0 ? a + outRank : a;
    if (n < 0 || n >= outRank) {
      error = "axes entry " + std::to_string(a) + " is out of range for rank " +
              std::to_string(outRank);
      return failure();
    }
    if (isNew[n]) {
      error = "axes " + formatDims(axes) + " repeat dimension " +
              std::to_string(n);
      return failure();
    }
    isNew[n] = true;
  }
  SmallVector<int64_t> shape;
  size_t next = 0;
  for (int64_t d = 0; d < outRank; ++d)
    shape.push_back(isNew[d] ? 1 : in[next++]);
  return shape;
}

/// Result shape of Squeeze(in, axes); without axes every size-1 dimension
/// goes.
static FailureOr<SmallVector<int64_t>>
squeezedShape(ArrayRef<int64_t> in,
              const std::optional<SmallVector<int64_t>> &axes,
              std::string &error) {
  int64_t rank = in.size();
  SmallVector<bool> drop(rank, false);
  if (axes) {
    for (int64_t a : *axes) {
      int64_t n = a < 0 ? a + rank : a;
      if (n < 0 || n >= rank) {
        error = "axes entry " + std::to_string(a) +
                " is out of range for rank " + std::to_string(rank);
        return failure();
      }
      if (in[n] != 1) {
        error = "cannot squeeze dimension " + std::to_string(a) +
                " of size " + std::to_string(in[n]);
        return failure();
      }
      drop[n] = true;
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      drop[d] = in[d] == 1;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d])
      shape.push_back(in[d]);
  return shape;
}

LogicalResult Importer::importUnsqueeze(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  FailureOr<ConstTensor> axesT = requireConst(node, 1, "axes");
  if (failed(x) || failed(axesT))
    return failure();
  std::string error;
  auto shape = unsqueezedShape(typeOf(*x).getShape(), *constAxes(&*axesT),
                               error);
  if (failed(shape))
    return nodeError(node) << error;
  define(node, 0, reshape(*x, *shape, nodeLoc(node)));
  return success();
}

LogicalResult Importer::importSqueeze(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  std::optional<SmallVector<int64_t>> axes;
  if (hasInput(node, 1)) {
    FailureOr<ConstTensor> axesT = requireConst(node, 1, "axes");
    if (failed(axesT))
      return failure();
    axes = constAxes(&*axesT);
  }
  std::string error;
  auto shape = squeezedShape(typeOf(*x).getShape(), axes, error);
  if (failed(shape))
    return nodeError(node) << error;
  define(node, 0, reshape(*x, *shape, nodeLoc(node)));
  return success();
}

LogicalResult Importer::importFlatten(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> in = typeOf(*x).getShape();
  int64_t axis = intAttr(node, "axis", 1);
  if (axis < 0)
    axis += in.size();
  if (axis < 0 || axis > static_cast<int64_t>(in.size()))
    return nodeError(node) << "axis " << intAttr(node, "axis", 1)
                           << " is out of range for rank " << in.size();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d)
    (d < axis ? outer : inner) *= in[d];
  define(node, 0, reshape(*x, {outer, inner}, nodeLoc(node)));
  return success();
}

/// The 1-D, non-negative shape held by `t` (Expand, ConstantOfShape).
static FailureOr<SmallVector<int64_t>> shapeOperand(const ConstTensor &t,
                                                    std::string &error) {
  if (t.shape.size() != 1) {
    error = "the shape must be a 1-D tensor, not one of shape " +
            formatDims(t.shape);
    return failure();
  }
  SmallVector<int64_t> shape = *constAxes(&t);
  if (!numElements(shape)) {
    error = "the shape " + formatDims(shape) +
            " has a negative or too large size";
    return failure();
  }
  return shape;
}

LogicalResult Importer::importExpand(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  FailureOr<ConstTensor> shapeT = requireConst(node, 1, "the target shape");
  if (failed(x) || failed(shapeT))
    return failure();
  std::string error;
  FailureOr<SmallVector<int64_t>> target = shapeOperand(*shapeT, error);
  if (failed(target))
    return nodeError(node) << error;
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(typeOf(*x).getShape(), *target);
  if (failed(shape))
    return nodeError(node) << "cannot expand "
                           << formatDims(typeOf(*x).getShape()) << " to "
                           << formatDims(*target);
  define(node, 0, broadcastTo(*x, *shape, nodeLoc(node)));
  return success();
}

LogicalResult Importer::importConcat(const onnx::NodeProto &node) {
  SmallVector<Value> inputs;
  for (int k = 0; k < node.input_size(); ++k) {
    FailureOr<Value> v = input(node, k);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  if (inputs.empty())
    return nodeError(node) << "needs at least one input";
  FailureOr<int64_t> axis = normalizeAxis(node, intAttr(node, "axis", 0),
                                          typeOf(inputs[0]).getRank());
  if (failed(axis))
    return failure();
  return defineResult(node, 0,
                      create<ConcatOp>(nodeLoc(node), ValueRange(inputs),
                                       *axis));
}

LogicalResult Importer::importSplit(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  FailureOr<int64_t> axis = normalizeAxis(node, intAttr(node, "axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t size = typeOf(*x).getDimSize(*axis);
  int64_t outputs = node.output_size();
  SmallVector<int64_t> sizes;
  if (hasInput(node, 1)) {
    FailureOr<ConstTensor> split = requireConst(node, 1, "split");
    if (failed(split))
      return failure();
    sizes = *constAxes(&*split);
  } else {
    // Opset 18: num_outputs pieces of ceil(size / n), the last smaller;
    // before: one equal piece per output.
    bool hasNum = attr(node, "num_outputs");
    int64_t n = hasNum ? intAttr(node, "num_outputs", 1) : outputs;
    if (n != outputs || n <= 0)
      return nodeError(node) << "has " << outputs << " outputs but "
                             << (hasNum ? "num_outputs = " : "")
                             << (hasNum ? std::to_string(n) : "none")
                             << (hasNum ? "" : " were requested");
    if (!hasNum && size % n != 0)
      return nodeError(node) << "cannot split dimension " << *axis
                             << " of size " << size << " into " << n
                             << " equal pieces; give split sizes";
    int64_t piece = (size + n - 1) / n;
    for (int64_t k = 0; k < n; ++k)
      sizes.push_back(std::clamp<int64_t>(size - k * piece, 0, piece));
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    return nodeError(node) << "has " << outputs << " outputs but "
                           << sizes.size() << " split sizes";
  if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != size)
    return nodeError(node) << "split sizes " << formatDims(sizes)
                           << " do not add up to " << size
                           << ", the size of dimension " << *axis;
  FailureOr<SplitOp> op =
      create<SplitOp>(nodeLoc(node), *x, *axis, ArrayRef<int64_t>(sizes));
  if (failed(op))
    return failure();
  for (auto [k, r] : llvm::enumerate(op->getResults()))
    define(node, k, r);
  return success();
}

LogicalResult Importer::importSlice(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  FailureOr<ConstTensor> starts = requireConst(node, 1, "starts");
  FailureOr<ConstTensor> ends = requireConst(node, 2, "ends");
  if (failed(x) || failed(starts) || failed(ends))
    return failure();
  ArrayRef<int64_t> in = typeOf(*x).getShape();
  int64_t rank = in.size();
  SmallVector<int64_t> axes, steps;
  if (hasInput(node, 3)) {
    FailureOr<ConstTensor> a = requireConst(node, 3, "axes");
    if (failed(a))
      return failure();
    axes = *constAxes(&*a);
  } else {
    for (int64_t k = 0; k < starts->size(); ++k)
      axes.push_back(k);
  }
  if (hasInput(node, 4)) {
    FailureOr<ConstTensor> s = requireConst(node, 4, "steps");
    if (failed(s))
      return failure();
    steps = *constAxes(&*s);
  } else {
    steps.assign(axes.size(), 1);
  }
  if (starts->size() != static_cast<int64_t>(axes.size()) ||
      ends->size() != static_cast<int64_t>(axes.size()) ||
      steps.size() != axes.size())
    return nodeError(node) << "starts, ends, axes and steps differ in length ("
                           << starts->size() << ", " << ends->size() << ", "
                           << axes.size() << ", " << steps.size() << ")";
  SmallVector<int64_t> start(rank, 0), limit(in), stride(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    FailureOr<int64_t> axis = normalizeAxis(node, axes[k], rank, "axes entry");
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return nodeError(node) << "axes " << formatDims(axes)
                             << " repeat dimension " << *axis;
    seen[*axis] = true;
    int64_t size = in[*axis];
    if (steps[k] <= 0)
      return nodeError(node) << "step " << steps[k] << " on axis " << *axis
                             << " is not supported (only positive steps)";
    // Positive steps: negative indices count from the end, then both clamp
    // to [0, size].
    auto clampIndex = [&](int64_t v) {
      if (v < 0)
        v += size;
      return std::clamp<int64_t>(v, 0, size);
    };
    start[*axis] = clampIndex(starts->asInt(k));
    limit[*axis] = std::max(start[*axis], clampIndex(ends->asInt(k)));
    // A step past the end takes one element; clamping keeps the slice's
    // size arithmetic far from overflow.
    stride[*axis] = std::min<int64_t>(steps[k], std::max<int64_t>(size, 1));
  }
  return defineResult(node, 0,
                      create<SliceOp>(nodeLoc(node), *x,
                                      ArrayRef<int64_t>(start),
                                      ArrayRef<int64_t>(limit),
                                      ArrayRef<int64_t>(stride)));
}

LogicalResult Importer::importGather(const onnx::NodeProto &node) {
  FailureOr<Value> data = input(node, 0);
  if (failed(data))
    return failure();
  int64_t rank = typeOf(*data).getRank();
  FailureOr<int64_t> axis = normalizeAxis(node, intAttr(node, "axis", 0), rank);
  if (failed(axis))
    return failure();
  Value indices;
  if (const ConstTensor *c = constInput(node, 1)) {
    // Constant indices: normalise negative ones (ONNX allows them) now.
    if (c->isFloat() || c->elementType.isInteger(1))
      return nodeError(node) << "indices must be int32 or int64, not "
                             << c->elementType;
    ConstTensor fixed = *c;
    int64_t size = typeOf(*data).getDimSize(*axis);
    for (int64_t &v : fixed.i) {
      if (v < -size || v >= size)
        return nodeError(node) << "index " << v << " is out of range for "
                               << "dimension " << *axis << " of size "
                               << size;
      if (v < 0)
        v += size;
    }
    indices = materialize(fixed, nodeLoc(node));
  } else {
    FailureOr<Value> v = input(node, 1);
    if (failed(v))
      return failure();
    indices = *v;
  }
  if (!isa<IntegerType>(typeOf(indices).getElementType()) ||
      typeOf(indices).getElementType().isInteger(1))
    return nodeError(node) << "indices must be int32 or int64, not "
                           << typeOf(indices).getElementType();
  if (!constInput(node, 1)) {
    // Run-time indices may be negative too (counted from the end), while
    // loom.gather takes [0, size): wrap them explicitly.
    Location loc = nodeLoc(node);
    RankedTensorType type = typeOf(indices);
    Value zero = splat(0, type, loc);
    Value size = splat(typeOf(*data).getDimSize(*axis), type, loc);
    Value negative = CompareOp::create(b, loc, ComparisonDirection::lt,
                                       indices, zero);
    Value wrapped = AddOp::create(b, loc, indices, size);
    indices = SelectOp::create(b, loc, negative, wrapped, indices);
  }
  return defineResult(node, 0,
                      create<GatherOp>(nodeLoc(node), *data, indices, *axis));
}

//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

template <typename OpTy>
LogicalResult Importer::importReduce(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  // Axes: an attribute up to opset 17 (ReduceSum: 12), an input after.
  std::optional<SmallVector<int64_t>> axes = intsAttr(node, "axes");
  if (hasInput(node, 1)) {
    FailureOr<ConstTensor> a = requireConst(node, 1, "axes");
    if (failed(a))
      return failure();
    axes = *constAxes(&*a);
  }
  bool keepdims = intAttr(node, "keepdims", 1);
  if (!axes || axes->empty()) {
    if (intAttr(node, "noop_with_empty_axes", 0)) {
      define(node, 0, *x);
      return success();
    }
    axes = SmallVector<int64_t>();
    for (int64_t d = 0; d < rank; ++d)
      axes->push_back(d);
  }
  SmallVector<int64_t> dims;
  for (int64_t a : *axes) {
    FailureOr<int64_t> n = normalizeAxis(node, a, rank, "axes entry");
    if (failed(n))
      return failure();
    if (llvm::is_contained(dims, *n))
      return nodeError(node) << "axes " << formatDims(*axes)
                             << " repeat dimension " << *n;
    dims.push_back(*n);
  }
  llvm::sort(dims);
  return defineResult(node, 0,
                      create<OpTy>(nodeLoc(node), *x, ArrayRef<int64_t>(dims),
                                   keepdims));
}

LogicalResult Importer::importCrossEntropy(const onnx::NodeProto &node,
                                           Value scores, Value labels) {
  // ONNX puts the classes in dimension 1; loom wants them last.
  Location loc = nodeLoc(node);
  int64_t rank = typeOf(scores).getRank();
  if (rank < 2)
    return nodeError(node) << "scores must have shape [N, C, ...], not "
                           << formatDims(typeOf(scores).getShape());
  Type labelType = typeOf(labels).getElementType();
  if (!isa<IntegerType>(labelType) || labelType.isInteger(1))
    return nodeError(node) << "labels must be int32 or int64, not "
                           << labelType;
  SmallVector<int64_t> expected(typeOf(scores).getShape());
  expected.erase(expected.begin() + 1);
  if (typeOf(labels).getShape() != ArrayRef<int64_t>(expected))
    return nodeError(node) << "labels of shape "
                           << formatDims(typeOf(labels).getShape())
                           << " do not match scores of shape "
                           << formatDims(typeOf(scores).getShape())
                           << " (expected " << formatDims(expected) << ")";
  if (rank > 2) {
    SmallVector<int64_t> perm = {0};
    for (int64_t d = 2; d < rank; ++d)
      perm.push_back(d);
    perm.push_back(1);
    FailureOr<TransposeOp> t =
        create<TransposeOp>(loc, scores, ArrayRef<int64_t>(perm));
    if (failed(t))
      return failure();
    scores = *t;
  }
  std::string reduction = stringAttr(node, "reduction", "mean");
  LossReduction r;
  if (reduction == "mean")
    r = LossReduction::mean;
  else if (reduction == "sum")
    r = LossReduction::sum;
  else if (reduction == "none")
    r = LossReduction::none;
  else
    return nodeError(node) << "reduction '" << reduction
                           << "' is not one of mean, sum, none";
  IntegerAttr ignore;
  if (attr(node, "ignore_index"))
    ignore = b.getI64IntegerAttr(intAttr(node, "ignore_index", 0));
  return defineResult(node, 0,
                      create<CrossEntropyOp>(loc, scores, labels, r, ignore));
}

LogicalResult Importer::importSoftmaxCrossEntropy(const onnx::NodeProto &node) {
  if (hasInput(node, 2))
    return nodeError(node) << "class weights (input 2) are not supported";
  if (failed(requireUnused(node, 1, "log_prob")))
    return failure();
  FailureOr<Value> scores = input(node, 0), labels = input(node, 1);
  if (failed(scores) || failed(labels))
    return failure();
  return importCrossEntropy(node, *scores, *labels);
}

LogicalResult Importer::importNllLoss(const onnx::NodeProto &node) {
  // NLL(log_softmax(x, axis=1)) == cross_entropy(x): Loom imports that pair
  // and nothing else (NLL of arbitrary inputs has no loom op). The
  // LogSoftmax, if nothing else uses it, is removed as dead code.
  if (hasInput(node, 2))
    return nodeError(node) << "class weights (input 2) are not supported";
  const onnx::NodeProto *producer =
      hasInput(node, 0) ? producers.lookup(node.input(0)) : nullptr;
  if (!producer || producer->op_type() != "LogSoftmax")
    return nodeError(node)
           << "only NegativeLogLikelihoodLoss of a LogSoftmax output is "
              "supported (it becomes a cross-entropy over the LogSoftmax "
              "input)";
  FailureOr<Value> logits = input(*producer, 0), labels = input(node, 1);
  if (failed(logits) || failed(labels))
    return failure();
  FailureOr<int64_t> axis = normalizeAxis(
      *producer, intAttr(*producer, "axis", -1), typeOf(*logits).getRank());
  if (failed(axis))
    return failure();
  if (*axis != 1)
    return nodeError(node) << "the LogSoftmax feeding this loss normalises "
                              "axis "
                           << *axis << ", not the class axis 1";
  return importCrossEntropy(node, *logits, *labels);
}

//===----------------------------------------------------------------------===//
// Constants and shape arithmetic
//===----------------------------------------------------------------------===//

LogicalResult Importer::importConstant(const onnx::NodeProto &node) {
  Location loc = nodeLoc(node);
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  ConstTensor c;
  if (const auto *a = attr(node, "value")) {
    FailureOr<ConstTensor> t =
        readConstTensor(a->t(), "its value", loc);
    if (failed(t))
      return failure();
    c = std::move(*t);
  } else if (const auto *a = attr(node, "value_float")) {
    c = ConstTensor::make(f32, {});
    c.f[0] = a->f();
  } else if (const auto *a = attr(node, "value_floats")) {
    c = ConstTensor::make(f32, {a->floats_size()});
    for (int k = 0; k < a->floats_size(); ++k)
      c.f[k] = a->floats(k);
  } else if (const auto *a = attr(node, "value_int")) {
    c = ConstTensor::make(i64, {});
    c.i[0] = a->i();
  } else if (const auto *a = attr(node, "value_ints")) {
    c = ConstTensor::make(i64, {a->ints_size()});
    for (int k = 0; k < a->ints_size(); ++k)
      c.i[k] = a->ints(k);
  } else {
    return nodeError(node) << "needs a value, value_float(s) or value_int(s) "
                              "attribute (sparse and string constants are "
                              "not supported)";
  }
  defineConst(node, 0, std::move(c));
  return success();
}

LogicalResult Importer::importShape(const onnx::NodeProto &node) {
  // Only the shape matters: a known input is not materialised.
  SmallVector<int64_t> shape;
  if (const ConstTensor *c = constInput(node, 0)) {
    shape = c->shape;
  } else {
    FailureOr<Value> x = input(node, 0);
    if (failed(x))
      return failure();
    shape.assign(typeOf(*x).getShape().begin(), typeOf(*x).getShape().end());
  }
  int64_t rank = shape.size();
  int64_t start = intAttr(node, "start", 0), end = intAttr(node, "end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  ConstTensor c = ConstTensor::make(b.getI64Type(), {end - start});
  for (int64_t d = start; d < end; ++d)
    c.i[d - start] = shape[d];
  defineConst(node, 0, std::move(c));
  return success();
}

LogicalResult Importer::importConstantOfShape(const onnx::NodeProto &node) {
  FailureOr<ConstTensor> shapeT = requireConst(node, 0, "the shape");
  if (failed(shapeT))
    return failure();
  std::string error;
  FailureOr<SmallVector<int64_t>> shape = shapeOperand(*shapeT, error);
  if (failed(shape))
    return nodeError(node) << error;
  ConstTensor value = ConstTensor::make(b.getF32Type(), {1});
  if (const auto *a = attr(node, "value")) {
    FailureOr<ConstTensor> t =
        readConstTensor(a->t(), "its value", nodeLoc(node));
    if (failed(t))
      return failure();
    if (t->size() != 1)
      return nodeError(node) << "value must hold one element, not "
                             << t->size();
    value = std::move(*t);
  }
  if (*numElements(*shape) > kMaxFoldElements) {
    // Too large to evaluate (and never shape arithmetic): a splat constant.
    define(node, 0,
           splat(value.asDouble(0),
                 RankedTensorType::get(*shape, value.elementType),
                 nodeLoc(node)));
    return success();
  }
  ConstTensor c = ConstTensor::make(value.elementType, *shape);
  if (c.isFloat())
    std::fill(c.f.begin(), c.f.end(), value.f[0]);
  else
    std::fill(c.i.begin(), c.i.end(), value.i[0]);
  defineConst(node, 0, std::move(c));
  return success();
}

LogicalResult Importer::importRange(const onnx::NodeProto &node) {
  FailureOr<ConstTensor> start = requireConst(node, 0, "start"),
                         limit = requireConst(node, 1, "limit"),
                         delta = requireConst(node, 2, "delta");
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1)
    return nodeError(node) << "start, limit and delta must be scalars";
  Type type = start->elementType;
  int64_t n;
  if (start->isFloat()) {
    double s = start->f[0], l = limit->f[0], d = delta->f[0];
    double count = std::ceil((l - s) / d);
    if (d == 0 || !(count < 9.0e18))
      return nodeError(node) << "cannot count the elements of range(" << s
                             << ", " << l << ", " << d << ")";
    n = std::max<int64_t>(0, static_cast<int64_t>(count));
  } else {
    int64_t s = start->asInt(0), l = limit->asInt(0), d = delta->asInt(0);
    if (d == 0)
      return nodeError(node) << "delta is 0";
    // ceil((l - s) / d) without overflow: in 128 bits.
    __int128 span = static_cast<__int128>(l) - s;
    __int128 count = span / d + ((span % d != 0) && ((span > 0) == (d > 0)));
    n = count > 0 ? static_cast<int64_t>(count) : 0;
  }
  Location loc = nodeLoc(node);
  if (n > kMaxFoldElements) {
    // Too large to evaluate: start + delta * iota.
    if (!type.isInteger(64) && !type.isInteger(32) && !isa<FloatType>(type))
      return nodeError(node) << "range of " << n << " elements of " << type
                             << " is too large to evaluate at import time";
    auto t = RankedTensorType::get({n}, type);
    Value v = IotaOp::create(b, loc, t, 0);
    v = MulOp::create(b, loc, v, splat(delta->asDouble(0), t, loc));
    v = AddOp::create(b, loc, v, splat(start->asDouble(0), t, loc));
    define(node, 0, v);
    return success();
  }
  ConstTensor c = ConstTensor::make(type, {n});
  for (int64_t k = 0; k < n; ++k) {
    if (c.isFloat())
      c.f[k] = start->f[0] + k * delta->f[0];
    else
      c.i[k] = start->asInt(0) + k * delta->asInt(0);
  }
  defineConst(node, 0, std::move(c));
  return success();
}

FailureOr<bool> Importer::tryFold(const onnx::NodeProto &node) {
  StringRef type = node.op_type();
  // Which ops fold when all their inputs are known.
  static const llvm::StringSet<> foldable = {
      "Add", "Sub", "Mul", "Div", "Equal", "Less", "Greater", "LessOrEqual",
      "GreaterOrEqual", "Not", "Where", "Cast", "Gather", "Concat",
      "Unsqueeze", "Squeeze", "Reshape", "Slice", "Identity", "Neg", "Max",
      "Min", "Expand", "Abs"};
  if (!foldable.contains(type))
    return false;
  SmallVector<const ConstTensor *> in;
  for (int k = 0; k < node.input_size(); ++k) {
    if (node.input(k).empty()) {
      in.push_back(nullptr);
      continue;
    }
    const ConstTensor *c = constInput(node, k);
    if (!c)
      return false;
    in.push_back(c);
  }
  if (in.empty() || !in[0])
    return false;
  static const llvm::StringSet<> binary = {
      "Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual"};
  // Malformed nodes (a missing operand, mixed types) go through the
  // handlers, which report them.
  if (binary.contains(type) &&
      (in.size() != 2 || !in[1] || in[0]->elementType != in[1]->elementType))
    return false;

  // Elementwise with numpy broadcasting.
  auto elementwise = [&](Type resultType,
                         std::function<double(double, double)> fd,
                         std::function<int64_t(int64_t, int64_t)> fi)
      -> FailureOr<bool> {
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(in[0]->shape, in.size() > 1 ? in[1]->shape
                                                    : in[0]->shape);
    if (failed(shape)) {
      nodeError(node) << "operand shapes " << formatDims(in[0]->shape)
                      << " and " << formatDims(in[1]->shape)
                      << " do not broadcast";
      return failure();
    }
    if (numElements(*shape).value_or(kMaxFoldElements + 1) > kMaxFoldElements)
      return false;
    ConstTensor c = ConstTensor::make(resultType, *shape);
    const ConstTensor &x = *in[0];
    const ConstTensor &y = in.size() > 1 ? *in[1] : *in[0];
    bool floatMath = x.isFloat() || y.isFloat();
    for (int64_t k = 0, e = c.size(); k < e; ++k) {
      int64_t ix = broadcastIndex(x, *shape, k);
      int64_t iy = broadcastIndex(y, *shape, k);
      if (floatMath) {
        double v = fd(x.asDouble(ix), y.asDouble(iy));
        if (c.isFloat())
          c.f[k] = v;
        else
          c.i[k] = static_cast<int64_t>(v);
      } else {
        int64_t v = fi(x.i[ix], y.i[iy]);
        if (c.isFloat())
          c.f[k] = static_cast<double>(v);
        else
          c.i[k] = v;
      }
    }
    defineConst(node, 0, std::move(c));
    return true;
  };
  Type i1 = b.getI1Type();
  Type et = in[0]->elementType;
  // Integer arithmetic wraps (two's complement) instead of overflowing.
  auto wrap = [](auto op) {
    return [op](int64_t a, int64_t b) {
      return static_cast<int64_t>(op(static_cast<uint64_t>(a),
                                     static_cast<uint64_t>(b)));
    };
  };
  if (type == "Add")
    return elementwise(et, std::plus<double>(), wrap(std::plus<uint64_t>()));
  if (type == "Sub")
    return elementwise(et, std::minus<double>(),
                       wrap(std::minus<uint64_t>()));
  if (type == "Mul")
    return elementwise(et, std::multiplies<double>(),
                       wrap(std::multiplies<uint64_t>()));
  if (type == "Div") {
    if (!in[1]->isFloat() &&
        (llvm::is_contained(in[1]->i, 0) || llvm::is_contained(in[1]->i, -1)))
      return false; // division by zero, or a possible INT64_MIN / -1
    return elementwise(et, std::divides<double>(), [](int64_t a, int64_t b) {
      // ONNX integer Div truncates toward zero.
      return a / b;
    });
  }
  if (type == "Max")
    return elementwise(et, [](double a, double b) { return std::max(a, b); },
                       [](int64_t a, int64_t b) { return std::max(a, b); });
  if (type == "Min")
    return elementwise(et, [](double a, double b) { return std::min(a, b); },
                       [](int64_t a, int64_t b) { return std::min(a, b); });
  if (type == "Neg")
    return elementwise(et, [](double a, double) { return -a; },
                       [](int64_t a, int64_t) {
                         return static_cast<int64_t>(-static_cast<uint64_t>(a));
                       });
  if (type == "Abs")
    return elementwise(et, [](double a, double) { return std::fabs(a); },
                       [](int64_t a, int64_t) {
                         return a < 0 ? static_cast<int64_t>(
                                            -static_cast<uint64_t>(a))
                                      : a;
                       });
  if (type == "Equal")
    return elementwise(i1, [](double a, double b) { return a == b; },
                       [](int64_t a, int64_t b) { return a == b; });
  if (type == "Less")
    return elementwise(i1, [](double a, double b) { return a < b; },
                       [](int64_t a, int64_t b) { return a < b; });
  if (type == "Greater")
    return elementwise(i1, [](double a, double b) { return a > b; },
                       [](int64_t a, int64_t b) { return a > b; });
  if (type == "LessOrEqual")
    return elementwise(i1, [](double a, double b) { return a <= b; },
                       [](int64_t a, int64_t b) { return a <= b; });
  if (type == "GreaterOrEqual")
    return elementwise(i1, [](double a, double b) { return a >= b; },
                       [](int64_t a, int64_t b) { return a >= b; });
  if (type == "Not")
    return elementwise(i1, [](double a, double) { return a == 0; },
                       [](int64_t a, int64_t) { return a == 0; });
  if (type == "Identity") {
    defineConst(node, 0, *in[0]);
    return true;
  }
  if (type == "Cast") {
    Type to = convertElementType(intAttr(node, "to", 0), ctx);
    if (!to)
      return false;
    bool toBool = to.isInteger(1);
    if (!to.isInteger(1) && !isa<FloatType>(to) && in[0]->isFloat() &&
        llvm::any_of(in[0]->f, [](double v) {
          return !(std::fabs(v) < 9.2e18); // NaN, inf or out of int64 range
        }))
      return false;
    return elementwise(
        to, [toBool](double a, double) { return toBool ? a != 0 : a; },
        [toBool](int64_t a, int64_t) -> int64_t {
          return toBool ? a != 0 : a;
        });
  }
  if (type == "Where") {
    if (in.size() != 3 || !in[1] || !in[2])
      return false;
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(in[0]->shape, in[1]->shape);
    if (succeeded(shape))
      shape = broadcastShapes(*shape, in[2]->shape);
    if (failed(shape) || in[1]->elementType != in[2]->elementType ||
        numElements(*shape).value_or(kMaxFoldElements + 1) > kMaxFoldElements)
      return false;
    ConstTensor c = ConstTensor::make(in[1]->elementType, *shape);
    for (int64_t k = 0, e = c.size(); k < e; ++k) {
      bool cond = in[0]->asInt(broadcastIndex(*in[0], *shape, k));
      const ConstTensor &src = cond ? *in[1] : *in[2];
      int64_t idx = broadcastIndex(src, *shape, k);
      if (c.isFloat())
        c.f[k] = src.asDouble(idx);
      else
        c.i[k] = src.asInt(idx);
    }
    defineConst(node, 0, std::move(c));
    return true;
  }
  // Shape-changing ops on known tensors: compute the new shape with the
  // same rules as for run-time values, then reuse the data (row-major order
  // is unchanged by Reshape/Unsqueeze/Squeeze; Expand broadcasts).
  auto reshaped = [&](ArrayRef<int64_t> shape) -> FailureOr<bool> {
    ConstTensor c = *in[0];
    c.shape.assign(shape.begin(), shape.end());
    defineConst(node, 0, std::move(c));
    return true;
  };
  if (type == "Reshape") {
    if (in.size() < 2 || !in[1])
      return false;
    std::string error;
    auto target = reshapeTarget(in[0]->shape, *in[1],
                                intAttr(node, "allowzero", 0), error);
    if (failed(target)) {
      nodeError(node) << "cannot reshape " << formatDims(in[0]->shape)
                      << ": " << error;
      return failure();
    }
    return reshaped(*target);
  }
  if (type == "Unsqueeze" || type == "Squeeze") {
    std::string error;
    FailureOr<SmallVector<int64_t>> shape =
        type == "Unsqueeze"
            ? (in.size() > 1 && in[1]
                   ? unsqueezedShape(in[0]->shape, *constAxes(in[1]), error)
                   : FailureOr<SmallVector<int64_t>>(failure()))
            : squeezedShape(in[0]->shape,
                            in.size() > 1 && in[1] ? constAxes(in[1])
                                                   : std::nullopt,
                            error);
    if (failed(shape)) {
      nodeError(node) << (error.empty() ? "axes input is missing" : error);
      return failure();
    }
    return reshaped(*shape);
  }
  if (type == "Expand") {
    if (in.size() < 2 || !in[1])
      return false;
    std::string error;
    FailureOr<SmallVector<int64_t>> target = shapeOperand(*in[1], error);
    if (failed(target))
      return false;
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(in[0]->shape, *target);
    if (failed(shape) ||
        numElements(*shape).value_or(kMaxFoldElements + 1) > kMaxFoldElements)
      return false;
    ConstTensor c = ConstTensor::make(et, *shape);
    for (int64_t k = 0, e = c.size(); k < e; ++k) {
      int64_t idx = broadcastIndex(*in[0], *shape, k);
      if (c.isFloat())
        c.f[k] = in[0]->f[idx];
      else
        c.i[k] = in[0]->i[idx];
    }
    defineConst(node, 0, std::move(c));
    return true;
  }
  if (type == "Concat") {
    int64_t rank = in[0]->shape.size();
    int64_t axis = intAttr(node, "axis", 0);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return false;
    SmallVector<int64_t> shape(in[0]->shape);
    shape[axis] = 0;
    for (const ConstTensor *t : in) {
      if (!t || t->shape.size() != static_cast<size_t>(rank) ||
          t->elementType != et)
        return false;
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && t->shape[d] != shape[d])
          return false;
      shape[axis] += t->shape[axis];
    }
    ConstTensor c = ConstTensor::make(et, shape);
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= shape[d];
    int64_t pos = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (const ConstTensor *t : in) {
        int64_t chunk = t->size() / std::max<int64_t>(outer, 1);
        for (int64_t k = 0; k < chunk; ++k, ++pos) {
          if (c.isFloat())
            c.f[pos] = t->asDouble(o * chunk + k);
          else
            c.i[pos] = t->asInt(o * chunk + k);
        }
      }
    defineConst(node, 0, std::move(c));
    return true;
  }
  if (type == "Gather") {
    if (in.size() < 2 || !in[1])
      return false;
    const ConstTensor &data = *in[0], &idx = *in[1];
    if (idx.isFloat() || idx.elementType.isInteger(1))
      return false;
    int64_t rank = data.shape.size();
    int64_t axis = intAttr(node, "axis", 0);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return false;
    SmallVector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
    shape.append(idx.shape.begin(), idx.shape.end());
    shape.append(data.shape.begin() + axis + 1, data.shape.end());
    if (numElements(shape).value_or(kMaxFoldElements + 1) > kMaxFoldElements)
      return false;
    ConstTensor c = ConstTensor::make(et, shape);
    int64_t outer = 1, inner = 1, size = data.shape[axis];
    for (int64_t d = 0; d < axis; ++d)
      outer *= data.shape[d];
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= data.shape[d];
    int64_t pos = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < idx.size(); ++j) {
        int64_t v = idx.asInt(j);
        if (v < 0)
          v += size;
        if (v < 0 || v >= size) {
          nodeError(node) << "index " << idx.asInt(j)
                          << " is out of range for size " << size;
          return failure();
        }
        for (int64_t k = 0; k < inner; ++k, ++pos) {
          int64_t src = (o * size + v) * inner + k;
          if (c.isFloat())
            c.f[pos] = data.f[src];
          else
            c.i[pos] = data.i[src];
        }
      }
    defineConst(node, 0, std::move(c));
    return true;
  }
  if (type == "Slice") {
    // 1-D slices of shape vectors are what exporters produce; anything else
    // goes through the value path.
    if (in[0]->shape.size() != 1 || in.size() < 3 || !in[1] || !in[2] ||
        in[1]->size() != 1 || in[2]->size() != 1 ||
        (in.size() > 3 && in[3] &&
         (in[3]->size() != 1 || (in[3]->asInt(0) != 0 &&
                                 in[3]->asInt(0) != -1))) ||
        (in.size() > 4 && in[4] && in[4]->size() != 1))
      return false;
    int64_t size = in[0]->shape[0];
    int64_t step = in.size() > 4 && in[4] ? in[4]->asInt(0) : 1;
    if (step <= 0)
      return false;
    auto clampIndex = [&](int64_t v) {
      if (v < 0)
        v += size;
      return std::clamp<int64_t>(v, 0, size);
    };
    int64_t s = clampIndex(in[1]->asInt(0)), e = clampIndex(in[2]->asInt(0));
    ConstTensor c =
        ConstTensor::make(et, {e > s ? 1 + (e - s - 1) / step : 0});
    for (int64_t k = 0; k < c.size(); ++k) {
      if (c.isFloat())
        c.f[k] = in[0]->f[s + k * step];
      else
        c.i[k] = in[0]->i[s + k * step];
    }
    defineConst(node, 0, std::move(c));
    return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> Importer::run() {
  if (failed(checkModel()) || failed(checkSupportedOps()))
    return nullptr;
  const onnx::GraphProto &graph = model.graph();
  for (const auto &node : graph.node())
    for (const std::string &in : node.input())
      if (!in.empty())
        ++uses[in];
  for (const auto &out : graph.output())
    ++uses[out.name()];
  // Types the model declares for values (exporters write ONNX's shape
  // inference there); every node output is checked against them.
  llvm::StringMap<const onnx::TypeProto *> declared;
  for (const auto &vi : graph.value_info())
    declared[vi.name()] = &vi.type();
  for (const auto &out : graph.output())
    declared[out.name()] = &out.type();

  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<std::string> argNames;
  if (failed(importInputs(argTypes, argAttrs, argNames)) ||
      failed(importInitializers(argTypes, argAttrs, argNames)))
    return nullptr;

  Location fileLoc = FileLineColLoc::get(ctx, fileName, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, fileLoc, "main",
                                   b.getFunctionType(argTypes, {}));
  func.setAllArgAttrs(argAttrs);
  Block *body = func.addEntryBlock();
  for (auto [name, arg] : llvm::zip(argNames, body->getArguments()))
    values[name] = arg;
  b.setInsertionPointToEnd(body);

  // Errors that the loom ops themselves report (their shape rules and
  // verifiers) name the ONNX node being imported.
  const onnx::NodeProto *current = nullptr;
  bool reemitting = false;
  ScopedDiagnosticHandler nodeContext(ctx, [&](Diagnostic &diag) {
    if (!current || reemitting ||
        diag.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    std::string label = nodeLabel(*current);
    std::string message = diag.str();
    if (StringRef(message).starts_with(label))
      return failure();
    reemitting = true;
    InFlightDiagnostic prefixed = emitError(diag.getLocation())
                                  << label << ": " << message;
    for (Diagnostic &note : diag.getNotes())
      prefixed.attachNote(note.getLocation()) << note.str();
    prefixed.report();
    reemitting = false;
    return success();
  });

  for (const auto &node : graph.node()) {
    current = &node;
    Operation *last = body->empty() ? nullptr : &body->back();
    FailureOr<bool> folded = tryFold(node);
    if (failed(folded))
      return nullptr;
    if (!*folded) {
      Handler handler = handlers.lookup(node.op_type());
      if (failed((this->*handler)(node)))
        return nullptr;
    }
    for (Operation &op : llvm::make_range(
             last ? std::next(Block::iterator(last)) : body->begin(),
             body->end()))
      if (failed(verify(&op)))
        return nullptr;
    for (const std::string &out : node.output()) {
      if (out.empty())
        continue;
      producers[out] = &node;
      if (failed(checkDeclaredType(node, out, declared)))
        return nullptr;
    }
  }
  current = nullptr;

  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (const auto &out : graph.output()) {
    Value v = values.lookup(out.name());
    if (!v) {
      auto c = consts.find(out.name());
      if (c == consts.end()) {
        emitError(fileLoc) << "graph output '" << out.name()
                           << "' is not produced by any node, initializer "
                              "or graph input";
        return nullptr;
      }
      v = materialize(c->second, fileLoc);
    }
    results.push_back(v);
    resultAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
        LoomDialect::getNameAttrName(), b.getStringAttr(out.name()))));
  }
  if (results.empty()) {
    emitError(fileLoc) << "the graph has no outputs";
    return nullptr;
  }
  func::ReturnOp::create(b, fileLoc, results);
  func.setFunctionType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  func.setAllResultAttrs(resultAttrs);

  // Nodes whose results nothing uses (a LogSoftmax folded into a loss,
  // constants materialised for a Shape) would still count in the cost.
  for (Operation *op = body->getTerminator()->getPrevNode(); op;) {
    Operation *previous = op->getPrevNode();
    if (isOpTriviallyDead(op))
      op->erase();
    op = previous;
  }

  if (failed(verify(*module)))
    return nullptr;

  if (!options.noWeights && !options.weightsOut.empty()) {
    std::string error = ::loom::safetensors::writeFile(
        options.weightsOut, weights,
        {{"format", "pt"}, {"source", "loom-translate --import-onnx"}});
    if (!error.empty()) {
      emitError(fileLoc) << "cannot write weights: " << error;
      return nullptr;
    }
  }
  return module;
}

} // namespace

OwningOpRef<ModuleOp> mlir::loom::importOnnx(StringRef bytes,
                                             StringRef fileName,
                                             const OnnxImportOptions &options,
                                             MLIRContext *context) {
  context->loadDialect<LoomDialect, func::FuncDialect>();
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    emitError(FileLineColLoc::get(context, fileName, 0, 0))
        << "'" << fileName
        << "' is not a valid ONNX protobuf (truncated or another format?)";
    return nullptr;
  }
  Importer importer(context, model, options, fileName);
  return importer.run();
}
