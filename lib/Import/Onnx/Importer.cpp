//===- Importer.cpp - Import ONNX models into the loom dialect ------------===//
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
// This file is the importer's core: the model and opset checks, the walk
// over the graph, the value map, node names and diagnostics, and the
// building helpers of the handlers. The handlers live in one file per op
// family (see Importer.h).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cstdio>
#include <limits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

//===----------------------------------------------------------------------===//
// Names, numbers and shapes
//===----------------------------------------------------------------------===//

/// A number as "%g" prints it (0.1, 1e-05).
std::string onnx_import::formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

/// How diagnostics name a node: "node 'fc1'", or by its first output when
/// it has no name.
std::string onnx_import::nodeName(const onnx::NodeProto &node) {
  if (!node.name().empty())
    return "node '" + node.name() + "'";
  if (node.output_size() && !node.output(0).empty())
    return "unnamed node producing '" + node.output(0) + "'";
  return "unnamed node";
}

/// "node 'fc1' (Gemm)"
std::string onnx_import::nodeLabel(const onnx::NodeProto &node) {
  return nodeName(node) + " (" + node.op_type() + ")";
}

/// Numpy broadcasting of two shapes.
FailureOr<SmallVector<int64_t>>
onnx_import::broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
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

/// Checks that two operands share an element type, as ONNX requires.
LogicalResult onnx_import::sameElementType(InFlightDiagnostic &&diag, Type x,
                                           Type y) {
  if (x == y) {
    diag.abandon();
    return success();
  }
  return diag << "operand element types " << x << " and " << y
              << " differ; insert a Cast";
}

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

Importer::Importer(MLIRContext *ctx, const onnx::ModelProto &model,
                   const OnnxImportOptions &options, StringRef fileName,
                   ArrayRef<StreamedData> rawData)
    : ctx(ctx), b(ctx), model(model), options(options),
      fileName(fileName.str()) {
  for (const StreamedData &data : rawData)
    if (data.initializer < model.graph().initializer_size())
      streamedRawData[&model.graph().initializer(data.initializer)] = data;
  registerElementwiseHandlers(handlers);
  registerContractionHandlers(handlers);
  registerShapeHandlers(handlers);
  registerConstantHandlers(handlers);
  registerLossHandlers(handlers);
}

SmallVector<StringRef> HandlerRegistry::sortedNames() const {
  SmallVector<StringRef> names;
  for (const auto &entry : handlers)
    names.push_back(entry.first());
  llvm::sort(names);
  return names;
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
    if (handlers.contains(type) || seen.contains(type))
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
       << llvm::join(llvm::map_range(handlers.sortedNames(),
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
  if (isOutputUsed(node, k))
    return nodeError(node) << "output " << k << " (" << what
                           << ") is used, which Loom does not support";
  return success();
}

/// The ONNX name of a loom element type ("float32").
static const char *onnxNameOf(Type type) {
  if (type.isF32()) return "float32";
  if (type.isF16()) return "float16";
  if (type.isBF16()) return "bfloat16";
  if (type.isF64()) return "float64";
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
                convertConstElementType(tt.elem_type(), ctx) == elementType;
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
// Values
//===----------------------------------------------------------------------===//

LogicalResult Importer::checkMaterializable(const ConstTensor &t,
                                            StringRef name,
                                            StringRef reader) {
  if (!t.elementType.isF64())
    return success();
  const onnx::NodeProto *producer = producers.lookup(name);
  return emitError(producer ? nodeLoc(*producer)
                            : FileLineColLoc::get(ctx, fileName, 0, 0))
         << reader << " reads '" << name << "', a float64 constant"
         << (producer ? " made by " + nodeLabel(*producer) : std::string())
         << ": Loom folds float64 constants at import but computes in "
            "float32 at run time; cast the value to float32 in the model "
            "(or make it a float32 constant)";
}

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
    if (failed(checkMaterializable(c->second, name, nodeLabel(node))))
      return failure();
    Value v = materialize(c->second, nodeLoc(node));
    values[name] = v;
    return v;
  }
  if (sequences.count(name)) {
    nodeError(node) << "input '" << name
                    << "' is a sequence; Loom reads sequences only with "
                       "SequenceAt at a known position";
    return failure();
  }
  nodeError(node) << "input '" << name
                  << "' is not produced by any earlier node, initializer or "
                     "graph input (is the graph topologically sorted?)";
  return failure();
}

Type Importer::inputElementType(const onnx::NodeProto &node, int k) {
  if (const ConstTensor *c = constInput(node, k))
    return c->elementType;
  FailureOr<Value> v = input(node, k);
  return failed(v) ? Type() : typeOf(*v).getElementType();
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
// Driver
//===----------------------------------------------------------------------===//

void Importer::countUses(const onnx::GraphProto &graph) {
  for (const auto &node : graph.node()) {
    for (const std::string &in : node.input())
      if (!in.empty())
        ++uses[in];
    for (const auto &attr : node.attribute())
      if (attr.has_g()) {
        countUses(attr.g());
        // A branch's outputs are read by the node that runs it.
        for (const auto &out : attr.g().output())
          ++uses[out.name()];
      }
  }
}

LogicalResult Importer::importNode(const onnx::NodeProto &node) {
  const onnx::NodeProto *outer = currentNode;
  currentNode = &node;
  llvm::scope_exit restore([&] { currentNode = outer; });
  Block *body = b.getInsertionBlock();
  Operation *last = body->empty() ? nullptr : &body->back();
  FailureOr<bool> folded = tryFold(*this, node);
  if (failed(folded))
    return failure();
  if (!*folded) {
    Handler handler = handlers.lookup(node.op_type());
    // The main graph's op types were checked up front; a subgraph's here.
    if (!handler)
      return nodeError(node) << "ONNX op " << node.op_type()
                             << " is not supported";
    if (failed(handler(*this, node)))
      return failure();
  }
  for (Operation &op : llvm::make_range(
           last ? std::next(Block::iterator(last)) : body->begin(),
           body->end()))
    if (failed(verify(&op)))
      return failure();
  for (const std::string &out : node.output()) {
    if (out.empty())
      continue;
    producers[out] = &node;
    if (failed(checkDeclaredType(node, out, declared)))
      return failure();
  }
  return success();
}

LogicalResult Importer::importSubgraph(const onnx::GraphProto &graph) {
  if (graph.initializer_size() > 0)
    return emitError(nodeLoc(*currentNode))
           << nodeLabel(*currentNode)
           << ": a subgraph with initializers is not supported";
  // A branch's declared types are not checked: exporters write one
  // branch's shapes for both (the other branch may never run).
  for (const auto &node : graph.node())
    if (failed(importNode(node)))
      return failure();
  return success();
}

OwningOpRef<ModuleOp> Importer::run() {
  if (failed(checkModel()) || failed(checkSupportedOps()))
    return nullptr;
  const onnx::GraphProto &graph = model.graph();
  countUses(graph);
  for (const auto &out : graph.output())
    ++uses[out.name()];
  // Types the model declares for values (exporters write ONNX's shape
  // inference there); every node output is checked against them.
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
  bool reemitting = false;
  ScopedDiagnosticHandler nodeContext(ctx, [&](Diagnostic &diag) {
    if (!currentNode || reemitting ||
        diag.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    std::string label = nodeLabel(*currentNode);
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

  for (const auto &node : graph.node())
    if (failed(importNode(node)))
      return nullptr;

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
      if (failed(checkMaterializable(c->second, out.name(),
                                     "the graph output")))
        return nullptr;
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


OwningOpRef<ModuleOp> mlir::loom::importOnnx(StringRef bytes,
                                             StringRef fileName,
                                             const OnnxImportOptions &options,
                                             MLIRContext *context) {
  context->loadDialect<LoomDialect, func::FuncDialect>();
  // Large weights stay in `bytes` (the drivers memory-map the file): the
  // parser sees the model without them, and they are written to the
  // weights file from where they are.
  constexpr size_t kStreamedBytes = 4096;
  std::optional<StrippedModel> stripped =
      stripInitializerData(bytes, kStreamedBytes);
  StringRef parsed = stripped ? StringRef(stripped->bytes) : bytes;
  onnx::ModelProto model;
  if (parsed.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(parsed.data(), static_cast<int>(parsed.size()))) {
    emitError(FileLineColLoc::get(context, fileName, 0, 0))
        << "'" << fileName
        << "' is not a valid ONNX protobuf (truncated or another format?)";
    return nullptr;
  }
  // Weights are copied from the model file only when `bytes` are its whole
  // content (not, say, one part of a split input).
  OnnxImportOptions effective = options;
  uint64_t fileSize = 0;
  if (!effective.modelFile.empty() &&
      (llvm::sys::fs::file_size(effective.modelFile, fileSize) ||
       fileSize != bytes.size()))
    effective.modelFile.clear();
  Importer importer(context, model, effective, fileName,
                    stripped ? ArrayRef(stripped->rawData)
                             : ArrayRef<StreamedData>());
  OwningOpRef<ModuleOp> module = importer.run();
  if (!module && importer.boundBatch())
    emitError(FileLineColLoc::get(context, fileName, 0, 0))
        << "(the graph inputs' dynamic batch was bound to the micro-batch "
        << options.batch
        << ": a node that failed above may compute with the batch the model "
           "was exported with, e.g. a Reshape to a constant shape; export "
           "with dynamic shapes so that its shape follows the inputs)";
  return module;
}
