//===- LoomDialect.cpp - The loom dialect ---------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::loom;

#include "loom/Dialect/Loom/IR/LoomDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/Loom/IR/LoomAttrs.cpp.inc"

namespace {
/// Attaches upstream's elementwise sharding rule (every dimension parallel,
/// identity indexing maps) to each listed op.
template <typename... Ops>
void attachElementwiseSharding(MLIRContext &ctx) {
  (Ops::template attachInterface<shard::ElementwiseShardingInterface<Ops>>(ctx),
   ...);
}

/// Every loom op may be inlined: each computes its results from its
/// operands alone (no regions, no terminators, no reference to the
/// enclosing function; the grids it names are module symbols). The func
/// dialect's own interface (func::registerInlinerExtension) handles the
/// call and `func.return`.
struct LoomInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void LoomDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/Loom/IR/LoomOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "loom/Dialect/Loom/IR/LoomAttrs.cpp.inc"
      >();
  attachElementwiseSharding<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp,
                            NegOp, AbsOp, ExpOp, LogOp, SqrtOp, RsqrtOp,
                            TanhOp, CosOp, SinOp, SigmoidOp, ErfOp, ErfInvOp,
                             ReluOp, SiluOp, GeluOp,
                            CompareOp, SelectOp, ConvertOp>(*getContext());
  addInterfaces<LoomInlinerInterface>();
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
  if (name == LoomDialect::getShadowOfAttrName()) {
    // A bf16 copy of a parameter argument, kept as state.
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isArgument || !value || !value.getType().isSignlessInteger(64))
      return op->emitOpError() << "'" << name
                               << "' must be an i64 argument index on a "
                                  "function argument";
    if (!func || !func.getArgAttr(index, LoomDialect::getStateAttrName()))
      return op->emitOpError() << "'" << name << "' of argument " << index
                               << " needs 'loom.state' beside it";
    int64_t source = value.getInt();
    if (source < 0 || source >= func.getNumArguments() ||
        !func.getArgAttr(static_cast<unsigned>(source),
                         LoomDialect::getParamAttrName()))
      return op->emitOpError()
             << "'" << name << "' of argument " << index << " is " << source
             << ", not the index of a 'loom.param' argument";
    auto shadowType = dyn_cast<ShapedType>(func.getArgumentTypes()[index]);
    auto paramType = dyn_cast<ShapedType>(
        func.getArgumentTypes()[static_cast<unsigned>(source)]);
    if (!shadowType || !paramType ||
        shadowType.getShape() != paramType.getShape() ||
        !shadowType.getElementType().isBF16() ||
        !paramType.getElementType().isF32())
      return op->emitOpError()
             << "'" << name << "' of argument " << index
             << ": a shadow is the bf16 copy of an f32 parameter of the "
                "same shape, got "
             << func.getArgumentTypes()[index] << " for "
             << func.getArgumentTypes()[static_cast<unsigned>(source)];
    return success();
  }
  if (name == LoomDialect::getShardAttrName()) {
    if (!isArgument)
      return op->emitOpError() << "'" << name
                               << "' marks function arguments, not results";
    auto shard = dyn_cast<ShardAttr>(attr.getValue());
    if (!shard)
      return op->emitOpError()
             << "'" << name << "' of argument " << index
             << " must be a #loom.shard<dim = D, parts = T[, groups = G]"
                "[, padded = P]> attribute, got "
             << attr.getValue();
    Type type = func && index < func.getNumArguments()
                    ? func.getArgumentTypes()[index]
                    : Type();
    return shard.verifyArgumentType(type, [&]() {
      return op->emitOpError() << "'" << name << "' of argument " << index
                               << ": ";
    });
  }
  if (name == LoomDialect::getDimNamesAttrName()) {
    // StableHLO import: JAX's dimension-variable names, one per dimension.
    auto names = dyn_cast<ArrayAttr>(attr.getValue());
    if (!isArgument || !names ||
        !llvm::all_of(names, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitOpError()
             << "'" << name
             << "' must be an array of strings on a function argument";
    return success();
  }
  return op->emitOpError() << "unknown loom attribute '" << name
                           << "' (known: loom.param, loom.name, loom.state, "
                              "loom.grad_of, loom.updates, loom.shadow_of, "
                              "loom.shard, loom.pipeline_copy, "
                              "loom.dim_names)";
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

/// `loom.fused` marks an elementwise op computed inside the loops of its
/// users: each must be an elementwise op with a result of the same shape,
/// or a reduction (reduce_sum, reduce_mean, reduce_max) of it.
LogicalResult LoomDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() != FusedAttrHelper::getNameStr())
    return success();
  auto fail = [&](const Twine &why) {
    return op->emitOpError()
           << "is marked '" << attr.getName().getValue()
           << "' (computed inside its users' loops) but " << why
           << "; remove the mark or rerun loom-fuse-elementwise on the "
              "unmarked program";
  };
  if (!isa<UnitAttr>(attr.getValue()))
    return fail("the mark is not a unit attribute");
  if (!op->hasTrait<::mlir::loom::OpTrait::ElementwiseMapping>() ||
      op->getNumResults() != 1)
    return fail("it is not an elementwise op with one result");
  Value result = op->getResult(0);
  if (result.use_empty())
    return fail("its result has no use");
  for (Operation *user : result.getUsers()) {
    if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(user))
      continue; // folded as the reduction reads it
    if (!user->hasTrait<::mlir::loom::OpTrait::ElementwiseMapping>() ||
        user->getNumResults() != 1 ||
        cast<ShapedType>(result.getType()).getShape() !=
            cast<ShapedType>(user->getResult(0).getType()).getShape())
      return fail("a user ('" + user->getName().getStringRef() +
                  "') is not an elementwise op of the same shape");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// #loom.shard
//===----------------------------------------------------------------------===//

LogicalResult ShardAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t dim, int64_t parts, int64_t groups,
                                int64_t padded) {
  if (dim < 0)
    return emitError() << "#loom.shard: dim = " << dim
                       << " must be a dimension index (>= 0)";
  if (parts < 1)
    return emitError() << "#loom.shard: parts = " << parts
                       << " must be the number of ranks (>= 1)";
  if (groups < 1)
    return emitError() << "#loom.shard: groups = " << groups
                       << " must be >= 1 (omit it for one block)";
  if (padded < 0)
    return emitError() << "#loom.shard: padded = " << padded
                       << " must be the padded size (> 0), or omitted";
  if (padded && groups != 1)
    return emitError() << "#loom.shard: a padded dimension (padded = "
                       << padded << ") cannot also be " << groups
                       << " groups; drop one of them";
  return success();
}

LogicalResult ShardAttr::verifyArgumentType(
    Type type, function_ref<InFlightDiagnostic()> emitError) const {
  auto shaped = dyn_cast_or_null<ShapedType>(type);
  if (!shaped || !shaped.hasRank())
    return emitError() << "the argument must be a ranked tensor or memref, got "
                       << type;
  if (getDim() >= shaped.getRank())
    return emitError() << "dim = " << getDim()
                       << " is not a dimension of the argument's type "
                       << type;
  // A padded dimension: the slice holds padded / parts of the padded rows.
  if (getPadded() &&
      (shaped.isDynamicDim(getDim()) ||
       getPadded() != shaped.getDimSize(getDim()) * getParts()))
    return emitError() << "padded = " << getPadded() << " must be parts ("
                       << getParts()
                       << ") times the argument's static size of dimension "
                       << getDim() << " in " << type;
  return success();
}
