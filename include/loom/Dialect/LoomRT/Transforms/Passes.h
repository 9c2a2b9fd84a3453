//===- Passes.h - Passes on the loomrt dialect ------------------*- C++ -*-===//

#ifndef LOOM_DIALECT_LOOMRT_TRANSFORMS_PASSES_H
#define LOOM_DIALECT_LOOMRT_TRANSFORMS_PASSES_H

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace loomrt {

#define GEN_PASS_DECL
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"

} // namespace loomrt
} // namespace mlir

#endif // LOOM_DIALECT_LOOMRT_TRANSFORMS_PASSES_H
