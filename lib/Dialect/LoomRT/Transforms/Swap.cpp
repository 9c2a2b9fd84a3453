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
// With `peer` the bytes go to a neighbouring pipeline stage with room
// instead (Mbapp): a send over the pipeline link where the host copy
// would start, a receive where it would come back, and on the neighbour
// a receive into a buffer of category "peer" and the send back, placed by
// the two programs' own messages so that neither waits for the other in
// a cycle (see insertStash).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/MeshGrid.h"
#include "loom/Dialect/LoomRT/Transforms/MemoryPlan.h"
#include "loom/Dialect/LoomRT/Transforms/Passes.h"
#include "loom/Dialect/LoomRT/Transforms/PipelineMessages.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include <functional>
#include <limits>
#include <map>

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

/// Where a move's copies go, as positions in the function's op list: out
/// right after the use before the gap (`before`), its wait after op
/// `waitOutAfter` (before the peak); in right before op `inBefore` (after
/// the peak), its wait right before the use after the gap (`after`).
struct Placement {
  int64_t before, waitOutAfter, inBefore, after;
};

/// `distance` ops of slack on each side of the peak, which spans ops
/// [peak, compute].
Placement place(const Candidate &c, int64_t peak, int64_t compute,
                int64_t distance) {
  return {c.before, std::min(c.before + distance, peak - 1),
          std::max(compute + 1, c.after - distance), c.after};
}

/// The compute a host copy can hide behind, from the ops' work
/// (loomrt::computeWork) on a roofline: a GEMM's flops at `gemmFlops` (and
/// its epilogue's pass), any other op's bytes at `memoryBandwidth` (or its
/// arithmetic, if slower), plus a launch each. Enabled when the link and
/// both rates are known.
struct CopyTiming {
  double hostLink = 0, gemmFlops = 0, memoryBandwidth = 0, launch = 0;
  bool enabled() const {
    return hostLink > 0 && gemmFlops > 0 && memoryBandwidth > 0;
  }
  double opSeconds(Operation *op) const {
    if (!isComputeOp(op))
      return 0;
    OpWork work = computeWork(op);
    auto pass = [&](double flops, double bytes) {
      return std::max(flops / gemmFlops, bytes / memoryBandwidth);
    };
    return (work.gemm ? work.flops / gemmFlops +
                            pass(work.epilogueFlops, work.epilogueBytes)
                      : pass(work.flops, work.bytes)) +
           launch;
  }
};

/// Timed: as many ops on each side as it takes for their compute to cover
/// the copy of `c.bytes` over the host link (the copy out waited on as
/// early, the copy in started as late, as hides it), within the same
/// bounds as `place`. A side whose whole stretch of the gap cannot hide the
/// copy gets `distance` ops, as untimed: stretching it further would only
/// hold the buffer longer (a copy in started right after the peak makes
/// the next one) for part of the copy.
/// `bothHidden`, when given: whether both copies hide.
Placement placeTimed(const Candidate &c, int64_t peak, int64_t compute,
                     ArrayRef<Operation *> ops, const CopyTiming &timing,
                     int64_t distance, bool *bothHidden = nullptr) {
  double copy = static_cast<double>(c.bytes) / timing.hostLink;
  Placement p = place(c, peak, compute, distance);
  int64_t waitOutAfter = c.before;
  double hidden = 0;
  while (hidden < copy && waitOutAfter < peak - 1)
    hidden += timing.opSeconds(ops[++waitOutAfter]);
  bool outHidden = hidden >= copy;
  if (outHidden)
    p.waitOutAfter = waitOutAfter;
  int64_t inBefore = c.after;
  hidden = 0;
  while (hidden < copy && inBefore > compute + 1)
    hidden += timing.opSeconds(ops[--inBefore]);
  if (hidden >= copy)
    p.inBefore = inBefore;
  if (bothHidden)
    *bothHidden = outHidden && hidden >= copy;
  return p;
}

/// How a moved buffer leaves and comes back: `out` starts copying it away
/// (returns the handle), `in` starts bringing it into the fresh buffer.
struct Route {
  std::function<Value(OpBuilder &, Location, Value)> out, in;
};

/// Moves `c.alloc`'s data away over its gap by `route`, at `p`.
void swapOver(const Candidate &c, Block &block, ArrayRef<Operation *> ops,
              const Placement &p, const Route &route) {
  AllocOp alloc = c.alloc;
  Value buffer = alloc.getBuffer();
  Type type = buffer.getType();
  MLIRContext *ctx = alloc.getContext();
  Location loc = alloc.getLoc();
  alloc->setAttr(kSwappedAttr, UnitAttr::get(ctx));
  int64_t swapInBefore = p.inBefore;
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
  Value out = route.out(b, loc, buffer);
  if (p.waitOutAfter > c.before)
    b.setInsertionPointAfter(ops[p.waitOutAfter]);
  WaitOp::create(b, loc, out);

  b.setInsertionPoint(ops[swapInBefore]);
  auto fresh = AllocOp::create(b, loc, type, alloc.getCategoryAttr(),
                               IntegerAttr());
  fresh->setAttr(kSwappedAttr, UnitAttr::get(ctx));
  Value in = route.in(b, loc, fresh.getBuffer());
  b.setInsertionPoint(useAfter);
  WaitOp::create(b, loc, in);

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

/// The ops of `block` in order, and their positions.
void listOps(Block &block, SmallVectorImpl<Operation *> &ops,
             DenseMap<Operation *, int64_t> &position) {
  for (Operation &op : block) {
    position[&op] = static_cast<int64_t>(ops.size());
    ops.push_back(&op);
  }
}

/// The largest activation buffer live at the peak (ops [peak, compute])
/// without being used there, not yet moved nor in `refused`; with `hides`,
/// the largest of those whose copies it says hide, if any.
std::optional<Candidate>
findCandidate(Block &block, ArrayRef<Operation *> ops,
              const DenseMap<Operation *, int64_t> &position, int64_t peak,
              int64_t compute,
              const llvm::SmallPtrSetImpl<Operation *> &refused,
              llvm::function_ref<bool(const Candidate &)> hides = nullptr) {
  std::optional<Candidate> best;
  bool bestHides = false;
  for (Operation *op : ops) {
    auto alloc = dyn_cast<AllocOp>(op);
    if (!alloc || alloc.getCategory() != "activation" ||
        alloc->hasAttr(kSwappedAttr) || refused.contains(op))
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
    bool h = hides && hides(c);
    if (!best || (h && !bestHides) ||
        (h == bestHides && c.bytes > best->bytes)) {
      best = c;
      bestHides = h;
    }
  }
  return best;
}

/// The peak spans ops [peak, compute]: it begins at an op (often the alloc
/// of a buffer about to be written) and lasts at least until the next op
/// that computes, and until the first buffer live at it is last used (a
/// buffer brought back before then would be live at the peak again).
int64_t peakEnd(Block &block, ArrayRef<Operation *> ops,
                const DenseMap<Operation *, int64_t> &position, int64_t peak) {
  int64_t compute = peak;
  while (compute + 1 < static_cast<int64_t>(ops.size()) &&
         isa<AllocOp, ViewOp>(ops[compute]))
    ++compute;
  int64_t firstDeath = std::numeric_limits<int64_t>::max();
  for (Operation *op : ops.take_front(peak + 1)) {
    auto alloc = dyn_cast<AllocOp>(op);
    SmallVector<int64_t> uses;
    if (alloc && usePositions(alloc, block, position, uses) &&
        !uses.empty() && uses.back() >= peak)
      firstDeath = std::min(firstDeath, uses.back());
  }
  if (firstDeath != std::numeric_limits<int64_t>::max())
    compute = std::max(compute, firstDeath);
  return compute;
}

/// The pipeline messages of a stage program, by (peer stage, tag): the
/// positions of each send's start and of the wait on it, and of each
/// receive's post and of the wait on it. A wait on a receive completes once
/// the peer started the send; a wait on a send once the peer posted the
/// receive (a message past MPI's eager limit).
struct Messages {
  using Key = std::pair<int64_t, int64_t>;
  std::map<Key, int64_t> sendAt, sendWaitAt, recvAt, recvWaitAt;
  int64_t maxTag = -1;
};

Messages collectMessages(func::FuncOp func) {
  Messages m;
  for (const MessageEvent &e : collectPipelineMessages(func)) {
    Messages::Key key{e.peer, e.tag};
    auto at = static_cast<int64_t>(e.at);
    switch (e.kind) {
    case MessageEvent::Kind::Send:
      m.sendAt[key] = at;
      break;
    case MessageEvent::Kind::Recv:
      m.recvAt[key] = at;
      break;
    case MessageEvent::Kind::WaitSend:
      m.sendWaitAt[key] = at;
      break;
    case MessageEvent::Kind::WaitRecv:
      m.recvWaitAt[key] = at;
      break;
    }
    m.maxTag = std::max(m.maxTag, key.second);
  }
  return m;
}

/// How the waits of one stage program depend on another's actions.
struct Dependences {
  const Messages &self, &other;
  int64_t selfStage, otherStage, selfEnd;

  /// Calls `f(otherAt, selfAt)` for each message between the two stages
  /// found in both maps: `other`'s op on it (keyed by `self`'s stage) and
  /// `self`'s (keyed by `other`'s).
  template <typename F>
  void forEachMatch(const std::map<Messages::Key, int64_t> &otherOps,
                    const std::map<Messages::Key, int64_t> &selfOps,
                    F f) const {
    for (const auto &[key, at] : otherOps)
      if (key.first == selfStage)
        if (auto it = selfOps.find({otherStage, key.second});
            it != selfOps.end())
          f(at, it->second);
  }

  /// The first wait of `self` that needs `other` to act (start a send to
  /// it, post a receive from it) at or after position `from` of `other`;
  /// `selfEnd` when none does.
  int64_t firstWaitOnOtherFrom(int64_t from) const {
    int64_t first = selfEnd;
    auto take = [&](int64_t otherAt, int64_t selfWait) {
      if (otherAt >= from)
        first = std::min(first, selfWait);
    };
    forEachMatch(other.sendAt, self.recvWaitAt, take);
    forEachMatch(other.recvAt, self.sendWaitAt, take);
    return first;
  }

  /// The last action of `self` (a send started to `other`, a receive
  /// posted from it) that a wait of `other` before position `before`
  /// needs; -1 when none.
  int64_t lastActionOtherNeedsBefore(int64_t before) const {
    int64_t last = -1;
    auto take = [&](int64_t otherWait, int64_t selfAction) {
      if (otherWait < before)
        last = std::max(last, selfAction);
    };
    forEachMatch(other.recvWaitAt, self.sendAt, take);
    forEachMatch(other.sendWaitAt, self.recvAt, take);
    return last;
  }
};

/// Positions (an op's index: "right before it") where the neighbour of a
/// stage receives a moved buffer and sends it back, or nullopt when no
/// place is safe. The stage sends it right after op p.before, waits for
/// that send after p.waitOutAfter, posts the receive of it back before
/// p.inBefore and waits for it before p.after. With `n` the neighbour's
/// dependences on the stage:
/// * it posts its receive before any wait that needs the stage past its
///   wait for the send (which needs the receive posted);
/// * it waits for the data only after every action the stage needs to
///   reach its send;
/// * it sends it back after that wait, before any wait that needs the
///   stage past its wait for the data, and as late as the last action the
///   stage needs before posting its receive (the bytes travel with it);
/// * it waits for the send back after every action the stage needs to
///   reach that post, and by its first wait that needs the stage past it.
struct StashPlaces {
  int64_t post, wait, sendBack, sendBackWait;
};

std::optional<StashPlaces> placeStash(const Dependences &n,
                                      const Placement &p) {
  int64_t sendAt = p.before + 1, waitOutAt = p.waitOutAfter + 1;
  StashPlaces s;
  s.post = n.firstWaitOnOtherFrom(waitOutAt);
  s.wait = std::max(s.post, n.lastActionOtherNeedsBefore(sendAt) + 1);
  int64_t backLimit = n.firstWaitOnOtherFrom(p.after);
  if (s.wait > backLimit)
    return std::nullopt;
  int64_t needed = n.lastActionOtherNeedsBefore(p.inBefore);
  s.sendBack = std::clamp(needed, s.wait, backLimit);
  s.sendBackWait = std::max({n.firstWaitOnOtherFrom(p.inBefore), s.sendBack,
                             needed + 1});
  if (s.sendBackWait > n.selfEnd)
    return std::nullopt;
  return s;
}

struct LoomSwapPass : public loomrt::impl::LoomSwapBase<LoomSwapPass> {
  using Base::Base;

  /// Messages of peer moves whose neighbour's side is in the IR but whose
  /// own side is not yet (an outer move waiting for its neighbour to make
  /// room): (stage, message event), checked with every nested move.
  SmallVector<std::pair<int64_t, MessageEvent>> pending;
  /// Handles of those events (negative: the IR's are not).
  int64_t lastVirtualHandle = 0;
  /// Peer placements refused because they would close a cycle of waits.
  int64_t cyclesAvoided = 0;

  /// Whether the stage programs, with the `pending` messages and `side`,
  /// could wait for each other forever (findPipelineDeadlock).
  bool deadlocks(ArrayRef<func::FuncOp> stages,
                 ArrayRef<std::pair<int64_t, MessageEvent>> side) const {
    SmallVector<SmallVector<MessageEvent>> events;
    for (func::FuncOp stage : stages)
      events.push_back(collectPipelineMessages(stage));
    using Pending = std::pair<int64_t, MessageEvent>;
    for (const Pending &p : llvm::concat<const Pending>(pending, side))
      events[p.first].push_back(p.second);
    auto before = [](const MessageEvent &a, const MessageEvent &b) {
      return a.at < b.at;
    };
    for (SmallVector<MessageEvent> &list : events)
      llvm::stable_sort(list, before);
    return !findPipelineDeadlock(events).empty();
  }

  void runOnOperation() override {
    if (deviceMemory < 0 || prefetchDistance < 1 || hostLink < 0 ||
        gemmFlops < 0 || memoryBandwidth < 0 || launch < 0) {
      getOperation().emitError("loom-swap: device-memory must be >= 0, "
                               "prefetch-distance >= 1, and host-link, "
                               "gemm-flops, memory-bandwidth and launch "
                               ">= 0");
      return signalPassFailure();
    }
    if (deviceMemory == 0)
      return; // no budget: nothing to fit
    pending.clear();
    lastVirtualHandle = 0;
    cyclesAvoided = 0;
    SmallVector<func::FuncOp> funcs;
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("loom-swap: expects a single-block function");
        return signalPassFailure();
      }
      funcs.push_back(func);
    }
    if (!peer) {
      for (func::FuncOp func : funcs)
        if (failed(fit(func)))
          return signalPassFailure();
      return;
    }
    // Peer: the stage programs in stage order.
    std::string error;
    Operation *at = nullptr;
    FailureOr<SmallVector<func::FuncOp>> ordered =
        mlir::loom::getStagePrograms(getOperation(), error, at);
    if (failed(ordered) || ordered->size() < 2) {
      if (succeeded(ordered) || !error.empty())
        at->emitError("loom-swap: peer sends activations to a neighbouring "
                      "pipeline stage: the module must hold two or more "
                      "stage programs (loom.stage 0..P-1; --mesh pp=N)")
            << (error.empty() ? std::string() : ": " + error);
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> stages = std::move(*ordered);
    for (int64_t k = 0, e = static_cast<int64_t>(stages.size()); k < e; ++k)
      if (failed(fitPeer(stages, k)))
        return signalPassFailure();
  }

  /// What a candidate's route is: nullopt when it cannot go, with `why`.
  using RouteFor = llvm::function_ref<std::optional<Route>(
      const Candidate &, const Placement &, ArrayRef<Operation *>,
      std::string &why)>;

  /// Moves the buffers of `func` live at its peak, each by `routeFor`,
  /// until it fits the budget; `verb` names the moves in the error (none
  /// when `quiet`: a trial whose failure the caller handles).
  LogicalResult fitWith(func::FuncOp func, StringRef verb, RouteFor routeFor,
                        bool quiet = false) {
    Block &block = func.getBody().front();
    int64_t moved = 0, movedBytes = 0;
    FunctionMemory before = analyzeFunctionMemory(func, alignment);
    FunctionMemory memory = before;
    // Persistent buffers over the budget: no move can fit the function,
    // and the memory plan's message says so.
    if (before.persistentBytes() > deviceMemory)
      return quiet ? failure()
                   : mlir::emitError(func.getLoc(), "loom-swap: ")
                         << checkDeviceBudget(before, deviceMemory);
    llvm::SmallPtrSet<Operation *, 4> refused;
    std::string why; // why the last refused buffer could not go
    // Host copies are timed when the rates are given; peer transfers take
    // the pipeline link, which they are not timed on.
    CopyTiming timing{hostLink, gemmFlops, memoryBandwidth, launch};
    bool timed = !peer && timing.enabled();
    // Each round moves one buffer live at the peak or refuses it; a
    // function has finitely many buffers, and none is tried twice.
    while (memory.devicePeakBytes() > deviceMemory && memory.peakOp >= 0) {
      SmallVector<Operation *> ops;
      DenseMap<Operation *, int64_t> position;
      listOps(block, ops, position);
      int64_t peak = memory.peakOp,
              compute = peakEnd(block, ops, position, peak);
      // Timed, a buffer whose copies hide goes before a larger one's that
      // would not.
      auto hides = [&](const Candidate &c) {
        bool hidden = false;
        placeTimed(c, peak, compute, ops, timing, prefetchDistance, &hidden);
        return hidden;
      };
      std::optional<Candidate> best =
          findCandidate(block, ops, position, peak, compute, refused,
                        timed ? llvm::function_ref<bool(const Candidate &)>(
                                    hides)
                              : nullptr);
      if (!best)
        break;
      Placement p = timed
                        ? placeTimed(*best, peak, compute, ops, timing,
                                     prefetchDistance)
                        : place(*best, peak, compute, prefetchDistance);
      std::optional<Route> route = routeFor(*best, p, ops, why);
      if (!route) {
        refused.insert(best->alloc);
        continue;
      }
      swapOver(*best, block, ops, p, *route);
      ++moved;
      movedBytes += best->bytes;
      memory = analyzeFunctionMemory(func, alignment);
    }
    if (memory.devicePeakBytes() <= deviceMemory)
      return success();
    if (quiet)
      return failure();
    InFlightDiagnostic diag = mlir::emitError(func.getLoc(), "loom-swap: ");
    diag << memory.describe() << " still needs " << memory.devicePeakBytes()
         << " bytes of device memory at its peak (" << before.devicePeakBytes()
         << " before swapping), over the --device-memory budget of "
         << static_cast<int64_t>(deviceMemory) << " bytes, after " << verb
         << " " << moved << " activation buffer(s) of " << movedBytes
         << " bytes: ";
    if (!why.empty())
      diag << why;
    else
      diag << "no activation live at the peak is left to offload (live "
              "there: activations "
           << memory.category("activation") << ", gradients "
           << memory.category("gradient") << ", optimizer "
           << memory.category("optimizer") << ", workspace "
           << memory.category("workspace") << ")";
    return diag << "; use more pipeline stages (--mesh pp=N), smaller "
                   "micro-batches, or a larger budget";
  }

  /// The route to the host pool (a swap_out into a buffer of category
  /// "swap", a swap_in back).
  static std::optional<Route> toHost(const Candidate &, const Placement &,
                                     ArrayRef<Operation *>, std::string &) {
    auto host = std::make_shared<Value>();
    return Route{
        [host](OpBuilder &b, Location loc, Value buffer) -> Value {
          *host = AllocOp::create(b, loc, buffer.getType(),
                                  b.getStringAttr("swap"), IntegerAttr())
                      .getBuffer();
          return SwapOutOp::create(b, loc, HandleType::get(b.getContext()),
                                   buffer, *host)
              .getHandle();
        },
        [host](OpBuilder &b, Location loc, Value fresh) -> Value {
          return SwapInOp::create(b, loc, HandleType::get(b.getContext()),
                                  *host, fresh)
              .getHandle();
        }};
  }

  /// Fits `func` by offloading activations to the host pool.
  LogicalResult fit(func::FuncOp func) {
    return fitWith(func, "offloading", toHost);
  }

  /// Fits stage `k` by sending activations to a neighbour with room. A
  /// neighbour without room is made room on by fitting it, with the
  /// activation it would hold, the same way but onwards (away from k):
  /// stage 0's excess can reach the last stage's room through the stages
  /// between. `from`: the stage whose activation k was given to hold (k
  /// sends only away from it), and then a failure is quiet.
  LogicalResult fitPeer(ArrayRef<func::FuncOp> stages, int64_t k,
                        int64_t from = -1) {
    func::FuncOp func = stages[k];
    // The neighbours away from `from`; with the host to fall back on, only
    // the next stage (under 1F1B the later stages hold fewer micro-batches).
    SmallVector<int64_t, 2> targets;
    for (int64_t n : {k - 1, k + 1})
      if (n >= 0 && n < static_cast<int64_t>(stages.size()) && n != from &&
          (from < 0 || (n - k) * (k - from) > 0) && (!hostFallback || n > k))
        targets.push_back(n);
    // A stage asked to make room with no stage beyond it cannot (the last
    // stage of a chain): say so before trying every buffer it has.
    if (from >= 0 && targets.empty())
      return failure();
    auto toNeighbour = [&](const Candidate &best, const Placement &p,
                           ArrayRef<Operation *>,
                           std::string &why) -> std::optional<Route> {
      // The one with the most room first.
      SmallVector<std::pair<int64_t, int64_t>> neighbours; // room, stage
      for (int64_t n : targets)
        neighbours.push_back({0, n});
      // (The analysis is the costly part of a try: only to choose.)
      if (neighbours.size() > 1) {
        for (auto &[room, n] : neighbours)
          room = static_cast<int64_t>(deviceMemory) -
                 analyzeFunctionMemory(stages[n], alignment).devicePeakBytes();
        llvm::sort(neighbours, std::greater<>());
      }
      int64_t cycles = cyclesAvoided;
      for (auto [room, target] : neighbours)
        if (std::optional<Route> route =
                moveTo(stages, k, target, best, p))
          return route;
      why = "no neighbouring stage has room for the next activation (" +
            std::to_string(best.bytes) +
            " bytes) under the budget, nor can make it by passing its own "
            "on";
      if (cyclesAvoided > cycles)
        why += " (or every place for its messages there would make the "
               "stages wait for each other forever)";
      return std::nullopt;
    };
    // --swap balance: at the top level, what no neighbour takes goes to
    // the host pool.
    auto toNeighbourOrHost = [&](const Candidate &best, const Placement &p,
                                 ArrayRef<Operation *> ops,
                                 std::string &why) -> std::optional<Route> {
      if (std::optional<Route> route = toNeighbour(best, p, ops, why))
        return route;
      why.clear(); // it goes after all
      return toHost(best, p, ops, why);
    };
    if (hostFallback && from < 0)
      return fitWith(func, "sending to its neighbours or offloading",
                     toNeighbourOrHost);
    return fitWith(func, "sending to its neighbours", toNeighbour,
                   /*quiet=*/from >= 0);
  }

  /// Gives `best` (of stage k, moved at `p`) to stage `target` to hold:
  /// its receive and send back placed in target's program; when target
  /// then exceeds the budget, it passes its own activations onwards
  /// (fitPeer). The route of k's side, or nullopt (target unchanged but
  /// for what it passed on).
  std::optional<Route> moveTo(ArrayRef<func::FuncOp> stages, int64_t k,
                              int64_t target, const Candidate &best,
                              const Placement &p) {
    func::FuncOp self = stages[k];
    MLIRContext *ctx = self.getContext();
    auto handle = HandleType::get(ctx);
    const int16_t pp[] = {static_cast<int16_t>(::loom::MeshAxis::Pp)};
    auto send = [=](OpBuilder &b, Location loc, Value buffer, int64_t peer,
                    int64_t tag) {
      return SendStartOp::create(b, loc, handle, buffer,
                                 mlir::loom::kMeshGridName, pp,
                                 static_cast<uint64_t>(peer),
                                 static_cast<uint64_t>(tag));
    };
    auto recv = [=](OpBuilder &b, Location loc, Value buffer, int64_t peer,
                    int64_t tag) {
      return RecvStartOp::create(b, loc, handle, buffer,
                                 mlir::loom::kMeshGridName, pp,
                                 static_cast<uint64_t>(peer),
                                 static_cast<uint64_t>(tag));
    };
    // The neighbour's side first: where it is safe, and whether the
    // neighbour still fits with it.
    func::FuncOp neighbour = stages[target];
    SmallVector<Operation *> nOps;
    DenseMap<Operation *, int64_t> nPosition;
    listOps(neighbour.getBody().front(), nOps, nPosition);
    Messages onK = collectMessages(self), onN = collectMessages(neighbour);
    std::optional<StashPlaces> places = placeStash(
        Dependences{onN, onK, target, k, static_cast<int64_t>(nOps.size()) - 1},
        p);
    if (!places)
      return std::nullopt; // no place is safe from a cycle of waits
    int64_t tag = std::max(onK.maxTag, onN.maxTag) + 1;
    AllocOp moved = best.alloc;
    Location loc = moved.getLoc();
    OpBuilder b(ctx);
    b.setInsertionPoint(nOps[places->post]);
    auto stash = AllocOp::create(b, loc, moved.getType(),
                                 b.getStringAttr("peer"), IntegerAttr());
    RecvStartOp in = recv(b, loc, stash.getBuffer(), k, tag);
    b.setInsertionPoint(nOps[places->wait]);
    WaitOp inWait = WaitOp::create(b, loc, in.getHandle());
    b.setInsertionPoint(nOps[places->sendBack]);
    SendStartOp back = send(b, loc, stash.getBuffer(), k, tag + 1);
    b.setInsertionPoint(nOps[places->sendBackWait]);
    WaitOp backWait = WaitOp::create(b, loc, back.getHandle());
    auto undo = [&] {
      for (Operation *op : {backWait.getOperation(), back.getOperation(),
                            inWait.getOperation(), in.getOperation(),
                            stash.getOperation()})
        op->erase();
      return std::nullopt;
    };
    // k's side, as swapOver will place it (after op p.before, its wait
    // after op p.waitOutAfter; the receive back before op p.inBefore, its
    // wait before op p.after): no stage may wait forever with it.
    SmallVector<std::pair<int64_t, MessageEvent>> side;
    auto event = [&](MessageEvent::Kind kind, int64_t tagOf, double at) {
      MessageEvent e;
      e.kind = kind;
      e.peer = target;
      e.tag = tagOf;
      // A wait follows its start.
      e.handle = e.isWait() ? side.back().second.handle : --lastVirtualHandle;
      e.at = at;
      side.push_back({k, e});
    };
    event(MessageEvent::Kind::Send, tag, p.before + 0.25);
    event(MessageEvent::Kind::WaitSend, tag, p.waitOutAfter + 0.5);
    event(MessageEvent::Kind::Recv, tag + 1, p.inBefore - 0.5);
    event(MessageEvent::Kind::WaitRecv, tag + 1, p.after - 0.25);
    if (deadlocks(stages, side)) {
      ++cyclesAvoided;
      return undo();
    }
    // Over the budget with it, the neighbour passes its own activations
    // on (their placements checked with k's side pending); when that
    // fails, the buffer stays. Removing a matched pair of messages never
    // makes a program wait longer, so what the neighbour passed on stays
    // free of cycles.
    if (analyzeFunctionMemory(neighbour, alignment).devicePeakBytes() >
        deviceMemory) {
      size_t depth = pending.size();
      pending.append(side.begin(), side.end());
      bool fits = succeeded(fitPeer(stages, target, /*from=*/k));
      pending.resize(depth);
      if (!fits)
        return undo();
    }
    return Route{[=](OpBuilder &b, Location loc, Value buffer) -> Value {
                   return send(b, loc, buffer, target, tag).getHandle();
                 },
                 [=](OpBuilder &b, Location loc, Value fresh) -> Value {
                   return recv(b, loc, fresh, target, tag + 1).getHandle();
                 }};
  }
};

} // namespace
