//===- Passes.h - StableHLO to loom conversion ------------------*- C++ -*-===//

#ifndef LOOM_CONVERSION_STABLEHLOTOLOOM_PASSES_H
#define LOOM_CONVERSION_STABLEHLOTOLOOM_PASSES_H

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/StableHLO/IR/ImportDialects.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir {
namespace loom {

#define GEN_PASS_DECL
#include "loom/Conversion/StableHLOToLoom/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Conversion/StableHLOToLoom/Passes.h.inc"

} // namespace loom
} // namespace mlir

#endif // LOOM_CONVERSION_STABLEHLOTOLOOM_PASSES_H
