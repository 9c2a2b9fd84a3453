//===- StableHLOAttrs.cpp - Attributes of the stablehlo import dialect ----===//
//
// `#stablehlo.gather<...>`, `#stablehlo.scatter<...>`, `#stablehlo.dot<...>` and
// `#stablehlo.dot_algorithm<...>`: `<key = value, ...>` with the keys in any
// order. Lists print as `[1, 2]`; empty lists may be left out.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/StableHLO/IR/ImportDialects.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::loom::shlo;

#include "loom/Dialect/StableHLO/IR/StableHLOEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/StableHLO/IR/StableHLOAttrs.cpp.inc"

void StableHLODialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "loom/Dialect/StableHLO/IR/StableHLOAttrs.cpp.inc"
      >();
}

Attribute StableHLODialect::parseAttribute(DialectAsmParser &parser,
                                          Type type) const {
  StringRef mnemonic;
  Attribute attr;
  OptionalParseResult parsed =
      generatedAttributeParser(parser, &mnemonic, type, attr);
  if (parsed.has_value())
    return succeeded(*parsed) ? attr : Attribute();
  return getOpaqueAttr(*this, parser, type);
}

void StableHLODialect::printAttribute(Attribute attr,
                                      DialectAsmPrinter &printer) const {
  (void)generatedAttributePrinter(attr, printer);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Parses `<key = value, ...>`; `parseValue(key)` parses the value after
/// `key =`. Unknown and repeated keys are errors.
static ParseResult
parseFields(AsmParser &parser, StringRef attrName, ArrayRef<StringRef> keys,
            function_ref<ParseResult(StringRef key)> parseValue) {
  if (parser.parseLess())
    return failure();
  if (succeeded(parser.parseOptionalGreater()))
    return success();
  llvm::SmallSet<StringRef, 8> seen;
  do {
    SMLoc loc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return failure();
    if (!llvm::is_contained(keys, key))
      return parser.emitError(loc)
             << "unknown field '" << key << "' in #stablehlo." << attrName
             << " (fields: " << llvm::join(ArrayRef<StringRef>(keys), ", ")
             << ")";
    if (!seen.insert(key).second)
      return parser.emitError(loc) << "field '" << key << "' of #stablehlo."
                                   << attrName << " is given twice";
    if (parser.parseEqual() || parseValue(key))
      return failure();
  } while (succeeded(parser.parseOptionalComma()));
  return parser.parseGreater();
}

static ParseResult parseIntList(AsmParser &parser,
                                SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t value;
        if (parser.parseInteger(value))
          return failure();
        values.push_back(value);
        return success();
      });
}

/// Prints `key = [values]`, after a comma unless it is the first field.
static void printIntList(AsmPrinter &printer, bool &first, StringRef key,
                         ArrayRef<int64_t> values) {
  if (!first)
    printer << ", ";
  first = false;
  printer << key << " = [";
  llvm::interleaveComma(values, printer);
  printer << "]";
}

//===----------------------------------------------------------------------===//
// GatherDimensionNumbersAttr
//===----------------------------------------------------------------------===//

Attribute GatherDimensionNumbersAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> offsetDims, collapsedSliceDims, operandBatchingDims,
      startIndicesBatchingDims, startIndexMap;
  int64_t indexVectorDim = 0;
  static constexpr StringRef keys[] = {
      "offset_dims",     "collapsed_slice_dims", "operand_batching_dims",
      "start_indices_batching_dims", "start_index_map", "index_vector_dim"};
  if (parseFields(parser, "gather", keys, [&](StringRef key) -> ParseResult {
        if (key == "offset_dims")
          return parseIntList(parser, offsetDims);
        if (key == "collapsed_slice_dims")
          return parseIntList(parser, collapsedSliceDims);
        if (key == "operand_batching_dims")
          return parseIntList(parser, operandBatchingDims);
        if (key == "start_indices_batching_dims")
          return parseIntList(parser, startIndicesBatchingDims);
        if (key == "start_index_map")
          return parseIntList(parser, startIndexMap);
        return parser.parseInteger(indexVectorDim);
      }))
    return {};
  return GatherDimensionNumbersAttr::get(
      parser.getContext(), offsetDims, collapsedSliceDims, operandBatchingDims,
      startIndicesBatchingDims, startIndexMap, indexVectorDim);
}

void GatherDimensionNumbersAttr::print(AsmPrinter &printer) const {
  printer << "<";
  bool first = true;
  auto list = [&](StringRef key, ArrayRef<int64_t> values) {
    if (!values.empty())
      printIntList(printer, first, key, values);
  };
  list("offset_dims", getOffsetDims());
  list("collapsed_slice_dims", getCollapsedSliceDims());
  list("operand_batching_dims", getOperandBatchingDims());
  list("start_indices_batching_dims", getStartIndicesBatchingDims());
  list("start_index_map", getStartIndexMap());
  if (!first)
    printer << ", ";
  printer << "index_vector_dim = " << getIndexVectorDim() << ">";
}

//===----------------------------------------------------------------------===//
// ScatterDimensionNumbersAttr
//===----------------------------------------------------------------------===//

Attribute ScatterDimensionNumbersAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> updateWindowDims, insertedWindowDims, inputBatchingDims,
      scatterIndicesBatchingDims, scatterDimsToOperandDims;
  int64_t indexVectorDim = 0;
  static constexpr StringRef keys[] = {
      "update_window_dims",           "inserted_window_dims",
      "input_batching_dims",          "scatter_indices_batching_dims",
      "scatter_dims_to_operand_dims", "index_vector_dim"};
  if (parseFields(parser, "scatter", keys, [&](StringRef key) -> ParseResult {
        if (key == "update_window_dims")
          return parseIntList(parser, updateWindowDims);
        if (key == "inserted_window_dims")
          return parseIntList(parser, insertedWindowDims);
        if (key == "input_batching_dims")
          return parseIntList(parser, inputBatchingDims);
        if (key == "scatter_indices_batching_dims")
          return parseIntList(parser, scatterIndicesBatchingDims);
        if (key == "scatter_dims_to_operand_dims")
          return parseIntList(parser, scatterDimsToOperandDims);
        return parser.parseInteger(indexVectorDim);
      }))
    return {};
  return ScatterDimensionNumbersAttr::get(
      parser.getContext(), updateWindowDims, insertedWindowDims,
      inputBatchingDims, scatterIndicesBatchingDims, scatterDimsToOperandDims,
      indexVectorDim);
}

void ScatterDimensionNumbersAttr::print(AsmPrinter &printer) const {
  printer << "<";
  bool first = true;
  auto list = [&](StringRef key, ArrayRef<int64_t> values) {
    if (!values.empty())
      printIntList(printer, first, key, values);
  };
  list("update_window_dims", getUpdateWindowDims());
  list("inserted_window_dims", getInsertedWindowDims());
  list("input_batching_dims", getInputBatchingDims());
  list("scatter_indices_batching_dims", getScatterIndicesBatchingDims());
  list("scatter_dims_to_operand_dims", getScatterDimsToOperandDims());
  if (!first)
    printer << ", ";
  printer << "index_vector_dim = " << getIndexVectorDim() << ">";
}

//===----------------------------------------------------------------------===//
// DotDimensionNumbersAttr
//===----------------------------------------------------------------------===//

Attribute DotDimensionNumbersAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> lhsBatch, rhsBatch, lhsContract, rhsContract;
  static constexpr StringRef keys[] = {
      "lhs_batching_dimensions", "rhs_batching_dimensions",
      "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
  if (parseFields(parser, "dot", keys, [&](StringRef key) -> ParseResult {
        if (key == "lhs_batching_dimensions")
          return parseIntList(parser, lhsBatch);
        if (key == "rhs_batching_dimensions")
          return parseIntList(parser, rhsBatch);
        if (key == "lhs_contracting_dimensions")
          return parseIntList(parser, lhsContract);
        return parseIntList(parser, rhsContract);
      }))
    return {};
  return DotDimensionNumbersAttr::get(parser.getContext(), lhsBatch, rhsBatch,
                                      lhsContract, rhsContract);
}

void DotDimensionNumbersAttr::print(AsmPrinter &printer) const {
  printer << "<";
  bool first = true;
  if (!getLhsBatchingDimensions().empty() ||
      !getRhsBatchingDimensions().empty()) {
    printIntList(printer, first, "lhs_batching_dimensions",
                 getLhsBatchingDimensions());
    printIntList(printer, first, "rhs_batching_dimensions",
                 getRhsBatchingDimensions());
  }
  printIntList(printer, first, "lhs_contracting_dimensions",
               getLhsContractingDimensions());
  printIntList(printer, first, "rhs_contracting_dimensions",
               getRhsContractingDimensions());
  printer << ">";
}

//===----------------------------------------------------------------------===//
// DotAlgorithmAttr
//===----------------------------------------------------------------------===//

Attribute DotAlgorithmAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  Type lhsType, rhsType, accumulationType;
  int64_t lhsCount = -1, rhsCount = -1, numOps = -1;
  std::optional<bool> allowImprecise;
  static constexpr StringRef keys[] = {
      "lhs_precision_type",  "rhs_precision_type",
      "accumulation_type",   "lhs_component_count",
      "rhs_component_count", "num_primitive_operations",
      "allow_imprecise_accumulation"};
  if (parseFields(parser, "dot_algorithm", keys,
                  [&](StringRef key) -> ParseResult {
                    if (key == "lhs_precision_type")
                      return parser.parseType(lhsType);
                    if (key == "rhs_precision_type")
                      return parser.parseType(rhsType);
                    if (key == "accumulation_type")
                      return parser.parseType(accumulationType);
                    if (key == "lhs_component_count")
                      return parser.parseInteger(lhsCount);
                    if (key == "rhs_component_count")
                      return parser.parseInteger(rhsCount);
                    if (key == "num_primitive_operations")
                      return parser.parseInteger(numOps);
                    StringRef word;
                    SMLoc wordLoc = parser.getCurrentLocation();
                    if (parser.parseKeyword(&word))
                      return failure();
                    if (word != "true" && word != "false")
                      return parser.emitError(wordLoc)
                             << "expected true or false";
                    allowImprecise = word == "true";
                    return success();
                  }))
    return {};
  if (!lhsType || !rhsType || !accumulationType || lhsCount < 0 ||
      rhsCount < 0 || numOps < 0 || !allowImprecise) {
    parser.emitError(loc) << "#stablehlo.dot_algorithm needs all of: "
                          << llvm::join(ArrayRef<StringRef>(keys), ", ");
    return {};
  }
  return DotAlgorithmAttr::get(parser.getContext(), lhsType, rhsType,
                               accumulationType, lhsCount, rhsCount, numOps,
                               *allowImprecise);
}

void DotAlgorithmAttr::print(AsmPrinter &printer) const {
  printer << "<lhs_precision_type = " << getLhsPrecisionType()
          << ", rhs_precision_type = " << getRhsPrecisionType()
          << ", accumulation_type = " << getAccumulationType()
          << ", lhs_component_count = " << getLhsComponentCount()
          << ", rhs_component_count = " << getRhsComponentCount()
          << ", num_primitive_operations = " << getNumPrimitiveOperations()
          << ", allow_imprecise_accumulation = "
          << (getAllowImpreciseAccumulation() ? "true" : "false") << ">";
}
