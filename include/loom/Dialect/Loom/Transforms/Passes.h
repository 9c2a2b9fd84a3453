//===- Passes.h - Passes over the loom dialect ------------------*- C++ -*-===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_H

#include "loom/Dialect/Loom/Transforms/TrainingEnums.h"

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir {
namespace loom {

#define GEN_PASS_DECL
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"

} // namespace loom
} // namespace mlir

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_H
