//===- ShapeUtils.cpp - Shape arithmetic shared by loom ops/passes --------===//

#include "loom/Dialect/Loom/IR/ShapeUtils.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

FailureOr<SmallVector<int64_t>> loom::meetShapes(ArrayRef<int64_t> a,
                                                 ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return failure();
  SmallVector<int64_t> result;
  result.reserve(a.size());
  for (auto [x, y] : llvm::zip(a, b)) {
    if (ShapedType::isDynamic(x))
      result.push_back(y);
    else if (ShapedType::isDynamic(y) || x == y)
      result.push_back(x);
    else
      return failure();
  }
  return result;
}

bool loom::isRefinementOf(ArrayRef<int64_t> refined, ArrayRef<int64_t> current,
                          bool strictly) {
  if (refined.size() != current.size())
    return false;
  bool changed = false;
  for (auto [r, c] : llvm::zip(refined, current)) {
    if (r == c)
      continue;
    if (!ShapedType::isDynamic(c) || ShapedType::isDynamic(r))
      return false;
    changed = true;
  }
  return changed || !strictly;
}

std::string loom::formatDims(ArrayRef<int64_t> dims) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(dims, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << '?';
    else
      os << d;
  });
  os << ']';
  return text;
}

FailureOr<SmallVector<int64_t>> loom::parseDims(StringRef text) {
  SmallVector<int64_t> dims;
  text = text.trim();
  if (text.empty())
    return dims;
  SmallVector<StringRef> parts;
  text.split(parts, 'x');
  for (StringRef part : parts) {
    if (part == "?") {
      dims.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t size;
    if (part.getAsInteger(10, size) || size < 0)
      return failure();
    dims.push_back(size);
  }
  return dims;
}
