//===- MemoryPlan.cpp - Static arena assignment for loomrt buffers -------===//

#include "loom/Dialect/LoomRT/Transforms/Passes.h"
#include "loom/Dialect/Loom/IR/LoomDialect.h"

#include "loom/Support/AtomicFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include "llvm/Support/Debug.h"

#include <map>

#define DEBUG_TYPE "loom-memory-plan"

namespace mlir {
namespace loomrt {
#define GEN_PASS_DEF_LOOMMEMORYPLAN
#include "loom/Dialect/LoomRT/Transforms/Passes.h.inc"
} // namespace loomrt
} // namespace mlir

using namespace mlir;
using namespace mlir::loomrt;

namespace {

int64_t bufferBytes(Type type) {
  auto memref = cast<MemRefType>(type);
  int64_t bits = memref.getElementType().getIntOrFloatBitWidth();
  int64_t elementBytes = bits == 1 ? 1 : bits / 8;
  return memref.getNumElements() * elementBytes;
}

struct Interval {
  AllocOp alloc;
  int64_t start, end; // op positions, inclusive
  int64_t bytes;      // aligned
  int64_t offset = -1;
};

/// The plan of one function.
struct FunctionPlan {
  int64_t arenaBytes = 0;
  int64_t peakLiveBytes = 0;
  std::map<std::string, int64_t> persistent;
  std::map<std::string, int64_t> atPeak;
};

FunctionPlan planFunction(func::FuncOp func, int64_t alignment) {
  FunctionPlan plan;
  Block &block = func.getBody().front();
  DenseMap<Operation *, int64_t> position;
  int64_t next = 0;
  for (Operation &op : block)
    position[&op] = next++;

  // Live range of each alloc: the last use through any chain of views.
  SmallVector<Interval> intervals;
  for (Operation &op : block) {
    auto alloc = dyn_cast<AllocOp>(&op);
    if (!alloc)
      continue;
    int64_t end = position[alloc];
    SmallVector<Value> worklist{alloc.getBuffer()};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (Operation *user : value.getUsers()) {
        Operation *top = block.findAncestorOpInBlock(*user);
        end = std::max(end, position[top]);
        if (auto view = dyn_cast<ViewOp>(user))
          worklist.push_back(view.getResult());
        // An asynchronous operation (send, receive, all-reduce) uses its
        // buffer until the wait on its handle.
        for (Value result : user->getResults())
          if (isa<HandleType>(result.getType()))
            for (Operation *waiter : result.getUsers())
              end = std::max(end,
                             position[block.findAncestorOpInBlock(*waiter)]);
      }
    }
    int64_t bytes = llvm::alignTo(bufferBytes(alloc.getType()), alignment);
    intervals.push_back({alloc, position[alloc], end, bytes});
  }

  // Greedy placement, largest first.
  SmallVector<Interval *> order;
  for (Interval &interval : intervals)
    order.push_back(&interval);
  llvm::stable_sort(order, [](Interval *a, Interval *b) {
    if (a->bytes != b->bytes)
      return a->bytes > b->bytes;
    return a->start < b->start;
  });
  SmallVector<Interval *> placed;
  for (Interval *interval : order) {
    SmallVector<std::pair<int64_t, int64_t>> busy;
    for (Interval *other : placed)
      if (other->start <= interval->end && interval->start <= other->end)
        busy.push_back({other->offset, other->offset + other->bytes});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + interval->bytes <= begin)
        break;
      offset = std::max(offset, end);
    }
    interval->offset = offset;
    plan.arenaBytes = std::max(plan.arenaBytes, offset + interval->bytes);
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << interval->bytes
                            << " bytes (" << interval->alloc.getCategory()
                            << ") live over ops [" << interval->start << ", "
                            << interval->end << "] at offset " << offset
                            << "\n");
    placed.push_back(interval);
  }

  // Peak of live bytes (a sweep over op positions) and its composition.
  std::map<int64_t, SmallVector<Interval *>> starts, ends;
  for (Interval &interval : intervals) {
    starts[interval.start].push_back(&interval);
    ends[interval.end].push_back(&interval);
  }
  int64_t live = 0;
  llvm::SetVector<Interval *> liveSet;
  for (int64_t pos = 0; pos < next; ++pos) {
    for (Interval *interval : starts[pos]) {
      live += interval->bytes;
      liveSet.insert(interval);
    }
    if (live > plan.peakLiveBytes) {
      plan.peakLiveBytes = live;
      plan.atPeak.clear();
      for (Interval *interval : liveSet)
        plan.atPeak[interval->alloc.getCategory().str()] += interval->bytes;
    }
    for (Interval *interval : ends[pos]) {
      live -= interval->bytes;
      liveSet.remove(interval);
    }
  }

  // Persistent buffers, by what the arguments are.
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    int64_t bytes = bufferBytes(func.getArgument(i).getType());
    std::string category = "data";
    if (func.getArgAttr(i, "loomrt.result"))
      category = "results";
    else if (func.getArgAttr(i, mlir::loom::LoomDialect::getParamAttrName()))
      category = "params";
    else if (func.getArgAttr(i, mlir::loom::LoomDialect::getStateAttrName()))
      category = "optimizer_state";
    plan.persistent[category] += bytes;
  }

  // Write the plan into the IR: offsets and deallocs.
  OpBuilder b(func.getContext());
  for (Interval &interval : intervals) {
    interval.alloc.setOffsetAttr(b.getI64IntegerAttr(interval.offset));
    Operation *last = nullptr;
    for (Operation &op : block)
      if (position[&op] == interval.end)
        last = &op;
    // Never after the terminator: a buffer that is only allocated is dead
    // at once.
    if (last->hasTrait<OpTrait::IsTerminator>())
      b.setInsertionPoint(last);
    else
      b.setInsertionPointAfter(last);
    DeallocOp::create(b, interval.alloc.getLoc(), interval.alloc.getBuffer());
  }
  func->setAttr("loomrt.arena_bytes", b.getI64IntegerAttr(plan.arenaBytes));
  func->setAttr("loomrt.peak_live_bytes",
                b.getI64IntegerAttr(plan.peakLiveBytes));
  func->setAttr("loomrt.alignment", b.getI64IntegerAttr(alignment));
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] @" << func.getSymName()
                          << ": arena " << plan.arenaBytes
                          << " bytes, peak live " << plan.peakLiveBytes
                          << " bytes\n");
  return plan;
}

struct LoomMemoryPlanPass
    : public loomrt::impl::LoomMemoryPlanBase<LoomMemoryPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
      getOperation().emitError("loom-memory-plan: alignment must be a power "
                               "of two, got ")
          << alignment;
      return signalPassFailure();
    }
    llvm::json::Array functions;
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("loom-memory-plan: expects a single-block function");
        return signalPassFailure();
      }
      FunctionPlan plan = planFunction(func, alignment);
      llvm::json::Object persistent, atPeak;
      int64_t total = plan.peakLiveBytes;
      for (auto &[category, bytes] : plan.persistent) {
        persistent[category] = bytes;
        total += bytes;
      }
      for (auto &[category, bytes] : plan.atPeak)
        atPeak[category] = bytes;
      llvm::json::Object entry{
          {"function", func.getName().str()},
          {"arena_bytes", plan.arenaBytes},
          {"peak_live_bytes", plan.peakLiveBytes},
          {"persistent_bytes", std::move(persistent)},
          {"arena_at_peak_bytes", std::move(atPeak)},
          {"peak_bytes", total},
      };
      // What loom-recompute replays in the backward pass.
      if (auto recompute = func->getAttrOfType<DictionaryAttr>(
              ::mlir::loom::LoomDialect::RecomputeAttrHelper::getNameStr())) {
        llvm::json::Object counts;
        for (NamedAttribute attr : recompute) {
          if (auto text = dyn_cast<StringAttr>(attr.getValue()))
            counts[attr.getName().getValue()] = text.getValue().str();
          else if (auto number = dyn_cast<IntegerAttr>(attr.getValue()))
            counts[attr.getName().getValue()] = number.getInt();
        }
        entry["recompute"] = std::move(counts);
      }
      // What loom-overlap-split computes per sub-batch (origins `sub<i>.`).
      int64_t subBatches = 0, subBatchOps = 0;
      func.walk([&](Operation *op) {
        auto origin = op->getAttrOfType<StringAttr>("origin");
        if (!origin)
          return;
        StringRef text = origin.getValue();
        text.consume_front("recompute.");
        unsigned index = 0;
        if (!text.consume_front("sub") || text.consumeInteger(10, index) ||
            !text.starts_with("."))
          return;
        ++subBatchOps;
        subBatches = std::max<int64_t>(subBatches, index + 1);
      });
      if (subBatchOps > 0)
        entry["overlap_split"] = llvm::json::Object{
            {"sub_batches", subBatches}, {"ops", subBatchOps}};
      functions.push_back(std::move(entry));
    }
    if (report.empty())
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}",
                        llvm::json::Value(llvm::json::Object{
                            {"functions", std::move(functions)}}))
       << "\n";
    if (report == "-") {
      llvm::outs() << text;
      return;
    }
    std::string error = ::loom::writeFileAtomically(report, text);
    if (!error.empty()) {
      getOperation().emitError("loom-memory-plan: cannot write the report: ")
          << error;
      return signalPassFailure();
    }
  }
};

} // namespace
