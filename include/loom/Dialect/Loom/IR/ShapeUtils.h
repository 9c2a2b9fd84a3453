//===- ShapeUtils.h - Shape arithmetic shared by loom ops/passes -*- C++ -*-===//
//
// Small, dependency-free helpers on static/dynamic shapes (dynamic sizes are
// ShapedType::kDynamic). Unit-tested in test/Unit/ShapeUtilsTest.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_SHAPEUTILS_H
#define LOOM_DIALECT_LOOM_IR_SHAPEUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
namespace loom {

/// The most precise shape compatible with both `a` and `b`: same rank, and in
/// each dimension a static size wins over `?`. Fails when the ranks differ or
/// two static sizes disagree.
FailureOr<SmallVector<int64_t>> meetShapes(ArrayRef<int64_t> a,
                                           ArrayRef<int64_t> b);

/// True when `refined` is `current` with zero or more `?` replaced by sizes
/// (and at least one when `strictly` is set).
bool isRefinementOf(ArrayRef<int64_t> refined, ArrayRef<int64_t> current,
                    bool strictly);

/// "[2, 3, ?]"
std::string formatDims(ArrayRef<int64_t> dims);

/// Parses "8x128x?" (or "" for a 0-d shape) into sizes; fails on anything
/// else.
FailureOr<SmallVector<int64_t>> parseDims(StringRef text);

} // namespace loom
} // namespace mlir

#endif // LOOM_DIALECT_LOOM_IR_SHAPEUTILS_H
