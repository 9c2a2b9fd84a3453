//===- SdyOps.cpp - Ops of the sdy import dialect -------------------------===//
//
// Shardy's meshes and shardings are kept as the text JAX wrote: Loom reads
// them as hints, it does not interpret them here.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/StableHLO/IR/ImportDialects.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::loom::shlo;

/// Parses a balanced `<...>` of the tokens Shardy's syntax uses (`@mesh`,
/// strings, integers, keywords, `[]{}()`, `,=:?`) into its text.
static ParseResult parseBalanced(OpAsmParser &parser, StringAttr &result) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (parser.parseLess())
    return failure();
  os << "<";
  int depth = 1;
  while (depth > 0) {
    SMLoc loc = parser.getCurrentLocation();
    if (succeeded(parser.parseOptionalLess())) {
      os << "<";
      ++depth;
      continue;
    }
    if (succeeded(parser.parseOptionalGreater())) {
      os << ">";
      --depth;
      continue;
    }
    std::string string;
    StringAttr symbol;
    StringRef keyword;
    int64_t integer = 0;
    if (succeeded(parser.parseOptionalComma()))
      os << ", ";
    else if (succeeded(parser.parseOptionalLSquare()))
      os << "[";
    else if (succeeded(parser.parseOptionalRSquare()))
      os << "]";
    else if (succeeded(parser.parseOptionalLBrace()))
      os << "{";
    else if (succeeded(parser.parseOptionalRBrace()))
      os << "}";
    else if (succeeded(parser.parseOptionalLParen()))
      os << "(";
    else if (succeeded(parser.parseOptionalRParen()))
      os << ")";
    else if (succeeded(parser.parseOptionalEqual()))
      os << "=";
    else if (succeeded(parser.parseOptionalColon()))
      os << ":";
    else if (succeeded(parser.parseOptionalQuestion()))
      os << "?";
    else if (succeeded(parser.parseOptionalString(&string)))
      os << '"' << string << '"';
    else if (succeeded(parser.parseOptionalSymbolName(symbol)))
      os << "@" << symbol.getValue();
    else if (succeeded(parser.parseOptionalKeyword(&keyword)))
      os << keyword;
    else if (OptionalParseResult parsed = parser.parseOptionalInteger(integer);
             parsed.has_value()) {
      if (failed(*parsed))
        return failure();
      os << integer;
    } else {
      return parser.emitError(loc)
             << "unexpected token in a Shardy mesh or sharding";
    }
  }
  result = parser.getBuilder().getStringAttr(text);
  return success();
}

static void printBalanced(OpAsmPrinter &printer, Operation *,
                          StringAttr text) {
  printer << text.getValue();
}

static ParseResult parseSymbolName(OpAsmParser &parser, StringAttr &name) {
  return parser.parseSymbolName(name);
}

static void printSymbolName(OpAsmPrinter &printer, Operation *,
                            StringAttr name) {
  printer.printSymbolName(name.getValue());
}

#define GET_OP_CLASSES
#include "loom/Dialect/StableHLO/IR/SdyOps.cpp.inc"
