//===- ExcessPrecision.cpp - No bf16 round trips inside a loop ------------===//
//
// Implements -loom-excess-precision (see Passes.td for the contract): in a
// kernel or reduction body, an extf of a truncf that is not stored reads
// the unrounded value.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMEXCESSPRECISION
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;

namespace {

/// Whether `rounded` is stored: a kernel body's yield writes it (a reduce
/// body's yield folds it, the element its unfused producer stored).
bool isStored(arith::TruncFOp rounded) {
  return llvm::any_of(rounded->getUsers(), [](Operation *user) {
    return isa<loomrt::YieldOp>(user);
  });
}

/// Folds the round trips of one body; erases the roundings left unread.
void foldRoundTrips(Region &body) {
  SmallVector<arith::ExtFOp> widenings;
  body.walk([&](arith::ExtFOp widen) { widenings.push_back(widen); });
  for (arith::ExtFOp widen : widenings) {
    auto rounded = widen.getIn().getDefiningOp<arith::TruncFOp>();
    if (!rounded || rounded.getIn().getType() != widen.getType() ||
        isStored(rounded))
      continue;
    widen.replaceAllUsesWith(rounded.getIn());
    widen.erase();
    if (rounded->use_empty())
      rounded.erase();
  }
}

struct LoomExcessPrecision
    : public loomrt::impl::LoomExcessPrecisionBase<LoomExcessPrecision> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (isa<loomrt::KernelOp, loomrt::ReduceOp>(op))
        foldRoundTrips(op->getRegion(0));
    });
  }
};

} // namespace
