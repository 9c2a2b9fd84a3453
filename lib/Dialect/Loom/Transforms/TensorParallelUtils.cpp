//===- TensorParallelUtils.cpp - Shared by the tensor-parallel passes -----===//

#include "TensorParallelUtils.h"

#include "loom/Dialect/Loom/IR/LocationName.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"

using namespace mlir;
using namespace mlir::loom;

std::string tensor_parallel::getParamKey(func::FuncOp func,
                                         unsigned argNumber) {
  auto name = func.getArgAttrOfType<StringAttr>(argNumber,
                                                LoomDialect::getNameAttrName());
  return name ? name.getValue().str() : "#" + std::to_string(argNumber);
}

std::string tensor_parallel::describeOp(Operation *op) {
  std::string text = ("'" + op->getName().getStringRef() + "'").str();
  if (StringRef name = getLocationName(op->getLoc()); !name.empty())
    text += (" (node '" + name + "')").str();
  return text;
}

BlockArgument tensor_parallel::getParam(func::FuncOp func, Value value,
                                        ParamLayer *layer) {
  if (layer)
    *layer = ParamLayer();
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (arg.getOwner() != &func.getBody().front() ||
        !func.getArgAttr(arg.getArgNumber(), LoomDialect::getParamAttrName()))
      return {};
    return arg;
  }
  if (!layer)
    return {};
  auto reshape = value.getDefiningOp<ReshapeOp>();
  Value sliced = reshape ? reshape.getOperand() : value;
  auto slice = sliced.getDefiningOp<SliceOp>();
  BlockArgument stacked = slice ? getParam(func, slice.getOperand()) : nullptr;
  if (!stacked)
    return {};
  auto type = cast<RankedTensorType>(stacked.getType());
  if (type.getRank() < 2 || !type.hasStaticShape() ||
      slice.getLimit()[0] - slice.getStart()[0] != 1)
    return {};
  for (int64_t d = 0, e = type.getRank(); d < e; ++d)
    if (slice.getStrides()[d] != 1 ||
        (d > 0 && (slice.getStart()[d] != 0 ||
                   slice.getLimit()[d] != type.getDimSize(d))))
      return {};
  if (reshape && reshape.getType().getShape() != type.getShape().drop_front())
    return {};
  layer->slice = slice;
  layer->reshape = reshape;
  return stacked;
}

BlockArgument tensor_parallel::getLinearWeight(func::FuncOp func, Value rhs,
                                               TransposeOp *transpose,
                                               ParamLayer *layer) {
  if (transpose)
    *transpose = nullptr;
  if (BlockArgument arg = getParam(func, rhs, layer))
    return arg;
  auto op = rhs.getDefiningOp<TransposeOp>();
  if (!op || op.getPermutation() != ArrayRef<int64_t>{1, 0})
    return {};
  BlockArgument arg = getParam(func, op.getOperand(), layer);
  if (arg && transpose)
    *transpose = op;
  return arg;
}

/// getLinearContractedDim in the coordinates of the rank-2 weight `dot`
/// reads (one layer of a stacked parameter, or the parameter).
static int64_t getContractedWeightDim(func::FuncOp func, DotGeneralOp dot,
                                      tensor_parallel::ParamLayer *layer) {
  auto lhs = dyn_cast<RankedTensorType>(dot.getLhs().getType());
  auto rhs = dyn_cast<RankedTensorType>(dot.getRhs().getType());
  TransposeOp transpose;
  if (!lhs || !rhs || rhs.getRank() != 2 || lhs.getRank() < 2 ||
      !tensor_parallel::getLinearWeight(func, dot.getRhs(), &transpose,
                                        layer) ||
      !dot.getLhsBatchingDims().empty() ||
      dot.getLhsContractingDims() != ArrayRef<int64_t>{lhs.getRank() - 1} ||
      dot.getRhsContractingDims().size() != 1)
    return -1;
  int64_t contracted = dot.getRhsContractingDims()[0];
  return transpose ? 1 - contracted : contracted;
}

int64_t tensor_parallel::getLinearContractedDim(func::FuncOp func,
                                                DotGeneralOp dot) {
  return getContractedWeightDim(func, dot, /*layer=*/nullptr);
}

/// A parameter of rank >= 3, or one layer of a stacked one (see getParam),
/// read directly by `dot` (no batching dimension) whose contracted
/// dimensions are its leading ones, in order, contracted with the lhs's
/// trailing ones.
static bool isDenseGeneralWeight(func::FuncOp func, DotGeneralOp dot,
                                 tensor_parallel::ParamLayer &layer) {
  auto lhs = dyn_cast<RankedTensorType>(dot.getLhs().getType());
  auto rhs = dyn_cast<RankedTensorType>(dot.getRhs().getType());
  if (!lhs || !rhs || rhs.getRank() < 3 ||
      !tensor_parallel::getParam(func, dot.getRhs(), &layer) ||
      !dot.getLhsBatchingDims().empty())
    return false;
  ArrayRef<int64_t> lhsDims = dot.getLhsContractingDims(),
                    rhsDims = dot.getRhsContractingDims();
  int64_t n = rhsDims.size();
  if (n == 0 || n >= rhs.getRank() || lhs.getRank() <= n)
    return false;
  for (int64_t k = 0; k < n; ++k)
    if (rhsDims[k] != k || lhsDims[k] != lhs.getRank() - n + k)
      return false;
  return true;
}

int64_t tensor_parallel::getColumnParallelDim(func::FuncOp func,
                                              DotGeneralOp dot,
                                              ParamLayer &layer) {
  if (isDenseGeneralWeight(func, dot, layer))
    return dot.getRhsContractingDims().size() == 1 ? layer.paramDim(1) : -1;
  int64_t contracted = getContractedWeightDim(func, dot, &layer);
  return contracted < 0 ? -1 : layer.paramDim(1 - contracted);
}

int64_t tensor_parallel::getRowParallelDim(func::FuncOp func, DotGeneralOp dot,
                                           int64_t rhsDim, ParamLayer &layer) {
  if (isDenseGeneralWeight(func, dot, layer))
    return layer.paramDim(rhsDim);
  int64_t contracted = getContractedWeightDim(func, dot, &layer);
  if (contracted < 0 || dot.getRhsContractingDims()[0] != rhsDim)
    return -1;
  return layer.paramDim(contracted);
}

FailureOr<func::FuncOp>
tensor_parallel::lookupForwardFunction(ModuleOp module, StringRef name,
                                       StringRef pass) {
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!func)
    return module.emitError() << pass << ": function '" << name
                              << "' (option function=) is not in the module";
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitError() << pass << ": @" << func.getSymName()
                            << " must have a body of one block";
  return func;
}

LogicalResult tensor_parallel::checkTpOption(MLIRContext *context, int64_t tp,
                                             StringRef pass) {
  if (tp >= 1)
    return success();
  return emitError(UnknownLoc::get(context))
         << pass << ": tp must be >= 1 (option tp=, the number of "
                    "tensor-parallel ranks), got "
         << tp;
}

FailureOr<std::pair<func::FuncOp, ::loom::Mesh>>
tensor_parallel::lookupForwardFunctionAndMesh(ModuleOp module, StringRef name,
                                              StringRef pass) {
  FailureOr<func::FuncOp> func = lookupForwardFunction(module, name, pass);
  if (failed(func))
    return failure();
  FailureOr<::loom::Mesh> mesh = getMesh(module);
  if (failed(mesh))
    return failure();
  return std::make_pair(*func, *mesh);
}

Value tensor_parallel::RankStarts::get(int64_t local) {
  Value &start = starts[local];
  if (start)
    return start;
  auto i64 = RankedTensorType::get({}, IntegerType::get(func.getContext(), 64));
  ImplicitLocOpBuilder b(func.getLoc(), func.getContext());
  if (!rank) {
    b.setInsertionPointToStart(&func.getBody().front());
    rank = GridIndexOp::create(b, i64, grid, ArrayRef<int16_t>{kTpAxis});
  }
  b.setInsertionPointAfter(rank.getDefiningOp());
  Value size = ConstantOp::create(
      b, cast<ElementsAttr>(DenseElementsAttr::get(
             i64, b.getIntegerAttr(b.getI64Type(), local))));
  start = MulOp::create(b, rank, size);
  return start;
}

Value tensor_parallel::buildLocalLookup(ImplicitLocOpBuilder &b, Value data,
                                        Value indices, Value start,
                                        int64_t local, int64_t axis) {
  auto indexType = cast<RankedTensorType>(indices.getType());
  auto splat = [&](RankedTensorType type, Attribute value) -> Value {
    return ConstantOp::create(
        b, cast<ElementsAttr>(DenseElementsAttr::get(type, value)));
  };
  auto splatIndex = [&](int64_t v) {
    return splat(indexType, b.getIntegerAttr(b.getI64Type(), v));
  };
  Value offset = SubOp::create(
      b, indices,
      BroadcastOp::create(b, indexType, start, ArrayRef<int64_t>{}));
  // One statement each: C++ leaves the order of arguments' evaluation
  // open, and the printed IR must not depend on it.
  Value zero = splatIndex(0);
  Value atLeast0 = MaxOp::create(b, offset, zero);
  Value last = splatIndex(local - 1);
  Value clamped = MinOp::create(b, atLeast0, last);
  Value mine = CompareOp::create(b, ComparisonDirection::eq, clamped, offset);
  Value rows = GatherOp::create(b, data, clamped, axis);
  auto rowsType = cast<RankedTensorType>(rows.getType());
  SmallVector<int64_t> indexDims;
  for (int64_t d = 0; d < indexType.getRank(); ++d)
    indexDims.push_back(axis + d);
  Value mask = BroadcastOp::create(b, rowsType.clone(b.getI1Type()), mine,
                                   indexDims);
  Value zeros =
      splat(rowsType, b.getFloatAttr(rowsType.getElementType(), 0.0));
  return SelectOp::create(b, mask, rows, zeros);
}
