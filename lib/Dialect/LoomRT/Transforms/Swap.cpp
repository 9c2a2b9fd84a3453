//===- Swap.cpp - Offload activations to the host pool to fit a budget ---===//
//
// loom-swap: for each step function whose device peak exceeds the budget,
// repeatedly take the activation buffer with the most bytes that is live
// at the peak without being used there (a gap between two of its uses
// spans the peak), copy it to the host pool after the use before the gap
// (swap_out; the wait a few ops later frees its device bytes) and back into
// a fresh arena buffer a few ops before the use after the gap (swap_in and
// its wait right before that use), until the function fits or nothing
// live at the peak can move. analyzeFunctionMemory (MemoryPlan.h) gives
// the peak each round, so the result is what loom-memory-plan will plan.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/LoomRT/Transforms/MemoryPlan.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMSWAP
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;
using namespace mlir::loomrt;

namespace {

constexpr llvm::StringLiteral kSwappedAttr = "loomrt.swapped";

/// A buffer that may move: its uses (top-level op positions, views
/// included) and the gap around the peak.
struct Candidate {
  AllocOp alloc;
  int64_t bytes = 0;
  int64_t before = -1, after = -1; // the uses on each side of the gap
};

/// The positions of the top-level ops that use `alloc`'s buffer or a view
/// of it (the view ops themselves too); false when an asynchronous
/// operation uses it (its life is tied to a wait).
bool usePositions(AllocOp alloc, Block &block,
                  const DenseMap<Operation *, int64_t> &position,
                  SmallVectorImpl<int64_t> &uses) {
  SmallVector<Value> worklist{alloc.getBuffer()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top)
        return false;
      for (Value result : user->getResults())
        if (isa<HandleType>(result.getType()))
          return false;
      if (auto view = dyn_cast<ViewOp>(user))
        worklist.push_back(view.getResult());
      uses.push_back(position.lookup(top));
    }
  }
  llvm::sort(uses);
  return true;
}

/// Moves `c.alloc`'s data to the host pool over its gap: the peak spans
/// ops [peak, compute], `distance` ops of slack on each side.
void swapOver(const Candidate &c, Block &block, ArrayRef<Operation *> ops,
              int64_t peak, int64_t compute, int64_t distance) {
  AllocOp alloc = c.alloc;
  Value buffer = alloc.getBuffer();
  Type type = buffer.getType();
  MLIRContext *ctx = alloc.getContext();
  Location loc = alloc.getLoc();
  alloc->setAttr(kSwappedAttr, UnitAttr::get(ctx));

  // Where the copies go: out after the use before the gap, its wait at
  // most `distance` ops later (before the peak); in at most `distance` ops
  // before the use after the gap (after the peak), its wait right before
  // that use.
  int64_t waitOutAfter = std::min(c.before + distance, peak - 1);
  int64_t swapInBefore = std::max(compute + 1, c.after - distance);
  Operation *useAfter = ops[c.after];

  // The uses after the gap, before anything moves.
  SmallVector<OpOperand *> lateUses;
  SmallVector<ViewOp> earlyViews; // views defined before the swap-in
  SmallVector<Value> worklist{buffer};
  DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(ops))
    position[op] = static_cast<int64_t>(i);
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *top = block.findAncestorOpInBlock(*use.getOwner());
      int64_t at = position.lookup(top);
      if (auto view = dyn_cast<ViewOp>(use.getOwner())) {
        worklist.push_back(view.getResult());
        if (at < swapInBefore)
          earlyViews.push_back(view);
        else
          lateUses.push_back(&use);
        continue;
      }
      if (at >= swapInBefore)
        lateUses.push_back(&use);
    }
  }

  OpBuilder b(ctx);
  b.setInsertionPointAfter(ops[c.before]);
  auto host = AllocOp::create(b, loc, type, b.getStringAttr("swap"),
                              IntegerAttr());
  auto out = SwapOutOp::create(b, loc, HandleType::get(ctx), buffer,
                               host.getBuffer());
  if (waitOutAfter > c.before)
    b.setInsertionPointAfter(ops[waitOutAfter]);
  WaitOp::create(b, loc, out.getHandle());

  b.setInsertionPoint(ops[swapInBefore]);
  auto fresh = AllocOp::create(b, loc, type, alloc.getCategoryAttr(),
                               IntegerAttr());
  fresh->setAttr(kSwappedAttr, UnitAttr::get(ctx));
  auto in = SwapInOp::create(b, loc, HandleType::get(ctx), host.getBuffer(),
                             fresh.getBuffer());
  b.setInsertionPoint(useAfter);
  WaitOp::create(b, loc, in.getHandle());

  // Views of the old buffer that late ops read: the same views of the new
  // one, right after the wait (they are only pointers).
  IRMapping mapping;
  mapping.map(buffer, fresh.getBuffer());
  llvm::sort(earlyViews, [&](ViewOp a, ViewOp b) {
    return position.lookup(a) < position.lookup(b);
  });
  for (ViewOp view : earlyViews)
    b.clone(*view, mapping);
  for (OpOperand *use : lateUses)
    use->set(mapping.lookupOrDefault(use->get()));
  // Views (old or new) that nothing reads any more go.
  for (ViewOp view : llvm::reverse(earlyViews)) {
    if (auto copy = mapping.lookupOrNull(view.getResult()))
      if (copy.use_empty())
        copy.getDefiningOp()->erase();
    if (view.getResult().use_empty())
      view->erase();
  }
}

struct LoomSwapPass : public loomrt::impl::LoomSwapBase<LoomSwapPass> {
  using Base::Base;

  void runOnOperation() override {
    if (deviceMemory < 0 || prefetchDistance < 1) {
      getOperation().emitError("loom-swap: device-memory must be >= 0 and "
                               "prefetch-distance >= 1");
      return signalPassFailure();
    }
    if (deviceMemory == 0)
      return; // no budget: nothing to fit
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("loom-swap: expects a single-block function");
        return signalPassFailure();
      }
      if (failed(fit(func)))
        return signalPassFailure();
    }
  }

  LogicalResult fit(func::FuncOp func) {
    Block &block = func.getBody().front();
    int64_t swapped = 0, swappedBytes = 0;
    FunctionMemory before = analyzeFunctionMemory(func, alignment);
    FunctionMemory memory = before;
    // Persistent buffers over the budget: no swap can fit the function,
    // and the memory plan's message says so.
    if (before.persistentBytes() > deviceMemory)
      return mlir::emitError(func.getLoc(), "loom-swap: ")
             << checkDeviceBudget(before, deviceMemory);
    // Each round moves one buffer live at the peak; a function has finitely
    // many buffers, and a moved one is not moved again.
    while (memory.devicePeakBytes() > deviceMemory && memory.peakOp >= 0) {
      SmallVector<Operation *> ops;
      DenseMap<Operation *, int64_t> position;
      for (Operation &op : block) {
        position[&op] = static_cast<int64_t>(ops.size());
        ops.push_back(&op);
      }
      // The peak begins at an op (often the alloc of a buffer about to be
      // written) and lasts at least until the next op that computes: a
      // buffer moves only if it is out over [peak, compute].
      int64_t peak = memory.peakOp, compute = peak;
      while (compute + 1 < static_cast<int64_t>(ops.size()) &&
             isa<AllocOp, ViewOp>(ops[compute]))
        ++compute;
      std::optional<Candidate> best;
      for (Operation *op : ops) {
        auto alloc = dyn_cast<AllocOp>(op);
        if (!alloc || alloc.getCategory() != "activation" ||
            alloc->hasAttr(kSwappedAttr))
          continue;
        SmallVector<int64_t> uses;
        if (!usePositions(alloc, block, position, uses) || uses.empty())
          continue;
        // The gap that spans the peak, if the buffer is live there.
        if (uses.front() >= peak || uses.back() <= compute)
          continue;
        auto next = llvm::upper_bound(uses, compute);
        int64_t after = *next, before = *std::prev(next);
        if (before >= peak || after <= compute)
          continue; // used during the peak itself
        Candidate c{alloc, bufferBytes(alloc.getType()), before, after};
        if (!best || c.bytes > best->bytes)
          best = c;
      }
      if (!best)
        break;
      swapOver(*best, block, ops, peak, compute, prefetchDistance);
      ++swapped;
      swappedBytes += best->bytes;
      memory = analyzeFunctionMemory(func, alignment);
    }
    if (memory.devicePeakBytes() <= deviceMemory)
      return success();
    return mlir::emitError(func.getLoc(), "loom-swap: ")
           << memory.describe() << " still needs " << memory.devicePeakBytes()
           << " bytes of device memory at its peak (" << before.devicePeakBytes()
           << " before swapping), over the --device-memory budget of "
           << static_cast<int64_t>(deviceMemory) << " bytes, after offloading "
           << swapped << " activation buffer(s) of " << swappedBytes
           << " bytes: no activation live at the peak is left to offload "
              "(live there: activations "
           << memory.category("activation") << ", gradients "
           << memory.category("gradient") << ", optimizer "
           << memory.category("optimizer") << ", workspace "
           << memory.category("workspace")
           << "); use more pipeline stages (--mesh pp=N), smaller "
              "micro-batches, or a larger budget";
  }
};

} // namespace
