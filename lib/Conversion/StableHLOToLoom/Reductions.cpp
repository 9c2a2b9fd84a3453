//===- Reductions.cpp - reduce, argmax/argmin and reduce_window to loom ---===//

#include "Patterns.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::shlo_to_loom;

namespace {

/// Products over more elements than this multiply by halving (O(log n)
/// ops, a different rounding); fewer in order (one op per element).
constexpr int64_t kInOrderProductLimit = 32;

/// The product over `dims` of `input` (static shape): the reduced
/// dimensions moved last and flattened, then multiplied slice by slice.
Value reduceProduct(OpBuilder &b, Location loc, Value input,
                    RankedTensorType resultType, ArrayRef<int64_t> dims) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  llvm::SmallBitVector reduced(rank);
  for (int64_t d : dims)
    reduced.set(d);
  SmallVector<int64_t> order, flat;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced.test(d)) {
      order.push_back(d);
      flat.push_back(inputType.getDimSize(d));
    }
  for (int64_t d : dims) {
    order.push_back(d);
    count *= inputType.getDimSize(d);
  }
  Value x = input;
  if (!llvm::equal(order, llvm::seq<int64_t>(0, rank))) {
    SmallVector<int64_t> moved;
    for (int64_t d : order)
      moved.push_back(inputType.getDimSize(d));
    x = loom::TransposeOp::create(b, loc, inputType.clone(moved), x, order);
  }
  int64_t last = flat.size();
  flat.push_back(count);
  x = loom::ReshapeOp::create(b, loc, inputType.clone(flat), x);
  Type element = inputType.getElementType();
  auto product = [&](Value lhs, Value rhs) {
    return Value(loom::MulOp::create(b, loc, lhs.getType(), lhs, rhs));
  };
  if (count <= kInOrderProductLimit) {
    Value acc = sliceAlong(b, loc, x, last, 0, 1);
    for (int64_t i = 1; i < count; ++i)
      acc = product(acc, sliceAlong(b, loc, x, last, i, i + 1));
    x = acc;
  } else {
    while (count > 1) {
      if (count % 2) {
        SmallVector<int64_t> oneShape(flat);
        oneShape[last] = 1;
        auto oneType = RankedTensorType::get(oneShape, element);
        flat[last] = ++count;
        x = loom::ConcatOp::create(
            b, loc, RankedTensorType::get(flat, element),
            ValueRange{x, createSplat(b, loc, oneType,
                                      getScalarAttr(b, element, 1))},
            static_cast<uint64_t>(last));
      }
      count /= 2;
      flat[last] = count;
      x = product(sliceAlong(b, loc, x, last, 0, count),
                  sliceAlong(b, loc, x, last, count, 2 * count));
    }
  }
  return loom::ReshapeOp::create(b, loc, resultType, x);
}

/// Numbers: sum -> reduce_sum, max -> reduce_max, min -> `-max(-x)` for
/// floats and `-1 - max(-1 - x)` for integers (exact: `-1 - x` cannot
/// overflow), product -> reduceProduct.
Value reduceNumbers(OpBuilder &b, Location loc, ReduceKind kind, Value input,
                    RankedTensorType resultType, ArrayRef<int64_t> dims) {
  auto inputType = cast<RankedTensorType>(input.getType());
  Type element = resultType.getElementType();
  if (kind == ReduceKind::Sum)
    return loom::ReduceSumOp::create(b, loc, resultType, input, dims);
  if (kind == ReduceKind::Prod)
    return reduceProduct(b, loc, input, resultType, dims);
  if (kind == ReduceKind::Max)
    return loom::ReduceMaxOp::create(b, loc, resultType, input, dims);
  if (isa<FloatType>(element)) {
    Value neg = loom::NegOp::create(b, loc, inputType, input);
    Value max = loom::ReduceMaxOp::create(b, loc, resultType, neg, dims);
    return loom::NegOp::create(b, loc, resultType, max);
  }
  TypedAttr minusOne = getScalarAttr(b, element, -1);
  Value flipped = loom::SubOp::create(
      b, loc, inputType, createSplat(b, loc, inputType, minusOne), input);
  Value max = loom::ReduceMaxOp::create(b, loc, resultType, flipped, dims);
  return loom::SubOp::create(b, loc, resultType,
                             createSplat(b, loc, resultType, minusOne), max);
}

/// i1: or -> `reduce_max(convert<i32>(x)) != 0`; and -> not any of not x.
Value reduceBools(OpBuilder &b, Location loc, ReduceKind kind, Value input,
                  RankedTensorType resultType, ArrayRef<int64_t> dims) {
  auto inputType = cast<RankedTensorType>(input.getType());
  if (kind == ReduceKind::And)
    input = loom::CompareOp::create(
        b, loc, inputType, ComparisonDirection::eq, input,
        createSplat(b, loc, inputType, b.getBoolAttr(false)));
  Type i32 = b.getI32Type();
  Value counts = loom::ConvertOp::create(b, loc, inputType.clone(i32), input);
  Value any = loom::ReduceMaxOp::create(b, loc, resultType.clone(i32), counts,
                                        dims);
  Value zero = createSplat(b, loc, resultType.clone(i32),
                           b.getI32IntegerAttr(0));
  return loom::CompareOp::create(
      b, loc, resultType,
      kind == ReduceKind::Or ? ComparisonDirection::ne
                             : ComparisonDirection::eq,
      any, zero);
}

/// Whether `dims` are distinct dimensions of a tensor of rank `rank` whose
/// reduction over them has rank `resultRank`.
bool areReduceDims(ArrayRef<int64_t> dims, int64_t rank, int64_t resultRank) {
  if (resultRank + static_cast<int64_t>(dims.size()) != rank)
    return false;
  llvm::SmallBitVector seen(rank);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen.test(d))
      return false;
    seen.set(d);
  }
  return true;
}

/// Whether every dimension of `type` is static and positive.
bool isStaticNonEmpty(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && ranked.hasStaticShape() &&
         llvm::all_of(ranked.getShape(), [](int64_t n) { return n > 0; });
}

/// Matches the body JAX's `argmax`/`argmin` lower to (a reduce of values
/// and their indices): with block arguments (a, i) accumulated and (b, j)
/// the element,
///   p = (a DIR b) or (a != a)           -- DIR is GT (argmax), LT (argmin)
///   q = p or (a == b and i < j)
///   return select(p, a, b), select(q, i, j)
/// that is, the first extremal element, a NaN counting as the extremum.
/// Returns DIR.
FailureOr<shlo::ComparisonDirection> matchArgBody(Region &body) {
  if (!llvm::hasSingleElement(body))
    return failure();
  Block &block = body.front();
  if (block.getNumArguments() != 4 || !block.mightHaveTerminator())
    return failure();
  auto ret = dyn_cast<shlo::ReturnOp>(block.getTerminator());
  if (!ret || ret.getNumOperands() != 2)
    return failure();
  Value a = block.getArgument(0), i = block.getArgument(1),
        b = block.getArgument(2), j = block.getArgument(3);
  auto isCompare = [](Value v, shlo::ComparisonDirection dir, Value lhs,
                      Value rhs) {
    auto cmp = v.getDefiningOp<shlo::CompareOp>();
    return cmp && cmp.getComparisonDirection() == dir && cmp.getLhs() == lhs &&
           cmp.getRhs() == rhs;
  };
  // `v` is `op(x, y)` in either order, with `first(x)` and `second(y)`.
  auto isPair = [](Operation *op, auto first, auto second) {
    if (!op || op->getNumOperands() != 2)
      return false;
    Value x = op->getOperand(0), y = op->getOperand(1);
    return (first(x) && second(y)) || (first(y) && second(x));
  };
  auto values = ret.getOperand(0).getDefiningOp<shlo::SelectOp>();
  auto indices = ret.getOperand(1).getDefiningOp<shlo::SelectOp>();
  if (!values || !indices || values.getOnTrue() != a ||
      values.getOnFalse() != b || indices.getOnTrue() != i ||
      indices.getOnFalse() != j)
    return failure();
  Value p = values.getPred();
  auto pOr = p.getDefiningOp<shlo::OrOp>();
  for (shlo::ComparisonDirection dir :
       {shlo::ComparisonDirection::GT, shlo::ComparisonDirection::LT}) {
    bool pMatches = isPair(
        pOr, [&](Value v) { return isCompare(v, dir, a, b); },
        [&](Value v) {
          return isCompare(v, shlo::ComparisonDirection::NE, a, a);
        });
    if (!pMatches)
      continue;
    bool qMatches = isPair(
        indices.getPred().getDefiningOp<shlo::OrOp>(),
        [&](Value v) { return v == p; },
        [&](Value v) {
          return isPair(
              v.getDefiningOp<shlo::AndOp>(),
              [&](Value w) {
                return isCompare(w, shlo::ComparisonDirection::EQ, a, b);
              },
              [&](Value w) {
                return isCompare(w, shlo::ComparisonDirection::LT, i, j);
              });
        });
    if (qMatches)
      return dir;
  }
  return failure();
}

/// `reduce` whose body reduces each input on its own (one add/maximum/
/// minimum of numbers, and/or/maximum/minimum of i1, per input) ->
/// reduce_sum/reduce_max based forms per input. An init value that is not
/// the identity is combined with the result. Two inputs with JAX's argmax
/// body are ArgReducePattern's.
struct ReducePattern : ShloPattern<shlo::ReduceOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    unsigned count = op.getInputs().size();
    if (op.getNumResults() != count || op.getInitValues().size() != count)
      return decline(op, rewriter,
                     "reduce needs one init value and one result per input");
    std::string why;
    FailureOr<SmallVector<ReduceKind>> kinds =
        getReduceKinds(op.getBody(), count, why);
    if (failed(kinds)) {
      if (count == 2 && succeeded(matchArgBody(op.getBody())))
        return failure(); // An argmax: ArgReducePattern's.
      if (count == 2)
        why += ", nor an argmax/argmin of values and indices (the form "
               "jax.numpy.argmax/argmin lower to)";
      return decline(op, rewriter, why);
    }
    if (failed(requireTypes(op, kAny, loom::ReduceMaxOp::getOperationName(),
                            rewriter)))
      return failure();
    Location loc = op.getLoc();
    ArrayRef<int64_t> dims = op.getDimensions();
    SmallVector<Value> results;
    for (unsigned k = 0; k < count; ++k) {
      ReduceKind kind = (*kinds)[k];
      bool isBool = kind == ReduceKind::And || kind == ReduceKind::Or;
      Value input = adaptor.getInputs()[k];
      Value init = adaptor.getInitValues()[k];
      auto resultType = cast<RankedTensorType>(op.getResult(k).getType());
      unsigned elementKind =
          getElementKind(getElementTypeOrSelf(input.getType()));
      if (elementKind != (isBool ? kBool : elementKind & kNumeric))
        return decline(op, rewriter,
                       "reduce body element types do not match its inputs");
      if (kind == ReduceKind::Prod &&
          (!isStaticNonEmpty(input.getType()) ||
           !areReduceDims(dims,
                          cast<RankedTensorType>(input.getType()).getRank(),
                          resultType.getRank())))
        return decline(op, rewriter,
                       "reduce with a multiply body needs a static, "
                       "non-empty input and distinct dimensions in range");
      Value result =
          isBool ? reduceBools(rewriter, loc, kind, input, resultType, dims)
                 : reduceNumbers(rewriter, loc, kind, input, resultType, dims);
      if (!isReduceIdentity(init, kind))
        result = combineByKind(
            rewriter, loc, kind, result,
            broadcastScalarTo(rewriter, loc, init, resultType));
      results.push_back(result);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// `reduce` of values and their indices with JAX's argmax/argmin body.
/// With `key` the values made numbers whose maximum is the wanted extremum
/// (i1 as i32; `-x` for an argmin of floats, `-1 - x` of integers):
///   m      = reduce_max(key)
///   hit    = key == m, or, for floats where a NaN occurs, x != x
///   index  = min over the reduced dimensions of select(hit, indices, MAX)
///   value  = the extremum (NaN where a NaN occurs)
/// The values' init must be the identity of the extremum (JAX's -inf/+inf,
/// the lowest/highest integer, false/true): the index init then only
/// matters where every value equals it, as the smaller index.
struct ArgReducePattern : ShloPattern<shlo::ReduceOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getInputs().size() != 2 || op.getNumResults() != 2 ||
        op.getInitValues().size() != 2)
      return failure(); // ReducePattern's.
    FailureOr<shlo::ComparisonDirection> dir = matchArgBody(op.getBody());
    if (failed(dir))
      return failure(); // ReducePattern's.
    Value x = adaptor.getInputs()[0], indices = adaptor.getInputs()[1];
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    auto indexType = dyn_cast<RankedTensorType>(indices.getType());
    auto valueResult = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    auto indexResult = dyn_cast<RankedTensorType>(op.getResult(1).getType());
    if (!xType || !indexType || !valueResult || !indexResult ||
        !isStaticNonEmpty(xType) || xType.getShape() != indexType.getShape() ||
        valueResult.getShape() != indexResult.getShape() ||
        valueResult.getElementType() != xType.getElementType() ||
        indexResult.getElementType() != indexType.getElementType())
      return decline(op, rewriter,
                     "argmax/argmin reduce needs values and indices of one "
                     "static, non-empty shape and results of their element "
                     "types");
    if (failed(requireTypes(op, kAny, loom::ReduceMaxOp::getOperationName(),
                            rewriter)))
      return failure();
    if (getElementKind(indexType.getElementType()) != kInt)
      return decline(op, rewriter, "argmax/argmin indices must be integers");
    ArrayRef<int64_t> dims = op.getDimensions();
    int64_t rank = xType.getRank();
    if (!areReduceDims(dims, rank, valueResult.getRank()))
      return decline(op, rewriter, "argmax/argmin reduce dimensions out of "
                                   "range, repeated, or not matching the "
                                   "result rank");
    SmallVector<int64_t> kept;
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(dims, d))
        kept.push_back(d);

    bool isMax = *dir == shlo::ComparisonDirection::GT;
    Type element = xType.getElementType();
    bool isBool = element.isSignlessInteger(1);
    bool isFloat = isa<FloatType>(element);
    ReduceKind extremum =
        isBool ? (isMax ? ReduceKind::Or : ReduceKind::And)
               : (isMax ? ReduceKind::Max : ReduceKind::Min);
    Value valueInit = adaptor.getInitValues()[0];
    Value indexInit = adaptor.getInitValues()[1];
    if (!isReduceIdentity(valueInit, extremum))
      return decline(op, rewriter,
                     "argmax/argmin reduce whose value init is not the "
                     "identity (-inf/+inf, the lowest/highest integer, "
                     "false/true)");

    Location loc = op.getLoc();
    // key: numbers whose maximum marks the wanted elements.
    Value key = x;
    RankedTensorType keyType = xType;
    if (isBool) {
      keyType = xType.clone(rewriter.getI32Type());
      key = loom::ConvertOp::create(rewriter, loc, keyType, x);
    }
    Type keyElement = keyType.getElementType();
    auto flip = [&](Value v) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      if (isFloat)
        return loom::NegOp::create(rewriter, loc, type, v);
      return loom::SubOp::create(
          rewriter, loc, type,
          createSplat(rewriter, loc, type,
                      getScalarAttr(rewriter, keyElement, -1)),
          v);
    };
    if (!isMax)
      key = flip(key);
    RankedTensorType maxType = valueResult.clone(keyElement);
    Value m = loom::ReduceMaxOp::create(rewriter, loc, maxType, key, dims);
    Value mAll = loom::BroadcastOp::create(rewriter, loc, keyType, m, kept);
    RankedTensorType boolType = xType.clone(rewriter.getI1Type());
    Value hit = loom::CompareOp::create(rewriter, loc, boolType,
                                        ComparisonDirection::eq, key, mAll);
    Value anyNaN;
    if (isFloat) {
      Value isNaN = loom::CompareOp::create(rewriter, loc, boolType,
                                            ComparisonDirection::ne, x, x);
      anyNaN = reduceBools(rewriter, loc, ReduceKind::Or, isNaN,
                           valueResult.clone(rewriter.getI1Type()), dims);
      Value anyNaNAll =
          loom::BroadcastOp::create(rewriter, loc, boolType, anyNaN, kept);
      hit = loom::SelectOp::create(rewriter, loc, boolType, anyNaNAll, isNaN,
                                   hit);
    }
    Type indexElement = indexType.getElementType();
    int64_t highest =
        indexElement.isInteger(32)
            ? static_cast<int64_t>(std::numeric_limits<int32_t>::max())
            : std::numeric_limits<int64_t>::max();
    Value candidates = loom::SelectOp::create(
        rewriter, loc, indexType, hit, indices,
        createSplat(rewriter, loc, indexType,
                    rewriter.getIntegerAttr(indexElement, highest)));
    Value index = reduceNumbers(rewriter, loc, ReduceKind::Min, candidates,
                                indexResult, dims);
    // Where every value is the init, the init's index competes too.
    Value identity = broadcastScalarTo(
        rewriter, loc,
        isBool ? Value(loom::ConvertOp::create(
                     rewriter, loc,
                     cast<RankedTensorType>(valueInit.getType())
                         .clone(keyElement),
                     valueInit))
               : valueInit,
        maxType);
    if (!isMax)
      identity = flip(identity);
    RankedTensorType resultBools = indexResult.clone(rewriter.getI1Type());
    Value allInit = loom::CompareOp::create(
        rewriter, loc, resultBools, ComparisonDirection::eq, m, identity);
    if (isFloat) // A NaN is the extremum, whatever the others are.
      allInit = loom::SelectOp::create(
          rewriter, loc, resultBools, anyNaN,
          createSplat(rewriter, loc, resultBools, rewriter.getBoolAttr(false)),
          allInit);
    Value withInit = loom::MinOp::create(
        rewriter, loc, indexResult, index,
        broadcastScalarTo(rewriter, loc, indexInit, indexResult));
    index = loom::SelectOp::create(rewriter, loc, indexResult, allInit,
                                   withInit, index);

    Value value = isMax ? m : flip(m);
    if (isBool)
      value = loom::CompareOp::create(
          rewriter, loc, valueResult, ComparisonDirection::ne, value,
          createSplat(rewriter, loc, maxType,
                      rewriter.getI32IntegerAttr(0)));
    if (isFloat)
      value = loom::SelectOp::create(
          rewriter, loc, valueResult, anyNaN,
          createSplat(rewriter, loc, valueResult,
                      rewriter.getFloatAttr(
                          element, APFloat::getNaN(cast<FloatType>(element)
                                                       .getFloatSemantics()))),
          value);
    rewriter.replaceOp(op, {value, index});
    return success();
  }
};

/// The `kind`-reduction of every window of `width` elements `dilation`
/// apart along dimension `dim` of `x` (static shape), by doubling: level k
/// holds reductions of k such elements, level 2k combines two of level k
/// (k * dilation apart), and the windows combine the levels of the bits of
/// `width` (O(log width) ops).
Value reduceWindowsAlong(OpBuilder &b, Location loc, ReduceKind kind, Value x,
                         int64_t dim, int64_t width, int64_t dilation) {
  int64_t n = cast<RankedTensorType>(x.getType()).getDimSize(dim);
  int64_t count = n - (width - 1) * dilation;
  Value acc, level = x;
  int64_t levelLength = n, offset = 0;
  for (int64_t k = 1; k <= width; k *= 2) {
    if (width & k) {
      Value piece = sliceAlong(b, loc, level, dim, offset * dilation,
                               offset * dilation + count);
      acc = acc ? combineByKind(b, loc, kind, acc, piece) : piece;
      offset += k;
    }
    if (2 * k <= width) {
      int64_t apart = k * dilation;
      level = combineByKind(
          b, loc, kind, sliceAlong(b, loc, level, dim, 0, levelLength - apart),
          sliceAlong(b, loc, level, dim, apart, levelLength));
      levelLength -= apart;
    }
  }
  return acc;
}

/// The positions of a window's elements, in row-major order.
SmallVector<SmallVector<int64_t>> windowOffsets(ArrayRef<int64_t> window) {
  int64_t rank = window.size();
  SmallVector<SmallVector<int64_t>> offsets;
  for (SmallVector<int64_t> offset(rank, 0);;) {
    offsets.push_back(offset);
    int64_t d = rank - 1;
    while (d >= 0 && ++offset[d] == window[d])
      offset[d--] = 0;
    if (d < 0)
      return offsets;
  }
}

/// The `kind`-reduction of each window of `x` (static shape; window
/// element j of dimension d at j * dilations[d]): one strided slice per
/// window element, combined in row-major window order, the order XLA
/// accumulates in (which makes float sums round as XLA's do).
Value reduceWindowsInOrder(OpBuilder &b, Location loc, ReduceKind kind,
                           Value x, RankedTensorType resultType,
                           ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
                           ArrayRef<int64_t> dilations) {
  int64_t rank = window.size();
  Value acc;
  for (ArrayRef<int64_t> offset : windowOffsets(window)) {
    SmallVector<int64_t> starts(rank), limits(rank);
    for (int64_t d = 0; d < rank; ++d) {
      starts[d] = offset[d] * dilations[d];
      limits[d] = starts[d] + (resultType.getDimSize(d) - 1) * strides[d] + 1;
    }
    Value piece =
        loom::SliceOp::create(b, loc, resultType, x, starts, limits, strides);
    acc = acc ? combineByKind(b, loc, kind, acc, piece) : piece;
  }
  return acc;
}

/// Float sums over windows of at most this many elements are accumulated in
/// XLA's order (reduceWindowsInOrder, one op per window element); larger
/// windows and other reductions by doubling (O(log) ops per dimension, a
/// different rounding of float sums).
constexpr int64_t kInOrderWindowLimit = 32;

/// `reduce_window` of one input with a reduce-like body (JAX's
/// cumsum/cummax/cummin and pooling, dilated or not): pad with the init
/// value (base dilations as interior padding: the holes hold the init),
/// reduce the windows (their elements window-dilation apart; float sums of
/// small windows in XLA's order, the rest by doubling along each
/// dimension, then every stride-th window); an init that is not the
/// identity is combined with each result element, as the body would.
struct ReduceWindowPattern : ShloPattern<shlo::ReduceWindowOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::ReduceWindowOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getInputs().size() != 1 || op.getNumResults() != 1)
      return decline(op, rewriter,
                     "reduce_window of several inputs has no loom "
                     "equivalent");
    std::string why;
    FailureOr<SmallVector<ReduceKind>> kinds =
        getReduceKinds(op.getBody(), 1, why);
    if (failed(kinds))
      return decline(op, rewriter, why);
    ReduceKind kind = kinds->front();
    bool isBool = kind == ReduceKind::And || kind == ReduceKind::Or;
    if (failed(requireTypes(op, isBool ? kBool : kNumeric,
                            loom::SliceOp::getOperationName(), rewriter)))
      return failure();
    Value input = adaptor.getInputs()[0];
    Value init = adaptor.getInitValues()[0];
    auto inputType = cast<RankedTensorType>(input.getType());
    auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
    auto initType = cast<RankedTensorType>(init.getType());
    int64_t rank = inputType.getRank();
    if (!isStaticNonEmpty(inputType) || !isStaticNonEmpty(resultType) ||
        resultType.getRank() != rank || initType.getRank() != 0 ||
        initType.getElementType() != inputType.getElementType() ||
        resultType.getElementType() != inputType.getElementType())
      return decline(op, rewriter,
                     "reduce_window needs a static, non-empty input and "
                     "result of one rank and element type, and a 0-d init");
    ArrayRef<int64_t> window = op.getWindowDimensions();
    SmallVector<int64_t> strides(rank, 1), low(rank, 0), high(rank, 0);
    SmallVector<int64_t> baseDilations(rank, 1), windowDilations(rank, 1);
    if (std::optional<ArrayRef<int64_t>> s = op.getWindowStrides())
      strides.assign(s->begin(), s->end());
    if (std::optional<ArrayRef<int64_t>> s = op.getBaseDilations())
      baseDilations.assign(s->begin(), s->end());
    if (std::optional<ArrayRef<int64_t>> s = op.getWindowDilations())
      windowDilations.assign(s->begin(), s->end());
    bool badPadding = false;
    if (std::optional<DenseIntElementsAttr> padding = op.getPadding()) {
      auto shape = padding->getType().getShape();
      badPadding = shape.size() != 2 || shape[0] != rank || shape[1] != 2;
      if (!badPadding) {
        SmallVector<int64_t> values(padding->getValues<int64_t>());
        for (int64_t d = 0; d < rank; ++d) {
          low[d] = values[2 * d];
          high[d] = values[2 * d + 1];
        }
      }
    }
    auto positive = [](ArrayRef<int64_t> values) {
      return llvm::all_of(values, [](int64_t v) { return v >= 1; });
    };
    if (static_cast<int64_t>(window.size()) != rank ||
        static_cast<int64_t>(strides.size()) != rank ||
        static_cast<int64_t>(baseDilations.size()) != rank ||
        static_cast<int64_t>(windowDilations.size()) != rank || badPadding ||
        !positive(window) || !positive(strides) || !positive(baseDilations) ||
        !positive(windowDilations))
      return decline(op, rewriter,
                     "reduce_window needs one positive window size, stride "
                     "and base and window dilation and one [low, high] "
                     "padding per dimension");
    SmallVector<int64_t> padded(rank), counts(rank), interior(rank);
    for (int64_t d = 0; d < rank; ++d) {
      interior[d] = baseDilations[d] - 1;
      int64_t dilated = 0, span = 0;
      bool overflow =
          llvm::MulOverflow(inputType.getDimSize(d) - 1, baseDilations[d],
                            dilated) ||
          llvm::AddOverflow(dilated, int64_t(1), dilated) ||
          llvm::AddOverflow(dilated, low[d], padded[d]) ||
          llvm::AddOverflow(padded[d], high[d], padded[d]) ||
          llvm::MulOverflow(window[d] - 1, windowDilations[d], span);
      counts[d] = overflow ? 0 : padded[d] - span;
      if (padded[d] < 1 || counts[d] < 1 ||
          (counts[d] - 1) / strides[d] + 1 != resultType.getDimSize(d))
        return decline(op, rewriter,
                       "reduce_window result shape does not match its "
                       "window, strides and padding in dimension " +
                           std::to_string(d));
    }

    Location loc = op.getLoc();
    Value x = padTensor(rewriter, loc, input, init, low, high, interior);
    int64_t volume = 1;
    for (int64_t w : window)
      volume = std::min<int64_t>(volume * w, kInOrderWindowLimit + 1);
    if (kind == ReduceKind::Sum &&
        isa<FloatType>(inputType.getElementType()) &&
        volume <= kInOrderWindowLimit) {
      x = reduceWindowsInOrder(rewriter, loc, kind, x, resultType, window,
                               strides, windowDilations);
    } else {
      for (int64_t d = 0; d < rank; ++d)
        if (window[d] > 1)
          x = reduceWindowsAlong(rewriter, loc, kind, x, d, window[d],
                                 windowDilations[d]);
      if (llvm::any_of(strides, [](int64_t s) { return s > 1; })) {
        SmallVector<int64_t> starts(rank, 0);
        x = loom::SliceOp::create(rewriter, loc, resultType, x, starts, counts,
                                  strides);
      }
    }
    if (!isReduceIdentity(init, kind))
      x = combineByKind(rewriter, loc, kind, x,
                        broadcastScalarTo(rewriter, loc, init, resultType));
    rewriter.replaceOp(op, x);
    return success();
  }
};

/// The comparison a `select_and_scatter` select body makes: one `compare`
/// of its two block arguments, in order, returned.
shlo::CompareOp matchSelectBody(Region &body) {
  if (!llvm::hasSingleElement(body))
    return nullptr;
  Block &block = body.front();
  if (block.getNumArguments() != 2 || !block.mightHaveTerminator())
    return nullptr;
  auto ret = dyn_cast<shlo::ReturnOp>(block.getTerminator());
  if (!ret || ret.getNumOperands() != 1)
    return nullptr;
  auto cmp = ret.getOperand(0).getDefiningOp<shlo::CompareOp>();
  if (!cmp || cmp.getLhs() != block.getArgument(0) ||
      cmp.getRhs() != block.getArgument(1))
    return nullptr;
  return cmp;
}

/// Windows of more elements than this are declined: the conversion makes a
/// handful of ops per window element.
constexpr int64_t kSelectWindowLimit = 64;

/// `select_and_scatter` without padding whose select body is one
/// comparison (JAX's `max_pool` gradient: `GE`; min pooling: `LE`) and
/// whose scatter body is reduce-like. Each window element is a strided
/// slice of the operand (the source's shape); folding them in row-major
/// window order with the comparison, as the body folds, gives the selected
/// value and window position of every window. Then, per window position
/// k, the source elements of the windows that selected k are placed back
/// onto the operand's grid (padding: k as the low edge, stride - 1
/// between elements) and combined into the init-filled result there, the
/// last window position first.
struct SelectAndScatterPattern : ShloPattern<shlo::SelectAndScatterOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::SelectAndScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::string why;
    FailureOr<SmallVector<ReduceKind>> kinds =
        getReduceKinds(op.getScatter(), 1, why);
    if (failed(kinds))
      return decline(op, rewriter, "select_and_scatter scatter body: " + why);
    shlo::CompareOp select = matchSelectBody(op.getSelect());
    if (!select)
      return decline(op, rewriter,
                     "select_and_scatter needs a select body that is one "
                     "compare of its two arguments");
    Value operand = adaptor.getOperand(), source = adaptor.getSource();
    Value init = adaptor.getInitValue();
    auto operandType = dyn_cast<RankedTensorType>(operand.getType());
    auto sourceType = dyn_cast<RankedTensorType>(source.getType());
    auto initType = dyn_cast<RankedTensorType>(init.getType());
    if (!isStaticNonEmpty(operandType) || !isStaticNonEmpty(sourceType) ||
        !initType || sourceType.getRank() != operandType.getRank() ||
        initType.getRank() != 0 ||
        initType.getElementType() != sourceType.getElementType() ||
        op.getType() != operandType.clone(sourceType.getElementType()))
      return decline(op, rewriter,
                     "select_and_scatter needs a static, non-empty operand "
                     "and source of one rank, a 0-d init of the source's "
                     "element type and a result of the operand's shape");
    if (failed(requireTypes(op, kAny, loom::SelectOp::getOperationName(),
                            rewriter)))
      return failure();
    int64_t rank = operandType.getRank();
    if (std::optional<DenseIntElementsAttr> padding = op.getPadding())
      if (llvm::any_of(padding->getValues<int64_t>(),
                       [](int64_t v) { return v != 0; }))
        return decline(op, rewriter,
                       "select_and_scatter with padding has no loom "
                       "equivalent (JAX pads the operand with an explicit "
                       "stablehlo.pad instead)");
    SmallVector<int64_t> window(rank, 1), strides(rank, 1);
    if (std::optional<ArrayRef<int64_t>> w = op.getWindowDimensions())
      window.assign(w->begin(), w->end());
    if (std::optional<ArrayRef<int64_t>> s = op.getWindowStrides())
      strides.assign(s->begin(), s->end());
    int64_t volume = 1;
    bool fits = static_cast<int64_t>(window.size()) == rank &&
                static_cast<int64_t>(strides.size()) == rank;
    for (int64_t d = 0; fits && d < rank; ++d) {
      fits = window[d] >= 1 && strides[d] >= 1 &&
             window[d] <= operandType.getDimSize(d) &&
             (operandType.getDimSize(d) - window[d]) / strides[d] + 1 ==
                 sourceType.getDimSize(d);
      volume *= window[d];
    }
    if (!fits)
      return decline(op, rewriter,
                     "select_and_scatter source shape does not match its "
                     "operand, window and strides");
    if (volume > kSelectWindowLimit)
      return decline(op, rewriter,
                     "select_and_scatter windows of " +
                         std::to_string(volume) + " elements (at most " +
                         std::to_string(kSelectWindowLimit) +
                         " are converted)");

    Location loc = op.getLoc();
    auto indexType = sourceType.clone(rewriter.getI32Type());
    auto boolType = sourceType.clone(rewriter.getI1Type());
    auto pieceType = sourceType.clone(operandType.getElementType());
    SmallVector<SmallVector<int64_t>> offsets = windowOffsets(window);
    // Selection: the comparison itself becomes a stablehlo.compare of
    // whole tensors, which ComparePattern converts (i1 orderings too).
    Value selected, position;
    for (auto [k, offset] : llvm::enumerate(offsets)) {
      SmallVector<int64_t> limits(rank);
      for (int64_t d = 0; d < rank; ++d)
        limits[d] = offset[d] + (sourceType.getDimSize(d) - 1) * strides[d] +
                    1;
      Value piece = loom::SliceOp::create(rewriter, loc, pieceType, operand,
                                          offset, limits, strides);
      Value here = createSplat(rewriter, loc, indexType,
                               rewriter.getI32IntegerAttr(k));
      if (!selected) {
        selected = piece;
        position = here;
        continue;
      }
      Value keep = shlo::CompareOp::create(
          rewriter, loc, boolType, select.getComparisonDirectionAttr(),
          selected, piece, select.getCompareTypeAttr());
      selected =
          loom::SelectOp::create(rewriter, loc, pieceType, keep, selected,
                                 piece);
      position = loom::SelectOp::create(rewriter, loc, indexType, keep,
                                        position, here);
    }
    // Scatter: window position k's sources back onto the operand's grid.
    auto resultType = cast<RankedTensorType>(op.getType());
    Value result = broadcastScalarTo(rewriter, loc, init, resultType);
    Value no = createSplat(rewriter, loc,
                           RankedTensorType::get({}, rewriter.getI1Type()),
                           rewriter.getBoolAttr(false));
    SmallVector<int64_t> interior(rank);
    for (int64_t d = 0; d < rank; ++d)
      interior[d] = strides[d] - 1;
    // Windows later in row-major order reach a position through earlier
    // window positions: going through the positions backwards adds each
    // position's sources in window order, as StableHLO's scatter does (so
    // float sums round alike).
    for (int64_t k = offsets.size() - 1; k >= 0; --k) {
      ArrayRef<int64_t> offset = offsets[k];
      SmallVector<int64_t> high(rank);
      for (int64_t d = 0; d < rank; ++d)
        high[d] = operandType.getDimSize(d) - offset[d] -
                  (sourceType.getDimSize(d) - 1) * strides[d] - 1;
      Value chose = loom::CompareOp::create(
          rewriter, loc, boolType, ComparisonDirection::eq, position,
          createSplat(rewriter, loc, indexType,
                      rewriter.getI32IntegerAttr(k)));
      Value hit = padTensor(rewriter, loc, chose, no, offset, high, interior);
      Value placed =
          padTensor(rewriter, loc, source, init, offset, high, interior);
      result = loom::SelectOp::create(
          rewriter, loc, resultType, hit,
          combineByKind(rewriter, loc, kinds->front(), result, placed),
          result);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::loom::shlo_to_loom::populateReductionPatterns(
    RewritePatternSet &patterns, UnsupportedReasons &reasons) {
  patterns.add<ReducePattern, ArgReducePattern, ReduceWindowPattern,
               SelectAndScatterPattern>(
      patterns.getContext(), reasons);
}
