//===- Text.cpp - Naming and C++ text of the emitters ---------------------===//
//
// Identifiers, literals, types and index expressions that the C++ and the
// CUDA emitter print the same way.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/EmitterBase.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit;

int64_t emit::numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string emit::sanitize(StringRef name) {
  std::string out;
  for (char c : name)
    out += llvm::isAlnum(c) ? c : '_';
  if (out.empty() || llvm::isDigit(out[0]))
    out = "_" + out;
  return out;
}

std::string emit::cppQuote(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

const char *emit::cppType(Type type) {
  if (type.isF32())
    return "float";
  if (type.isBF16())
    return "bf16"; // loom/Runtime/BFloat16.h: stored as bf16, used as float
  if (type.isInteger(64))
    return "int64_t";
  if (type.isInteger(32))
    return "int32_t";
  if (type.isInteger(1))
    return "bool";
  return nullptr;
}

const char *emit::scalarType(Type type) {
  return type.isBF16() ? "float" : cppType(type);
}

std::string emit::loadElement(StringRef buffer, StringRef index,
                              Type element) {
  std::string at = (buffer + "[" + index + "]").str();
  if (element.isBF16())
    return "bf16::toFloat(" + at + ".bits)";
  // A bool read as its byte: GCC does not vectorise a loop that loads
  // bool next to floats (an attention mask's select).
  if (element.isInteger(1))
    return ("(reinterpret_cast<const unsigned char *>(" + buffer + ")[" +
            index + "] != 0)")
        .str();
  return at;
}

std::string emit::storeElement(StringRef buffer, StringRef index,
                               Type element, StringRef value) {
  std::string at = (buffer + "[" + index + "]").str();
  return element.isBF16() ? at + ".bits = bf16::bitsOf(" + value.str() + ");"
                          : at + " = " + value.str() + ";";
}

const char *emit::dtypeName(Type type) {
  if (type.isF32())
    return "DType::F32";
  if (type.isInteger(64))
    return "DType::I64";
  if (type.isInteger(32))
    return "DType::I32";
  return nullptr;
}

const char *emit::groupEnum(::loom::MeshAxis axis) {
  switch (axis) {
  case ::loom::MeshAxis::Dp:
    return "Group::Dp";
  case ::loom::MeshAxis::Pp:
    return "Group::Pp";
  case ::loom::MeshAxis::Tp:
    return "Group::Tp";
  }
  return "Group::World";
}

bool emit::isIndexType(Type type) {
  return type.isInteger(64) || type.isInteger(32);
}

int64_t emit::elementBytes(Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits == 1 ? 1 : bits / 8;
}

std::string emit::formatFloat(double value) {
  if (std::isnan(value))
    return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<float>::infinity()"
                     : "-std::numeric_limits<float>::infinity()";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.9g", value);
  if (text.find_first_of(".en") == std::string::npos)
    text += ".0";
  return text + "f";
}

std::string emit::indexExpr(StringRef prefix, ArrayRef<int64_t> strides,
                            int64_t offset) {
  std::string expr;
  llvm::raw_string_ostream os(expr);
  bool first = true;
  if (offset != 0) {
    os << offset;
    first = false;
  }
  for (auto [d, s] : llvm::enumerate(strides)) {
    if (s == 0)
      continue;
    if (!first)
      os << " + ";
    first = false;
    os << prefix << d;
    if (s != 1)
      os << " * " << s;
  }
  if (first)
    os << "0";
  return expr;
}

std::string emit::joinInts(ArrayRef<int64_t> values) {
  return llvm::join(
      llvm::map_range(values, [](int64_t v) { return std::to_string(v); }),
      ", ");
}

LoopNest::LoopNest(llvm::raw_ostream &os, ArrayRef<int64_t> shape,
                   StringRef prefix, int indent, bool parallel,
                   bool independent)
    : os(os), rank(shape.size()), indent(indent) {
  for (int64_t d = 0; d < rank; ++d) {
    bool innermost = d == rank - 1 && independent;
    // An OpenMP loop directive must be right before its loop: the
    // innermost one, parallel, is `parallel for simd`.
    if (d == 0 && parallel)
      os.indent(indent) << "#pragma omp parallel for"
                        << (innermost ? " simd" : "") << "\n";
    else if (innermost)
      os.indent(indent + 2 * d) << "#pragma GCC ivdep\n";
    os.indent(indent + 2 * d) << "for (int64_t " << prefix << d << " = 0; "
                              << prefix << d << " < " << shape[d] << "; ++"
                              << prefix << d << ") {\n";
  }
}

LoopNest::~LoopNest() {
  for (int64_t d = rank - 1; d >= 0; --d)
    os.indent(indent + 2 * d) << "}\n";
}

ReduceGeometry::ReduceGeometry(loomrt::ReduceOp op) {
  ArrayRef<int64_t> inShape =
      cast<MemRefType>(op.getInput().getType()).getShape();
  ArrayRef<int64_t> dims = op.getDims();
  SmallVector<int64_t> inStrides = computeStrides(inShape);
  for (int64_t d = 0; d < static_cast<int64_t>(inShape.size()); ++d) {
    if (llvm::is_contained(dims, d)) {
      reducedSizes.push_back(inShape[d]);
      reducedStrides.push_back(inStrides[d]);
    } else {
      keptSizes.push_back(inShape[d]);
      keptStrides.push_back(inStrides[d]);
    }
  }
  outStrides = computeStrides(keptSizes);
}

SmallVector<Value> emit::distinct(ArrayRef<Value> values) {
  SmallVector<Value> result;
  for (Value v : values)
    if (!llvm::is_contained(result, v))
      result.push_back(v);
  return result;
}
