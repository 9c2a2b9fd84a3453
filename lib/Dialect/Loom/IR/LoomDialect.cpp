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
/// results (docs/training.md): `loom.param` and `loom.state` (unit,
/// arguments only), `loom.name` (string), `loom.updates` and `loom.grad_of`
/// (integer argument indices, on results, or on the result buffers that
/// convert-loom-to-loomrt turns results into).
static LogicalResult verifyValueAttr(Operation *op, NamedAttribute attr,
                                     Type valueType, bool isArgument) {
  StringRef name = attr.getName().getValue();
  if (name == LoomDialect::getParamAttrName() || name == "loom.state") {
    if (!isArgument)
      return op->emitOpError() << "'" << name
                               << "' marks function arguments, not results";
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a unit attribute";
    if (!isa<RankedTensorType, MemRefType>(valueType))
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
  if (name == "loom.updates" || name == "loom.grad_of") {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    if (!index || index.getInt() < 0)
      return op->emitOpError() << "'" << name
                               << "' must be a non-negative argument index";
    if (auto func = dyn_cast<FunctionOpInterface>(op))
      if (index.getInt() >= static_cast<int64_t>(func.getNumArguments()))
        return op->emitOpError() << "'" << name << "' = " << index.getInt()
                                 << " is not an argument index (the function "
                                    "has "
                                 << func.getNumArguments() << ")";
    return success();
  }
  return op->emitOpError() << "unknown loom attribute '" << name
                           << "' (known: loom.param, loom.state, loom.name, "
                              "loom.updates, loom.grad_of)";
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
