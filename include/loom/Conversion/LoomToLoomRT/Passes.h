//===- Passes.h - loom to loomrt lowering -----------------------*- C++ -*-===//

#ifndef LOOM_CONVERSION_LOOMTOLOOMRT_PASSES_H
#define LOOM_CONVERSION_LOOMTOLOOMRT_PASSES_H

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir {
namespace loom {

#define GEN_PASS_DECL
#include "loom/Conversion/LoomToLoomRT/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Conversion/LoomToLoomRT/Passes.h.inc"

} // namespace loom
} // namespace mlir

#endif // LOOM_CONVERSION_LOOMTOLOOMRT_PASSES_H
