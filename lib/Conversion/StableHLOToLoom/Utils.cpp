//===- Utils.cpp - Type checks and builders shared by the patterns --------===//

#include "Patterns.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::shlo_to_loom;

unsigned mlir::loom::shlo_to_loom::getElementKind(Type elementType) {
  if (elementType.isF32() || elementType.isBF16() || elementType.isF16())
    return kFloat;
  if (elementType.isSignlessInteger(64) || elementType.isSignlessInteger(32))
    return kInt;
  if (elementType.isSignlessInteger(1))
    return kBool;
  return 0;
}

static std::string describeKinds(unsigned kinds) {
  SmallVector<StringRef> names;
  if (kinds & kFloat)
    names.append({"f32", "bf16", "f16"});
  if (kinds & kInt)
    names.append({"i64", "i32"});
  if (kinds & kBool)
    names.push_back("i1");
  return llvm::join(names, ", ");
}

std::optional<std::string>
mlir::loom::shlo_to_loom::checkTypes(ArrayRef<Type> types, unsigned kinds,
                                     StringRef target) {
  for (Type type : types) {
    std::string text;
    llvm::raw_string_ostream os(text);
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor) {
      os << "type '" << type << "' is not a ranked tensor";
      return text;
    }
    Type element = tensor.getElementType();
    unsigned kind = getElementKind(element);
    if (!kind) {
      os << "element type '" << element
         << "' is not supported by loom (it has " << describeKinds(kAny)
         << "; export the model with those types)";
      return text;
    }
    if (!(kind & kinds)) {
      os << "element type '" << element << "' is not supported by " << target
         << " (it takes " << describeKinds(kinds) << ")";
      return text;
    }
  }
  return std::nullopt;
}

TypedAttr mlir::loom::shlo_to_loom::getScalarAttr(OpBuilder &builder,
                                                  Type elementType,
                                                  double value) {
  if (isa<FloatType>(elementType))
    return builder.getFloatAttr(elementType, value);
  return builder.getIntegerAttr(elementType, static_cast<int64_t>(value));
}

Value mlir::loom::shlo_to_loom::createSplat(OpBuilder &builder, Location loc,
                                            RankedTensorType like,
                                            TypedAttr value) {
  if (like.hasStaticShape())
    return loom::ConstantOp::create(builder, loc,
                                    DenseElementsAttr::get(like, value));
  auto scalarType = RankedTensorType::get({}, like.getElementType());
  Value scalar = loom::ConstantOp::create(
      builder, loc, DenseElementsAttr::get(scalarType, value));
  return loom::BroadcastOp::create(builder, loc, like, scalar,
                                   ArrayRef<int64_t>{});
}

Value mlir::loom::shlo_to_loom::broadcastScalarTo(OpBuilder &builder,
                                                  Location loc, Value value,
                                                  RankedTensorType like) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() != 0 || like.getRank() == 0)
    return value;
  auto target = RankedTensorType::get(like.getShape(), type.getElementType());
  return loom::BroadcastOp::create(builder, loc, target, value,
                                   ArrayRef<int64_t>{});
}

Value mlir::loom::shlo_to_loom::sliceAlong(OpBuilder &builder, Location loc,
                                           Value input, int64_t dim,
                                           int64_t start, int64_t limit) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> starts(type.getRank(), 0), limits(type.getShape()),
      strides(type.getRank(), 1);
  starts[dim] = start;
  limits[dim] = limit;
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = limit - start;
  return loom::SliceOp::create(builder, loc, type.clone(shape), input, starts,
                               limits, strides);
}

Value mlir::loom::shlo_to_loom::padTensor(OpBuilder &builder, Location loc,
                                          Value input, Value padValue,
                                          ArrayRef<int64_t> low,
                                          ArrayRef<int64_t> high,
                                          ArrayRef<int64_t> interior) {
  Type element = cast<RankedTensorType>(input.getType()).getElementType();
  Value x = input;
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(input.getType()).getShape());
  auto fill = [&](ArrayRef<int64_t> fillShape) {
    return broadcastScalarTo(builder, loc, padValue,
                             RankedTensorType::get(fillShape, element));
  };
  auto slice = [&](Value v, int64_t dim, int64_t start, int64_t limit) {
    return sliceAlong(builder, loc, v, dim, start, limit);
  };
  for (int64_t d = 0, rank = shape.size(); d < rank; ++d) {
    int64_t n = shape[d];
    // Interior: view dimension d as [n, 1], append `interior[d]` pad
    // elements to each row, flatten and drop the trailing ones.
    if (interior[d] > 0 && n > 1) {
      SmallVector<int64_t> rows(shape);
      rows.insert(rows.begin() + d + 1, 1);
      Value asRows = loom::ReshapeOp::create(
          builder, loc, RankedTensorType::get(rows, element), x);
      SmallVector<int64_t> fillShape(rows);
      fillShape[d + 1] = interior[d];
      SmallVector<int64_t> padded(rows);
      padded[d + 1] = 1 + interior[d];
      Value widened = loom::ConcatOp::create(
          builder, loc, RankedTensorType::get(padded, element),
          ValueRange{asRows, fill(fillShape)}, static_cast<uint64_t>(d + 1));
      SmallVector<int64_t> flat(shape);
      flat[d] = n * (1 + interior[d]);
      x = loom::ReshapeOp::create(builder, loc,
                                  RankedTensorType::get(flat, element),
                                  widened);
      shape[d] = n + (n - 1) * interior[d];
      x = slice(x, d, 0, shape[d]);
    }
    // Edges: add the positive ones, then cut the negative ones (a cut may
    // reach into what the other edge added).
    SmallVector<Value> pieces;
    SmallVector<int64_t> edgeShape(shape);
    if (low[d] > 0) {
      edgeShape[d] = low[d];
      pieces.push_back(fill(edgeShape));
    }
    pieces.push_back(x);
    if (high[d] > 0) {
      edgeShape[d] = high[d];
      pieces.push_back(fill(edgeShape));
    }
    if (pieces.size() > 1) {
      shape[d] += std::max<int64_t>(low[d], 0) + std::max<int64_t>(high[d], 0);
      x = loom::ConcatOp::create(builder, loc,
                                 RankedTensorType::get(shape, element), pieces,
                                 static_cast<uint64_t>(d));
    }
    if (low[d] < 0 || high[d] < 0) {
      int64_t start = std::max<int64_t>(-low[d], 0);
      int64_t limit = shape[d] - std::max<int64_t>(-high[d], 0);
      x = slice(x, d, start, limit);
      shape[d] = limit - start;
    }
  }
  return x;
}

FailureOr<SmallVector<ReduceKind>>
mlir::loom::shlo_to_loom::getReduceKinds(Region &body, unsigned count,
                                         std::string &why) {
  std::string expected =
      count == 1 ? "reduction body is not a single add, multiply, maximum, "
                   "minimum, and or or of its two arguments"
                 : "reduction body of " + std::to_string(count) +
                       " inputs is not one add, multiply, maximum, minimum, "
                       "and or or per input of its accumulator and element";
  if (!llvm::hasSingleElement(body)) {
    why = expected;
    return failure();
  }
  Block &block = body.front();
  auto ops = block.without_terminator();
  if (block.getNumArguments() != 2 * count || !block.mightHaveTerminator() ||
      static_cast<unsigned>(std::distance(ops.begin(), ops.end())) != count) {
    why = expected;
    return failure();
  }
  auto terminator = dyn_cast<shlo::ReturnOp>(block.getTerminator());
  if (!terminator || terminator.getNumOperands() != count) {
    why = expected;
    return failure();
  }
  SmallVector<ReduceKind> kinds;
  for (unsigned k = 0; k < count; ++k) {
    Operation *inner = terminator.getOperand(k).getDefiningOp();
    Value acc = block.getArgument(k), element = block.getArgument(count + k);
    bool onArguments =
        inner && inner->getBlock() == &block && inner->getNumOperands() == 2 &&
        inner->getNumResults() == 1 &&
        ((inner->getOperand(0) == acc && inner->getOperand(1) == element) ||
         (inner->getOperand(0) == element && inner->getOperand(1) == acc));
    if (!onArguments) {
      why = expected;
      return failure();
    }
    bool isBool = getElementTypeOrSelf(inner->getResult(0).getType())
                      .isSignlessInteger(1);
    if (isa<shlo::AddOp>(inner) && !isBool) {
      kinds.push_back(ReduceKind::Sum);
    } else if (isa<shlo::MulOp>(inner)) {
      kinds.push_back(isBool ? ReduceKind::And : ReduceKind::Prod);
    } else if (isa<shlo::MaxOp>(inner)) {
      kinds.push_back(isBool ? ReduceKind::Or : ReduceKind::Max);
    } else if (isa<shlo::MinOp>(inner)) {
      kinds.push_back(isBool ? ReduceKind::And : ReduceKind::Min);
    } else if (isa<shlo::AndOp, shlo::OrOp>(inner)) {
      if (!isBool) {
        why = "reduction with a bitwise '" +
              inner->getName().getStringRef().str() +
              "' body has no loom equivalent (only logical and/or of i1)";
        return failure();
      }
      kinds.push_back(isa<shlo::AndOp>(inner) ? ReduceKind::And
                                              : ReduceKind::Or);
    } else {
      why = "reduction body '" + inner->getName().getStringRef().str() +
            "' has no loom equivalent (supported: add, multiply, maximum, "
            "minimum; and, or of i1)";
      return failure();
    }
  }
  return kinds;
}

bool mlir::loom::shlo_to_loom::isReduceIdentity(Value init, ReduceKind kind) {
  DenseElementsAttr attr;
  if (!matchPattern(init, m_Constant(&attr)) || !attr.isSplat())
    return false;
  if (isa<FloatType>(attr.getElementType())) {
    APFloat v = attr.getSplatValue<APFloat>();
    switch (kind) {
    case ReduceKind::Sum:
      return v.isZero();
    case ReduceKind::Prod:
      return v.isExactlyValue(1.0);
    case ReduceKind::Max:
      return v.isInfinity() && v.isNegative();
    case ReduceKind::Min:
      return v.isInfinity() && !v.isNegative();
    default:
      return false;
    }
  }
  APInt v = attr.getSplatValue<APInt>();
  switch (kind) {
  case ReduceKind::Sum:
    return v.isZero();
  case ReduceKind::Prod:
    return v.isOne();
  case ReduceKind::Max:
    return v.isMinSignedValue();
  case ReduceKind::Min:
    return v.isMaxSignedValue();
  case ReduceKind::And:
    return v.isOne();
  case ReduceKind::Or:
    return v.isZero();
  }
  return false;
}

Value mlir::loom::shlo_to_loom::combineByKind(OpBuilder &builder, Location loc,
                                              ReduceKind kind, Value lhs,
                                              Value rhs) {
  Type type = lhs.getType();
  switch (kind) {
  case ReduceKind::Sum:
    return loom::AddOp::create(builder, loc, type, lhs, rhs);
  case ReduceKind::Prod:
    return loom::MulOp::create(builder, loc, type, lhs, rhs);
  case ReduceKind::Max:
    return loom::MaxOp::create(builder, loc, type, lhs, rhs);
  case ReduceKind::Min:
    return loom::MinOp::create(builder, loc, type, lhs, rhs);
  case ReduceKind::And:
    return loom::SelectOp::create(builder, loc, type, lhs, rhs, lhs);
  case ReduceKind::Or:
    return loom::SelectOp::create(builder, loc, type, lhs, lhs, rhs);
  }
  llvm_unreachable("unknown reduction");
}
