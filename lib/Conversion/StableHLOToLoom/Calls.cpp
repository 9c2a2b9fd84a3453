//===- Calls.cpp - custom_call and optimization_barrier to loom -----------===//

#include "Patterns.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <functional>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::shlo_to_loom;

namespace {

/// Names of the sharding hint attributes, as JAX writes them on arguments:
/// GSPMD's (`custom_call @Sharding`) and Shardy's (`sdy.sharding_constraint`).
constexpr StringLiteral kShardingAttr = "mhlo.sharding";
constexpr StringLiteral kSdyShardingAttr = "sdy.sharding";

/// Keeps the sharding `hint` of `value` (which `op`, being replaced by
/// `value`, imposed) as the attribute `name` of its definition: an argument
/// attribute for a function argument (JAX's own place for shardings), else
/// a discardable attribute of its op. The first hint of a value wins (for an
/// argument, the sharding JAX gave it); a different later one, or one for a
/// value without a single definition, is dropped with a warning.
static void attachHint(Operation *op, Value value, StringRef name,
                       Attribute hint, ConversionPatternRewriter &rewriter) {
  Operation *owner = nullptr;
  Attribute existing;
  std::function<void()> set;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (func && arg.getOwner()->isEntryBlock()) {
      owner = func;
      existing = func.getArgAttr(arg.getArgNumber(), name);
      set = [=]() mutable { func.setArgAttr(arg.getArgNumber(), name, hint); };
    }
  } else if (Operation *def = value.getDefiningOp();
             def && def->getNumResults() == 1) {
    owner = def;
    existing = def->getAttr(name);
    set = [=] { def->setAttr(name, hint); };
  }
  if (!owner) {
    op->emitWarning() << "sharding hint " << hint
                      << " dropped: its value has no single definition to "
                         "carry it";
    return;
  }
  if (existing) {
    if (existing != hint)
      op->emitWarning() << "sharding hint " << hint
                        << " dropped: the value already has " << existing;
    return;
  }
  rewriter.modifyOpInPlace(owner, set);
}

/// `custom_call @Sharding(%x)` -> `%x`, with the hint kept on `%x`'s
/// definition; `custom_call @check.expect_*(%a, %b)` -> `check.expect_*`.
struct CustomCallPattern : ShloPattern<shlo::CustomCallOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::CustomCallOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef target = op.getCallTargetName();
    if (target == "Sharding")
      return convertSharding(op, adaptor, rewriter);
    if (target.starts_with("check."))
      return convertCheck(op, adaptor, rewriter);
    return decline(op, rewriter,
                   "custom_call target @" + target +
                       " has no loom equivalent (supported: @Sharding, "
                       "@check.expect_eq, @check.expect_almost_eq, "
                       "@check.expect_close)");
  }

private:
  LogicalResult convertSharding(shlo::CustomCallOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const {
    if (op.getInputs().size() != 1 || op.getNumResults() != 1 ||
        op.getInputs()[0].getType() != op.getResult(0).getType())
      return decline(op, rewriter,
                     "custom_call @Sharding needs one operand and one result "
                     "of the same type");
    Value value = adaptor.getInputs()[0];
    if (Attribute hint = op->getAttr(kShardingAttr))
      attachHint(op, value, kShardingAttr, hint, rewriter);
    rewriter.replaceOp(op, value);
    return success();
  }

  LogicalResult convertCheck(shlo::CustomCallOp op, OpAdaptor adaptor,
                             ConversionPatternRewriter &rewriter) const {
    StringRef name = op.getCallTargetName().drop_front(strlen("check."));
    if (op.getInputs().size() != 2 || op.getNumResults() != 0)
      return decline(op, rewriter,
                     "custom_call @check." + name +
                         " needs two operands and no result");
    Location loc = op.getLoc();
    ValueRange operands = adaptor.getInputs();
    if (name == "expect_eq")
      shlo::check::ExpectEqOp::create(rewriter, loc, operands[0], operands[1]);
    else if (name == "expect_almost_eq")
      shlo::check::ExpectAlmostEqOp::create(rewriter, loc, TypeRange(),
                                            operands);
    else if (name == "expect_close")
      shlo::check::ExpectCloseOp::create(rewriter, loc, TypeRange(), operands);
    else
      return decline(op, rewriter,
                     "custom_call @check." + name +
                         " is not a known check (expect_eq, "
                         "expect_almost_eq, expect_close)");
    rewriter.eraseOp(op);
    return success();
  }
};

/// `sdy.sharding_constraint %x <...>` -> `%x`, with the sharding kept as
/// the attribute `sdy.sharding = #sdy.sharding<...>` on `%x`'s definition.
struct ShardingConstraintPattern
    : ShloPattern<shlo::sdy::ShardingConstraintOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::sdy::ShardingConstraintOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // `#sdy.sharding<...>`, as JAX writes argument shardings.
    MLIRContext *context = op.getContext();
    Attribute hint = OpaqueAttr::get(StringAttr::get(context, "sdy"),
                                     "sharding" + op.getSharding().str(),
                                     NoneType::get(context));
    attachHint(op, adaptor.getInput(), kSdyShardingAttr, hint, rewriter);
    rewriter.replaceOp(op, adaptor.getInput());
    return success();
  }
};

struct OptimizationBarrierPattern : ShloPattern<shlo::OptimizationBarrierOp> {
  using ShloPattern::ShloPattern;
  LogicalResult
  matchAndRewrite(shlo::OptimizationBarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getOperand());
    return success();
  }
};

} // namespace

void mlir::loom::shlo_to_loom::populateCallPatterns(
    RewritePatternSet &patterns, UnsupportedReasons &reasons) {
  patterns.add<CustomCallPattern, ShardingConstraintPattern,
               OptimizationBarrierPattern>(
      patterns.getContext(), reasons);
}
