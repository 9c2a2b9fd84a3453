//===- StableHLOOps.cpp - Ops of the import dialects ----------------------===//
//
// Custom assembly of the stablehlo ops (the forms JAX and the StableHLO
// repository print), result type inference, and the op definitions of the
// stablehlo, chlo and check dialects.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/StableHLO/IR/ImportDialects.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::loom::shlo;

//===----------------------------------------------------------------------===//
// Types of elementwise ops: `: T` or a function type
//===----------------------------------------------------------------------===//

static ParseResult parseSameTypes(OpAsmParser &parser,
                                  ArrayRef<Type *> types) {
  SMLoc loc = parser.getCurrentLocation();
  Type type;
  if (parser.parseType(type))
    return failure();
  auto fn = dyn_cast<FunctionType>(type);
  if (!fn) {
    for (Type *t : types)
      *t = type;
    return success();
  }
  if (fn.getNumInputs() + 1 != types.size() || fn.getNumResults() != 1)
    return parser.emitError(loc)
           << "expected one type, or a function type with "
           << types.size() - 1 << " inputs and one result";
  for (auto [i, input] : llvm::enumerate(fn.getInputs()))
    *types[i] = input;
  *types.back() = fn.getResult(0);
  return success();
}

static void printSameTypes(OpAsmPrinter &printer, ArrayRef<Type> types) {
  if (llvm::all_equal(types)) {
    printer << types.front();
    return;
  }
  printer << "(";
  llvm::interleaveComma(types.drop_back(), printer);
  printer << ") -> " << types.back();
}

static ParseResult parseSameOperandsAndResultType(OpAsmParser &parser,
                                                  Type &operand, Type &result) {
  return parseSameTypes(parser, {&operand, &result});
}
static ParseResult parseSameOperandsAndResultType(OpAsmParser &parser,
                                                  Type &lhs, Type &rhs,
                                                  Type &result) {
  return parseSameTypes(parser, {&lhs, &rhs, &result});
}
static ParseResult parseSameOperandsAndResultType(OpAsmParser &parser, Type &a,
                                                  Type &b, Type &c,
                                                  Type &result) {
  return parseSameTypes(parser, {&a, &b, &c, &result});
}
static void printSameOperandsAndResultType(OpAsmPrinter &printer, Operation *,
                                           Type operand, Type result) {
  printSameTypes(printer, {operand, result});
}
static void printSameOperandsAndResultType(OpAsmPrinter &printer, Operation *,
                                           Type lhs, Type rhs, Type result) {
  printSameTypes(printer, {lhs, rhs, result});
}
static void printSameOperandsAndResultType(OpAsmPrinter &printer, Operation *,
                                           Type a, Type b, Type c,
                                           Type result) {
  printSameTypes(printer, {a, b, c, result});
}

/// `: pred-type, T` (T shared by the other operands and the result) or a
/// function type.
static ParseResult parseSelectOpType(OpAsmParser &parser, Type &pred,
                                     Type &onTrue, Type &onFalse,
                                     Type &result) {
  SMLoc loc = parser.getCurrentLocation();
  Type first;
  if (parser.parseType(first))
    return failure();
  if (auto fn = dyn_cast<FunctionType>(first)) {
    if (fn.getNumInputs() != 3 || fn.getNumResults() != 1)
      return parser.emitError(loc)
             << "expected a function type with 3 inputs and one result";
    pred = fn.getInput(0);
    onTrue = fn.getInput(1);
    onFalse = fn.getInput(2);
    result = fn.getResult(0);
    return success();
  }
  Type type;
  if (parser.parseComma() || parser.parseType(type))
    return failure();
  pred = first;
  onTrue = onFalse = result = type;
  return success();
}

static void printSelectOpType(OpAsmPrinter &printer, Operation *, Type pred,
                              Type onTrue, Type onFalse, Type result) {
  if (onTrue == onFalse && onTrue == result) {
    printer << pred << ", " << result;
    return;
  }
  printer << "(" << pred << ", " << onTrue << ", " << onFalse << ") -> "
          << result;
}

//===----------------------------------------------------------------------===//
// Slice ranges `[0:2, 1:7:2]`
//===----------------------------------------------------------------------===//

static ParseResult parseSliceRanges(OpAsmParser &parser,
                                    DenseI64ArrayAttr &start,
                                    DenseI64ArrayAttr &limit,
                                    DenseI64ArrayAttr &strides) {
  SmallVector<int64_t> starts, limits, steps;
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            int64_t s, l, step = 1;
            if (parser.parseInteger(s) || parser.parseColon() ||
                parser.parseInteger(l))
              return failure();
            if (succeeded(parser.parseOptionalColon()) &&
                parser.parseInteger(step))
              return failure();
            starts.push_back(s);
            limits.push_back(l);
            steps.push_back(step);
            return success();
          }))
    return failure();
  MLIRContext *ctx = parser.getContext();
  start = DenseI64ArrayAttr::get(ctx, starts);
  limit = DenseI64ArrayAttr::get(ctx, limits);
  strides = DenseI64ArrayAttr::get(ctx, steps);
  return success();
}

static void printSliceRanges(OpAsmPrinter &printer, Operation *,
                             DenseI64ArrayAttr start, DenseI64ArrayAttr limit,
                             DenseI64ArrayAttr strides) {
  printer << "[";
  for (int64_t i = 0, e = start.size(); i < e; ++i) {
    if (i)
      printer << ", ";
    printer << start[i] << ":" << (i < limit.size() ? limit[i] : 0);
    if (i < strides.size() && strides[i] != 1)
      printer << ":" << strides[i];
  }
  printer << "]";
}

//===----------------------------------------------------------------------===//
// Concatenate `%a, %b, dim = 0`
//===----------------------------------------------------------------------===//

static ParseResult parseConcatenateInputs(
    OpAsmParser &parser,
    SmallVectorImpl<OpAsmParser::UnresolvedOperand> &inputs,
    IntegerAttr &dimension) {
  do {
    if (succeeded(parser.parseOptionalKeyword("dim"))) {
      int64_t dim;
      if (parser.parseEqual() || parser.parseInteger(dim))
        return failure();
      dimension = parser.getBuilder().getI64IntegerAttr(dim);
      return success();
    }
    OpAsmParser::UnresolvedOperand input;
    if (parser.parseOperand(input))
      return failure();
    inputs.push_back(input);
  } while (succeeded(parser.parseOptionalComma()));
  return parser.emitError(parser.getCurrentLocation())
         << "expected `, dim = N` after the inputs of stablehlo.concatenate";
}

static void printConcatenateInputs(OpAsmPrinter &printer, Operation *,
                                   OperandRange inputs, IntegerAttr dimension) {
  for (Value input : inputs)
    printer << input << ", ";
  printer << "dim = " << dimension.getInt();
}

//===----------------------------------------------------------------------===//
// dot_general / dot configuration
//===----------------------------------------------------------------------===//

static ParseResult parseIntList(OpAsmParser &parser,
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

static void printIntList(OpAsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << "[";
  llvm::interleaveComma(values, printer);
  printer << "]";
}

/// `[DEFAULT, HIGHEST]`
static ParseResult parsePrecisionList(OpAsmParser &parser,
                                      ArrayAttr &precision) {
  SmallVector<Attribute> values;
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            SMLoc loc = parser.getCurrentLocation();
            StringRef word;
            if (parser.parseKeyword(&word))
              return failure();
            std::optional<Precision> value = symbolizePrecision(word);
            if (!value)
              return parser.emitError(loc)
                     << "unknown precision '" << word
                     << "' (expected DEFAULT, HIGH or HIGHEST)";
            values.push_back(PrecisionAttr::get(parser.getContext(), *value));
            return success();
          }))
    return failure();
  precision = parser.getBuilder().getArrayAttr(values);
  return success();
}

static void printPrecisionList(OpAsmPrinter &printer, ArrayAttr precision) {
  printer << "precision = [";
  llvm::interleaveComma(precision, printer, [&](Attribute attr) {
    if (auto p = dyn_cast<PrecisionAttr>(attr))
      printer << stringifyPrecision(p.getValue());
    else
      printer << attr;
  });
  printer << "]";
}

/// `(batching_dims = [0] x [0],)? contracting_dims = [2] x [1]
///  (, precision = [...])? (, algorithm = <...>)?`
static ParseResult parseDotGeneralConfig(OpAsmParser &parser,
                                         DotDimensionNumbersAttr &dims,
                                         ArrayAttr &precision,
                                         DotAlgorithmAttr &algorithm) {
  SmallVector<int64_t> lhsBatch, rhsBatch, lhsContract, rhsContract;
  auto parsePair = [&](SmallVectorImpl<int64_t> &lhs,
                       SmallVectorImpl<int64_t> &rhs) -> ParseResult {
    return failure(parser.parseEqual() || parseIntList(parser, lhs) ||
                   parser.parseKeyword("x") || parseIntList(parser, rhs));
  };
  if (succeeded(parser.parseOptionalKeyword("batching_dims")) &&
      (parsePair(lhsBatch, rhsBatch) || parser.parseComma()))
    return failure();
  if (parser.parseKeyword("contracting_dims") ||
      parsePair(lhsContract, rhsContract))
    return failure();
  dims = DotDimensionNumbersAttr::get(parser.getContext(), lhsBatch, rhsBatch,
                                      lhsContract, rhsContract);
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc loc = parser.getCurrentLocation();
    if (succeeded(parser.parseOptionalKeyword("precision"))) {
      if (parser.parseEqual() || parsePrecisionList(parser, precision))
        return failure();
      continue;
    }
    if (succeeded(parser.parseOptionalKeyword("algorithm"))) {
      if (parser.parseEqual())
        return failure();
      Attribute attr = DotAlgorithmAttr::parse(parser, Type());
      if (!attr)
        return failure();
      algorithm = cast<DotAlgorithmAttr>(attr);
      continue;
    }
    return parser.emitError(loc) << "expected `precision = [...]` or "
                                    "`algorithm = <...>`";
  }
  return success();
}

static void printDotGeneralConfig(OpAsmPrinter &printer, Operation *,
                                  DotDimensionNumbersAttr dims,
                                  ArrayAttr precision,
                                  DotAlgorithmAttr algorithm) {
  if (!dims.getLhsBatchingDimensions().empty() ||
      !dims.getRhsBatchingDimensions().empty()) {
    printer << "batching_dims = ";
    printIntList(printer, dims.getLhsBatchingDimensions());
    printer << " x ";
    printIntList(printer, dims.getRhsBatchingDimensions());
    printer << ", ";
  }
  printer << "contracting_dims = ";
  printIntList(printer, dims.getLhsContractingDimensions());
  printer << " x ";
  printIntList(printer, dims.getRhsContractingDimensions());
  if (precision) {
    printer << ", ";
    printPrecisionList(printer, precision);
  }
  if (algorithm) {
    printer << ", algorithm = ";
    algorithm.print(printer);
  }
}

/// `(, precision = [...])?` after the operands of stablehlo.dot.
static ParseResult parsePrecisionConfig(OpAsmParser &parser,
                                        ArrayAttr &precision) {
  if (failed(parser.parseOptionalComma()))
    return success();
  if (parser.parseKeyword("precision") || parser.parseEqual())
    return failure();
  return parsePrecisionList(parser, precision);
}

static void printPrecisionConfig(OpAsmPrinter &printer, Operation *,
                                 ArrayAttr precision) {
  if (!precision)
    return;
  printer << ", ";
  printPrecisionList(printer, precision);
}

//===----------------------------------------------------------------------===//
// custom_call target `@name`
//===----------------------------------------------------------------------===//

static ParseResult parseCustomCallTarget(OpAsmParser &parser,
                                         StringAttr &target) {
  return parser.parseSymbolName(target);
}

static void printCustomCallTarget(OpAsmPrinter &printer, Operation *,
                                  StringAttr target) {
  printer.printSymbolName(target.getValue());
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

ParseResult ReduceOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *ctx = parser.getContext();
  SMLoc opLoc = parser.getCurrentLocation();
  SmallVector<OpAsmParser::UnresolvedOperand> inputs, inits;
  do {
    OpAsmParser::UnresolvedOperand input, init;
    if (parser.parseLParen() || parser.parseOperand(input) ||
        parser.parseKeyword("init") || parser.parseColon() ||
        parser.parseOperand(init) || parser.parseRParen())
      return failure();
    inputs.push_back(input);
    inits.push_back(init);
  } while (succeeded(parser.parseOptionalComma()));

  // Compact form: `applies stablehlo.add`.
  std::optional<OperationName> bodyOpName;
  SMLoc bodyLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("applies"))) {
    bodyLoc = parser.getCurrentLocation();
    FailureOr<OperationName> name = parser.parseCustomOperationName();
    if (failed(name))
      return failure();
    bodyOpName = *name;
  }

  SmallVector<int64_t> dims;
  if (parser.parseKeyword("across") || parser.parseKeyword("dimensions") ||
      parser.parseEqual() || parseIntList(parser, dims))
    return failure();
  result.addAttribute(getDimensionsAttrName(result.name),
                      DenseI64ArrayAttr::get(ctx, dims));
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();

  SMLoc typeLoc = parser.getCurrentLocation();
  FunctionType fnType;
  if (parser.parseColonType(fnType))
    return failure();
  size_t n = inputs.size();
  if (fnType.getNumInputs() != 2 * n)
    return parser.emitError(typeLoc)
           << "stablehlo.reduce has " << n << " inputs and " << n
           << " init values, but its type lists " << fnType.getNumInputs()
           << " operand types";
  ArrayRef<Type> types = fnType.getInputs();
  if (parser.resolveOperands(inputs, types.take_front(n), opLoc,
                             result.operands) ||
      parser.resolveOperands(inits, types.drop_front(n), opLoc,
                             result.operands))
    return failure();
  result.addTypes(fnType.getResults());

  Region *body = result.addRegion();
  if (bodyOpName) {
    if (n != 1)
      return parser.emitError(bodyLoc)
             << "the compact `applies` form of stablehlo.reduce needs "
                "exactly one input; use the `reducer` form";
    // The accumulator and the element are 0-d tensors of the init type.
    Type elementType = getElementTypeOrSelf(types[n]);
    Type argType = RankedTensorType::get({}, elementType);
    Location loc = parser.getEncodedSourceLoc(bodyLoc);
    auto *block = new Block();
    body->push_back(block);
    Value lhs = block->addArgument(argType, loc);
    Value rhs = block->addArgument(argType, loc);
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(block);
    OperationState state(loc, *bodyOpName);
    state.addOperands({lhs, rhs});
    state.addTypes(argType);
    Operation *op = b.create(state);
    ReturnOp::create(b, loc, op->getResults());
    return success();
  }

  // Region form: `reducer(%acc0: T, %x0: T) (%acc1: U, %x1: U) { ... }`.
  if (parser.parseKeyword("reducer"))
    return failure();
  SmallVector<OpAsmParser::Argument> accumulators, elements;
  for (size_t i = 0; i < n; ++i) {
    OpAsmParser::Argument acc, element;
    if (parser.parseLParen() ||
        parser.parseArgument(acc, /*allowType=*/true) ||
        parser.parseComma() ||
        parser.parseArgument(element, /*allowType=*/true) ||
        parser.parseRParen())
      return failure();
    accumulators.push_back(acc);
    elements.push_back(element);
  }
  SmallVector<OpAsmParser::Argument> args(accumulators);
  llvm::append_range(args, elements);
  return parser.parseRegion(*body, args);
}

/// The op `stablehlo.reduce` can print as `applies <op>`: a body of one op
/// without attributes applied to (accumulator, element), then a return of
/// its result.
static Operation *getCompactReduceBody(ReduceOp op) {
  if (op.getInputs().size() != 1)
    return nullptr;
  Block &block = op.getBody().front();
  if (block.getNumArguments() != 2 || !llvm::hasSingleElement(
          block.without_terminator()))
    return nullptr;
  Operation &inner = block.front();
  Operation *terminator = block.getTerminator();
  if (inner.getNumOperands() != 2 || inner.getNumResults() != 1 ||
      inner.getNumRegions() != 0 || !inner.getAttrs().empty() ||
      inner.getOperand(0) != block.getArgument(0) ||
      inner.getOperand(1) != block.getArgument(1) ||
      inner.getResult(0).getType() != block.getArgument(0).getType() ||
      !isa<ReturnOp>(terminator) || terminator->getNumOperands() != 1 ||
      terminator->getOperand(0) != inner.getResult(0))
    return nullptr;
  return &inner;
}

void ReduceOp::print(OpAsmPrinter &printer) {
  size_t n = getInputs().size();
  for (size_t i = 0; i < n; ++i) {
    if (i)
      printer << ", ";
    printer << "(" << getInputs()[i] << " init: " << getInitValues()[i] << ")";
  }
  Operation *compact = getCompactReduceBody(*this);
  if (compact)
    printer << " applies " << compact->getName();
  printer << " across dimensions = ";
  printIntList(printer, getDimensions());
  printer.printOptionalAttrDict((*this)->getAttrs(),
                                {getDimensionsAttrName()});
  printer << " : ";
  printer.printFunctionalType(*this);
  if (compact)
    return;
  printer << " reducer";
  Block &block = getBody().front();
  for (size_t i = 0; i < n && 2 * n <= block.getNumArguments(); ++i) {
    printer << (i ? " (" : "(");
    printer.printRegionArgument(block.getArgument(i));
    printer << ", ";
    printer.printRegionArgument(block.getArgument(n + i));
    printer << ")";
  }
  printer << " ";
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

//===----------------------------------------------------------------------===//
// ReducePrecisionOp: `format = e8m7`
//===----------------------------------------------------------------------===//

static ParseResult parseExponentMantissa(OpAsmParser &parser,
                                         IntegerAttr &exponent,
                                         IntegerAttr &mantissa) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  unsigned e = 0, m = 0;
  size_t split = word.find('m');
  if (!word.consume_front("e") || split == StringRef::npos ||
      word.take_front(split - 1).getAsInteger(10, e) ||
      word.drop_front(split).getAsInteger(10, m))
    return parser.emitError(loc)
           << "expected a float format `e<exponent bits>m<mantissa bits>` "
              "(e.g. e8m7)";
  Builder b(parser.getContext());
  exponent = b.getI32IntegerAttr(static_cast<int32_t>(e));
  mantissa = b.getI32IntegerAttr(static_cast<int32_t>(m));
  return success();
}

static void printExponentMantissa(OpAsmPrinter &printer, Operation *,
                                  IntegerAttr exponent, IntegerAttr mantissa) {
  printer << "e" << exponent.getInt() << "m" << mantissa.getInt();
}

//===----------------------------------------------------------------------===//
// DynamicSliceOp: `%i, %j, sizes = [1, 4]`
//===----------------------------------------------------------------------===//

static ParseResult parseStartIndicesAndSizes(
    OpAsmParser &parser,
    SmallVectorImpl<OpAsmParser::UnresolvedOperand> &indices,
    DenseI64ArrayAttr &sizes) {
  while (failed(parser.parseOptionalKeyword("sizes"))) {
    OpAsmParser::UnresolvedOperand index;
    if (parser.parseOperand(index) || parser.parseComma())
      return failure();
    indices.push_back(index);
  }
  SmallVector<int64_t> values;
  if (parser.parseEqual() || parseIntList(parser, values))
    return failure();
  sizes = DenseI64ArrayAttr::get(parser.getContext(), values);
  return success();
}

static void printStartIndicesAndSizes(OpAsmPrinter &printer, Operation *,
                                      OperandRange indices,
                                      DenseI64ArrayAttr sizes) {
  for (Value index : indices)
    printer << index << ", ";
  printer << "sizes = [";
  llvm::interleaveComma(sizes.asArrayRef(), printer);
  printer << "]";
}

//===----------------------------------------------------------------------===//
// WhileOp: `(%arg = %operand, ...) : types (attributes {...})? cond {...}
// do {...}`, both regions over the same arguments
//===----------------------------------------------------------------------===//

ParseResult WhileOp::parse(OpAsmParser &parser, OperationState &result) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<OpAsmParser::Argument> args;
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  if (parser.parseLParen())
    return failure();
  if (failed(parser.parseOptionalRParen())) {
    do {
      OpAsmParser::Argument arg;
      OpAsmParser::UnresolvedOperand operand;
      if (parser.parseArgument(arg) || parser.parseEqual() ||
          parser.parseOperand(operand))
        return failure();
      args.push_back(arg);
      operands.push_back(operand);
    } while (succeeded(parser.parseOptionalComma()));
    if (parser.parseRParen())
      return failure();
  }
  SmallVector<Type> types;
  if (!args.empty() && (parser.parseColon() || parser.parseTypeList(types)))
    return failure();
  if (types.size() != args.size())
    return parser.emitError(loc)
           << "stablehlo.while has " << args.size()
           << " loop-carried values but " << types.size() << " types";
  for (auto [arg, type] : llvm::zip(args, types))
    arg.type = type;
  if (parser.resolveOperands(operands, types, loc, result.operands))
    return failure();
  result.addTypes(types);
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *cond = result.addRegion();
  Region *body = result.addRegion();
  return failure(parser.parseKeyword("cond") ||
                 parser.parseRegion(*cond, args) ||
                 parser.parseKeyword("do") ||
                 parser.parseRegion(*body, args));
}

void WhileOp::print(OpAsmPrinter &printer) {
  Block &cond = getCond().front();
  printer << "(";
  llvm::interleaveComma(
      llvm::zip(cond.getArguments(), getOperand()), printer, [&](auto pair) {
        printer << std::get<0>(pair) << " = " << std::get<1>(pair);
      });
  printer << ")";
  if (!getOperand().empty()) {
    printer << " : ";
    llvm::interleaveComma(getOperand().getTypes(), printer);
  }
  printer.printOptionalAttrDictWithKeyword((*this)->getAttrs());
  printer.printNewline();
  printer << " cond ";
  printer.printRegion(getCond(), /*printEntryBlockArgs=*/false);
  printer << " do ";
  printer.shadowRegionArgs(getBody(), cond.getArguments());
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

LogicalResult WhileOp::verify() {
  TypeRange types = getOperand().getTypes();
  if (TypeRange(getResultTypes()) != types)
    return emitOpError("results must have the types of the operands");
  for (Region *region : {&getCond(), &getBody()}) {
    Block &block = region->front();
    if (TypeRange(block.getArgumentTypes()) != types)
      return emitOpError("regions must take the loop-carried values (")
             << types.size() << " of the operands' types)";
    auto ret = block.mightHaveTerminator()
                   ? dyn_cast<ReturnOp>(block.getTerminator())
                   : ReturnOp();
    if (!ret)
      return emitOpError("regions must end in stablehlo.return");
    if (region == &getCond()) {
      auto type = dyn_cast<RankedTensorType>(
          ret.getNumOperands() == 1 ? ret.getOperand(0).getType() : Type());
      if (!type || type.getRank() != 0 || !type.getElementType().isInteger(1))
        return emitOpError("cond must return one tensor<i1>");
    } else if (TypeRange(ret.getOperandTypes()) != types) {
      return emitOpError("body must return the next loop-carried values");
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Type inference
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> location,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &inferred) {
  ElementsAttr value = adaptor.getValueAttr();
  if (!value)
    return emitOptionalError(location,
                             "stablehlo.constant needs a 'value' attribute");
  inferred.push_back(value.getType());
  return success();
}

LogicalResult OptimizationBarrierOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  llvm::append_range(inferred, adaptor.getOperand().getTypes());
  return success();
}

//===----------------------------------------------------------------------===//
// Generated definitions
//===----------------------------------------------------------------------===//

#define GET_OP_CLASSES
#include "loom/Dialect/StableHLO/IR/StableHLOOps.cpp.inc"

#define GET_OP_CLASSES
#include "loom/Dialect/StableHLO/IR/CHLOOps.cpp.inc"

#define GET_OP_CLASSES
#include "loom/Dialect/StableHLO/IR/CheckOps.cpp.inc"
