//===- FuseElementwise.cpp - Mark the elementwise fusion groups -----------===//
//
// Implements -loom-fuse-elementwise (see Passes.td for the contract): the
// fusion groups convert-loom-to-loomrt turns into one loomrt.kernel each,
// written into the IR as `loom.fused` on every member but the last.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMFUSEELEMENTWISE
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

bool isElementwise(Operation *op) {
  return op->hasTrait<::mlir::loom::OpTrait::ElementwiseMapping>();
}

struct LoomFuseElementwisePass
    : public mlir::loom::impl::LoomFuseElementwiseBase<LoomFuseElementwisePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    // A returned value is written into its result buffer, not computed in
    // its user's loop.
    DenseSet<Value> returned;
    if (auto ret = dyn_cast<func::ReturnOp>(body.getTerminator()))
      returned.insert(ret.operand_begin(), ret.operand_end());
    // A producer joins its user's group (and brings its own group along)
    // when the user is its only reader; nothing moves, so where the program
    // reads each value stays where it was.
    MLIRContext *ctx = func.getContext();
    LoomDialect::FusedAttrHelper fused(ctx);
    for (Operation &op : body) {
      if (!isElementwise(&op))
        continue;
      for (Value operand : op.getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (!producer || producer->getBlock() != &body ||
            !isElementwise(producer) || !operand.hasOneUse() ||
            returned.contains(operand) ||
            cast<ShapedType>(operand.getType()).getShape() !=
                cast<ShapedType>(op.getResult(0).getType()).getShape())
          continue;
        fused.setAttr(producer, UnitAttr::get(ctx));
      }
    }
  }
};

} // namespace
