//===- Elementwise.cpp - Elementwise stablehlo/chlo ops to loom -----------===//

#include "Patterns.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::shlo_to_loom;

namespace {

/// What an arithmetic op means on i1 (StableHLO: add is or, multiply and).
enum class OnBool { Unsupported, Or, And };

/// `a || b` = `a ? a : b` and `a && b` = `a ? b : a` as loom.select.
static Value createLogical(OpBuilder &builder, Location loc, OnBool kind,
                           Type type, Value a, Value b) {
  return loom::SelectOp::create(builder, loc, type, a,
                                kind == OnBool::Or ? a : b,
                                kind == OnBool::Or ? b : a);
}

/// One op to the loom op of the same operands and result type (binary ops
/// on i1 to a select when `onBool` says what they mean there).
template <typename SrcOp, typename DstOp, OnBool onBool = OnBool::Unsupported>
struct DirectPattern : ShloPattern<SrcOp> {
  DirectPattern(MLIRContext *context, UnsupportedReasons &reasons,
                unsigned kinds)
      : ShloPattern<SrcOp>(context, reasons), kinds(kinds) {}

  LogicalResult
  matchAndRewrite(SrcOp op, typename SrcOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    unsigned allowed = kinds;
    if (onBool != OnBool::Unsupported)
      allowed |= kBool;
    if (failed(this->requireTypes(op, allowed, DstOp::getOperationName(),
                                  rewriter)))
      return failure();
    ValueRange operands = adaptor.getOperands();
    Type type = op->getResult(0).getType();
    if constexpr (onBool != OnBool::Unsupported) {
      if (getElementKind(getElementTypeOrSelf(type)) == kBool) {
        rewriter.replaceOp(op, createLogical(rewriter, op.getLoc(), onBool,
                                             type, operands[0], operands[1]));
        return success();
      }
    }
    rewriter.replaceOp(
        op, DstOp::create(rewriter, op.getLoc(), type, operands)->getResults());
    return success();
  }

  unsigned kinds;
};

/// `log_plus_one(x)` -> `log(x + 1)`, `exponential_minus_one(x)` ->
/// `exp(x) - 1`, `chlo.erfc(x)` -> `1 - erf(x)`. (These lose the accuracy
/// the fused forms have near 0 and, for erfc, for large x.)
struct Log1pPattern : ShloPattern<shlo::Log1pOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::Log1pOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kFloat,
                            loom::LogOp::getOperationName(), rewriter)))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    Value one = createSplat(rewriter, loc, type,
                            getScalarAttr(rewriter, type.getElementType(), 1));
    Value sum = loom::AddOp::create(rewriter, loc, type, adaptor.getOperand(),
                                    one);
    rewriter.replaceOp(op, loom::LogOp::create(rewriter, loc, type, sum));
    return success();
  }
};

struct Expm1Pattern : ShloPattern<shlo::Expm1Op> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::Expm1Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kFloat,
                            loom::ExpOp::getOperationName(), rewriter)))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    Value exp = loom::ExpOp::create(rewriter, loc, type, adaptor.getOperand());
    Value one = createSplat(rewriter, loc, type,
                            getScalarAttr(rewriter, type.getElementType(), 1));
    rewriter.replaceOp(op, loom::SubOp::create(rewriter, loc, type, exp, one));
    return success();
  }
};

struct ErfcPattern : ShloPattern<shlo::chlo::ErfcOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::chlo::ErfcOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kFloat,
                            loom::ErfOp::getOperationName(), rewriter)))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    Value erf = loom::ErfOp::create(rewriter, loc, type, adaptor.getOperand());
    Value one = createSplat(rewriter, loc, type,
                            getScalarAttr(rewriter, type.getElementType(), 1));
    rewriter.replaceOp(op, loom::SubOp::create(rewriter, loc, type, one, erf));
    return success();
  }
};

/// `chlo.square(x)` -> `x * x`.
struct SquarePattern : ShloPattern<shlo::chlo::SquareOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::chlo::SquareOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kNumeric,
                            loom::MulOp::getOperationName(), rewriter)))
      return failure();
    Value x = adaptor.getOperand();
    rewriter.replaceOp(
        op, loom::MulOp::create(rewriter, op.getLoc(), op.getType(), x, x));
    return success();
  }
};

/// `is_finite(x)` -> `abs(x) < inf` (false for infinities and NaN, whose
/// comparisons are false).
struct IsFinitePattern : ShloPattern<shlo::IsFiniteOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::IsFiniteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny, loom::CompareOp::getOperationName(),
                            rewriter)))
      return failure();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    if (!isa<FloatType>(xType.getElementType()))
      return decline(op, rewriter, "is_finite of a non-float operand");
    Location loc = op.getLoc();
    Value magnitude = loom::AbsOp::create(rewriter, loc, xType, x);
    auto floatType = cast<FloatType>(xType.getElementType());
    Value infinity = createSplat(
        rewriter, loc, xType,
        rewriter.getFloatAttr(floatType,
                              APFloat::getInf(floatType.getFloatSemantics())));
    rewriter.replaceOp(op, loom::CompareOp::create(
                               rewriter, loc, op.getType(),
                               ComparisonDirection::lt, magnitude, infinity));
    return success();
  }
};

/// `sign(x)` -> `x > 0 ? 1 : (x < 0 ? -1 : x * 0)`: 0 stays 0 and NaN
/// stays NaN (the product), and the gradient is 0 everywhere.
struct SignPattern : ShloPattern<shlo::SignOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::SignOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kNumeric, loom::SelectOp::getOperationName(),
                            rewriter)))
      return failure();
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Type element = type.getElementType();
    auto boolType = RankedTensorType::get(type.getShape(), rewriter.getI1Type());
    Value x = adaptor.getOperand();
    Value zero = createSplat(rewriter, loc, type,
                             getScalarAttr(rewriter, element, 0));
    Value one = createSplat(rewriter, loc, type,
                            getScalarAttr(rewriter, element, 1));
    Value minusOne = createSplat(rewriter, loc, type,
                                 getScalarAttr(rewriter, element, -1));
    Value positive = loom::CompareOp::create(
        rewriter, loc, boolType, ComparisonDirection::gt, x, zero);
    Value negative = loom::CompareOp::create(
        rewriter, loc, boolType, ComparisonDirection::lt, x, zero);
    Value rest = loom::MulOp::create(rewriter, loc, type, x, zero);
    Value notPositive =
        loom::SelectOp::create(rewriter, loc, type, negative, minusOne, rest);
    rewriter.replaceOp(op, loom::SelectOp::create(rewriter, loc, type,
                                                  positive, one, notPositive));
    return success();
  }
};

/// `maximum`/`minimum`: loom.max/min on numbers; `or`/`and` on i1.
template <typename SrcOp, typename DstOp, bool isMax>
struct MinMaxPattern : ShloPattern<SrcOp> {
  using ShloPattern<SrcOp>::ShloPattern;
  LogicalResult
  matchAndRewrite(SrcOp op, typename SrcOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(this->requireTypes(op, kAny, DstOp::getOperationName(),
                                  rewriter)))
      return failure();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    Type type = op.getType();
    if (getElementKind(getElementTypeOrSelf(type)) == kBool) {
      // On i1 maximum is or, minimum is and.
      rewriter.replaceOp(op, createLogical(rewriter, op.getLoc(),
                                           isMax ? OnBool::Or : OnBool::And,
                                           type, lhs, rhs));
      return success();
    }
    rewriter.replaceOp(op,
                       DstOp::create(rewriter, op.getLoc(), type, lhs, rhs));
    return success();
  }
};

/// `and`/`or`/`xor`/`not` of i1 (loom has no bitwise integer ops).
template <typename SrcOp>
struct LogicalPattern : ShloPattern<SrcOp> {
  using ShloPattern<SrcOp>::ShloPattern;
  LogicalResult
  matchAndRewrite(SrcOp op, typename SrcOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(this->requireTypes(op, kBool,
                                  "loom (only logical operations on i1)",
                                  rewriter)))
      return failure();
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    ValueRange operands = adaptor.getOperands();
    Value result;
    if constexpr (std::is_same_v<SrcOp, shlo::AndOp>) {
      result = createLogical(rewriter, loc, OnBool::And, type, operands[0],
                             operands[1]);
    } else if constexpr (std::is_same_v<SrcOp, shlo::OrOp>) {
      result = createLogical(rewriter, loc, OnBool::Or, type, operands[0],
                             operands[1]);
    } else if constexpr (std::is_same_v<SrcOp, shlo::XorOp>) {
      result = loom::CompareOp::create(rewriter, loc, type,
                                       ComparisonDirection::ne, operands[0],
                                       operands[1]);
    } else {
      Value no = createSplat(rewriter, loc, type, rewriter.getBoolAttr(false));
      result = loom::CompareOp::create(rewriter, loc, type,
                                       ComparisonDirection::eq, operands[0],
                                       no);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

static ComparisonDirection convertDirection(shlo::ComparisonDirection d) {
  switch (d) {
  case shlo::ComparisonDirection::EQ:
    return ComparisonDirection::eq;
  case shlo::ComparisonDirection::NE:
    return ComparisonDirection::ne;
  case shlo::ComparisonDirection::LT:
    return ComparisonDirection::lt;
  case shlo::ComparisonDirection::LE:
    return ComparisonDirection::le;
  case shlo::ComparisonDirection::GT:
    return ComparisonDirection::gt;
  case shlo::ComparisonDirection::GE:
    return ComparisonDirection::ge;
  }
  return ComparisonDirection::eq;
}

/// `compare` -> `loom.compare`. Ordering comparisons of i1 (false < true)
/// become selects.
struct ComparePattern : ShloPattern<shlo::CompareOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::CompareOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny,
                            loom::CompareOp::getOperationName(), rewriter)))
      return failure();
    unsigned kind = getElementKind(getElementTypeOrSelf(op.getLhs().getType()));
    std::optional<shlo::ComparisonType> compareType = op.getCompareType();
    if (compareType == shlo::ComparisonType::TOTALORDER)
      return decline(op, rewriter,
                     "TOTALORDER comparison has no loom equivalent");
    if (kind == kInt && compareType == shlo::ComparisonType::UNSIGNED)
      return decline(op, rewriter,
                     "UNSIGNED comparison of signless integers has no loom "
                     "equivalent (loom compares them as signed)");
    if (kind == kBool && compareType == shlo::ComparisonType::SIGNED)
      return decline(op, rewriter,
                     "SIGNED comparison of i1 (true < false) has no loom "
                     "equivalent; StableHLO compares booleans UNSIGNED");
    if (kind == kFloat && compareType &&
        *compareType != shlo::ComparisonType::FLOAT &&
        *compareType != shlo::ComparisonType::NOTYPE)
      return decline(op, rewriter,
                     "comparison type " +
                         shlo::stringifyComparisonType(*compareType) +
                         " does not apply to floats");
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Value a = adaptor.getLhs(), b = adaptor.getRhs();
    shlo::ComparisonDirection direction = op.getComparisonDirection();
    if (kind != kBool || direction == shlo::ComparisonDirection::EQ ||
        direction == shlo::ComparisonDirection::NE) {
      rewriter.replaceOp(op, loom::CompareOp::create(
                                 rewriter, loc, type,
                                 convertDirection(direction), a, b));
      return success();
    }
    // i1 ordering: a < b = a ? false : b;  a > b = b ? false : a;
    //              a <= b = a ? b : true;  a >= b = b ? a : true.
    bool strict = direction == shlo::ComparisonDirection::LT ||
                  direction == shlo::ComparisonDirection::GT;
    bool less = direction == shlo::ComparisonDirection::LT ||
                direction == shlo::ComparisonDirection::LE;
    Value pred = less ? a : b, other = less ? b : a;
    Value constant =
        createSplat(rewriter, loc, type, rewriter.getBoolAttr(!strict));
    Value result =
        strict ? loom::SelectOp::create(rewriter, loc, type, pred, constant,
                                        other)
               : loom::SelectOp::create(rewriter, loc, type, pred, other,
                                        constant);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `select`, with a 0-d predicate broadcast to the operands' shape.
struct SelectPattern : ShloPattern<shlo::SelectOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::SelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny,
                            loom::SelectOp::getOperationName(), rewriter)))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    Value pred =
        broadcastScalarTo(rewriter, op.getLoc(), adaptor.getPred(), type);
    rewriter.replaceOp(op, loom::SelectOp::create(rewriter, op.getLoc(), type,
                                                  pred, adaptor.getOnTrue(),
                                                  adaptor.getOnFalse()));
    return success();
  }
};

/// `clamp(lo, x, hi)` -> `min(max(x, lo), hi)`, 0-d bounds broadcast.
struct ClampPattern : ShloPattern<shlo::ClampOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::ClampOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::string target = (loom::MaxOp::getOperationName() + "/" +
                          loom::MinOp::getOperationName())
                             .str();
    if (failed(requireTypes(op, kNumeric, target, rewriter)))
      return failure();
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Value lo = broadcastScalarTo(rewriter, loc, adaptor.getMin(), type);
    Value hi = broadcastScalarTo(rewriter, loc, adaptor.getMax(), type);
    Value low = loom::MaxOp::create(rewriter, loc, type, adaptor.getOperand(),
                                    lo);
    rewriter.replaceOp(op, loom::MinOp::create(rewriter, loc, type, low, hi));
    return success();
  }
};

struct ConvertPattern : ShloPattern<shlo::ConvertOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::ConvertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kAny,
                            loom::ConvertOp::getOperationName(), rewriter)))
      return failure();
    if (adaptor.getOperand().getType() == op.getType()) {
      rewriter.replaceOp(op, adaptor.getOperand());
      return success();
    }
    rewriter.replaceOp(op, loom::ConvertOp::create(rewriter, op.getLoc(),
                                                   op.getType(),
                                                   adaptor.getOperand()));
    return success();
  }
};

/// `reduce_precision` to a format the element type already fits in (JAX's
/// e11m52 of f32: no rounding) forwards its operand; to bf16's e8m7 from
/// f32 it is a round trip through bf16 (same exponent range, so the same
/// rounding of every value).
struct ReducePrecisionPattern : ShloPattern<shlo::ReducePrecisionOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::ReducePrecisionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(requireTypes(op, kFloat,
                            loom::ConvertOp::getOperationName(), rewriter)))
      return failure();
    auto type = cast<RankedTensorType>(op.getType());
    auto element = cast<FloatType>(type.getElementType());
    // Exponent bits of the type: its width less the sign and mantissa.
    int64_t mantissa = element.getFPMantissaWidth() - 1;
    int64_t exponent = element.getWidth() - 1 - mantissa;
    int64_t e = op.getExponentBits(), m = op.getMantissaBits();
    if (e >= exponent && m >= mantissa) {
      rewriter.replaceOp(op, adaptor.getOperand());
      return success();
    }
    if (element.isF32() && e == 8 && m == 7) {
      Value narrow = loom::ConvertOp::create(
          rewriter, op.getLoc(), type.clone(rewriter.getBF16Type()),
          adaptor.getOperand());
      rewriter.replaceOp(op, loom::ConvertOp::create(rewriter, op.getLoc(),
                                                     type, narrow));
      return success();
    }
    return decline(op, rewriter,
                   "reduce_precision to e" + std::to_string(e) + "m" +
                       std::to_string(m) + " of " +
                       std::to_string(element.getWidth()) +
                       "-bit floats has no loom equivalent (supported: "
                       "formats the type fits in, and e8m7 of f32)");
  }
};

} // namespace

void mlir::loom::shlo_to_loom::populateElementwisePatterns(
    RewritePatternSet &patterns, UnsupportedReasons &reasons) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ReducePrecisionPattern>(context, reasons);
  patterns.add<DirectPattern<shlo::AbsOp, loom::AbsOp>,
               DirectPattern<shlo::NegOp, loom::NegOp>,
               DirectPattern<shlo::AddOp, loom::AddOp, OnBool::Or>,
               DirectPattern<shlo::SubtractOp, loom::SubOp>,
               DirectPattern<shlo::MulOp, loom::MulOp, OnBool::And>,
               DirectPattern<shlo::DivOp, loom::DivOp>>(context, reasons,
                                                        kNumeric);
  // Integer `power` is left out: StableHLO defines negative exponents of
  // integers, loom does not say what pow of integers does with them.
  patterns.add<DirectPattern<shlo::PowOp, loom::PowOp>,
               DirectPattern<shlo::ExpOp, loom::ExpOp>,
               DirectPattern<shlo::LogOp, loom::LogOp>,
               DirectPattern<shlo::TanhOp, loom::TanhOp>,
               DirectPattern<shlo::SineOp, loom::SinOp>,
               DirectPattern<shlo::CosineOp, loom::CosOp>,
               DirectPattern<shlo::LogisticOp, loom::SigmoidOp>,
               DirectPattern<shlo::SqrtOp, loom::SqrtOp>,
               DirectPattern<shlo::RsqrtOp, loom::RsqrtOp>,
               DirectPattern<shlo::chlo::ErfOp, loom::ErfOp>,
               DirectPattern<shlo::chlo::ErfInvOp, loom::ErfInvOp>>(
      context, reasons, kFloat);
  patterns.add<Log1pPattern, Expm1Pattern, ErfcPattern, SquarePattern,
               IsFinitePattern, SignPattern,
               MinMaxPattern<shlo::MaxOp, loom::MaxOp, true>,
               MinMaxPattern<shlo::MinOp, loom::MinOp, false>,
               LogicalPattern<shlo::AndOp>, LogicalPattern<shlo::OrOp>,
               LogicalPattern<shlo::XorOp>, LogicalPattern<shlo::NotOp>,
               ComparePattern, SelectPattern, ClampPattern, ConvertPattern>(
      context, reasons);
}
