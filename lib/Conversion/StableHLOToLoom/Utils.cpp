//===- Utils.cpp - Type checks and builders shared by the patterns --------===//

#include "Patterns.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
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
