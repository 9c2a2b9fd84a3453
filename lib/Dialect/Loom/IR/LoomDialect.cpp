//===- LoomDialect.cpp - The loom dialect ---------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::loom;

#include "loom/Dialect/Loom/IR/LoomDialect.cpp.inc"

namespace {
/// Attaches upstream's elementwise sharding rule (every dimension parallel,
/// identity indexing maps) to each listed op.
template <typename... Ops>
void attachElementwiseSharding(MLIRContext &ctx) {
  (Ops::template attachInterface<shard::ElementwiseShardingInterface<Ops>>(ctx),
   ...);
}
} // namespace

void LoomDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/Loom/IR/LoomOps.cpp.inc"
      >();
  attachElementwiseSharding<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp,
                            NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp,
                            TanhOp, SigmoidOp, ErfOp, ReluOp, SiluOp, GeluOp,
                            CompareOp, SelectOp, ConvertOp>(*getContext());
}

Operation *LoomDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

/// Checks the Loom attributes that may sit on function arguments and
/// results: `loom.param` (unit, tensor arguments only), `loom.name`
/// (string) and `loom.grad_of` (integer, results only).
static LogicalResult verifyValueAttr(Operation *op, NamedAttribute attr,
                                     Type valueType, bool isArgument) {
  StringRef name = attr.getName().getValue();
  if (name == LoomDialect::getParamAttrName()) {
    if (!isArgument)
      return op->emitOpError() << "'" << name
                               << "' marks function arguments, not results";
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a unit attribute";
    if (!isa<RankedTensorType>(valueType))
      return op->emitOpError()
             << "'" << name << "' argument must be a ranked tensor, got "
             << valueType;
    return success();
  }
  if (name == LoomDialect::getNameAttrName()) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a string";
    return success();
  }
  if (name == LoomDialect::getGradOfAttrName()) {
    if (isArgument)
      return op->emitOpError() << "'" << name
                               << "' marks function results, not arguments";
    if (!isa<IntegerAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be an integer";
    return success();
  }
  return op->emitOpError() << "unknown loom attribute '" << name
                           << "' (known: loom.param, loom.name, loom.grad_of)";
}

static Type getRegionValueType(Operation *op, bool isArgument, unsigned index) {
  if (auto func = dyn_cast<FunctionOpInterface>(op)) {
    ArrayRef<Type> types =
        isArgument ? func.getArgumentTypes() : func.getResultTypes();
    if (index < types.size())
      return types[index];
  }
  return Type();
}

LogicalResult LoomDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  return verifyValueAttr(op, attr, getRegionValueType(op, true, argIndex),
                         /*isArgument=*/true);
}

LogicalResult LoomDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  return verifyValueAttr(op, attr, getRegionValueType(op, false, resultIndex),
                         /*isArgument=*/false);
}
