//===- LossSoftmaxFusion.cpp - The loss writes the softmax its gradient reads //
//
// Implements -loom-fuse-loss-softmax (see Passes.td for the contract): a
// loomrt.softmax of the logits a loomrt.cross_entropy reads is written by
// the cross-entropy, from the exponentials it sums anyway.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMFUSELOSSSOFTMAX
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;

namespace {

/// The softmax over the classes of `ce`'s logits, in its block, that `ce`
/// can write (Passes.td); null when there is none.
loomrt::SoftmaxOp softmaxOf(loomrt::CrossEntropyOp ce) {
  Value logits = ce.getLogits();
  auto type = cast<MemRefType>(logits.getType());
  for (Operation *user : logits.getUsers()) {
    auto softmax = dyn_cast<loomrt::SoftmaxOp>(user);
    if (!softmax || softmax->getBlock() != ce->getBlock() ||
        softmax.getLog() || softmax.getInput() != logits ||
        static_cast<int64_t>(softmax.getAxis()) != type.getRank() - 1 ||
        softmax.getOutput().getType() != type)
      continue;
    Value probs = softmax.getOutput();
    Operation *def = probs.getDefiningOp();
    if (!isa_and_nonnull<loomrt::AllocOp>(def) ||
        def->getBlock() != ce->getBlock())
      continue;
    // The probabilities are written where the loss runs: the logits must
    // be the same there, and nothing between may touch the probabilities.
    bool after = ce->isBeforeInBlock(softmax);
    Operation *first = after ? ce.getOperation() : softmax.getOperation();
    Operation *last = after ? softmax.getOperation() : ce.getOperation();
    if (loomrt::touchedBetween(first, last, {loomrt::rootBuffer(logits)}) ||
        loomrt::touchedBetween(first, last, {probs}, /*orRead=*/true))
      continue;
    return softmax;
  }
  return nullptr;
}

struct LoomFuseLossSoftmax
    : public loomrt::impl::LoomFuseLossSoftmaxBase<LoomFuseLossSoftmax> {
  void runOnOperation() override {
    SmallVector<loomrt::CrossEntropyOp> losses;
    getOperation().walk(
        [&](loomrt::CrossEntropyOp ce) { losses.push_back(ce); });
    for (loomrt::CrossEntropyOp ce : losses) {
      if (ce.getProbs())
        continue;
      loomrt::SoftmaxOp softmax = softmaxOf(ce);
      if (!softmax)
        continue;
      Value probs = softmax.getOutput();
      Operation *alloc = probs.getDefiningOp();
      if (ce->isBeforeInBlock(alloc))
        alloc->moveBefore(ce);
      ce.getProbsMutable().assign(probs);
      softmax.erase();
    }
  }
};

} // namespace
