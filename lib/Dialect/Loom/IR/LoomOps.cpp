//===- LoomOps.cpp - Ops of the loom dialect ------------------------------===//
//
// Shape rules (result-type inference doubles as operand verification for the
// ops that implement it), verifiers, folders, cost and sharding methods.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/ShapeUtils.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

#include <numeric>

using namespace mlir;
using namespace mlir::loom;

#include "loom/Dialect/Loom/IR/LoomEnums.cpp.inc"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
/// Prefix for diagnostics reported through a location during inference, so
/// that they read like the op's own verifier errors.
template <typename... Args>
LogicalResult inferError(std::optional<Location> loc, StringRef opName,
                         Args &&...args) {
  return emitOptionalError(loc, "'", opName, "' op ",
                           std::forward<Args>(args)...);
}

/// Checks that `dim` is a dimension index of a rank-`rank` tensor.
LogicalResult checkDim(std::optional<Location> loc, StringRef opName,
                       StringRef what, int64_t dim, int64_t rank) {
  if (rank == 0)
    return inferError(loc, opName, what, " ", dim,
                      " is out of range: a rank-0 tensor has no dimensions");
  if (dim < 0 || dim >= rank)
    return inferError(loc, opName, what, " ", dim,
                      " is out of range for rank ", rank, " (valid: 0 to ",
                      rank - 1, ")");
  return success();
}

/// Checks that `dims` (a list named `what`) are distinct, in-range dimension
/// indices.
LogicalResult checkDims(std::optional<Location> loc, StringRef opName,
                        StringRef what, ArrayRef<int64_t> dims, int64_t rank) {
  llvm::SmallSet<int64_t, 8> seen;
  std::string entry = (what + " entry").str();
  for (int64_t d : dims) {
    if (failed(checkDim(loc, opName, entry, d, rank)))
      return failure();
    if (!seen.insert(d).second)
      return inferError(loc, opName, what, " ", formatDims(dims),
                        " repeat dimension ", d);
  }
  return success();
}

RankedTensorType getTensor(Value v) {
  return v ? dyn_cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

/// Returns `operand` as a fold result when it can replace `result` as is.
OpFoldResult foldTo(Value operand, Value result) {
  if (operand.getType() == result.getType())
    return operand;
  return {};
}
} // namespace

bool mlir::loom::detail::isRefinementCompatible(TypeRange inferred,
                                                TypeRange actual) {
  if (inferred.size() != actual.size())
    return false;
  for (auto [i, a] : llvm::zip(inferred, actual)) {
    auto it = dyn_cast<RankedTensorType>(i);
    auto at = dyn_cast<RankedTensorType>(a);
    if (!it || !at)
      return i == a;
    if (it.getElementType() != at.getElementType() ||
        failed(meetShapes(it.getShape(), at.getShape())))
      return false;
  }
  return true;
}

LogicalResult mlir::loom::detail::inferElementwiseType(
    std::optional<Location> loc, StringRef opName, ValueRange operands,
    Type resultElementType, SmallVectorImpl<Type> &inferred) {
  RankedTensorType first;
  SmallVector<int64_t> shape;
  for (Value v : operands) {
    RankedTensorType t = getTensor(v);
    if (!t)
      return inferError(loc, opName, "expects ranked tensor operands");
    if (!first) {
      first = t;
      shape.assign(t.getShape().begin(), t.getShape().end());
      continue;
    }
    FailureOr<SmallVector<int64_t>> met = meetShapes(shape, t.getShape());
    if (failed(met))
      return inferError(loc, opName, "operand shapes ", first,
                        " and ", t,
                        " differ; elementwise ops need one shape (insert "
                        "loom.broadcast)");
    shape = *met;
  }
  if (!first)
    return inferError(loc, opName, "expects at least one operand");
  Type elementType = resultElementType ? resultElementType
                                       : operands.back().getType();
  if (auto t = dyn_cast<RankedTensorType>(elementType))
    elementType = t.getElementType();
  inferred.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

//===----------------------------------------------------------------------===//
// Custom assembly: `: T` for a list of equal types, else `: (T...) -> R`.
//===----------------------------------------------------------------------===//

template <typename... TypeRefs>
static ParseResult parseSameTypes(OpAsmParser &parser, Type &first,
                                  TypeRefs &...rest) {
  SmallVector<Type *> all = {&first, &rest...};
  if (succeeded(parser.parseOptionalLParen())) {
    // (T0, T1, ...) -> R
    for (size_t i = 0, e = all.size() - 1; i < e; ++i) {
      if (i > 0 && parser.parseComma())
        return failure();
      if (parser.parseType(*all[i]))
        return failure();
    }
    return failure(parser.parseRParen() || parser.parseArrow() ||
                   parser.parseType(*all.back()));
  }
  Type type;
  if (parser.parseType(type))
    return failure();
  for (Type *t : all)
    *t = type;
  return success();
}

template <typename... Types>
static void printSameTypes(OpAsmPrinter &printer, Operation *, Type first,
                           Types... rest) {
  SmallVector<Type> all = {first, rest...};
  if (llvm::all_equal(all)) {
    printer << first;
    return;
  }
  printer << '(';
  llvm::interleaveComma(ArrayRef<Type>(all).drop_back(), printer);
  printer << ") -> " << all.back();
}

//===----------------------------------------------------------------------===//
// Elementwise folders
//===----------------------------------------------------------------------===//

static bool isSplatFloat(Attribute attr, double value) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(attr);
  if (!splat || !isa<FloatType>(splat.getElementType()))
    return false;
  APFloat v = splat.getSplatValue<APFloat>();
  bool losesInfo = false;
  APFloat expected(value);
  expected.convert(v.getSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
  return v.bitwiseIsEqual(expected);
}

static bool isSplatInt(Attribute attr, int64_t value) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(attr);
  if (!splat || !isa<IntegerType>(splat.getElementType()))
    return false;
  return splat.getSplatValue<APInt>().getSExtValue() == value;
}

/// Is `attr` a splat equal to the identity `value` for this element type?
/// For floats, `zeroIsNegative` asks for -0.0 (x + -0.0 == x for every x,
/// while x + 0.0 turns -0.0 into +0.0).
static bool isIdentitySplat(Attribute attr, int64_t value,
                            bool zeroIsNegative = false) {
  if (isSplatInt(attr, value))
    return true;
  if (value == 0 && zeroIsNegative)
    return isSplatFloat(attr, -0.0);
  return isSplatFloat(attr, static_cast<double>(value));
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (isIdentitySplat(adaptor.getRhs(), 0, /*zeroIsNegative=*/true))
    return foldTo(getLhs(), getResult());
  if (isIdentitySplat(adaptor.getLhs(), 0, /*zeroIsNegative=*/true))
    return foldTo(getRhs(), getResult());
  if (isa<FloatType>(getType().getElementType()))
    return constFoldBinaryOp<FloatAttr, APFloat, void>(
        adaptor.getOperands(),
        [](const APFloat &a, const APFloat &b) { return a + b; });
  return constFoldBinaryOp<IntegerAttr, APInt, void>(
      adaptor.getOperands(),
      [](const APInt &a, const APInt &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  // x - (+0.0) == x for every float x, including -0.0.
  if (isIdentitySplat(adaptor.getRhs(), 0))
    return foldTo(getLhs(), getResult());
  if (isa<FloatType>(getType().getElementType()))
    return constFoldBinaryOp<FloatAttr, APFloat, void>(
        adaptor.getOperands(),
        [](const APFloat &a, const APFloat &b) { return a - b; });
  return constFoldBinaryOp<IntegerAttr, APInt, void>(
      adaptor.getOperands(),
      [](const APInt &a, const APInt &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isIdentitySplat(adaptor.getRhs(), 1))
    return foldTo(getLhs(), getResult());
  if (isIdentitySplat(adaptor.getLhs(), 1))
    return foldTo(getRhs(), getResult());
  if (isa<FloatType>(getType().getElementType()))
    return constFoldBinaryOp<FloatAttr, APFloat, void>(
        adaptor.getOperands(),
        [](const APFloat &a, const APFloat &b) { return a * b; });
  return constFoldBinaryOp<IntegerAttr, APInt, void>(
      adaptor.getOperands(),
      [](const APInt &a, const APInt &b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isIdentitySplat(adaptor.getRhs(), 1))
    return foldTo(getLhs(), getResult());
  if (isa<FloatType>(getType().getElementType()))
    return constFoldBinaryOp<FloatAttr, APFloat, void>(
        adaptor.getOperands(),
        [](const APFloat &a, const APFloat &b) { return a / b; });
  // Integer division by zero has no value to fold to; leave it to run time.
  return constFoldBinaryOpConditional<IntegerAttr, APInt, void>(
      adaptor.getOperands(),
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        bool overflow = false;
        APInt q = b.isZero() ? APInt() : a.sdiv_ov(b, overflow);
        // Division by zero and INT_MIN / -1 have no value to fold to.
        if (b.isZero() || overflow)
          return std::nullopt;
        return q;
      });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (isIdentitySplat(adaptor.getRhs(), 1))
    return foldTo(getLhs(), getResult());
  return {};
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return foldTo(getLhs(), getResult());
  if (isa<FloatType>(getType().getElementType()))
    return constFoldBinaryOp<FloatAttr, APFloat, void>(
        adaptor.getOperands(),
        [](const APFloat &a, const APFloat &b) { return llvm::maximum(a, b); });
  return constFoldBinaryOp<IntegerAttr, APInt, void>(
      adaptor.getOperands(),
      [](const APInt &a, const APInt &b) { return a.sge(b) ? a : b; });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return foldTo(getLhs(), getResult());
  if (isa<FloatType>(getType().getElementType()))
    return constFoldBinaryOp<FloatAttr, APFloat, void>(
        adaptor.getOperands(),
        [](const APFloat &a, const APFloat &b) { return llvm::minimum(a, b); });
  return constFoldBinaryOp<IntegerAttr, APInt, void>(
      adaptor.getOperands(),
      [](const APInt &a, const APInt &b) { return a.sle(b) ? a : b; });
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getOperand().getDefiningOp<NegOp>())
    return foldTo(inner.getOperand(), getResult());
  if (isa<FloatType>(getType().getElementType()))
    return constFoldUnaryOp<FloatAttr, APFloat, void>(adaptor.getOperands(),
                                       [](const APFloat &a) { return -a; });
  return constFoldUnaryOp<IntegerAttr, APInt, void>(adaptor.getOperands(),
                                       [](const APInt &a) { return -a; });
}

//===----------------------------------------------------------------------===//
// GeluOp, CompareOp, SelectOp, ConvertOp
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  return detail::inferElementwiseType(loc, getOperationName(),
                                      adaptor.getOperands(), nullptr, inferred);
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return detail::inferElementwiseType(loc, getOperationName(),
                                      adaptor.getOperands(),
                                      IntegerType::get(context, 1), inferred);
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  // The result takes the element type of the last operand (`on_false`).
  return detail::inferElementwiseType(loc, getOperationName(),
                                      adaptor.getOperands(), nullptr, inferred);
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  if (getOnTrue() == getOnFalse())
    return foldTo(getOnTrue(), getResult());
  auto pred = dyn_cast_or_null<SplatElementsAttr>(adaptor.getPred());
  if (!pred)
    return {};
  return foldTo(pred.getSplatValue<bool>() ? getOnTrue() : getOnFalse(),
                getResult());
}

OpFoldResult ConvertOp::fold(FoldAdaptor) {
  return foldTo(getOperand(), getResult());
}

//===----------------------------------------------------------------------===//
// Softmax, LogSoftmax, LayerNorm, RmsNorm
//===----------------------------------------------------------------------===//

static LogicalResult inferAlongAxis(std::optional<Location> loc,
                                    StringRef opName, Value operand,
                                    int64_t axis,
                                    SmallVectorImpl<Type> &inferred) {
  RankedTensorType t = getTensor(operand);
  if (!t)
    return inferError(loc, opName, "expects a ranked tensor operand");
  if (failed(checkDim(loc, opName, "axis", axis, t.getRank())))
    return failure();
  inferred.push_back(t);
  return success();
}

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferAlongAxis(loc, getOperationName(), adaptor.getOperand(),
                        adaptor.getAxis(), inferred);
}

LogicalResult LogSoftmaxOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &inferred) {
  return inferAlongAxis(loc, getOperationName(), adaptor.getOperand(),
                        adaptor.getAxis(), inferred);
}

/// Shared rule of layer_norm and rms_norm: normalise over `[axis, rank)`;
/// each affine operand has the shape of those dimensions and the input's
/// element type.
static LogicalResult inferNorm(std::optional<Location> loc, StringRef opName,
                               Value input, ValueRange affine, int64_t axis,
                               double epsilon,
                               SmallVectorImpl<Type> &inferred) {
  RankedTensorType t = getTensor(input);
  if (!t)
    return inferError(loc, opName, "expects a ranked tensor input");
  if (failed(checkDim(loc, opName, "axis", axis, t.getRank())))
    return failure();
  if (!(epsilon >= 0.0))
    return inferError(loc, opName, "epsilon must be non-negative, got ",
                      epsilon);
  ArrayRef<int64_t> normalized = t.getShape().drop_front(axis);
  for (Value v : affine) {
    RankedTensorType a = getTensor(v);
    if (!a || a.getElementType() != t.getElementType() ||
        failed(meetShapes(a.getShape(), normalized)))
      return inferError(loc, opName, "scale/bias type ", v.getType(),
                        " does not match the normalised dimensions ",
                        formatDims(normalized), " of ", t);
  }
  inferred.push_back(t);
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  SmallVector<Value, 2> affine;
  if (adaptor.getScale())
    affine.push_back(adaptor.getScale());
  if (adaptor.getBias())
    affine.push_back(adaptor.getBias());
  return inferNorm(loc, getOperationName(), adaptor.getInput(), affine,
                   adaptor.getAxis(), adaptor.getEpsilon().convertToDouble(),
                   inferred);
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  SmallVector<Value, 1> affine;
  if (adaptor.getScale())
    affine.push_back(adaptor.getScale());
  return inferNorm(loc, getOperationName(), adaptor.getInput(), affine,
                   adaptor.getAxis(), adaptor.getEpsilon().convertToDouble(),
                   inferred);
}

LogicalResult NormGradOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &inferred) {
  SmallVector<Value, 1> affine;
  if (adaptor.getScale())
    affine.push_back(adaptor.getScale());
  if (failed(inferNorm(loc, getOperationName(), adaptor.getInput(), affine,
                       adaptor.getAxis(),
                       adaptor.getEpsilon().convertToDouble(), inferred)))
    return failure();
  auto input = cast<RankedTensorType>(inferred.front());
  RankedTensorType cotangent = getTensor(adaptor.getCotangent());
  if (!cotangent || cotangent.getElementType() != input.getElementType() ||
      failed(meetShapes(cotangent.getShape(), input.getShape())))
    return inferError(loc, getOperationName(), "cotangent type ",
                      adaptor.getCotangent().getType(),
                      " does not match the input ", input);
  auto params = RankedTensorType::get(
      input.getShape().drop_front(adaptor.getAxis()), input.getElementType());
  inferred.append({params, params});
  return success();
}

//===----------------------------------------------------------------------===//
// DotGeneralOp
//===----------------------------------------------------------------------===//

/// The dimensions of an operand of rank `rank` that are neither batching nor
/// contracting, in order.
static SmallVector<int64_t> freeDims(int64_t rank, ArrayRef<int64_t> batch,
                                     ArrayRef<int64_t> contracting) {
  SmallVector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(batch, d) && !llvm::is_contained(contracting, d))
      free.push_back(d);
  return free;
}

LogicalResult DotGeneralOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &inferred) {
  StringRef name = getOperationName();
  RankedTensorType lhs = getTensor(adaptor.getLhs());
  RankedTensorType rhs = getTensor(adaptor.getRhs());
  if (!lhs || !rhs)
    return inferError(loc, name, "expects ranked tensor operands");
  if (lhs.getElementType() != rhs.getElementType())
    return inferError(loc, name, "operand element types differ: ",
                      lhs.getElementType(), " vs ", rhs.getElementType());
  ArrayRef<int64_t> lb = adaptor.getLhsBatchingDims();
  ArrayRef<int64_t> rb = adaptor.getRhsBatchingDims();
  ArrayRef<int64_t> lc = adaptor.getLhsContractingDims();
  ArrayRef<int64_t> rc = adaptor.getRhsContractingDims();
  if (lb.size() != rb.size())
    return inferError(loc, name, "has ", lb.size(), " lhs and ", rb.size(),
                      " rhs batching dimensions; they must pair up");
  if (lc.size() != rc.size())
    return inferError(loc, name, "has ", lc.size(), " lhs and ", rc.size(),
                      " rhs contracting dimensions; they must pair up");
  SmallVector<int64_t> lAll(lb), rAll(rb);
  lAll.append(lc.begin(), lc.end());
  rAll.append(rc.begin(), rc.end());
  if (failed(checkDims(loc, name, "lhs batching and contracting dims", lAll,
                       lhs.getRank())) ||
      failed(checkDims(loc, name, "rhs batching and contracting dims", rAll,
                       rhs.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [l, r] : llvm::zip(lAll, rAll)) {
    int64_t ls = lhs.getDimSize(l), rs = rhs.getDimSize(r);
    if (!ShapedType::isDynamic(ls) && !ShapedType::isDynamic(rs) && ls != rs)
      return inferError(loc, name, "lhs dimension ", l, " (size ", ls,
                        ") and rhs dimension ", r, " (size ", rs,
                        ") are paired but differ in size");
  }
  for (auto [l, r] : llvm::zip(lb, rb))
    shape.push_back(ShapedType::isDynamic(lhs.getDimSize(l))
                        ? rhs.getDimSize(r)
                        : lhs.getDimSize(l));
  for (int64_t d : freeDims(lhs.getRank(), lb, lc))
    shape.push_back(lhs.getDimSize(d));
  for (int64_t d : freeDims(rhs.getRank(), rb, rc))
    shape.push_back(rhs.getDimSize(d));
  inferred.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

std::optional<int64_t> DotGeneralOp::getFlopCount() {
  // 2 * (product of result dimensions) * (product of contracting sizes).
  std::optional<int64_t> out = detail::getNumElements(getType());
  if (!out)
    return std::nullopt;
  int64_t k = 1;
  for (int64_t d : getLhsContractingDims()) {
    int64_t size = getLhs().getType().getDimSize(d);
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    k *= size;
  }
  return 2 * *out * k;
}

// Loop order for sharding: batch, lhs free, rhs free, contracting.
SmallVector<utils::IteratorType> DotGeneralOp::getLoopIteratorTypes() {
  int64_t numBatch = getLhsBatchingDims().size();
  int64_t numContract = getLhsContractingDims().size();
  int64_t numParallel = getType().getRank();
  (void)numBatch;
  SmallVector<utils::IteratorType> types(numParallel,
                                         utils::IteratorType::parallel);
  types.append(numContract, utils::IteratorType::reduction);
  return types;
}

SmallVector<shard::ReductionKind> DotGeneralOp::getReductionLoopIteratorKinds() {
  return SmallVector<shard::ReductionKind>(getLhsContractingDims().size(),
                                           shard::ReductionKind::Sum);
}

SmallVector<AffineMap> DotGeneralOp::getIndexingMaps() {
  MLIRContext *ctx = getContext();
  ArrayRef<int64_t> lb = getLhsBatchingDims(), rb = getRhsBatchingDims();
  ArrayRef<int64_t> lc = getLhsContractingDims(),
                    rc = getRhsContractingDims();
  int64_t lhsRank = getLhs().getType().getRank();
  int64_t rhsRank = getRhs().getType().getRank();
  SmallVector<int64_t> lf = freeDims(lhsRank, lb, lc);
  SmallVector<int64_t> rf = freeDims(rhsRank, rb, rc);
  int64_t numLoops = getType().getRank() + lc.size();
  int64_t contractBase = getType().getRank();

  auto operandMap = [&](int64_t rank, ArrayRef<int64_t> batch,
                        ArrayRef<int64_t> contract, ArrayRef<int64_t> free,
                        int64_t freeBase) {
    SmallVector<AffineExpr> exprs(rank);
    for (auto [i, d] : llvm::enumerate(batch))
      exprs[d] = getAffineDimExpr(i, ctx);
    for (auto [i, d] : llvm::enumerate(free))
      exprs[d] = getAffineDimExpr(freeBase + i, ctx);
    for (auto [i, d] : llvm::enumerate(contract))
      exprs[d] = getAffineDimExpr(contractBase + i, ctx);
    return AffineMap::get(numLoops, 0, exprs, ctx);
  };
  int64_t numBatch = lb.size();
  AffineMap lhsMap = operandMap(lhsRank, lb, lc, lf, numBatch);
  AffineMap rhsMap = operandMap(rhsRank, rb, rc, rf, numBatch + lf.size());
  SmallVector<AffineExpr> resultExprs;
  for (int64_t i = 0; i < contractBase; ++i)
    resultExprs.push_back(getAffineDimExpr(i, ctx));
  AffineMap resultMap = AffineMap::get(numLoops, 0, resultExprs, ctx);
  return {lhsMap, rhsMap, resultMap};
}

//===----------------------------------------------------------------------===//
// ReshapeOp, TransposeOp, BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  std::optional<int64_t> in = detail::getNumElements(getOperand().getType());
  std::optional<int64_t> out = detail::getNumElements(getType());
  if (getOperand().getType().getElementType() != getType().getElementType())
    return emitOpError() << "changes the element type from "
                         << getOperand().getType().getElementType() << " to "
                         << getType().getElementType()
                         << "; use loom.convert";
  if (in && out && *in != *out)
    return emitOpError() << "cannot reshape " << getOperand().getType()
                         << " (" << *in << " elements) to " << getType()
                         << " (" << *out << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult same = foldTo(getOperand(), getResult()))
    return same;
  // reshape(reshape(x)) -> reshape(x), unless a `?` in the middle hid an
  // element-count mismatch that the shortcut would expose.
  if (auto inner = getOperand().getDefiningOp<ReshapeOp>()) {
    std::optional<int64_t> in = detail::getNumElements(inner.getOperand().getType());
    std::optional<int64_t> out = detail::getNumElements(getType());
    if (in && out && *in != *out)
      return {};
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getOperand()))
    if (getType().hasStaticShape())
      return splat.resizeSplat(getType());
  return {};
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  StringRef name = getOperationName();
  RankedTensorType t = getTensor(adaptor.getOperand());
  if (!t)
    return inferError(loc, name, "expects a ranked tensor operand");
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (static_cast<int64_t>(perm.size()) != t.getRank())
    return inferError(loc, name, "permutation ", formatDims(perm), " has ",
                      perm.size(), " entries but the operand has rank ",
                      t.getRank());
  if (failed(checkDims(loc, name, "permutation", perm, t.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(t.getDimSize(p));
  inferred.push_back(RankedTensorType::get(shape, t.getElementType()));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= static_cast<int64_t>(i) == p;
  if (identity)
    return foldTo(getOperand(), getResult());
  // transpose(transpose(x, p1), p2) -> transpose(x, p1 o p2)
  if (auto inner = getOperand().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> innerPerm = inner.getPermutation();
    SmallVector<int64_t> composed, shape;
    RankedTensorType source = inner.getOperand().getType();
    for (int64_t p : perm) {
      composed.push_back(innerPerm[p]);
      shape.push_back(source.getDimSize(innerPerm[p]));
    }
    // A `?` in the middle may hide a contradiction; keep both ops then.
    if (failed(meetShapes(shape, getType().getShape())))
      return {};
    getOperandMutable().assign(inner.getOperand());
    setPermutation(composed);
    return getResult();
  }
  return {};
}

LogicalResult BroadcastOp::verify() {
  RankedTensorType in = getOperand().getType();
  RankedTensorType out = getType();
  ArrayRef<int64_t> dims = getDims();
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "changes the element type from "
                         << in.getElementType() << " to "
                         << out.getElementType();
  if (static_cast<int64_t>(dims.size()) != in.getRank())
    return emitOpError() << "dims " << formatDims(dims) << " has "
                         << dims.size() << " entries but the operand has rank "
                         << in.getRank();
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= out.getRank())
      return emitOpError() << "dims entry " << d
                           << " is out of range for result rank "
                           << out.getRank();
    if (i > 0 && d <= dims[i - 1])
      return emitOpError() << "dims " << formatDims(dims)
                           << " must be strictly increasing";
    int64_t inSize = in.getDimSize(i), outSize = out.getDimSize(d);
    if (inSize != 1 && !ShapedType::isDynamic(inSize) &&
        !ShapedType::isDynamic(outSize) && inSize != outSize)
      return emitOpError() << "operand dimension " << i << " (size " << inSize
                           << ") cannot broadcast to result dimension " << d
                           << " (size " << outSize << ")";
  }
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult same = foldTo(getOperand(), getResult()))
    return same;
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getOperand()))
    if (getType().hasStaticShape())
      return splat.resizeSplat(getType());
  return {};
}

//===----------------------------------------------------------------------===//
// SliceOp, ConcatOp, SplitOp, GatherOp, ScatterAddOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  StringRef name = getOperationName();
  RankedTensorType t = getTensor(adaptor.getOperand());
  if (!t)
    return inferError(loc, name, "expects a ranked tensor operand");
  ArrayRef<int64_t> start = adaptor.getStart(), limit = adaptor.getLimit(),
                    strides = adaptor.getStrides();
  int64_t rank = t.getRank();
  if (static_cast<int64_t>(start.size()) != rank ||
      static_cast<int64_t>(limit.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return inferError(loc, name, "start, limit and strides need one entry per "
                      "dimension (rank ", rank, "), got ", start.size(), ", ",
                      limit.size(), " and ", strides.size());
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = t.getDimSize(d);
    if (strides[d] < 1)
      return inferError(loc, name, "stride ", strides[d], " of dimension ", d,
                        " must be at least 1");
    if (start[d] < 0 || start[d] > limit[d] ||
        (!ShapedType::isDynamic(size) && limit[d] > size))
      return inferError(loc, name, "dimension ", d, ": need 0 <= start (",
                        start[d], ") <= limit (", limit[d], ") <= size (",
                        size, ")");
    shape.push_back((limit[d] - start[d] + strides[d] - 1) / strides[d]);
  }
  inferred.push_back(RankedTensorType::get(shape, t.getElementType()));
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  // Only a slice that takes every element of a static dimension is the
  // identity; with a `?` size, equal types prove nothing.
  RankedTensorType type = getOperand().getType();
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (getStart()[d] != 0 || getStrides()[d] != 1 ||
        type.isDynamicDim(d) || getLimit()[d] != type.getDimSize(d))
      return {};
  return foldTo(getOperand(), getResult());
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  StringRef name = getOperationName();
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return inferError(loc, name, "needs at least one input");
  RankedTensorType first = getTensor(inputs.front());
  if (!first)
    return inferError(loc, name, "expects ranked tensor inputs");
  int64_t dim = adaptor.getDim();
  if (failed(checkDim(loc, name, "dim", dim, first.getRank())))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[dim] = 0;
  for (auto [i, v] : llvm::enumerate(inputs)) {
    RankedTensorType t = getTensor(v);
    if (!t || t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return inferError(loc, name, "input ", i, " has type ", v.getType(),
                        "; all inputs need the rank and element type of ",
                        first);
    for (int64_t d = 0; d < first.getRank(); ++d) {
      int64_t size = t.getDimSize(d);
      if (d == dim) {
        shape[d] = (ShapedType::isDynamic(shape[d]) ||
                    ShapedType::isDynamic(size))
                       ? ShapedType::kDynamic
                       : shape[d] + size;
        continue;
      }
      if (ShapedType::isDynamic(shape[d])) {
        shape[d] = size;
      } else if (!ShapedType::isDynamic(size) && size != shape[d]) {
        return inferError(loc, name, "input ", i, " has size ", size,
                          " in dimension ", d, " where input 0 has ",
                          shape[d], "; only dimension ", dim, " may differ");
      }
    }
  }
  inferred.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return foldTo(getInputs().front(), getResult());
  return {};
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  StringRef name = getOperationName();
  RankedTensorType t = getTensor(adaptor.getOperand());
  if (!t)
    return inferError(loc, name, "expects a ranked tensor operand");
  int64_t dim = adaptor.getDim();
  if (failed(checkDim(loc, name, "dim", dim, t.getRank())))
    return failure();
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (sizes.empty())
    return inferError(loc, name, "needs at least one piece size");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return inferError(loc, name, "piece sizes ", formatDims(sizes),
                        " must be non-negative");
    total += s;
  }
  int64_t size = t.getDimSize(dim);
  if (!ShapedType::isDynamic(size) && total != size)
    return inferError(loc, name, "piece sizes ", formatDims(sizes),
                      " add up to ", total, " but dimension ", dim,
                      " has size ", size);
  for (int64_t s : sizes) {
    SmallVector<int64_t> shape(t.getShape());
    shape[dim] = s;
    inferred.push_back(RankedTensorType::get(shape, t.getElementType()));
  }
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  StringRef name = getOperationName();
  RankedTensorType data = getTensor(adaptor.getData());
  RankedTensorType indices = getTensor(adaptor.getIndices());
  if (!data || !indices)
    return inferError(loc, name, "expects ranked tensor operands");
  int64_t axis = adaptor.getAxis();
  if (failed(checkDim(loc, name, "axis", axis, data.getRank())))
    return failure();
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  inferred.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

LogicalResult ScatterAddOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &inferred) {
  StringRef name = getOperationName();
  RankedTensorType target = getTensor(adaptor.getTarget());
  RankedTensorType indices = getTensor(adaptor.getIndices());
  RankedTensorType updates = getTensor(adaptor.getUpdates());
  if (!target || !indices || !updates)
    return inferError(loc, name, "expects ranked tensor operands");
  int64_t axis = adaptor.getAxis();
  if (failed(checkDim(loc, name, "axis", axis, target.getRank())))
    return failure();
  if (updates.getElementType() != target.getElementType())
    return inferError(loc, name, "updates element type ",
                      updates.getElementType(),
                      " differs from the target element type ",
                      target.getElementType());
  // The updates have the shape loom.gather of the target would have.
  SmallVector<int64_t> expected(target.getShape().take_front(axis));
  llvm::append_range(expected, indices.getShape());
  llvm::append_range(expected, target.getShape().drop_front(axis + 1));
  if (failed(meetShapes(expected, updates.getShape())))
    return inferError(loc, name, "updates ", updates,
                      " must have shape target[:axis] ++ indices ++ "
                      "target[axis+1:], ",
                      formatDims(expected));
  inferred.push_back(target);
  return success();
}

//===----------------------------------------------------------------------===//
// IotaOp, ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult IotaOp::verify() {
  int64_t rank = getType().getRank();
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < 0 || dim >= rank)
    return emitOpError() << "dim " << dim << " is out of range for rank "
                         << rank;
  return success();
}

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &inferred) {
  ElementsAttr value = adaptor.getValueAttr();
  if (!value)
    return inferError(loc, getOperationName(), "needs a 'value' attribute");
  inferred.push_back(value.getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

LogicalResult mlir::loom::detail::inferReduceType(std::optional<Location> loc, StringRef opName,
                                 Value operand, ArrayRef<int64_t> dims,
                                 bool keepdims,
                                 SmallVectorImpl<Type> &inferred) {
  RankedTensorType t = getTensor(operand);
  if (!t)
    return inferError(loc, opName, "expects a ranked tensor operand");
  if (failed(checkDims(loc, opName, "dims", dims, t.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    if (!llvm::is_contained(dims, d))
      shape.push_back(t.getDimSize(d));
    else if (keepdims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, t.getElementType()));
  return success();
}


//===----------------------------------------------------------------------===//
// CrossEntropyOp
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  StringRef name = getOperationName();
  RankedTensorType logits = getTensor(adaptor.getLogits());
  RankedTensorType labels = getTensor(adaptor.getLabels());
  if (!logits || !labels)
    return inferError(loc, name, "expects ranked tensor operands");
  if (logits.getRank() < 1)
    return inferError(loc, name, "logits need a class dimension (rank >= 1)");
  ArrayRef<int64_t> leading = logits.getShape().drop_back();
  if (failed(meetShapes(leading, labels.getShape())))
    return inferError(loc, name, "labels ", labels,
                      " must have the shape of the logits without their last "
                      "(class) dimension, ",
                      formatDims(leading));
  if (adaptor.getReduction() == LossReduction::none)
    inferred.push_back(RankedTensorType::get(leading, logits.getElementType()));
  else
    inferred.push_back(RankedTensorType::get({}, logits.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Cost overrides (conventions in LoomInterfaces.td)
//===----------------------------------------------------------------------===//

std::optional<int64_t> SiluOp::getFlopCount() {
  return detail::getElementwiseFlopCount(*this, 4); // exp, add, div, mul
}
std::optional<int64_t> GeluOp::getFlopCount() {
  // erf form: div, erf, add, mul, mul; tanh form: 3 mul + fma, tanh, add, 2 mul
  return detail::getElementwiseFlopCount(
      *this, getApproximate() == GeluApproximation::tanh ? 9 : 5);
}
std::optional<int64_t> GeluGradOp::getFlopCount() {
  // tanh form: the forward's 9, then 1 - t^2, 3c x^2 + 1, 4 mul, add, the
  // cotangent's mul; erf form: cdf (4), pdf (exp and 3 mul), mul, add, mul
  return detail::getElementwiseFlopCount(
      *this, getApproximate() == GeluApproximation::tanh ? 18 : 11);
}
std::optional<int64_t> SoftmaxOp::getFlopCount() {
  return detail::getElementwiseFlopCount(*this, 5); // max, sub, exp, sum, div
}
std::optional<int64_t> LogSoftmaxOp::getFlopCount() {
  return detail::getElementwiseFlopCount(*this, 5); // max, sub, exp, sum, sub
}
std::optional<int64_t> LayerNormOp::getFlopCount() {
  // mean, sub, square, sum, scale by rstd; then scale and bias if present
  return detail::getElementwiseFlopCount(
      *this, 5 + (getScale() ? 1 : 0) + (getBias() ? 1 : 0));
}
std::optional<int64_t> RmsNormOp::getFlopCount() {
  // square, sum, scale by rstd; then scale if present
  return detail::getElementwiseFlopCount(*this, 3 + (getScale() ? 1 : 0));
}
std::optional<int64_t> NormGradOp::getFlopCount() {
  // Per element: the statistics (sub, square, sum), xhat, gh, the two row
  // sums, the input gradient (three ops) and the two parameter sums.
  return detail::getElementwiseFlopCount(*this, 12);
}
std::optional<int64_t> CrossEntropyOp::getFlopCount() {
  // per logit: max, sub, exp, sum
  std::optional<int64_t> n = detail::getNumElements(getLogits().getType());
  if (!n)
    return std::nullopt;
  return 4 * *n;
}

std::optional<int64_t> ScatterAddOp::getFlopCount() {
  return detail::getNumElements(getUpdates().getType()); // one add each
}

//===----------------------------------------------------------------------===//
// TpCopyOp
//===----------------------------------------------------------------------===//

/// `grid` names a shard.grid and `axes` are axes of it.
static LogicalResult verifyGridAxes(Operation *op,
                                    SymbolTableCollection &symbolTable,
                                    FlatSymbolRefAttr gridName,
                                    ArrayRef<int16_t> axes) {
  auto grid =
      symbolTable.lookupNearestSymbolFrom<shard::GridOp>(op, gridName);
  if (!grid)
    return op->emitOpError() << "grid " << gridName << " is not a shard.grid";
  int64_t rank = grid.getRank();
  if (axes.empty())
    return op->emitOpError() << "needs at least one grid axis";
  for (int16_t axis : axes)
    if (axis < 0 || axis >= rank)
      return op->emitOpError() << "grid axis " << axis
                               << " is out of range for " << gridName
                               << " of rank " << rank;
  return success();
}

LogicalResult TpCopyOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGridAxes(*this, symbolTable, getGridAttr(), getGridAxes());
}

//===----------------------------------------------------------------------===//
// GridIndexOp
//===----------------------------------------------------------------------===//

LogicalResult
GridIndexOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGridAxes(*this, symbolTable, getGridAttr(), getGridAxes());
}

//===----------------------------------------------------------------------===//
// Tensor-parallel partition rules (TensorPartitionInterface)
//===----------------------------------------------------------------------===//
//
// Elementwise ops take the interface's default rule. A rule fails where a
// Megatron block cannot continue through the op; see the interface
// description for the contract.

namespace {
/// A rule that gives the one (sharded) operand `operand` and every result
/// `result`.
PartitionRule followOperand(Operation *op, ShardedDim operand,
                            ShardedDim result) {
  PartitionRule rule;
  rule.operands.push_back(operand);
  rule.results.assign(op->getNumResults(), result);
  return rule;
}

/// The rule of softmax and log-softmax along `axis`: the sharded dimension
/// is another one.
FailureOr<PartitionRule>
getAlongAxisPartitionRule(Operation *op, int64_t axis,
                          ArrayRef<std::optional<ShardedDim>> operands) {
  const std::optional<ShardedDim> &s = operands[0];
  if (!s || s->dim == axis)
    return failure();
  return followOperand(op, *s, *s);
}
} // namespace

FailureOr<PartitionRule> mlir::loom::detail::getReducePartitionRule(
    ArrayRef<int64_t> dims, bool keepdims,
    ArrayRef<std::optional<ShardedDim>> operands) {
  // A reduction over other dimensions (the max and sum of a softmax that
  // JAX spells out).
  const std::optional<ShardedDim> &s = operands[0];
  if (!s || llvm::is_contained(dims, s->dim))
    return failure();
  int64_t dim = s->dim;
  if (!keepdims)
    dim -= llvm::count_if(dims, [&](int64_t d) { return d < s->dim; });
  PartitionRule rule;
  rule.operands.push_back(*s);
  rule.results.push_back(ShardedDim{dim, s->groups});
  return rule;
}

FailureOr<PartitionRule> SoftmaxOp::getPartitionRule(
    ArrayRef<std::optional<ShardedDim>> operands) {
  return getAlongAxisPartitionRule(*this, getAxis(), operands);
}

FailureOr<PartitionRule> LogSoftmaxOp::getPartitionRule(
    ArrayRef<std::optional<ShardedDim>> operands) {
  return getAlongAxisPartitionRule(*this, getAxis(), operands);
}

FailureOr<PartitionRule> DotGeneralOp::getPartitionRule(
    ArrayRef<std::optional<ShardedDim>> operands) {
  const std::optional<ShardedDim> &lhs = operands[0], &rhs = operands[1];
  PartitionRule rule;
  if (lhs && !rhs) {
    // The lhs sharded on a contracted dimension: the rhs must be cut on the
    // dimension it is contracted with, and every rank computes a partial
    // sum (a row-parallel layer).
    ArrayRef<int64_t> lhsDims = getLhsContractingDims();
    const auto *it = llvm::find(lhsDims, lhs->dim);
    if (it == lhsDims.end() || lhs->groups != 1)
      return failure();
    rule.operands = {lhs, ShardedDim{getRhsContractingDims()[it - lhsDims.begin()]}};
    rule.results.push_back(std::nullopt);
    rule.partialSum = true;
    return rule;
  }
  // Attention: both operands sharded on the same batching dimension, which
  // leads the result.
  if (!lhs || !rhs || lhs->groups != 1 || rhs->groups != 1)
    return failure();
  ArrayRef<int64_t> lhsBatch = getLhsBatchingDims(),
                    rhsBatch = getRhsBatchingDims();
  const auto *l = llvm::find(lhsBatch, lhs->dim);
  const auto *r = llvm::find(rhsBatch, rhs->dim);
  if (l == lhsBatch.end() || r == rhsBatch.end() ||
      l - lhsBatch.begin() != r - rhsBatch.begin())
    return failure();
  rule.operands = {lhs, rhs};
  rule.results.push_back(ShardedDim{l - lhsBatch.begin()});
  return rule;
}

FailureOr<PartitionRule> ReshapeOp::getPartitionRule(
    ArrayRef<std::optional<ShardedDim>> operands) {
  const std::optional<ShardedDim> &s = operands[0];
  auto src = dyn_cast<RankedTensorType>(getOperand().getType());
  auto dst = dyn_cast<RankedTensorType>(getType());
  if (!s || !src || !dst || !src.hasStaticShape() || !dst.hasStaticShape())
    return failure();
  auto product = [](ArrayRef<int64_t> dims) {
    int64_t p = 1;
    for (int64_t d : dims)
      p *= d;
    return p;
  };
  ArrayRef<int64_t> in = src.getShape(), out = dst.getShape();
  int64_t size = in[s->dim];
  // The result dimension `at` whose start is where the sharded one starts,
  // or (at == -1) the one that covers its start.
  int64_t before = product(in.take_front(s->dim));
  int64_t at = 0, prefix = 1;
  while (at < dst.getRank() && prefix < before)
    prefix *= out[at++];
  if (prefix != before) {
    // Merged with dimensions before it, and maybe after it ([B, heads, ..]
    // -> [B*heads, ..] as the dynamo exporter flattens attention, or
    // [B, kv heads, repeats] -> [B*heads] for grouped-query attention):
    // each position of the dimensions before is a block of the sharded
    // one, so the result is cut in groups; the dimensions after stay whole
    // inside a rank's part.
    int64_t r = at - 1, outer = product(out.take_front(r)), i0 = 0;
    while (i0 < s->dim && product(in.take_front(i0)) < outer)
      ++i0;
    int64_t j = s->dim + 1;
    while (j < src.getRank() && product(in.slice(i0, j - i0)) < out[r])
      ++j;
    if (product(in.take_front(i0)) != outer ||
        out[r] != product(in.slice(i0, j - i0)))
      return failure();
    int64_t blocks = product(in.slice(i0, s->dim - i0));
    return followOperand(*this, *s, ShardedDim{r, s->groups * blocks});
  }
  if (at == dst.getRank())
    return failure();
  int64_t newSize = out[at];
  if (newSize == size)
    return followOperand(*this, *s, ShardedDim{at, s->groups});
  if (s->groups != 1) {
    // A grouped dimension split back into [groups, rest]: the rest is cut
    // whole (the inverse of the merge above).
    if (newSize != s->groups || at + 1 == dst.getRank() ||
        out[at + 1] * s->groups != size)
      return failure();
    return followOperand(*this, *s, ShardedDim{at + 1});
  }
  PartitionRule rule = followOperand(*this, *s, ShardedDim{at});
  if (newSize < size) {
    // Split into [heads, head size, ...]: the heads are sharded.
    if (size % newSize != 0)
      return failure();
    rule.splitsDim = true;
  } else {
    // Merged with the following dimensions: [heads, head size] -> hidden.
    int64_t merged = 1, i = s->dim;
    while (i < src.getRank() && merged < newSize)
      merged *= in[i++];
    if (merged != newSize)
      return failure();
  }
  return rule;
}

std::optional<int64_t> ReshapeOp::getExpandedOperandDim(int64_t dim) {
  // Only size-1 dimensions inserted or dropped, `dim` not one of them
  // (Flax's `reshape(bias, (1, .., 1, -1))`).
  auto src = dyn_cast<RankedTensorType>(getOperand().getType());
  auto dst = dyn_cast<RankedTensorType>(getType());
  if (!src || !dst || !src.hasStaticShape() || !dst.hasStaticShape() ||
      dst.getDimSize(dim) == 1)
    return std::nullopt;
  auto nonUnit = [](RankedTensorType type) {
    SmallVector<int64_t> dims;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.getDimSize(i) != 1)
        dims.push_back(i);
    return dims;
  };
  SmallVector<int64_t> from = nonUnit(src), to = nonUnit(dst);
  if (from.size() != to.size())
    return std::nullopt;
  for (auto [f, t] : llvm::zip(from, to))
    if (src.getDimSize(f) != dst.getDimSize(t))
      return std::nullopt;
  return from[llvm::find(to, dim) - to.begin()];
}

FailureOr<PartitionRule> TransposeOp::getPartitionRule(
    ArrayRef<std::optional<ShardedDim>> operands) {
  const std::optional<ShardedDim> &s = operands[0];
  ArrayRef<int64_t> permutation = getPermutation();
  const auto *it = llvm::find(permutation, s ? s->dim : -1);
  if (it == permutation.end())
    return failure();
  return followOperand(*this, *s,
                       ShardedDim{it - permutation.begin(), s->groups});
}

FailureOr<PartitionRule> BroadcastOp::getPartitionRule(
    ArrayRef<std::optional<ShardedDim>> operands) {
  // The sharded dimension maps to a result dimension of the same size (the
  // other dimensions may grow).
  const std::optional<ShardedDim> &s = operands[0];
  if (!s)
    return failure();
  int64_t dim = getDims()[s->dim];
  if (getOperand().getType().getDimSize(s->dim) != getType().getDimSize(dim))
    return failure();
  return followOperand(*this, *s, ShardedDim{dim, s->groups});
}

std::optional<bool> BroadcastOp::isUniformAlong(int64_t dim) {
  // `dim` is not one of the operand's, or the operand's dimension that maps
  // to it has size 1 (JAX's `broadcast_in_dim` of a `[.., 1]` statistic).
  ArrayRef<int64_t> dims = getDims();
  const auto *it = llvm::find(dims, dim);
  if (it == dims.end())
    return true;
  return getOperand().getType().getDimSize(it - dims.begin()) == 1;
}

Value BroadcastOp::buildResized(OpBuilder &builder, RankedTensorType type) {
  return BroadcastOp::create(builder, getLoc(), type, getOperand(), getDims());
}

std::optional<int64_t> BroadcastOp::getExpandedOperandDim(int64_t dim) {
  // A dimension of the operand copied whole (ONNX's Add of a bias:
  // `broadcast %b, dims = [d]`; JAX's `broadcast_in_dim` to `[1, .., N]`).
  ArrayRef<int64_t> dims = getDims();
  const auto *it = llvm::find(dims, dim);
  if (it == dims.end())
    return std::nullopt;
  int64_t operandDim = it - dims.begin();
  if (getOperand().getType().getDimSize(operandDim) != getType().getDimSize(dim))
    return std::nullopt;
  return operandDim;
}

FailureOr<PartitionRule> SliceOp::getPartitionRule(
    ArrayRef<std::optional<ShardedDim>> operands) {
  // A unit-stride slice: the whole sharded dimension, or one of `G` equal
  // consecutive parts of it (JAX's `jnp.split` of a fused QKV projection is
  // one slice per part), which gives the operand `G` groups, as
  // `loom.split` does.
  const std::optional<ShardedDim> &s = operands[0];
  auto type = getOperand().getType();
  if (!s || type.isDynamicDim(s->dim) || getStrides()[s->dim] != 1)
    return failure();
  int64_t size = type.getDimSize(s->dim);
  int64_t start = getStart()[s->dim], limit = getLimit()[s->dim];
  if (start == 0 && limit == size)
    return followOperand(*this, *s, *s);
  int64_t part = limit - start;
  if (part <= 0 || size % part != 0 || start % part != 0)
    return failure();
  return followOperand(*this, ShardedDim{s->dim, size / part},
                       ShardedDim{s->dim});
}

void SliceOp::partitionAttributes(int64_t dim, int64_t parts) {
  // The rank's part of each group.
  SmallVector<int64_t> start(getStart()), limit(getLimit());
  start[dim] /= parts;
  limit[dim] /= parts;
  setStart(start);
  setLimit(limit);
}

FailureOr<PartitionRule> ConcatOp::getPartitionRule(
    ArrayRef<std::optional<ShardedDim>> operands) {
  // Pieces joined along another dimension than the sharded one (rotary
  // embeddings' rotate_half, NeoX's partial rotary): each rank joins its
  // parts. Replicated pieces must be uniform along the sharded dimension.
  return detail::getAlignedPartitionRule(*this, getDim(), operands);
}

FailureOr<PartitionRule> SplitOp::getPartitionRule(
    ArrayRef<std::optional<ShardedDim>> operands) {
  const std::optional<ShardedDim> &s = operands[0];
  if (!s)
    return failure();
  if (static_cast<int64_t>(getDim()) != s->dim)
    return followOperand(*this, *s, *s);
  // A fused projection cut into equal parts: each is one group.
  ArrayRef<int64_t> sizes = getSizes();
  auto parts = static_cast<int64_t>(sizes.size());
  if (parts < 2 || !llvm::all_equal(sizes))
    return failure();
  return followOperand(*this, ShardedDim{s->dim, parts}, ShardedDim{s->dim});
}

void SplitOp::partitionAttributes(int64_t dim, int64_t parts) {
  if (static_cast<int64_t>(getDim()) != dim)
    return;
  SmallVector<int64_t> sizes(getSizes());
  for (int64_t &size : sizes)
    size /= parts;
  setSizes(sizes);
}

std::optional<bool> ConstantOp::isUniformAlong(int64_t) {
  auto dense = dyn_cast<DenseElementsAttr>(getValue());
  return dense && dense.isSplat();
}

Value ConstantOp::buildResized(OpBuilder &builder, RankedTensorType type) {
  auto dense = dyn_cast<DenseElementsAttr>(getValue());
  if (!dense || !dense.isSplat())
    return {};
  return ConstantOp::create(builder, getLoc(), type,
                            cast<ElementsAttr>(dense.resizeSplat(type)));
}

#define GET_OP_CLASSES
#include "loom/Dialect/Loom/IR/LoomOps.cpp.inc"
