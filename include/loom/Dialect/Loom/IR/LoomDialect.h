//===- LoomDialect.h - The loom dialect -------------------------*- C++ -*-===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMDIALECT_H
#define LOOM_DIALECT_LOOM_IR_LOOMDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

// The attributes come first: the dialect's discardable-attribute helpers
// (`loom.shard`) name them.
#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/Loom/IR/LoomAttrs.h.inc"

#include "loom/Dialect/Loom/IR/LoomDialect.h.inc"

#endif // LOOM_DIALECT_LOOM_IR_LOOMDIALECT_H
