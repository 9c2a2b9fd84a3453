//===- ImportDialects.cpp - stablehlo, chlo, check and sdy dialects -------===//
//
// Registration of Loom's import dialects, their inliner interface (the
// importer inlines JAX's private helper functions), and the parsers of ops,
// attributes and types the stablehlo, chlo and sdy dialects do not define.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/StableHLO/IR/ImportDialects.h"

#include "mlir/IR/Builders.h"
#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;
using namespace mlir::loom::shlo;

#include "loom/Dialect/StableHLO/IR/CHLODialect.cpp.inc"
#include "loom/Dialect/StableHLO/IR/CheckDialect.cpp.inc"
#include "loom/Dialect/StableHLO/IR/SdyDialect.cpp.inc"
#include "loom/Dialect/StableHLO/IR/StableHLODialect.cpp.inc"

namespace {
/// Every op of the import dialects may be inlined: they have no semantics
/// tied to the function they are in.
struct ImportInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *, Operation *, bool) const final {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void StableHLODialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/StableHLO/IR/StableHLOOps.cpp.inc"
      >();
  registerAttributes();
  addInterfaces<ImportInlinerInterface>();
  // Ops Loom does not define still parse, so that the importer can list all
  // of them (convert-stablehlo-to-loom reports them as unsupported).
  allowUnknownOperations();
}

std::optional<Dialect::ParseOpHook>
StableHLODialect::getParseOperationHook(StringRef) const {
  return ParseOpHook(parseUnknownOp);
}

void chlo::CHLODialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/StableHLO/IR/CHLOOps.cpp.inc"
      >();
  addInterfaces<ImportInlinerInterface>();
  allowUnknownOperations();
}

std::optional<Dialect::ParseOpHook>
chlo::CHLODialect::getParseOperationHook(StringRef) const {
  return ParseOpHook(parseUnknownOp);
}

void check::CheckDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/StableHLO/IR/CheckOps.cpp.inc"
      >();
  addInterfaces<ImportInlinerInterface>();
}

void sdy::SdyDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/StableHLO/IR/SdyOps.cpp.inc"
      >();
  addInterfaces<ImportInlinerInterface>();
  allowUnknownOperations();
}

std::optional<Dialect::ParseOpHook>
sdy::SdyDialect::getParseOperationHook(StringRef) const {
  return ParseOpHook(parseUnknownOp);
}

//===----------------------------------------------------------------------===//
// Ops the dialects do not define
//===----------------------------------------------------------------------===//

/// `key = value` after the operands: an attribute (`[0, 1]`, `3`, `f32`) or
/// a bare word (`format = e11m52`), kept as a string.
static ParseResult parseKeyValue(OpAsmParser &parser, OperationState &result) {
  StringRef key;
  if (parser.parseKeyword(&key) || parser.parseEqual())
    return failure();
  Attribute value;
  OptionalParseResult parsed = parser.parseOptionalAttribute(value);
  if (parsed.has_value()) {
    if (failed(*parsed))
      return failure();
  } else {
    StringRef word;
    if (parser.parseKeyword(&word))
      return failure();
    value = parser.getBuilder().getStringAttr(word);
  }
  result.addAttribute(key, value);
  return success();
}

/// `operand (, operand)* (, key = value)*`.
static ParseResult parseOperandsAndFields(
    OpAsmParser &parser, OperationState &result,
    SmallVectorImpl<OpAsmParser::UnresolvedOperand> &operands) {
  OpAsmParser::UnresolvedOperand operand;
  OptionalParseResult first = parser.parseOptionalOperand(operand);
  if (!first.has_value())
    return success();
  if (failed(*first))
    return failure();
  operands.push_back(operand);
  bool inFields = false;
  while (succeeded(parser.parseOptionalComma())) {
    if (!inFields) {
      OptionalParseResult next = parser.parseOptionalOperand(operand);
      if (next.has_value()) {
        if (failed(*next))
          return failure();
        operands.push_back(operand);
        continue;
      }
      inFields = true;
    }
    if (parseKeyValue(parser, result))
      return failure();
  }
  return success();
}

/// The types after `:`: one type for everything, a function type, or
/// `operand types -> result types`.
static ParseResult parseUnknownOpTypes(OpAsmParser &parser, size_t numOperands,
                                       size_t numResults,
                                       SmallVectorImpl<Type> &operandTypes,
                                       SmallVectorImpl<Type> &resultTypes) {
  SMLoc loc = parser.getCurrentLocation();
  Type first;
  if (parser.parseType(first))
    return failure();
  if (auto fn = dyn_cast<FunctionType>(first)) {
    llvm::append_range(operandTypes, fn.getInputs());
    llvm::append_range(resultTypes, fn.getResults());
    return success();
  }
  SmallVector<Type> types{first};
  while (succeeded(parser.parseOptionalComma())) {
    Type next;
    if (parser.parseType(next))
      return failure();
    types.push_back(next);
  }
  if (succeeded(parser.parseOptionalArrow())) {
    operandTypes.assign(types);
    if (succeeded(parser.parseOptionalLParen())) {
      if (succeeded(parser.parseOptionalRParen()))
        return success();
      if (parser.parseTypeList(resultTypes) || parser.parseRParen())
        return failure();
      return success();
    }
    Type result;
    if (parser.parseType(result))
      return failure();
    resultTypes.push_back(result);
    return success();
  }
  if (types.size() == 1) {
    operandTypes.assign(numOperands, first);
    resultTypes.assign(numResults, first);
    return success();
  }
  if (types.size() == numOperands && numResults == 0) {
    operandTypes.assign(types);
    return success();
  }
  return parser.emitError(loc)
         << "expected one type for all operands and results, a function "
            "type, or `operand types -> result types`";
}

ParseResult mlir::loom::shlo::parseUnknownOp(OpAsmParser &parser,
                                              OperationState &result) {
  SMLoc loc = parser.getCurrentLocation();
  auto explain = [&]() {
    // (The parser prefixes "custom op '<name>'".)
    return parser.emitError(loc)
           << "is not an op Loom's StableHLO importer defines: it reads such "
              "ops only in the generic form or as `operands (, key = value)* "
              "attr-dict : types`";
  };
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SmallVector<Type> operandTypes, resultTypes;
  if (parseOperandsAndFields(parser, result, operands) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parseUnknownOpTypes(parser, operands.size(), parser.getNumResults(),
                          operandTypes, resultTypes))
    return explain();
  if (operandTypes.size() != operands.size())
    return parser.emitError(loc) << "has " << operands.size()
                                 << " operands but its type lists "
                                 << operandTypes.size();
  if (resultTypes.size() != parser.getNumResults())
    return parser.emitError(loc) << "has " << parser.getNumResults()
                                 << " results but its type lists "
                                 << resultTypes.size();
  if (parser.resolveOperands(operands, operandTypes, loc, result.operands))
    return failure();
  result.addTypes(resultTypes);
  return success();
}

//===----------------------------------------------------------------------===//
// Attributes and types the dialects do not define
//===----------------------------------------------------------------------===//

Attribute mlir::loom::shlo::getOpaqueAttr(const Dialect &dialect,
                                         DialectAsmParser &parser, Type type) {
  MLIRContext *context = dialect.getContext();
  return OpaqueAttr::get(StringAttr::get(context, dialect.getNamespace()),
                         parser.getFullSymbolSpec(),
                         type ? type : NoneType::get(context));
}

static Type getOpaqueType(const Dialect &dialect, DialectAsmParser &parser) {
  MLIRContext *context = dialect.getContext();
  return OpaqueType::get(StringAttr::get(context, dialect.getNamespace()),
                         parser.getFullSymbolSpec());
}

Type StableHLODialect::parseType(DialectAsmParser &parser) const {
  return getOpaqueType(*this, parser);
}

Attribute chlo::CHLODialect::parseAttribute(DialectAsmParser &parser,
                                            Type type) const {
  return getOpaqueAttr(*this, parser, type);
}

Type chlo::CHLODialect::parseType(DialectAsmParser &parser) const {
  return getOpaqueType(*this, parser);
}

Attribute sdy::SdyDialect::parseAttribute(DialectAsmParser &parser,
                                          Type type) const {
  return getOpaqueAttr(*this, parser, type);
}
