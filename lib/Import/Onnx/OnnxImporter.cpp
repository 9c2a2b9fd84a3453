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
// * ONNX's implicit (numpy) broadcasting becomes explicit loom.broadcast.
//
// Every error names the node (its name and op type) and what to do.
//
//===----------------------------------------------------------------------===//

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
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include "onnx/onnx_pb.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>

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
  LogicalResult importInputs(SmallVectorImpl<Type> &argTypes,
                             SmallVectorImpl<DictionaryAttr> &argAttrs,
                             SmallVectorImpl<std::string> &argNames);
  LogicalResult importInitializers(SmallVectorImpl<Type> &argTypes,
                                   SmallVectorImpl<DictionaryAttr> &argAttrs,
                                   SmallVectorImpl<std::string> &argNames);
  bool isTrainable(StringRef name, Type elementType, int64_t rank);
  LogicalResult readTensorBytes(const onnx::TensorProto &t, Type elementType,
                                int64_t count, Location loc,
                                std::vector<uint8_t> &bytes);
  FailureOr<ConstTensor> readConstTensor(const onnx::TensorProto &t,
                                         Location loc);

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
  Value broadcastTo(Value v, ArrayRef<int64_t> shape, Location loc);
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
    unsupported.push_back({type, node.name()});
  }
  if (unsupported.empty())
    return success();
  InFlightDiagnostic diag =
      emitError(FileLineColLoc::get(ctx, fileName, 0, 0))
      << "the model uses " << unsupported.size()
      << " unsupported ONNX op type" << (unsupported.size() > 1 ? "s" : "")
      << ": ";
  llvm::interleaveComma(unsupported, diag, [&](const auto &entry) {
    diag << entry.first << " (first at node '" << entry.second << "')";
  });
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
  return emitError(nodeLoc(node))
         << "node '" << node.name() << "' (" << node.op_type() << "): ";
}

LogicalResult Importer::requireUnused(const onnx::NodeProto &node, int k,
                                      StringRef what) {
  if (k < node.output_size() && !node.output(k).empty() &&
      uses.lookup(node.output(k)) > 0)
    return nodeError(node) << "output " << k << " (" << what
                           << ") is used, which Loom does not support";
  return success();
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

LogicalResult Importer::readTensorBytes(const onnx::TensorProto &t,
                                        Type elementType, int64_t count,
                                        Location loc,
                                        std::vector<uint8_t> &bytes) {
  int64_t width = byteWidth(elementType);
  int64_t want = count * width;
  auto mismatch = [&](int64_t have) {
    return emitError(loc) << "tensor '" << t.name() << "' has " << have
                          << " values but its shape needs " << count;
  };
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto &kv : t.external_data()) {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        offset = std::atoll(kv.value().c_str());
      else if (kv.key() == "length")
        length = std::atoll(kv.value().c_str());
    }
    if (location.empty())
      return emitError(loc) << "external tensor '" << t.name()
                            << "' names no data file";
    SmallString<256> path(options.modelDir);
    llvm::sys::path::append(path, location);
    std::ifstream file(std::string(path), std::ios::binary);
    if (!file)
      return emitError(loc) << "cannot open external data file '" << path
                            << "' of tensor '" << t.name() << "'";
    if (length < 0)
      length = want;
    if (length != want)
      return emitError(loc) << "external tensor '" << t.name() << "' has "
                            << length << " bytes but its shape needs "
                            << want;
    file.seekg(offset);
    bytes.resize(want);
    file.read(reinterpret_cast<char *>(bytes.data()), want);
    if (file.gcount() != want)
      return emitError(loc) << "external data file '" << path
                            << "' ends before tensor '" << t.name() << "' ("
                            << "offset " << offset << ", " << want
                            << " bytes)";
    return success();
  }
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != want)
      return mismatch(t.raw_data().size() / std::max<int64_t>(width, 1));
    bytes.assign(t.raw_data().begin(), t.raw_data().end());
    return success();
  }
  bytes.resize(want);
  auto copy = [&](const auto &field, auto convert) -> LogicalResult {
    if (field.size() != count)
      return mismatch(field.size());
    for (int64_t k = 0; k < count; ++k) {
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
                                                 Location loc) {
  Type type = convertElementType(t.data_type(), ctx);
  if (!type) {
    emitError(loc) << "tensor '" << t.name() << "' has element type "
                   << onnxTypeName(t.data_type())
                   << ", which Loom does not support (supported: float32, "
                      "float16, bfloat16, int64, int32, bool)";
    return failure();
  }
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape)
    if (d < 0) {
      emitError(loc) << "tensor '" << t.name() << "' has a negative dimension";
      return failure();
    }
  ConstTensor c = ConstTensor::make(type, shape);
  std::vector<uint8_t> bytes;
  if (failed(readTensorBytes(t, type, c.size(), loc, bytes)))
    return failure();
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
  llvm::StringSet<> bound;
  for (const auto &in : model.graph().input()) {
    // Older exporters list initializers as graph inputs too.
    if (initializers.contains(in.name()))
      continue;
    Location loc = NameLoc::get(StringAttr::get(ctx, in.name()),
                                FileLineColLoc::get(ctx, fileName, 0, 0));
    if (!in.type().has_tensor_type())
      return emitError(loc) << "graph input '" << in.name()
                            << "' is not a tensor";
    const auto &tt = in.type().tensor_type();
    Type elementType = convertElementType(tt.elem_type(), ctx);
    if (!elementType)
      return emitError(loc) << "graph input '" << in.name()
                            << "' has element type "
                            << onnxTypeName(tt.elem_type())
                            << ", which Loom does not support";
    SmallVector<int64_t> shape;
    for (const auto &dim : tt.shape().dim())
      shape.push_back(dim.has_dim_value() ? dim.dim_value()
                                          : ShapedType::kDynamic);
    auto binding = options.inputShapes.find(in.name());
    if (binding != options.inputShapes.end()) {
      bound.insert(in.name());
      FailureOr<SmallVector<int64_t>> met =
          meetShapes(shape, binding->second);
      if (failed(met) || llvm::is_contained(binding->second, -1))
        return emitError(loc)
               << "--input-shape " << in.name() << "="
               << formatDims(binding->second) << " does not match its "
               << "declared shape " << formatDims(shape);
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
  for (const auto &entry : options.inputShapes)
    if (!bound.contains(entry.first()))
      return emitError(FileLineColLoc::get(ctx, fileName, 0, 0))
             << "--input-shape names '" << entry.first()
             << "', which is not a graph input";
  return success();
}

static bool matchesAny(StringRef name, ArrayRef<std::string> patterns) {
  for (const std::string &p : patterns) {
    if (name == p)
      return true;
    llvm::Regex re("^(" + p + ")$");
    if (re.isValid() && re.match(name))
      return true;
  }
  return false;
}

bool Importer::isTrainable(StringRef name, Type elementType, int64_t rank) {
  // Default: floating-point tensors of rank >= 1. Exporters store scalar
  // constants (1/sqrt(d), 0.5, ...) as rank-0 initializers; they are not
  // weights.
  bool trainable = isa<FloatType>(elementType) && rank >= 1;
  if (matchesAny(name, options.frozen))
    trainable = false;
  else if (!options.trainable.empty())
    trainable = matchesAny(name, options.trainable);
  return trainable;
}

LogicalResult
Importer::importInitializers(SmallVectorImpl<Type> &argTypes,
                             SmallVectorImpl<DictionaryAttr> &argAttrs,
                             SmallVectorImpl<std::string> &argNames) {
  for (const std::string &p : llvm::concat<const std::string>(
           options.trainable, options.frozen)) {
    std::string error;
    if (!llvm::Regex("^(" + p + ")$").isValid(error))
      return emitError(FileLineColLoc::get(ctx, fileName, 0, 0))
             << "invalid --trainable/--frozen pattern '" << p
             << "': " << error;
  }
  for (const auto &init : model.graph().initializer()) {
    Location loc = NameLoc::get(StringAttr::get(ctx, init.name()),
                                FileLineColLoc::get(ctx, fileName, 0, 0));
    Type elementType = convertElementType(init.data_type(), ctx);
    if (!elementType)
      return emitError(loc) << "initializer '" << init.name()
                            << "' has element type "
                            << onnxTypeName(init.data_type())
                            << ", which Loom does not support";
    bool trainable = isTrainable(init.name(), elementType, init.dims_size());
    int64_t count = 1;
    for (int64_t d : init.dims())
      count *= d;
    if (!isa<FloatType>(elementType) || (!trainable && count <= 1)) {
      // Integer and boolean initializers are program constants (shapes,
      // indices, masks): they are needed to import the graph at all. So are
      // non-trainable float scalars.
      if (!isa<FloatType>(elementType) &&
          llvm::is_contained(options.trainable, init.name()))
        return emitError(loc) << "initializer '" << init.name()
                              << "' has element type "
                              << onnxTypeName(init.data_type())
                              << " and cannot be trained (--trainable "
                                 "names only floating-point initializers)";
      FailureOr<ConstTensor> c = readConstTensor(init, loc);
      if (failed(c))
        return failure();
      consts[init.name()] = std::move(*c);
      continue;
    }
    SmallVector<int64_t> shape(init.dims().begin(), init.dims().end());
    if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
      return emitError(loc) << "initializer '" << init.name()
                            << "' has a negative dimension";
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
    if (failed(readTensorBytes(init, elementType, type.getNumElements(), loc,
                               t.data)))
      return failure();
    weights.push_back(std::move(t));
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

template <typename OpTy>
LogicalResult Importer::importUnary(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  define(node, 0, OpTy::create(b, nodeLoc(node), *x));
  return success();
}

template <typename OpTy>
LogicalResult Importer::importBinary(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0), y = input(node, 1);
  if (failed(x) || failed(y))
    return failure();
  if (typeOf(*x).getElementType() != typeOf(*y).getElementType())
    return nodeError(node) << "operand element types "
                           << typeOf(*x).getElementType() << " and "
                           << typeOf(*y).getElementType() << " differ";
  auto pair = broadcastPair(node, *x, *y);
  if (failed(pair))
    return failure();
  define(node, 0, OpTy::create(b, nodeLoc(node), pair->first, pair->second));
  return success();
}

template <typename OpTy>
LogicalResult Importer::importVariadic(const onnx::NodeProto &node) {
  FailureOr<Value> acc = input(node, 0);
  if (failed(acc))
    return failure();
  Value result = *acc;
  for (int k = 1; k < node.input_size(); ++k) {
    FailureOr<Value> y = input(node, k);
    if (failed(y))
      return failure();
    auto pair = broadcastPair(node, result, *y);
    if (failed(pair))
      return failure();
    result = OpTy::create(b, nodeLoc(node), pair->first, pair->second);
  }
  define(node, 0, result);
  return success();
}

LogicalResult Importer::importCompare(const onnx::NodeProto &node,
                                      ComparisonDirection direction) {
  FailureOr<Value> x = input(node, 0), y = input(node, 1);
  if (failed(x) || failed(y))
    return failure();
  auto pair = broadcastPair(node, *x, *y);
  if (failed(pair))
    return failure();
  define(node, 0,
         CompareOp::create(b, nodeLoc(node), direction, pair->first,
                           pair->second));
  return success();
}

LogicalResult Importer::importNot(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  Value zero = splat(0, typeOf(*x), nodeLoc(node));
  define(node, 0,
         CompareOp::create(b, nodeLoc(node), ComparisonDirection::eq, *x,
                           zero));
  return success();
}

LogicalResult Importer::importReciprocal(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  Value one = splat(1.0, typeOf(*x), nodeLoc(node));
  define(node, 0, DivOp::create(b, nodeLoc(node), one, *x));
  return success();
}

LogicalResult Importer::importGelu(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  std::string approx = stringAttr(node, "approximate", "none");
  if (approx != "none" && approx != "tanh")
    return nodeError(node) << "approximate = '" << approx
                           << "' is not one of 'none', 'tanh'";
  define(node, 0,
         GeluOp::create(b, nodeLoc(node), *x,
                        approx == "tanh" ? GeluApproximation::tanh
                                         : GeluApproximation::none));
  return success();
}

LogicalResult Importer::importWhere(const onnx::NodeProto &node) {
  FailureOr<Value> c = input(node, 0), x = input(node, 1), y = input(node, 2);
  if (failed(c) || failed(x) || failed(y))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(typeOf(*c).getShape(), typeOf(*x).getShape());
  if (succeeded(shape))
    shape = broadcastShapes(*shape, typeOf(*y).getShape());
  if (failed(shape))
    return nodeError(node) << "condition and branch shapes do not broadcast";
  Location loc = nodeLoc(node);
  define(node, 0,
         SelectOp::create(b, loc, broadcastTo(*c, *shape, loc),
                          broadcastTo(*x, *shape, loc),
                          broadcastTo(*y, *shape, loc)));
  return success();
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
  // the mask output must not be used.
  if (failed(requireUnused(node, 1, "the dropout mask")))
    return failure();
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
  define(node, 0, SoftmaxOp::create(b, nodeLoc(node), *x, *axis));
  return success();
}

LogicalResult Importer::importLogSoftmax(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(node, intAttr(node, "axis", -1), typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  define(node, 0, LogSoftmaxOp::create(b, nodeLoc(node), *x, *axis));
  return success();
}

LogicalResult Importer::importLayerNorm(const onnx::NodeProto &node) {
  if (failed(requireUnused(node, 1, "Mean")) ||
      failed(requireUnused(node, 2, "InvStdDev")))
    return failure();
  FailureOr<Value> x = input(node, 0), scale = input(node, 1);
  if (failed(x) || failed(scale))
    return failure();
  Value bias;
  if (hasInput(node, 2)) {
    FailureOr<Value> bv = input(node, 2);
    if (failed(bv))
      return failure();
    bias = *bv;
  }
  int64_t rank = typeOf(*x).getRank();
  FailureOr<int64_t> axis = normalizeAxis(node, intAttr(node, "axis", -1), rank);
  if (failed(axis))
    return failure();
  // Scale and bias broadcast to the normalised dimensions.
  ArrayRef<int64_t> normalized = typeOf(*x).getShape().drop_front(*axis);
  Location loc = nodeLoc(node);
  Value s = broadcastTo(*scale, normalized, loc);
  Value bb = bias ? broadcastTo(bias, normalized, loc) : Value();
  double eps = floatAttr(node, "epsilon", 1e-5f);
  define(node, 0,
         LayerNormOp::create(b, loc, *x, s, bb, b.getI64IntegerAttr(*axis),
                             b.getF64FloatAttr(eps)));
  return success();
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
    return nodeError(node) << "contracting sizes differ: " << formatDims(ls)
                           << " x " << formatDims(rs);
  Value result;
  if (rr == 2) {
    // [..., M, K] x [K, N]: contract the last lhs dim with rhs dim 0.
    result = DotGeneralOp::create(b, loc, lhs, rhs, ArrayRef<int64_t>{},
                                  ArrayRef<int64_t>{},
                                  ArrayRef<int64_t>{lr - 1},
                                  ArrayRef<int64_t>{0});
  } else {
    // Batched: broadcast the batch dimensions, then a batched dot.
    FailureOr<SmallVector<int64_t>> batch =
        broadcastShapes(ls.drop_back(2), rs.drop_back(2));
    if (failed(batch))
      return nodeError(node) << "batch dimensions of " << formatDims(ls)
                             << " and " << formatDims(rs)
                             << " do not broadcast";
    SmallVector<int64_t> lt(*batch), rt(*batch);
    lt.append({ls[lr - 2], ls[lr - 1]});
    rt.append({rs[rr - 2], rs[rr - 1]});
    lhs = broadcastTo(lhs, lt, loc);
    rhs = broadcastTo(rhs, rt, loc);
    int64_t nb = batch->size();
    SmallVector<int64_t> bd(nb);
    std::iota(bd.begin(), bd.end(), 0);
    result = DotGeneralOp::create(b, loc, lhs, rhs, bd, bd,
                                  ArrayRef<int64_t>{nb + 1},
                                  ArrayRef<int64_t>{nb});
  }
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
    return nodeError(node) << "Gemm operands must be matrices";
  Location loc = nodeLoc(node);
  bool transA = intAttr(node, "transA", 0), transB = intAttr(node, "transB", 0);
  double alpha = floatAttr(node, "alpha", 1.0f),
         beta = floatAttr(node, "beta", 1.0f);
  int64_t ka = transA ? 0 : 1, kb = transB ? 1 : 0;
  if (typeOf(*a).getDimSize(ka) != typeOf(*bm).getDimSize(kb))
    return nodeError(node) << "contracting sizes differ: "
                           << formatDims(typeOf(*a).getShape()) << " x "
                           << formatDims(typeOf(*bm).getShape());
  Value y = DotGeneralOp::create(b, loc, *a, *bm, ArrayRef<int64_t>{},
                                 ArrayRef<int64_t>{}, ArrayRef<int64_t>{ka},
                                 ArrayRef<int64_t>{kb});
  if (alpha != 1.0)
    y = MulOp::create(b, loc, y, splat(alpha, typeOf(y), loc));
  if (hasInput(node, 2)) {
    FailureOr<Value> c = input(node, 2);
    if (failed(c))
      return failure();
    if (failed(broadcastShapes(typeOf(*c).getShape(), typeOf(y).getShape())))
      return nodeError(node) << "C of shape "
                             << formatDims(typeOf(*c).getShape())
                             << " does not broadcast to the result "
                             << formatDims(typeOf(y).getShape());
    Value cb = broadcastTo(*c, typeOf(y).getShape(), loc);
    if (beta != 1.0)
      cb = MulOp::create(b, loc, cb, splat(beta, typeOf(cb), loc));
    y = AddOp::create(b, loc, y, cb);
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
  SmallVector<int64_t> out;
  int64_t known = 1, inferAt = -1;
  int64_t total = std::accumulate(in.begin(), in.end(), int64_t(1),
                                  std::multiplies<int64_t>());
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
    known *= d;
    out.push_back(d);
  }
  if (inferAt >= 0) {
    if (known == 0 || total % known != 0) {
      error = "cannot infer the -1 dimension";
      return failure();
    }
    out[inferAt] = total / known;
  } else if (known != total) {
    error = "the target has " + std::to_string(known) +
            " elements but the input has " + std::to_string(total);
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
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  }
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  for (int64_t d = 0; d < static_cast<int64_t>(sorted.size()); ++d)
    if (sorted[d] != d || static_cast<int64_t>(perm.size()) != rank)
      return nodeError(node) << "perm " << formatDims(perm)
                             << " is not a permutation of the " << rank
                             << " input dimensions";
  define(node, 0, TransposeOp::create(b, nodeLoc(node), *x, perm));
  return success();
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
      error = "axes repeat " + std::to_string(a);
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

LogicalResult Importer::importExpand(const onnx::NodeProto &node) {
  FailureOr<Value> x = input(node, 0);
  FailureOr<ConstTensor> shapeT = requireConst(node, 1, "the target shape");
  if (failed(x) || failed(shapeT))
    return failure();
  SmallVector<int64_t> target = *constAxes(&*shapeT);
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(typeOf(*x).getShape(), target);
  if (failed(shape))
    return nodeError(node) << "cannot expand "
                           << formatDims(typeOf(*x).getShape()) << " to "
                           << formatDims(target);
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
  define(node, 0, ConcatOp::create(b, nodeLoc(node), inputs, *axis));
  return success();
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
  SmallVector<int64_t> sizes;
  if (hasInput(node, 1)) {
    FailureOr<ConstTensor> split = requireConst(node, 1, "split");
    if (failed(split))
      return failure();
    sizes = *constAxes(&*split);
  } else {
    int64_t n = attr(node, "num_outputs") ? intAttr(node, "num_outputs", 1)
                                          : node.output_size();
    if (n <= 0)
      return nodeError(node) << "needs at least one output";
    int64_t piece = (size + n - 1) / n;
    for (int64_t k = 0; k < n; ++k)
      sizes.push_back(std::min(piece, size - k * piece));
  }
  if (static_cast<int64_t>(sizes.size()) != node.output_size())
    return nodeError(node) << "has " << node.output_size()
                           << " outputs but " << sizes.size()
                           << " split sizes";
  if (std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != size ||
      llvm::any_of(sizes, [](int64_t s) { return s < 0; }))
    return nodeError(node) << "split sizes " << formatDims(sizes)
                           << " do not add up to " << size;
  auto op = SplitOp::create(b, nodeLoc(node), *x, *axis, sizes);
  for (auto [k, r] : llvm::enumerate(op.getResults()))
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
    return nodeError(node) << "starts, ends, axes and steps differ in length";
  SmallVector<int64_t> start(rank, 0), limit(in), stride(rank, 1);
  for (size_t k = 0; k < axes.size(); ++k) {
    FailureOr<int64_t> axis = normalizeAxis(node, axes[k], rank, "axes entry");
    if (failed(axis))
      return failure();
    int64_t size = in[*axis];
    if (steps[k] <= 0)
      return nodeError(node) << "step " << steps[k] << " on axis " << *axis
                             << " is not supported (only positive steps)";
    auto clampIndex = [&](int64_t v) {
      if (v < 0)
        v += size;
      return std::clamp<int64_t>(v, 0, size);
    };
    start[*axis] = clampIndex(starts->asInt(k));
    limit[*axis] = std::max(start[*axis], clampIndex(ends->asInt(k)));
    stride[*axis] = steps[k];
  }
  define(node, 0,
         SliceOp::create(b, nodeLoc(node), *x, start, limit, stride));
  return success();
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
    // Constant indices: normalise negative ones (ONNX allows them).
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
    return nodeError(node) << "indices must be int32 or int64";
  define(node, 0, GatherOp::create(b, nodeLoc(node), *data, indices, *axis));
  return success();
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
    dims.push_back(*n);
  }
  llvm::sort(dims);
  define(node, 0, OpTy::create(b, nodeLoc(node), *x, dims, keepdims));
  return success();
}

LogicalResult Importer::importCrossEntropy(const onnx::NodeProto &node,
                                           Value scores, Value labels) {
  // ONNX puts the classes in dimension 1; loom wants them last.
  Location loc = nodeLoc(node);
  int64_t rank = typeOf(scores).getRank();
  if (rank < 2)
    return nodeError(node) << "scores must have shape [N, C, ...]";
  if (rank > 2) {
    SmallVector<int64_t> perm = {0};
    for (int64_t d = 2; d < rank; ++d)
      perm.push_back(d);
    perm.push_back(1);
    scores = TransposeOp::create(b, loc, scores, perm);
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
  define(node, 0, CrossEntropyOp::create(b, loc, scores, labels, r, ignore));
  return success();
}

LogicalResult Importer::importSoftmaxCrossEntropy(const onnx::NodeProto &node) {
  if (hasInput(node, 2))
    return nodeError(node) << "class weights are not supported";
  if (failed(requireUnused(node, 1, "log_prob")))
    return failure();
  FailureOr<Value> scores = input(node, 0), labels = input(node, 1);
  if (failed(scores) || failed(labels))
    return failure();
  return importCrossEntropy(node, *scores, *labels);
}

LogicalResult Importer::importNllLoss(const onnx::NodeProto &node) {
  // NLL(log_softmax(x, axis=1)) == cross_entropy(x): Loom imports that pair
  // and nothing else (NLL of arbitrary inputs has no loom op).
  if (hasInput(node, 2))
    return nodeError(node) << "class weights are not supported";
  const onnx::NodeProto *producer = producers.lookup(node.input(0));
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
    FailureOr<ConstTensor> t = readConstTensor(a->t(), loc);
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
  FailureOr<Value> x = input(node, 0);
  if (failed(x))
    return failure();
  ArrayRef<int64_t> shape = typeOf(*x).getShape();
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
  SmallVector<int64_t> shape = *constAxes(&*shapeT);
  ConstTensor value = ConstTensor::make(b.getF32Type(), {1});
  if (const auto *a = attr(node, "value")) {
    FailureOr<ConstTensor> t = readConstTensor(a->t(), nodeLoc(node));
    if (failed(t))
      return failure();
    if (t->size() != 1)
      return nodeError(node) << "value must hold one element";
    value = std::move(*t);
  }
  ConstTensor c = ConstTensor::make(value.elementType, shape);
  if (c.isFloat())
    std::fill(c.f.begin(), c.f.end(), value.f[0]);
  else
    std::fill(c.i.begin(), c.i.end(), value.i[0]);
  // Large fills stay symbolic: a splat constant is as cheap as a scalar.
  defineConst(node, 0, std::move(c));
  return success();
}

LogicalResult Importer::importRange(const onnx::NodeProto &node) {
  FailureOr<ConstTensor> start = requireConst(node, 0, "start"),
                         limit = requireConst(node, 1, "limit"),
                         delta = requireConst(node, 2, "delta");
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  double s = start->asDouble(0), l = limit->asDouble(0), d = delta->asDouble(0);
  if (d == 0)
    return nodeError(node) << "delta is 0";
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l - s) / d)));
  ConstTensor c = ConstTensor::make(start->elementType, {n});
  for (int64_t k = 0; k < n; ++k) {
    if (c.isFloat())
      c.f[k] = s + k * d;
    else
      c.i[k] = static_cast<int64_t>(s) + k * static_cast<int64_t>(d);
  }
  defineConst(node, 0, std::move(c));
  return success();
}

FailureOr<bool> Importer::tryFold(const onnx::NodeProto &node) {
  StringRef type = node.op_type();
  static constexpr int64_t kMaxFoldElements = 1 << 20;
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
  Location loc = nodeLoc(node);
  (void)loc;

  // Elementwise with numpy broadcasting.
  auto elementwise = [&](Type resultType,
                         std::function<double(double, double)> fd,
                         std::function<int64_t(int64_t, int64_t)> fi)
      -> FailureOr<bool> {
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(in[0]->shape, in.size() > 1 ? in[1]->shape
                                                    : in[0]->shape);
    if (failed(shape)) {
      nodeError(node) << "operand shapes do not broadcast";
      return failure();
    }
    ConstTensor c = ConstTensor::make(resultType, *shape);
    if (c.size() > kMaxFoldElements)
      return false;
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
  if (type == "Add")
    return elementwise(et, std::plus<double>(), std::plus<int64_t>());
  if (type == "Sub")
    return elementwise(et, std::minus<double>(), std::minus<int64_t>());
  if (type == "Mul")
    return elementwise(et, std::multiplies<double>(),
                       std::multiplies<int64_t>());
  if (type == "Div") {
    if (!in[1]->isFloat() && llvm::is_contained(in[1]->i, 0))
      return false;
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
                       [](int64_t a, int64_t) { return -a; });
  if (type == "Abs")
    return elementwise(et, [](double a, double) { return std::fabs(a); },
                       [](int64_t a, int64_t) { return a < 0 ? -a : a; });
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
    return elementwise(
        to, [](double a, double) { return a; },
        [&](int64_t a, int64_t) -> int64_t {
          return to.isInteger(1) ? a != 0 : a;
        });
  }
  if (type == "Where") {
    if (in.size() != 3 || !in[1] || !in[2])
      return false;
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(in[0]->shape, in[1]->shape);
    if (succeeded(shape))
      shape = broadcastShapes(*shape, in[2]->shape);
    if (failed(shape))
      return false;
    ConstTensor c = ConstTensor::make(in[1]->elementType, *shape);
    if (c.size() > kMaxFoldElements)
      return false;
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
    SmallVector<int64_t> target = *constAxes(in[1]);
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(in[0]->shape, target);
    if (failed(shape))
      return false;
    ConstTensor c = ConstTensor::make(et, *shape);
    if (c.size() > kMaxFoldElements)
      return false;
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
      if (!t || t->shape.size() != static_cast<size_t>(rank))
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
    int64_t rank = data.shape.size();
    int64_t axis = intAttr(node, "axis", 0);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return false;
    SmallVector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
    shape.append(idx.shape.begin(), idx.shape.end());
    shape.append(data.shape.begin() + axis + 1, data.shape.end());
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
    if (in[0]->shape.size() != 1 || in.size() < 3 || !in[1] || !in[2])
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
    ConstTensor c = ConstTensor::make(et, {std::max<int64_t>(0, (e - s + step - 1) / step)});
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

  for (const auto &node : graph.node()) {
    FailureOr<bool> folded = tryFold(node);
    if (failed(folded))
      return nullptr;
    if (!*folded) {
      Handler handler = handlers.lookup(node.op_type());
      if (failed((this->*handler)(node)))
        return nullptr;
    }
    for (const std::string &out : node.output())
      if (!out.empty())
        producers[out] = &node;
  }

  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (const auto &out : graph.output()) {
    Value v = values.lookup(out.name());
    if (!v) {
      auto c = consts.find(out.name());
      if (c == consts.end()) {
        emitError(fileLoc) << "graph output '" << out.name()
                           << "' is not produced by any node";
        return nullptr;
      }
      v = materialize(c->second, fileLoc);
    }
    results.push_back(v);
    resultAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
        LoomDialect::getNameAttrName(), b.getStringAttr(out.name()))));
  }
  func::ReturnOp::create(b, fileLoc, results);
  func.setFunctionType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  func.setAllResultAttrs(resultAttrs);

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
