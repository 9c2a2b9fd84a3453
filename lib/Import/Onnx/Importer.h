//===- Importer.h - The ONNX importer's core and handlers -------*- C++ -*-===//
//
// Private to lib/Import/Onnx/ (the public entry point is
// include/loom/Import/Onnx.h). The importer is split by op family:
//
//   Importer.cpp         the core: model and opset checks, the graph walk,
//                        the value map, node names and diagnostics, and the
//                        building helpers every handler uses;
//   TensorData.cpp       element types, TensorProto decoding (raw, typed and
//                        external data), graph inputs, initializers and the
//                        weights written to safetensors;
//   ConstantFolding.cpp  compile-time tensors: Constant, Shape,
//                        ConstantOfShape, Range, and the evaluation of shape
//                        arithmetic on them at import time;
//   Elementwise.cpp      unary (Cos/Sin among them), binary and variadic
//                        arithmetic (Sum, Mean, integer Mod), comparisons,
//                        And/Or/Xor/Not, IsNaN/IsInf, Where/Cast, Gelu,
//                        Identity/Dropout;
//   ShapeOps.cpp         Reshape, Transpose, (Un)Squeeze, Flatten, Expand,
//                        Concat, Split, Slice, Gather, GatherElements, Pad,
//                        Trilu, and the ONNX shape rules that the constant
//                        folding shares;
//   Contraction.cpp      MatMul and Gemm, Softmax/LogSoftmax and
//                        LayerNormalization;
//   Losses.cpp           reductions, CumSum and the cross-entropy losses;
//   StreamedWeights.cpp  cuts large initializer data out of the bytes the
//                        protobuf parser sees (read from the file instead).
//
// A handler is a free function of its family file that imports one node
// through the Importer's helpers; each family file registers its handlers
// (op type -> handler) in its register*Handlers function, which the Importer
// calls once when it is created. Adding an op touches its family file only.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_IMPORT_ONNX_IMPORTER_H
#define LOOM_LIB_IMPORT_ONNX_IMPORTER_H

#include "loom/Import/Onnx.h"
#include "loom/Support/Safetensors.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <cassert>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace loom {
namespace onnx_import {

//===----------------------------------------------------------------------===//
// Element types and sizes (TensorData.cpp)
//===----------------------------------------------------------------------===//

/// The ONNX name of an ONNX element type ("float32").
const char *onnxTypeName(int32_t type);

/// The loom element type for an ONNX one, or null when Loom has none.
Type convertElementType(int32_t type, MLIRContext *ctx);

/// convertElementType, plus float64 for compile-time tensors (constants
/// that the importer folds; a run-time op never reads one).
Type convertConstElementType(int32_t type, MLIRContext *ctx);

/// The number of elements of `shape`, or nullopt when a size is negative or
/// the count does not fit in int64 (malformed or hostile dimensions).
std::optional<int64_t> numElements(ArrayRef<int64_t> shape);

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

//===----------------------------------------------------------------------===//
// Names, numbers and shapes (Importer.cpp)
//===----------------------------------------------------------------------===//

/// A number as "%g" prints it (0.1, 1e-05).
std::string formatNumber(double v);

/// How diagnostics name a node: "node 'fc1'", or by its first output when
/// it has no name.
std::string nodeName(const onnx::NodeProto &node);

/// "node 'fc1' (Gemm)"
std::string nodeLabel(const onnx::NodeProto &node);

/// Numpy broadcasting of two shapes.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b);

/// Checks that two operands share an element type, as ONNX requires.
LogicalResult sameElementType(InFlightDiagnostic &&diag, Type x, Type y);

//===----------------------------------------------------------------------===//
// ONNX shape rules, shared by the run-time and the folding paths
// (ShapeOps.cpp)
//===----------------------------------------------------------------------===//

/// ONNX Reshape's target: 0 copies the input size (unless allowzero), one
/// -1 is inferred.
FailureOr<SmallVector<int64_t>> reshapeTarget(ArrayRef<int64_t> in,
                                              const ConstTensor &shape,
                                              bool allowZero,
                                              std::string &error);

/// Axes of Squeeze/Unsqueeze/Reduce*: an input since opset 13 (18 for most
/// reductions), an attribute before.
std::optional<SmallVector<int64_t>> constAxes(const ConstTensor *c);

/// Result shape of Unsqueeze(in, axes).
FailureOr<SmallVector<int64_t>> unsqueezedShape(ArrayRef<int64_t> in,
                                                ArrayRef<int64_t> axes,
                                                std::string &error);

/// Result shape of Squeeze(in, axes); without axes every size-1 dimension
/// goes.
FailureOr<SmallVector<int64_t>>
squeezedShape(ArrayRef<int64_t> in,
              const std::optional<SmallVector<int64_t>> &axes,
              std::string &error);

/// The 1-D, non-negative shape held by `t` (Expand, ConstantOfShape).
FailureOr<SmallVector<int64_t>> shapeOperand(const ConstTensor &t,
                                             std::string &error);

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

class Importer;

/// Imports one node: defines its outputs, or reports an error that names
/// the node and fails.
using Handler = LogicalResult (*)(Importer &, const onnx::NodeProto &);

/// ONNX op type (default domain) -> its handler.
class HandlerRegistry {
public:
  /// Registers handlers; each op type has one.
  void add(std::initializer_list<std::pair<StringRef, Handler>> entries) {
    for (const auto &[opType, handler] : entries) {
      bool inserted = handlers.try_emplace(opType, handler).second;
      assert(inserted && "an ONNX op type has two handlers");
      (void)inserted;
    }
  }
  Handler lookup(StringRef opType) const { return handlers.lookup(opType); }
  bool contains(StringRef opType) const { return handlers.count(opType); }
  /// The supported op types, sorted (for diagnostics).
  SmallVector<StringRef> sortedNames() const;

private:
  llvm::StringMap<Handler> handlers;
};

// One per family file.
void registerConstantHandlers(HandlerRegistry &registry);
void registerElementwiseHandlers(HandlerRegistry &registry);
void registerShapeHandlers(HandlerRegistry &registry);
void registerContractionHandlers(HandlerRegistry &registry);
void registerLossHandlers(HandlerRegistry &registry);

/// `c` converted to `to` as ONNX's Cast does (floats to integers truncate,
/// to bool is `!= 0`), or nullopt when a value has no such integer (NaN,
/// infinities, out of int64's range) (ConstantFolding.cpp).
std::optional<ConstTensor> castConstTensor(const ConstTensor &c, Type to);

/// Evaluates `node` at import time when all its inputs are known and the
/// op is one of the shape-arithmetic ops. Returns true when it did
/// (ConstantFolding.cpp).
FailureOr<bool> tryFold(Importer &im, const onnx::NodeProto &node);

/// The raw data of an initializer that was cut out of the parsed bytes: a
/// view into the model's bytes and its offset there.
struct StreamedData {
  int initializer = 0;
  StringRef bytes;
  uint64_t offset = 0;
};

/// A model's bytes with the large raw_data payloads of its initializers cut
/// out, and those payloads (StreamedWeights.cpp).
struct StrippedModel {
  std::string bytes;
  std::vector<StreamedData> rawData;
};

/// `model` with every initializer raw_data of at least `minBytes` cut out;
/// nullopt when there is none or the bytes are not a well-formed message
/// (parse them as they are).
std::optional<StrippedModel> stripInitializerData(StringRef model,
                                                  size_t minBytes);

//===----------------------------------------------------------------------===//
// The importer
//===----------------------------------------------------------------------===//

class Importer {
public:
  /// `streamedRawData`: the raw data of initializers that
  /// stripInitializerData cut out of `model` (by initializer index).
  Importer(MLIRContext *ctx, const onnx::ModelProto &model,
           const OnnxImportOptions &options, StringRef fileName,
           ArrayRef<StreamedData> streamedRawData = {});

  OwningOpRef<ModuleOp> run();

  /// Imports the nodes of `graph`, a subgraph (an If's branch), into the
  /// function being built: they read the outer graph's values by name, and
  /// the caller maps the subgraph's outputs.
  LogicalResult importSubgraph(const onnx::GraphProto &graph);
  /// Whether options.batch bound a dynamic graph input dimension.
  bool boundBatch() const { return batchBound; }

  // --- what handlers use ----------------------------------------------------
  MLIRContext *ctx;
  OpBuilder b;
  /// The node that defined each value imported so far.
  llvm::StringMap<const onnx::NodeProto *> producers;

  // Values.
  Location nodeLoc(const onnx::NodeProto &node);
  InFlightDiagnostic nodeError(const onnx::NodeProto &node);
  bool hasInput(const onnx::NodeProto &node, int k) const {
    return k < node.input_size() && !node.input(k).empty();
  }
  FailureOr<Value> input(const onnx::NodeProto &node, int k);
  const ConstTensor *constInput(const onnx::NodeProto &node, int k) const;
  /// The value or known tensor named `name` (null when it has none).
  Value valueOf(StringRef name) const { return values.lookup(name); }
  const ConstTensor *constValue(StringRef name) const {
    auto it = consts.find(name);
    return it == consts.end() ? nullptr : &it->second;
  }
  /// The element type of input `k`, known or run-time, without
  /// materialising a known one; null after reporting a missing input.
  Type inputElementType(const onnx::NodeProto &node, int k);
  /// ONNX sequences (SplitToSequence's result), read by SequenceAt: the
  /// values of sequence `name` in order.
  void defineSequence(const onnx::NodeProto &node, int k,
                      SmallVector<Value> elements) {
    if (k < node.output_size() && !node.output(k).empty())
      sequences[node.output(k)] = std::move(elements);
  }
  const SmallVector<Value> *sequenceInput(const onnx::NodeProto &node,
                                          int k) const {
    if (!hasInput(node, k))
      return nullptr;
    auto it = sequences.find(node.input(k));
    return it == sequences.end() ? nullptr : &it->second;
  }
  FailureOr<ConstTensor> requireConst(const onnx::NodeProto &node, int k,
                                      StringRef what);
  RankedTensorType typeOf(Value v) const {
    return cast<RankedTensorType>(v.getType());
  }
  Value materialize(const ConstTensor &t, Location loc);
  /// Fails with a diagnostic when the known value `name` cannot become a
  /// run-time value (a float64 constant); `reader` names who reads it.
  LogicalResult checkMaterializable(const ConstTensor &t, StringRef name,
                                    StringRef reader);
  void define(const onnx::NodeProto &node, int k, Value v) {
    if (k < node.output_size() && !node.output(k).empty())
      values[node.output(k)] = v;
  }
  void defineConst(const onnx::NodeProto &node, int k, ConstTensor t) {
    if (k < node.output_size() && !node.output(k).empty())
      consts[node.output(k)] = std::move(t);
  }
  /// Whether output `k` of `node` is named and read by a node or the graph.
  bool isOutputUsed(const onnx::NodeProto &node, int k) const {
    return k < node.output_size() && !node.output(k).empty() &&
           uses.lookup(node.output(k)) > 0;
  }
  LogicalResult requireUnused(const onnx::NodeProto &node, int k,
                              StringRef what);
  /// Reads the value of a TensorProto (a Constant's attribute); `what`
  /// names it in diagnostics (TensorData.cpp).
  FailureOr<ConstTensor> readConstTensor(const onnx::TensorProto &t,
                                         StringRef what, Location loc);

  // Attributes.
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

  // Building.
  /// Creates an op that infers its result types. The op's shape rule runs
  /// first: operands it rejects become a diagnostic (and failure) instead of
  /// the fatal error of the inferring builders.
  template <typename OpTy, typename... Args>
  FailureOr<OpTy> create(Location loc, Args &&...args) {
    OperationState state(loc, OpTy::getOperationName());
    // The builder that takes result types checks their count: give it
    // placeholders, then replace them with the inferred types.
    SmallVector<Type> placeholders(fixedResultCount<OpTy>(), b.getNoneType());
    OpTy::build(b, state, placeholders, std::forward<Args>(args)...);
    state.types.clear();
    SmallVector<Type> types;
    if (failed(OpTy::inferReturnTypes(
            ctx, loc, state.operands, state.attributes.getDictionary(ctx),
            state.getRawProperties(), state.regions, types)))
      return failure();
    state.addTypes(types);
    return cast<OpTy>(b.create(state));
  }
  /// How many results an op with a fixed number of them has (0 for ops
  /// with variadic results, whose builders take any number of types).
  template <typename OpTy>
  static constexpr unsigned fixedResultCount() {
    if constexpr (OpTy::template hasTrait<OpTrait::OneResult>())
      return 1;
    else if constexpr (OpTy::template hasTrait<OpTrait::NResults<2>::Impl>())
      return 2;
    else if constexpr (OpTy::template hasTrait<OpTrait::NResults<3>::Impl>())
      return 3;
    else
      return 0;
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

private:
  // --- setup (Importer.cpp) ------------------------------------------------
  LogicalResult checkModel();
  LogicalResult checkSupportedOps();
  /// Imports one node (folded, or by its handler), verifies the ops it
  /// made and checks its outputs against their declared types.
  LogicalResult importNode(const onnx::NodeProto &node);
  /// Counts the reads of every value by `graph`'s nodes and its
  /// subgraphs' (If branches read outer values by name).
  void countUses(const onnx::GraphProto &graph);
  /// Checks the imported type of output `name` of `node` against the type
  /// the model declares for it, if any.
  LogicalResult
  checkDeclaredType(const onnx::NodeProto &node, StringRef name,
                    const llvm::StringMap<const onnx::TypeProto *> &declared);

  // --- inputs and initializers (TensorData.cpp) -----------------------------
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

  /// The raw data of `t`: its raw_data field, or the bytes cut out of it
  /// before parsing; nullopt when it has neither.
  std::optional<StringRef> rawData(const onnx::TensorProto &t) const;

  const onnx::ModelProto &model;
  const OnnxImportOptions &options;
  /// Initializer raw data that was never parsed into `model` (views into
  /// the model's bytes, which outlive the import).
  llvm::DenseMap<const onnx::TensorProto *, StreamedData> streamedRawData;
  std::string fileName;
  int64_t opset = 0;
  HandlerRegistry handlers;
  llvm::StringMap<Value> values;
  llvm::StringMap<ConstTensor> consts;
  llvm::StringMap<SmallVector<Value>> sequences;
  llvm::StringMap<unsigned> uses;
  /// Types the model declares for values (value_info, graph outputs, also
  /// of subgraphs), and the node being imported (its label prefixes the
  /// errors the loom ops report).
  llvm::StringMap<const onnx::TypeProto *> declared;
  const onnx::NodeProto *currentNode = nullptr;
  std::vector<::loom::safetensors::Tensor> weights;
  bool batchBound = false;
};

} // namespace onnx_import
} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_IMPORT_ONNX_IMPORTER_H
