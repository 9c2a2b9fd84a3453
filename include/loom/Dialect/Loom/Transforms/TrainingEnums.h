//===- TrainingEnums.h - Choices of a training step -------------*- C++ -*-===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_TRAININGENUMS_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_TRAININGENUMS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

#include "loom/Dialect/Loom/Transforms/TrainingEnums.h.inc"

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_TRAININGENUMS_H
