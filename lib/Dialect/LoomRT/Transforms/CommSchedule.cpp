//===- CommSchedule.cpp - Post pipeline transfers as early as possible ----===//
//
// Implements -loom-comm-schedule (see Passes.td): sends move up to right
// after the last writer of the sent buffer, receives up to right after the
// wait of the previous receive from the same peer. Moves are decided from
// the ops' memory effects (LoomRTOps.td declares them per operand); a wait
// counts as writing the buffers of the transfer it completes.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMCOMMSCHEDULE
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;

namespace {


/// What `op` does to buffer `root` (or a view of it).
struct Access {
  bool reads = false;
  bool writes = false;
};

Access accessOf(Operation *op, Value root) {
  Access access;
  // A wait completes the writes of the transfer or copy it waits for.
  if (auto wait = dyn_cast<loomrt::WaitOp>(op)) {
    if (Operation *start = wait.getHandle().getDefiningOp())
      access.writes = accessOf(start, root).writes;
    return access;
  }
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects) {
    // Unknown: it may touch anything.
    access.reads = access.writes = true;
    return access;
  }
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  for (const MemoryEffects::EffectInstance &effect : instances) {
    Value value = effect.getValue();
    if (!value || loomrt::rootBuffer(value) != root)
      continue;
    access.reads |= isa<MemoryEffects::Read>(effect.getEffect());
    access.writes |= isa<MemoryEffects::Write>(effect.getEffect());
  }
  return access;
}

/// Whether `op` defines `value` or one of the views it is taken through.
bool definesAlias(Operation *op, Value value) {
  for (;;) {
    if (value.getDefiningOp() == op)
      return true;
    auto view = value.getDefiningOp<loomrt::ViewOp>();
    if (!view)
      return false;
    value = view.getSource();
  }
}

/// Where ops that copy or transfer `source` can move up to: the nearest op
/// before `from` that defines `source` (or a view it is taken through) or
/// writes its buffer, or at which `stop` holds; null for the top of the
/// block. Ops in `moving` are passed over.
Operation *
lastWriterBefore(Operation *from, Value source, ArrayRef<Operation *> moving,
                 llvm::function_ref<bool(Operation *)> stop = nullptr) {
  Value root = loomrt::rootBuffer(source);
  Operation *anchor = from->getPrevNode();
  for (; anchor; anchor = anchor->getPrevNode()) {
    if (definesAlias(anchor, source) || accessOf(anchor, root).writes)
      break;
    if (llvm::is_contained(moving, anchor))
      continue;
    if (stop && stop(anchor))
      break;
  }
  return anchor;
}

/// Moves `ops` (in order) to right after `anchor`, or to the top of
/// `block` when `anchor` is null.
void moveUp(ArrayRef<Operation *> ops, Operation *anchor, Block &block) {
  for (Operation *op : llvm::reverse(ops)) {
    if (anchor)
      op->moveAfter(anchor);
    else
      op->moveBefore(&block, block.begin());
  }
}

/// A send lowered as `alloc; copy source -> buffer; send_start buffer`:
/// the three ops, or nothing when it has another shape.
std::optional<std::array<Operation *, 3>> sendPattern(loomrt::SendStartOp send) {
  auto copy = dyn_cast_or_null<loomrt::CopyOp>(send->getPrevNode());
  if (!copy || copy.getTarget() != send.getBuffer())
    return std::nullopt;
  auto alloc = send.getBuffer().getDefiningOp<loomrt::AllocOp>();
  if (!alloc || alloc->getBlock() != send->getBlock() ||
      !alloc->isBeforeInBlock(copy))
    return std::nullopt;
  return std::array<Operation *, 3>{alloc, copy, send};
}

/// The ops an all-reduce moves with: the lowering's `alloc; copy source
/// -> buffer (origin "all_reduce"); (deallocs;) all_reduce_start buffer`
/// gives the alloc, the copy and the start (the deallocs stay, after the
/// copy), with the copy's source as the value to wait for; any other form
/// only the start, waiting for the reduced buffer itself.
std::pair<SmallVector<Operation *, 3>, Value>
allReducePattern(loomrt::AllReduceStartOp start) {
  Operation *prev = start->getPrevNode();
  while (isa_and_nonnull<loomrt::DeallocOp>(prev))
    prev = prev->getPrevNode();
  auto copy = dyn_cast_or_null<loomrt::CopyOp>(prev);
  auto alloc = start.getBuffer().getDefiningOp<loomrt::AllocOp>();
  if (copy && copy.getOrigin() == "all_reduce" &&
      copy.getTarget() == start.getBuffer() && alloc &&
      alloc->getBlock() == start->getBlock() && alloc->isBeforeInBlock(copy))
    return {{alloc, copy, start}, copy.getSource()};
  return {{start}, start.getBuffer()};
}

/// Whether two transfers run between the same ranks: one group, one peer.
template <typename A, typename B> bool samePeer(A a, B b) {
  return a.getGrid() == b.getGrid() && a.getGridAxes() == b.getGridAxes() &&
         a.getPeer() == b.getPeer();
}

struct CommSchedule
    : public mlir::loomrt::impl::LoomCommScheduleBase<CommSchedule> {
  using Base::Base;

  /// Sends: right after the last op that writes what they send.
  void moveSends(Block &block) {
    SmallVector<loomrt::SendStartOp> sends(block.getOps<loomrt::SendStartOp>());
    for (loomrt::SendStartOp send : sends) {
      std::optional<std::array<Operation *, 3>> ops = sendPattern(send);
      if (!ops)
        continue;
      auto [alloc, copy, start] = *ops;
      Value source = cast<loomrt::CopyOp>(copy).getSource();
      moveUp({alloc, copy, start}, lastWriterBefore(alloc, source, {}),
             block);
    }
  }

  /// All-reduces: right after the last op that writes what they reduce,
  /// but not above a wait for an all-reduce of the same group (which
  /// loom-max-inflight-collectives may have put there to bound the
  /// all-reduces in flight). In the backward pass a layer's input gradient
  /// is complete before its weight gradient: the input gradient's
  /// tensor-parallel all-reduce then runs while the weight gradient is
  /// computed.
  void moveAllReduces(Block &block) {
    SmallVector<loomrt::AllReduceStartOp> starts(
        block.getOps<loomrt::AllReduceStartOp>());
    for (loomrt::AllReduceStartOp start : starts) {
      auto [ops, source] = allReducePattern(start);
      auto stop = [&](Operation *op) {
        if (auto wait = dyn_cast<loomrt::WaitOp>(op))
          if (auto other =
                  wait.getHandle().getDefiningOp<loomrt::AllReduceStartOp>())
            if (other.getGrid() == start.getGrid() &&
                other.getGridAxes() == start.getGridAxes())
              return true;
        // Another start, or an op that reads or writes the reduced buffer
        // (or of unknown effects).
        Access access = accessOf(op, start.getBuffer());
        return isa<loomrt::AllReduceStartOp>(op) || access.reads ||
               access.writes;
      };
      moveUp(ops, lastWriterBefore(ops.front(), source, ops, stop), block);
    }
  }

  /// Receives: right after the previous receive from the same peer was
  /// waited for (or started).
  void moveRecvs(Block &block) {
    SmallVector<loomrt::RecvStartOp> recvs(block.getOps<loomrt::RecvStartOp>());
    for (loomrt::RecvStartOp recv : recvs) {
      auto alloc = recv.getBuffer().getDefiningOp<loomrt::AllocOp>();
      if (!alloc || alloc->getBlock() != &block)
        continue;
      Value root = recv.getBuffer();
      Operation *anchor = recv->getPrevNode();
      for (; anchor; anchor = anchor->getPrevNode()) {
        if (anchor == alloc.getOperation())
          continue;
        if (auto other = dyn_cast<loomrt::RecvStartOp>(anchor))
          if (samePeer(other, recv))
            break;
        if (auto wait = dyn_cast<loomrt::WaitOp>(anchor))
          if (auto other =
                  wait.getHandle().getDefiningOp<loomrt::RecvStartOp>())
            if (samePeer(other, recv))
              break;
        Access access = accessOf(anchor, root);
        if (access.reads || access.writes)
          break;
        // Unknown ops stop the move (waits are known: they complete
        // other transfers).
        if (!isa<MemoryEffectOpInterface, loomrt::WaitOp>(anchor))
          break;
      }
      moveUp({alloc, recv}, anchor, block);
    }
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      for (Block &block : func.getBody()) {
        moveSends(block);
        moveAllReduces(block);
        moveRecvs(block);
      }
  }
};

} // namespace
