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
/// results: `loom.param` and `loom.state` (unit, tensor arguments only),
/// `loom.name` (string), `loom.grad_of` and `loom.updates` (the index of an
/// argument of the function, results only). After convert-loom-to-loomrt,
/// arguments are memref buffers and results are buffer arguments, which
/// keep these attributes.
static LogicalResult verifyValueAttr(Operation *op, NamedAttribute attr,
                                     bool isArgument, unsigned index) {
  StringRef name = attr.getName().getValue();
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (name == LoomDialect::getParamAttrName() ||
      name == LoomDialect::getStateAttrName() ||
      name == LoomDialect::getPipelineCopyAttrName()) {
    if (!isArgument)
      return op->emitOpError() << "'" << name
                               << "' marks function arguments, not results";
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a unit attribute";
    Type type = func && index < func.getNumArguments()
                    ? func.getArgumentTypes()[index]
                    : Type();
    if (!isa_and_nonnull<RankedTensorType, MemRefType>(type))
      return op->emitOpError()
             << "'" << name << "' argument must be a ranked tensor, got "
             << type;
    return success();
  }
  if (name == LoomDialect::getNameAttrName()) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a string";
    return success();
  }
  if (name == LoomDialect::getGradOfAttrName() ||
      name == LoomDialect::getUpdatesAttrName()) {
    bool isBuffer = func && isArgument && index < func.getNumArguments() &&
                    isa<MemRefType>(func.getArgumentTypes()[index]);
    if (isArgument && !isBuffer)
      return op->emitOpError() << "'" << name
                               << "' marks function results, not arguments";
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || !value.getType().isSignlessInteger(64))
      return op->emitOpError()
             << "'" << name << "' must be an i64 argument index";
    int64_t numArguments = func ? func.getNumArguments() : 0;
    if (value.getInt() < 0 || value.getInt() >= numArguments)
      return op->emitOpError()
             << "'" << name << "' of result " << index << " is "
             << value.getInt() << ", not an argument index (the function has "
             << numArguments << " arguments)";
    return success();
  }
  if (name == LoomDialect::getShardAttrName()) {
    if (!isArgument)
      return op->emitOpError() << "'" << name
                               << "' marks function arguments, not results";
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    auto field = [&](StringRef key) {
      return dict ? dict.getAs<IntegerAttr>(key) : IntegerAttr();
    };
    IntegerAttr dim = field("dim"), parts = field("parts"),
                groups = field("groups"), padded = field("padded");
    auto type = func && index < func.getNumArguments()
                    ? dyn_cast<ShapedType>(func.getArgumentTypes()[index])
                    : ShapedType();
    if (!dict || !dim || !parts || (dict.get("groups") && !groups) ||
        (dict.get("padded") && !padded) ||
        dict.size() != 2u + (groups ? 1 : 0) + (padded ? 1 : 0) ||
        parts.getInt() < 1 || (groups && groups.getInt() < 1) || !type ||
        !type.hasRank() || dim.getInt() < 0 || dim.getInt() >= type.getRank())
      return op->emitOpError()
             << "'" << name << "' of argument " << index
             << " must be {dim = D, parts = T[, groups = G][, padded = P]} "
                "with D a dimension of the ranked argument and T, G >= 1";
    // A padded dimension: the slice has P / T of the P padded rows.
    if (padded && (groups || type.isDynamicDim(dim.getInt()) ||
                   padded.getInt() !=
                       type.getDimSize(dim.getInt()) * parts.getInt()))
      return op->emitOpError()
             << "'" << name << "' of argument " << index << ": padded = "
             << padded.getInt() << " must be T times the argument's static "
             << "size of dimension D, without groups";
    return success();
  }
  return op->emitOpError() << "unknown loom attribute '" << name
                           << "' (known: loom.param, loom.name, loom.state, "
                              "loom.grad_of, loom.updates, loom.shard, "
                              "loom.pipeline_copy)";
}

LogicalResult LoomDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  return verifyValueAttr(op, attr, /*isArgument=*/true, argIndex);
}

LogicalResult LoomDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  return verifyValueAttr(op, attr, /*isArgument=*/false, resultIndex);
}

/// `loom.fused` marks an elementwise op computed inside the loop of its one
/// user: the user must be an elementwise op with a result of the same shape.
LogicalResult LoomDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() != FusedAttrHelper::getNameStr())
    return success();
  auto fail = [&](const Twine &why) {
    return op->emitOpError()
           << "is marked '" << attr.getName().getValue()
           << "' (computed inside its user's loop) but " << why
           << "; remove the mark or rerun loom-fuse-elementwise on the "
              "unmarked program";
  };
  if (!isa<UnitAttr>(attr.getValue()))
    return fail("the mark is not a unit attribute");
  if (!op->hasTrait<::mlir::loom::OpTrait::ElementwiseMapping>() ||
      op->getNumResults() != 1)
    return fail("it is not an elementwise op with one result");
  Value result = op->getResult(0);
  if (!result.hasOneUse())
    return fail("its result does not have exactly one use");
  Operation *user = *result.user_begin();
  if (!user->hasTrait<::mlir::loom::OpTrait::ElementwiseMapping>() ||
      user->getNumResults() != 1 ||
      cast<ShapedType>(result.getType()).getShape() !=
          cast<ShapedType>(user->getResult(0).getType()).getShape())
    return fail("its user is not an elementwise op of the same shape");
  return success();
}
