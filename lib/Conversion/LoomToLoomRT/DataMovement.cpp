//===- DataMovement.cpp - Views, strided copies, gather and scatter -------===//
//
// A reshape (and tp_copy, the identity forward) views its operand's buffer;
// transpose, slice, a materialised broadcast, concat and split are strided
// loomrt.copy ops; gather and scatter_add call the runtime library.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::loom_to_loomrt;

namespace {

/// A view of the operand's buffer; a returned value is copied into its
/// result buffer through the view.
template <typename ViewLikeOp>
class ViewPattern : public LoweringPattern<ViewLikeOp> {
public:
  using LoweringPattern<ViewLikeOp>::LoweringPattern;
  using typename LoweringPattern<ViewLikeOp>::OpAdaptor;

  LogicalResult lower(ViewLikeOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value source = adaptor.getOperand();
    if (this->state.isReturned(op.getResult())) {
      Value out = this->define(op.getResult(), rewriter);
      auto view = loomrt::ViewOp::create(rewriter, loc, out.getType(), source);
      createDenseCopy(rewriter, loc, view, out, originOf(op));
      rewriter.replaceOp(op, out);
      return success();
    }
    rewriter.replaceOp(op, loomrt::ViewOp::create(
                               rewriter, loc, bufferType(op.getType()), source));
    return success();
  }
};

class TransposePattern : public LoweringPattern<TransposeOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(TransposeOp transpose, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    // A transpose read through strides (by one kernel) or by BLAS (by
    // gemms) needs no buffer.
    if (state.isBufferless(transpose)) {
      rewriter.eraseOp(transpose);
      return success();
    }
    auto sourceType = cast<ShapedType>(transpose.getOperand().getType());
    SmallVector<int64_t> sourceStrides = computeStrides(sourceType.getShape());
    SmallVector<int64_t> strides;
    for (int64_t p : transpose.getPermutation())
      strides.push_back(sourceStrides[p]);
    auto shape = cast<ShapedType>(transpose.getType()).getShape();
    Value out = define(transpose.getResult(), rewriter);
    loomrt::CopyOp::create(rewriter, transpose.getLoc(), adaptor.getOperand(),
                           out, shape, strides, 0, computeStrides(shape), 0,
                           originOf(transpose));
    rewriter.replaceOp(transpose, out);
    return success();
  }
};

class BroadcastPattern : public LoweringPattern<BroadcastOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(BroadcastOp bcast, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    // Kernels read the operand with stride 0 on the broadcast dimensions.
    if (state.isBufferless(bcast)) {
      rewriter.eraseOp(bcast);
      return success();
    }
    auto sourceType = cast<ShapedType>(bcast.getOperand().getType());
    auto shape = cast<ShapedType>(bcast.getType()).getShape();
    SmallVector<int64_t> sourceStrides = computeStrides(sourceType.getShape());
    SmallVector<int64_t> strides(shape.size(), 0);
    for (auto [i, dim] : llvm::enumerate(bcast.getDims()))
      if (sourceType.getDimSize(i) != 1)
        strides[dim] = sourceStrides[i];
    // (A splat constant that kernels read as a scalar through broadcasts has
    // no buffer, but then this broadcast is one of those.)
    Value out = define(bcast.getResult(), rewriter);
    loomrt::CopyOp::create(rewriter, bcast.getLoc(), adaptor.getOperand(), out,
                           shape, strides, 0, computeStrides(shape), 0,
                           originOf(bcast));
    rewriter.replaceOp(bcast, out);
    return success();
  }
};

class SlicePattern : public LoweringPattern<SliceOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(SliceOp slice, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto sourceType = cast<ShapedType>(slice.getOperand().getType());
    SmallVector<int64_t> sourceStrides = computeStrides(sourceType.getShape());
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    for (auto [i, s] : llvm::enumerate(sourceStrides)) {
      strides.push_back(s * slice.getStrides()[i]);
      offset += s * slice.getStart()[i];
    }
    auto shape = cast<ShapedType>(slice.getType()).getShape();
    Value out = define(slice.getResult(), rewriter);
    loomrt::CopyOp::create(rewriter, slice.getLoc(), adaptor.getOperand(), out,
                           shape, strides, offset, computeStrides(shape), 0,
                           originOf(slice));
    rewriter.replaceOp(slice, out);
    return success();
  }
};

/// Each input copied at its offset along `dim`.
class ConcatPattern : public LoweringPattern<ConcatOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(ConcatOp concat, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Value out = define(concat.getResult(), rewriter);
    auto outShape = cast<MemRefType>(out.getType()).getShape();
    SmallVector<int64_t> outStrides = computeStrides(outShape);
    int64_t dim = concat.getDim();
    int64_t at = 0;
    for (auto [input, buffer] :
         llvm::zip(concat.getInputs(), adaptor.getInputs())) {
      auto shape = cast<ShapedType>(input.getType()).getShape();
      loomrt::CopyOp::create(rewriter, concat.getLoc(), buffer, out, shape,
                             computeStrides(shape), 0, outStrides,
                             at * outStrides[dim], originOf(concat));
      at += shape[dim];
    }
    rewriter.replaceOp(concat, out);
    return success();
  }
};

/// Each result copied from its offset along `dim`.
class SplitPattern : public LoweringPattern<SplitOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(SplitOp split, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    auto sourceShape =
        cast<ShapedType>(split.getOperand().getType()).getShape();
    SmallVector<int64_t> sourceStrides = computeStrides(sourceShape);
    int64_t dim = split.getDim();
    int64_t at = 0;
    SmallVector<Value> outs;
    for (Value value : split.getResults()) {
      auto shape = cast<ShapedType>(value.getType()).getShape();
      outs.push_back(define(value, rewriter));
      loomrt::CopyOp::create(rewriter, split.getLoc(), adaptor.getOperand(),
                             outs.back(), shape, sourceStrides,
                             at * sourceStrides[dim], computeStrides(shape), 0,
                             originOf(split));
      at += shape[dim];
    }
    rewriter.replaceOp(split, outs);
    return success();
  }
};

class GatherPattern : public LoweringPattern<GatherOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(GatherOp gather, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Value out = define(gather.getResult(), rewriter);
    loomrt::GatherOp::create(rewriter, gather.getLoc(), adaptor.getData(),
                             adaptor.getIndices(), out, gather.getAxis(),
                             originOf(gather));
    rewriter.replaceOp(gather, out);
    return success();
  }
};

class ScatterAddPattern : public LoweringPattern<ScatterAddOp> {
public:
  using LoweringPattern::LoweringPattern;

  LogicalResult lower(ScatterAddOp scatter, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Value out = define(scatter.getResult(), rewriter);
    loomrt::ScatterAddOp::create(rewriter, scatter.getLoc(),
                                 adaptor.getTarget(), adaptor.getIndices(),
                                 adaptor.getUpdates(), out, scatter.getAxis(),
                                 originOf(scatter));
    rewriter.replaceOp(scatter, out);
    return success();
  }
};

} // namespace

LogicalResult loom_to_loomrt::checkDataMovementOp(Operation *op) {
  auto scatter = dyn_cast<ScatterAddOp>(op);
  if (scatter && !getElementTypeOrSelf(scatter.getType()).isF32())
    return op->emitError("convert-loom-to-loomrt: scatter_add supports f32 "
                         "only");
  return success();
}

void loom_to_loomrt::populateDataMovementPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    LoweringState &state) {
  patterns.add<ViewPattern<ReshapeOp>, ViewPattern<TpCopyOp>, TransposePattern,
               BroadcastPattern, SlicePattern, ConcatPattern, SplitPattern,
               GatherPattern, ScatterAddPattern>(converter,
                                                 patterns.getContext(), state);
}
