//===- WeightShadows.cpp - bf16 weights written by the update -------------===//
//
// Implements -loom-weight-shadows (see Passes.td): a parameter that the
// step only reads rounded to bf16 (besides its update) gets a bf16 state
// argument, its shadow, which the step's products read and whose next value
// the update writes, so the rounding runs in the optimizer's loop instead of
// in a loop of its own at the top of every step.
//
//===----------------------------------------------------------------------===//

#include "TargetFunction.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMWEIGHTSHADOWS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

/// A parameter to shadow: its conversions to bf16 and the result that
/// returns its update.
struct Candidate {
  unsigned arg;
  unsigned result;
  SmallVector<ConvertOp> conversions;
};

bool isF32ToBf16(ConvertOp op) {
  return getElementTypeOrSelf(op.getOperand().getType()).isF32() &&
         getElementTypeOrSelf(op.getResult().getType()).isBF16();
}

SmallVector<Candidate> findCandidates(func::FuncOp func) {
  DenseMap<int64_t, unsigned> updatedBy;
  for (unsigned r = 0, e = func.getNumResults(); r < e; ++r)
    if (auto u = func.getResultAttrOfType<IntegerAttr>(
            r, LoomDialect::getUpdatesAttrName()))
      updatedBy[u.getInt()] = r;
  SmallVector<Candidate> found;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (!func.getArgAttr(i, LoomDialect::getParamAttrName()))
      continue;
    auto it = updatedBy.find(i);
    if (it == updatedBy.end())
      continue; // a frozen parameter: its rounding is not in a loop
    Candidate c{i, it->second, {}};
    for (Operation *user : func.getArgument(i).getUsers())
      if (auto convert = dyn_cast<ConvertOp>(user); convert &&
                                                    isF32ToBf16(convert))
        c.conversions.push_back(convert);
    if (!c.conversions.empty())
      found.push_back(std::move(c));
  }
  return found;
}

struct WeightShadows
    : public mlir::loom::impl::LoomWeightShadowsBase<WeightShadows> {
  using Base::Base;

  LogicalResult rewrite(func::FuncOp func);
  void runOnOperation() override;
};

LogicalResult WeightShadows::rewrite(func::FuncOp func) {
  SmallVector<Candidate> candidates = findCandidates(func);
  if (candidates.empty())
    return success();
  MLIRContext *ctx = func.getContext();
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  // Shadows go after the parameters and state, before the data.
  unsigned at = stateArgumentsEnd(func);
  shiftUpdatesFrom(func, at, static_cast<unsigned>(candidates.size()));

  Builder b(ctx);
  OpBuilder builder(ret);
  for (auto [k, c] : llvm::enumerate(candidates)) {
    auto nameAttr = func.getArgAttrOfType<StringAttr>(
        c.arg, LoomDialect::getNameAttrName());
    std::string name = (nameAttr ? nameAttr.getValue().str()
                                 : "arg" + std::to_string(c.arg)) +
                       ".bf16";
    Type type = c.conversions.front().getType();
    unsigned index = at + static_cast<unsigned>(k);
    NamedAttrList attrs;
    attrs.set(LoomDialect::getStateAttrName(), b.getUnitAttr());
    attrs.set(LoomDialect::getNameAttrName(), b.getStringAttr(name));
    attrs.set(LoomDialect::getShadowOfAttrName(),
              b.getI64IntegerAttr(static_cast<int64_t>(c.arg)));
    Location loc = func.getArgument(c.arg).getLoc();
    if (failed(func.insertArgument(index, type, attrs.getDictionary(ctx), loc)))
      return failure();
    Value shadow = func.getArgument(index);
    for (ConvertOp convert : c.conversions) {
      convert.getResult().replaceAllUsesWith(shadow);
      convert.erase();
    }
    // The update rounded where it is computed: the next step's shadow.
    Value updated = ret.getOperand(c.result);
    auto next = ConvertOp::create(builder, updated.getLoc(), type, updated);
    next->setAttr(LoomDialect::PhaseAttrHelper::getNameStr(),
                  b.getStringAttr("optimizer"));
    NamedAttrList resultAttrs;
    resultAttrs.set(LoomDialect::getNameAttrName(), b.getStringAttr(name));
    resultAttrs.set(LoomDialect::getUpdatesAttrName(),
                    b.getI64IntegerAttr(static_cast<int64_t>(index)));
    unsigned result = func.getNumResults();
    if (failed(func.insertResult(result, type, resultAttrs.getDictionary(ctx))))
      return failure();
    ret.getOperandsMutable().append(next.getResult());
  }
  return success();
}

void WeightShadows::runOnOperation() {
  SmallVector<func::FuncOp> targets =
      findStepFunctions(getOperation(), functions);
  for (func::FuncOp func : targets)
    if (failed(rewrite(func)))
      return signalPassFailure();
}

} // namespace
