//===- MaxInflightCollectives.cpp - Bound the all-reduces in flight -------===//
//
// Implements -loom-max-inflight-collectives (see Passes.td): waits move up
// so that no group has more than `max` all-reduces started and not waited.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <deque>
#include <map>
#include <string>

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMMAXINFLIGHTCOLLECTIVES
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;

namespace {

/// The group of an all-reduce: its grid and axes, as text.
std::string groupOf(loomrt::AllReduceStartOp start) {
  std::string key = start.getGrid().str();
  for (int16_t axis : start.getGridAxes())
    key += ":" + std::to_string(axis);
  return key;
}

/// The wait on `handle` in `block`, or null.
loomrt::WaitOp waitOn(Value handle) {
  for (Operation *user : handle.getUsers())
    if (auto wait = dyn_cast<loomrt::WaitOp>(user))
      return wait;
  return {};
}

void limitBlock(Block &block, int64_t max) {
  std::map<std::string, std::deque<loomrt::AllReduceStartOp>> inFlight;
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (auto wait = dyn_cast<loomrt::WaitOp>(op)) {
      auto start = wait.getHandle().getDefiningOp<loomrt::AllReduceStartOp>();
      if (!start)
        continue;
      std::deque<loomrt::AllReduceStartOp> &q = inFlight[groupOf(start)];
      auto it = llvm::find(q, start);
      if (it != q.end())
        q.erase(it);
      continue;
    }
    auto start = dyn_cast<loomrt::AllReduceStartOp>(op);
    if (!start)
      continue;
    std::deque<loomrt::AllReduceStartOp> &q = inFlight[groupOf(start)];
    while (static_cast<int64_t>(q.size()) >= max) {
      loomrt::AllReduceStartOp oldest = q.front();
      q.pop_front();
      if (loomrt::WaitOp wait = waitOn(oldest.getHandle()))
        if (wait->getBlock() == &block && start->isBeforeInBlock(wait))
          wait->moveBefore(start);
    }
    q.push_back(start);
  }
}

struct MaxInflightCollectives
    : public mlir::loomrt::impl::LoomMaxInflightCollectivesBase<
          MaxInflightCollectives> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (max < 1) {
      module.emitError() << "loom-max-inflight-collectives: max must be >= 1, "
                            "got "
                         << static_cast<int64_t>(max);
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>())
      for (Block &block : func.getBody())
        limitBlock(block, max);
  }
};

} // namespace
