//===- ImportDialects.h - StableHLO import dialects -------------*- C++ -*-===//
//
// Loom's own definitions of the StableHLO subset its importer reads:
// stablehlo, chlo, check and sdy (see the .td files). Input only:
// convert-stablehlo-to-loom rewrites them to the loom dialect, except the
// `check` ops and `sdy.mesh`, which stay.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_STABLEHLO_IR_IMPORTDIALECTS_H
#define LOOM_DIALECT_STABLEHLO_IR_IMPORTDIALECTS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "loom/Dialect/StableHLO/IR/StableHLOEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/StableHLO/IR/StableHLOAttrs.h.inc"

#include "loom/Dialect/StableHLO/IR/StableHLODialect.h.inc"
#define GET_OP_CLASSES
#include "loom/Dialect/StableHLO/IR/StableHLOOps.h.inc"

#include "loom/Dialect/StableHLO/IR/CHLODialect.h.inc"
#define GET_OP_CLASSES
#include "loom/Dialect/StableHLO/IR/CHLOOps.h.inc"

#include "loom/Dialect/StableHLO/IR/CheckDialect.h.inc"
#define GET_OP_CLASSES
#include "loom/Dialect/StableHLO/IR/CheckOps.h.inc"

#include "loom/Dialect/StableHLO/IR/SdyDialect.h.inc"
#define GET_OP_CLASSES
#include "loom/Dialect/StableHLO/IR/SdyOps.h.inc"

namespace mlir {
namespace loom {
namespace shlo {
/// Parses an op the stablehlo, chlo or sdy dialect does not define: `operands
/// (, key = value)* attr-dict : types`, where the types are one type shared
/// by all operands and results, `(operand types) -> result types`, or
/// `operand types -> result types`. Used as the dialects' parse hook.
ParseResult parseUnknownOp(OpAsmParser &parser, OperationState &result);

/// The attribute being parsed (`#dialect.name<...>`), which `dialect` does
/// not define, as an opaque attribute. (The parser resumes after the
/// attribute whatever the dialect consumed.)
Attribute getOpaqueAttr(const Dialect &dialect, DialectAsmParser &parser,
                        Type type);
} // namespace shlo
} // namespace loom
} // namespace mlir

#endif // LOOM_DIALECT_STABLEHLO_IR_IMPORTDIALECTS_H
