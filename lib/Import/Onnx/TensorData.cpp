//===- TensorData.cpp - ONNX tensor data, inputs and initializers ---------===//
//
// Element types; TensorProto decoding (raw data, typed fields, external
// data files), checked against the shape before anything is allocated;
// graph inputs and initializers as arguments of @main, with the
// initializers' values collected for the safetensors weights file.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"
#include "loom/Import/NamePatterns.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include <cstring>
#include <fstream>
#include <limits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

const char *onnx_import::onnxTypeName(int32_t type) {
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
Type onnx_import::convertElementType(int32_t type, MLIRContext *ctx) {
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

/// convertElementType, plus the types that only compile-time tensors may
/// have: float64 constants (PyTorch's exporter writes Python floats as
/// doubles, e.g. an attention scale's sqrt) are evaluated at import in
/// double precision and must be cast to a supported type before a
/// run-time op reads them.
Type onnx_import::convertConstElementType(int32_t type, MLIRContext *ctx) {
  if (type == onnx::TensorProto::DOUBLE)
    return Float64Type::get(ctx);
  return convertElementType(type, ctx);
}

/// The safetensors dtype of a loom element type.
static const char *safetensorsDType(Type type) {
  if (type.isF32()) return "F32";
  if (type.isF16()) return "F16";
  if (type.isBF16()) return "BF16";
  if (type.isInteger(64)) return "I64";
  if (type.isInteger(32)) return "I32";
  return "BOOL";
}

static int64_t byteWidth(Type type) {
  return type.isInteger(1) ? 1 : (type.getIntOrFloatBitWidth() + 7) / 8;
}

/// The number of elements of `shape`, or nullopt when a size is negative or
/// the count does not fit in int64 (malformed or hostile dimensions).
std::optional<int64_t> onnx_import::numElements(ArrayRef<int64_t> shape) {
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

std::optional<StringRef>
Importer::rawData(const onnx::TensorProto &t) const {
  auto streamed = streamedRawData.find(&t);
  if (streamed != streamedRawData.end())
    return streamed->second.bytes;
  if (t.has_raw_data())
    return StringRef(t.raw_data());
  return std::nullopt;
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
  if (std::optional<StringRef> raw = rawData(t)) {
    if (static_cast<int64_t>(raw->size()) != want)
      return emitError(loc) << what << " has " << raw->size()
                            << " bytes of raw data but its shape " << need
                            << " (truncated or corrupt model?)";
    bytes.assign(raw->begin(), raw->end());
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
  if (elementType.isF64())
    return copy(t.double_data(), [](double v) { return v; });
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
static double decodeFloat(const std::vector<uint8_t> &bytes, Type type,
                          int64_t k) {
  if (type.isF32()) {
    float v;
    std::memcpy(&v, bytes.data() + 4 * k, 4);
    return v;
  }
  if (type.isF64()) {
    double v;
    std::memcpy(&v, bytes.data() + 8 * k, 8);
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
  Type type = convertConstElementType(t.data_type(), ctx);
  if (!type) {
    emitError(loc) << what << " has element type "
                   << onnxTypeName(t.data_type())
                   << ", which Loom does not support (supported: float32, "
                      "float16, bfloat16, int64, int32, bool; float64 for "
                      "constants folded at import)";
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
  // Re-batching: with a dynamic batch somewhere, the dynamic batches are
  // bound; without, the model's batch is fixed and must be the one asked.
  auto hasDynamicBatch = [&](const onnx::ValueInfoProto &in) {
    if (initializers.contains(in.name()) ||
        options.inputShapes.count(in.name()) || !in.type().has_tensor_type())
      return false;
    const auto &tt = in.type().tensor_type();
    return tt.has_shape() && tt.shape().dim_size() > 0 &&
           !tt.shape().dim(0).has_dim_value();
  };
  bool dynamicBatch = llvm::any_of(model.graph().input(), hasDynamicBatch);
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
    if (options.batch > 0 && !hasBinding && !shape.empty()) {
      if (ShapedType::isDynamic(shape[0])) {
        shape[0] = options.batch;
        batchBound = true;
      } else if (!dynamicBatch && shape[0] != options.batch) {
        return emitError(loc)
               << "micro-batch " << options.batch << " asked, but graph input '"
               << in.name() << "' fixes the batch at " << shape[0]
               << " (its dimension 0 is static: the model was exported with "
                  "that batch); re-export it with a dynamic batch axis "
                  "(torch.onnx.export(..., dynamic_axes={'"
               << in.name()
               << "': {0: 'batch'}}), or dynamic_shapes with dynamo=True), "
                  "or compile it at micro-batch "
               << shape[0];
      }
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
        std::make_pair("--frozen", &options.frozen),
        std::make_pair("--constants", &options.constants)}) {
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
        init.data_location() == onnx::TensorProto::EXTERNAL && rawData(init))
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
    bool constant = isa<FloatType>(elementType) &&
                    mlir::loom::matchesNameOrPattern(init.name(),
                                                     options.constants);
    if (constant && *count > kMaxFoldElements)
      return emitError(loc) << what << " has " << *count
                            << " elements, too many to be a --constants "
                               "initializer (at most "
                            << kMaxFoldElements << "); freeze it instead";
    if (!isa<FloatType>(elementType) || (!trainable && *count <= 1) ||
        constant) {
      // Integer and boolean initializers are program constants (shapes,
      // indices, masks): they are needed to import the graph at all. So are
      // non-trainable float scalars and the --constants.
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
    // Large raw data is copied into the weights file from the model file
    // (never through memory), once its size is checked against the shape.
    auto streamed = streamedRawData.find(&init);
    int64_t width = byteWidth(elementType);
    if (streamed != streamedRawData.end() && !options.modelFile.empty() &&
        *count <= std::numeric_limits<int64_t>::max() / width &&
        static_cast<int64_t>(streamed->second.bytes.size()) ==
            *count * width) {
      t.fileSlice = {options.modelFile, streamed->second.offset,
                     streamed->second.bytes.size()};
    } else if (failed(readTensorBytes(init, elementType, what, loc, t.data))) {
      return failure();
    }
    weights.push_back(std::move(t));
  }
  // A pattern that selects nothing is most likely a typo.
  for (auto [flag, patterns] :
       {std::make_pair("--trainable", &options.trainable),
        std::make_pair("--frozen", &options.frozen),
        std::make_pair("--constants", &options.constants)}) {
    for (const std::string &p : *patterns)
      if (llvm::none_of(model.graph().initializer(), [&](const auto &init) {
            return mlir::loom::matchesNameOrPattern(init.name(), p);
          }))
        emitWarning(fileLoc) << flag << " '" << p
                             << "' matches no initializer";
  }
  return success();
}
