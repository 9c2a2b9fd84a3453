//===- OverlapOrder.cpp - Sub-batches in turns between their collectives --===//
//
// Implements -loom-overlap-order (see Passes.td): each stretch of pure ops
// of a function (between ops with memory effects) is reordered so that the
// sub-batches of loom-overlap-split take turns, each running up to and
// including its next collective; ops of no sub-batch or of several run as
// soon as their operands exist.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <deque>
#include <map>

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMOVERLAPORDER
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

/// The sub-batch of an op that computes none, and of one that combines
/// several.
constexpr int64_t kNone = -1, kSeveral = -2;

/// The sub-batch of `op`: its loom.sub_batch, else the one sub-batch among
/// its operands' (ops of none or several do not count).
int64_t subBatchOf(Operation *op,
                   const llvm::DenseMap<Operation *, int64_t> &known) {
  if (auto attr = op->getAttrOfType<IntegerAttr>(
          LoomDialect::SubBatchAttrHelper::getNameStr()))
    return attr.getInt();
  int64_t found = kNone;
  for (Value operand : op->getOperands()) {
    auto it = known.find(operand.getDefiningOp());
    if (it == known.end() || it->second < 0)
      continue;
    if (found == kNone)
      found = it->second;
    else if (found != it->second)
      return kSeveral;
  }
  return found;
}

/// Whether `op` must keep its place among the ops around it.
bool isBarrier(Operation *op) {
  return op->hasTrait<OpTrait::IsTerminator>() || op->getNumRegions() > 0 ||
         !isMemoryEffectFree(op);
}

/// Whether a sub-batch's turn ends after `op`: a communication op.
bool endsTurn(Operation *op) {
  return isa_and_nonnull<shard::ShardDialect>(op->getDialect());
}

/// Reorders `ops` (pure, consecutive, in program order) in front of
/// `anchor`. Ops of one sub-batch run in turns; ops combining several run
/// as soon as their operands exist (a gradient sum frees its terms); ops of
/// none (weight transposes, fills, constants) run right before their first
/// user, so that they do not hold memory from the start, or, with no user
/// here (an optimizer's update of a parameter), as soon as they can, so
/// that what they read (the parameter's gradient) is freed.
class Stretch {
public:
  Stretch(ArrayRef<Operation *> ops,
          const llvm::DenseMap<Operation *, int64_t> &subBatch)
      : ops(ops), kind(ops.size()), done(ops.size(), false) {
    for (auto [i, op] : llvm::enumerate(ops)) {
      position[op] = i;
      kind[i] = subBatch.lookup(op);
      if (kind[i] >= 0)
        queues[kind[i]].push_back(i);
      else if (kind[i] == kSeveral)
        early.push_back(i);
    }
    // Ops of none that no op here reads run early too (they pull in the
    // ops of none they read).
    for (auto [i, op] : llvm::enumerate(ops))
      if (kind[i] == kNone && llvm::none_of(op->getUsers(), [&](Operation *u) {
            return position.count(u);
          }))
        early.push_back(i);
    llvm::sort(early);
  }

  void reorder(Operation *anchor) {
    if (queues.size() < 2)
      return;
    while (order.size() < ops.size()) {
      emitReadyEarly();
      if (order.size() == ops.size())
        break;
      std::optional<int64_t> next = nextTurn();
      if (!next) {
        // The first op not yet placed can run: the old order is a valid
        // one (not reached: every op is queued, early or read by one).
        size_t first = 0;
        while (done[first])
          ++first;
        place(first);
        continue;
      }
      current = *next;
      std::deque<size_t> &queue = queues[current];
      while (!queue.empty() && ready(queue.front())) {
        size_t i = queue.front();
        queue.pop_front();
        place(i);
        if (endsTurn(ops[i]))
          break;
      }
    }
    for (size_t i : order)
      ops[i]->moveBefore(anchor);
  }

private:
  /// The stretch's op that defines `value`, if not yet placed.
  std::optional<size_t> pendingDef(Value value) const {
    auto it = position.find(value.getDefiningOp());
    if (it == position.end() || done[it->second])
      return std::nullopt;
    return it->second;
  }

  /// Whether op `i` can run once the ops of none it reads are placed.
  bool ready(size_t i) const {
    for (Value operand : ops[i]->getOperands())
      if (std::optional<size_t> def = pendingDef(operand))
        if (kind[*def] != kNone || !ready(*def))
          return false;
    return true;
  }

  /// Places op `i` after the ops of none it reads (ready(i) holds).
  void place(size_t i) {
    for (Value operand : ops[i]->getOperands())
      if (std::optional<size_t> def = pendingDef(operand))
        place(*def);
    if (done[i])
      return;
    done[i] = true;
    order.push_back(i);
  }

  /// Places every op placed early that can run, until none can.
  void emitReadyEarly() {
    bool progress = true;
    while (progress) {
      progress = false;
      for (auto it = early.begin(); it != early.end();) {
        if (done[*it]) {
          it = early.erase(it);
        } else if (ready(*it)) {
          place(*it);
          it = early.erase(it);
          progress = true;
        } else {
          ++it;
        }
      }
    }
  }

  /// The sub-batch whose next op comes first in the old order among those
  /// that can run one now, another than the current if one can.
  std::optional<int64_t> nextTurn() {
    std::optional<int64_t> best, fallback;
    for (auto &[s, queue] : queues) {
      while (!queue.empty() && done[queue.front()])
        queue.pop_front();
      if (queue.empty() || !ready(queue.front()))
        continue;
      std::optional<int64_t> &slot = s == current ? fallback : best;
      if (!slot || queue.front() < queues[*slot].front())
        slot = s;
    }
    return best ? best : fallback;
  }

  ArrayRef<Operation *> ops;
  /// Per op: its sub-batch, kNone or kSeveral.
  std::vector<int64_t> kind;
  std::vector<bool> done;
  llvm::DenseMap<Operation *, size_t> position;
  std::map<int64_t, std::deque<size_t>> queues;
  /// Ops of several sub-batches, and ops of none that no op here reads.
  std::deque<size_t> early;
  std::vector<size_t> order;
  int64_t current = kNone;
};

struct LoomOverlapOrderPass
    : public mlir::loom::impl::LoomOverlapOrderBase<LoomOverlapOrderPass> {
  void runOnOperation() override {
    for (Block &block : getOperation().getBody()) {
      llvm::DenseMap<Operation *, int64_t> subBatch;
      bool any = false;
      for (Operation &op : block) {
        int64_t s = subBatchOf(&op, subBatch);
        subBatch[&op] = s;
        any |= s >= 0;
      }
      if (!any)
        continue;
      SmallVector<Operation *> ops, stretch;
      for (Operation &op : block)
        ops.push_back(&op);
      for (Operation *op : ops) {
        if (!isBarrier(op)) {
          stretch.push_back(op);
          continue;
        }
        Stretch(stretch, subBatch).reorder(op);
        stretch.clear();
      }
    }
  }
};

} // namespace
