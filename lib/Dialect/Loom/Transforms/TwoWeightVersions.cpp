//===- TwoWeightVersions.cpp - Defer the dp gradient exchange a step ------===//
//
// Implements -loom-two-weight-versions (see Passes.td): each data-parallel
// gradient bucket's all-reduce reduces the bucket the previous step left in
// a state argument, at the top of the step, and the step's own bucket is
// returned as that state's next value.
//
//===----------------------------------------------------------------------===//

#include "TargetFunction.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMTWOWEIGHTVERSIONS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

bool onDpAxis(shard::AllReduceOp op) {
  return getMeshAxis(op.getGridAttr(), op.getGridAxes()) ==
         ::loom::MeshAxis::Dp;
}

/// The all-reduce the returned loss (result 0) is averaged by:
/// loom-data-parallel returns `loom.mul(all_reduce(loss), 1/D)`.
Operation *lossAllReduce(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  auto scale = ret.getOperand(0).getDefiningOp<MulOp>();
  if (!scale)
    return nullptr;
  for (Value operand : scale->getOperands())
    if (auto reduce = operand.getDefiningOp<shard::AllReduceOp>())
      if (onDpAxis(reduce))
        return reduce;
  return nullptr;
}

struct TwoWeightVersions
    : public mlir::loom::impl::LoomTwoWeightVersionsBase<TwoWeightVersions> {
  using Base::Base;

  LogicalResult rewrite(func::FuncOp func);
  void runOnOperation() override;
};

LogicalResult TwoWeightVersions::rewrite(func::FuncOp func) {
  Block &body = func.getBody().front();
  Operation *loss = lossAllReduce(func);
  SmallVector<shard::AllReduceOp> buckets;
  for (auto reduce : body.getOps<shard::AllReduceOp>())
    if (onDpAxis(reduce) && reduce.getOperation() != loss)
      buckets.push_back(reduce);
  if (buckets.empty())
    return func.emitError()
           << "loom-two-weight-versions: @" << func.getSymName()
           << " has no data-parallel gradient all-reduce to overlap with the "
              "next step (two weight versions need dp > 1, after "
              "loom-data-parallel)";

  // New state arguments go after the existing ones, before the data.
  unsigned at = stateArgumentsEnd(func);
  Builder b(func.getContext());
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Value> pendingResults;
  for (auto [k, reduce] : llvm::enumerate(buckets)) {
    std::string name = "pending_grad." + std::to_string(k);
    Type type = reduce.getInput().getType();
    NamedAttrList attrs;
    attrs.set(LoomDialect::getStateAttrName(), b.getUnitAttr());
    attrs.set(LoomDialect::getNameAttrName(), b.getStringAttr(name));
    unsigned index = at + static_cast<unsigned>(k);
    if (failed(func.insertArgument(index, type, attrs.getDictionary(func.getContext()),
                                   reduce.getLoc())))
      return failure();
    // This step's bucket, unreduced, is the next step's pending one.
    Value local = reduce.getInput();
    pendingResults.push_back(local);
    reduce.getInputMutable().assign(func.getArgument(index));
    reduce->moveBefore(&body, body.begin());
  }
  // Arguments after `at` moved: `loom.updates` naming them must follow.
  shiftUpdatesFrom(func, at, static_cast<unsigned>(buckets.size()));
  unsigned first = func.getNumResults();
  for (auto [k, value] : llvm::enumerate(pendingResults)) {
    unsigned result = first + static_cast<unsigned>(k);
    NamedAttrList attrs;
    attrs.set(LoomDialect::getNameAttrName(),
              b.getStringAttr("pending_grad." + std::to_string(k)));
    attrs.set(LoomDialect::getUpdatesAttrName(),
              b.getI64IntegerAttr(at + static_cast<int64_t>(k)));
    if (failed(func.insertResult(result, value.getType(),
                                 attrs.getDictionary(func.getContext()))))
      return failure();
    ret.getOperandsMutable().append(value);
  }
  return success();
}

void TwoWeightVersions::runOnOperation() {
  SmallVector<func::FuncOp> targets =
      findStepFunctions(getOperation(), functions);
  if (targets.empty()) {
    getOperation().emitError("loom-two-weight-versions: no step function "
                             "(a function with loom.updates results; run it "
                             "after loom-optimizer)");
    return signalPassFailure();
  }
  for (func::FuncOp func : targets)
    if (failed(rewrite(func)))
      return signalPassFailure();
}

} // namespace
