//===- MemoryPlan.cpp - Static arena assignment for loomrt buffers -------===//

#include "loom/Dialect/LoomRT/Transforms/Passes.h"
#include "loom/Dialect/LoomRT/Transforms/MemoryPlan.h"
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

struct Interval {
  AllocOp alloc;
  int64_t start, end; // op positions, inclusive
  int64_t bytes;      // aligned
  int64_t offset = -1;
};

/// The intervals of one function, placed, and its figures.
struct Placement {
  SmallVector<Interval> intervals;
  DenseMap<Operation *, int64_t> position;
  int64_t numOps = 0;
  FunctionMemory memory;
};

/// Whether `alloc` is a buffer of the host pool (loom-swap).
bool isHostBuffer(AllocOp alloc) { return alloc.getCategory() == "swap"; }

/// Whether an asynchronous operation (send, receive, all-reduce: it returns
/// a handle; not a swap copy) uses `buffer` or a view of it.
bool isCommBuffer(Value buffer) {
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (auto view = dyn_cast<ViewOp>(user))
        worklist.push_back(view.getResult());
      if (isa<SwapOutOp, SwapInOp>(user))
        continue;
      for (Value result : user->getResults())
        if (isa<HandleType>(result.getType()))
          return true;
    }
  }
  return false;
}

Placement place(func::FuncOp func, int64_t alignment) {
  Placement p;
  FunctionMemory &plan = p.memory;
  plan.function = func.getSymName().str();
  if (auto stage = func->getAttrOfType<IntegerAttr>("loom.stage"))
    plan.stage = stage.getInt();
  Block &block = func.getBody().front();
  DenseMap<Operation *, int64_t> &position = p.position;
  int64_t next = 0;
  for (Operation &op : block)
    position[&op] = next++;
  p.numOps = next;

  // Live range of each alloc: the last use through any chain of views.
  SmallVector<Interval> &intervals = p.intervals;
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

  // Greedy placement, largest first, in each pool: the device arena, and
  // the host pool of loom-swap's buffers (category "swap").
  auto placePool = [&](bool host) {
    SmallVector<Interval *> order;
    for (Interval &interval : intervals)
      if (isHostBuffer(interval.alloc) == host)
        order.push_back(&interval);
    llvm::stable_sort(order, [](Interval *a, Interval *b) {
      if (a->bytes != b->bytes)
        return a->bytes > b->bytes;
      return a->start < b->start;
    });
    int64_t poolBytes = 0;
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
      poolBytes = std::max(poolBytes, offset + interval->bytes);
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << interval->bytes
                              << " bytes (" << interval->alloc.getCategory()
                              << ") live over ops [" << interval->start
                              << ", " << interval->end << "] at offset "
                              << offset << "\n");
      placed.push_back(interval);
    }
    return poolBytes;
  };
  plan.arenaBytes = placePool(/*host=*/false);
  plan.hostPeakBytes = placePool(/*host=*/true);

  // Peak of live bytes (a sweep over op positions) and its composition.
  std::map<int64_t, SmallVector<Interval *>> starts, ends;
  for (Interval &interval : intervals) {
    if (isHostBuffer(interval.alloc))
      continue;
    starts[interval.start].push_back(&interval);
    ends[interval.end].push_back(&interval);
  }
  int64_t live = 0, liveActivations = 0;
  llvm::SetVector<Interval *> liveSet;
  auto isActivation = [](Interval *interval) {
    return interval->alloc.getCategory() == "activation";
  };
  for (int64_t pos = 0; pos < next; ++pos) {
    for (Interval *interval : starts[pos]) {
      live += interval->bytes;
      if (isActivation(interval))
        liveActivations += interval->bytes;
      liveSet.insert(interval);
    }
    plan.activationPeakBytes =
        std::max(plan.activationPeakBytes, liveActivations);
    if (live > plan.peakLiveBytes) {
      plan.peakLiveBytes = live;
      plan.peakOp = pos;
      plan.arenaAtPeak.clear();
      plan.commAtPeakBytes = 0;
      for (Interval *interval : liveSet) {
        plan.arenaAtPeak[interval->alloc.getCategory().str()] +=
            interval->bytes;
        if (isCommBuffer(interval->alloc.getBuffer()))
          plan.commAtPeakBytes += interval->bytes;
      }
    }
    for (Interval *interval : ends[pos]) {
      live -= interval->bytes;
      if (isActivation(interval))
        liveActivations -= interval->bytes;
      liveSet.remove(interval);
    }
  }

  // Persistent buffers, by what the arguments are.
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    int64_t bytes = bufferBytes(func.getArgument(i).getType());
    std::string category = "data";
    // An update written in place shares its argument's buffer.
    if (func.getArgAttr(i, "loomrt.in_place"))
      continue;
    if (func.getArgAttr(i, "loomrt.result"))
      category = "results";
    else if (func.getArgAttr(i, mlir::loom::LoomDialect::getParamAttrName()) ||
             func.getArgAttr(i, mlir::loom::LoomDialect::getShadowOfAttrName()))
      category = "params"; // a weight's bf16 shadow counts with the weights
    else if (func.getArgAttr(i, mlir::loom::LoomDialect::getStateAttrName()))
      category = "optimizer_state";
    plan.persistent[category] += bytes;
  }
  return p;
}

/// Plans `func` and writes the plan into the IR: offsets, deallocs and the
/// function's figures.
FunctionMemory planFunction(func::FuncOp func, int64_t alignment) {
  Placement p = place(func, alignment);
  FunctionMemory &plan = p.memory;
  Block &block = func.getBody().front();
  OpBuilder b(func.getContext());
  // The ops by position (the deallocs inserted below come after them).
  SmallVector<Operation *> opAt;
  for (Operation &op : block)
    opAt.push_back(&op);
  for (Interval &interval : p.intervals) {
    interval.alloc.setOffsetAttr(b.getI64IntegerAttr(interval.offset));
    Operation *last = opAt[interval.end];
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
  func->setAttr("loomrt.device_peak_bytes",
                b.getI64IntegerAttr(plan.devicePeakBytes()));
  if (plan.hostPeakBytes > 0)
    func->setAttr("loomrt.host_arena_bytes",
                  b.getI64IntegerAttr(plan.hostPeakBytes));
  func->setAttr("loomrt.activation_peak_bytes",
                b.getI64IntegerAttr(plan.activationPeakBytes));
  func->setAttr("loomrt.alignment", b.getI64IntegerAttr(alignment));
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] @" << func.getSymName()
                          << ": arena " << plan.arenaBytes
                          << " bytes, peak live " << plan.peakLiveBytes
                          << " bytes, device peak " << plan.devicePeakBytes()
                          << " bytes\n");
  return plan;
}

} // namespace

//===----------------------------------------------------------------------===//
// FunctionMemory
//===----------------------------------------------------------------------===//

int64_t FunctionMemory::persistentBytes() const {
  int64_t total = 0;
  for (const auto &entry : persistent)
    total += entry.second;
  return total;
}

int64_t FunctionMemory::category(const std::string &name) const {
  auto it = persistent.find(name);
  if (it != persistent.end())
    return it->second;
  it = arenaAtPeak.find(name);
  return it != arenaAtPeak.end() ? it->second : 0;
}

std::string FunctionMemory::describe() const {
  if (stage >= 0)
    return "stage " + std::to_string(stage) + " (@" + function + ")";
  return "@" + function;
}

FunctionMemory mlir::loomrt::analyzeFunctionMemory(func::FuncOp func,
                                                   int64_t alignment) {
  return place(func, alignment).memory;
}

std::string mlir::loomrt::checkDeviceBudget(const FunctionMemory &m,
                                            int64_t deviceMemory,
                                            int64_t microbatches) {
  int64_t peak = m.devicePeakBytes();
  if (deviceMemory <= 0 || peak <= deviceMemory)
    return "";
  std::string budget = "the --device-memory budget of " +
                       std::to_string(deviceMemory) + " bytes";
  std::string persistent =
      "parameters " + std::to_string(m.category("params")) +
      ", optimizer state " + std::to_string(m.category("optimizer_state")) +
      ", updated parameters, state and loss " +
      std::to_string(m.category("results")) + ", input batch " +
      std::to_string(m.category("data"));
  std::string split = "split the parameters over more devices (more "
                      "pipeline stages: --mesh pp=N, or tensor parallelism: "
                      "--mesh tp=N) or use devices with more memory";
  if (m.paramsAndStateBytes() > deviceMemory)
    return m.describe() + ": its parameters and optimizer state alone need " +
           std::to_string(m.paramsAndStateBytes()) + " bytes (parameters " +
           std::to_string(m.category("params")) + ", optimizer state " +
           std::to_string(m.category("optimizer_state")) + "), over " +
           budget + "; nothing swappable can fix it (swap and recompute "
           "only shed activations): " + split;
  if (m.persistentBytes() > deviceMemory)
    return m.describe() + ": its persistent buffers alone need " +
           std::to_string(m.persistentBytes()) + " bytes (" + persistent +
           "), over " + budget +
           "; nothing swappable can fix it (swap and recompute only shed "
           "activations): " + split + ", or fewer rows per step";
  int64_t over = peak - deviceMemory;
  int64_t activations = m.category("activation");
  std::string text =
      m.describe() + " needs " + std::to_string(peak) +
      " bytes of device memory at its peak, over " + budget + " by " +
      std::to_string(over) + ": persistent " +
      std::to_string(m.persistentBytes()) + " (" + persistent +
      ") and the arena " + std::to_string(m.arenaBytes) +
      " (live at its peak: activations " + std::to_string(activations) +
      ", gradients " + std::to_string(m.category("gradient")) +
      (m.category("recompute") > 0
           ? ", recomputed " + std::to_string(m.category("recompute"))
           : std::string()) +
      ", optimizer " + std::to_string(m.category("optimizer")) +
      ", workspace " + std::to_string(m.category("workspace")) +
      "; communication buffers among them " +
      std::to_string(m.commAtPeakBytes) + "). The budget leaves " +
      std::to_string(deviceMemory - m.persistentBytes()) +
      " bytes for the arena; to fit, shed at least " + std::to_string(over) +
      " bytes of it: offload activations to host memory (--swap host), "
      "recompute them in the backward pass (--recompute), use more pipeline "
      "stages (--mesh pp=N: fewer layers per stage)";
  if (microbatches >= 1)
    text += ", or smaller micro-batches (activations scale with the rows "
            "of a micro-batch: --microbatches " +
            std::to_string(2 * microbatches) +
            " with half the rows each holds about " +
            std::to_string(activations / 2) + " bytes of activations at "
            "the peak)";
  if (activations < over)
    text += "; the activations live at the peak (" +
            std::to_string(activations) +
            " bytes) are fewer than the excess, so swap or recompute alone "
            "cannot fit it";
  return text;
}

namespace {

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
    if (deviceMemory < 0) {
      getOperation().emitError("loom-memory-plan: device-memory must be >= 0 "
                               "(0: no budget), got ")
          << static_cast<int64_t>(deviceMemory);
      return signalPassFailure();
    }
    llvm::json::Array functions;
    SmallVector<std::pair<func::FuncOp, std::string>> overBudget;
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("loom-memory-plan: expects a single-block function");
        return signalPassFailure();
      }
      FunctionMemory plan = planFunction(func, alignment);
      if (deviceMemory > 0)
        func->setAttr("loomrt.device_memory_bytes",
                      IntegerAttr::get(IntegerType::get(func.getContext(), 64),
                                       deviceMemory));
      llvm::json::Object persistent, atPeak;
      for (auto &[category, bytes] : plan.persistent)
        persistent[category] = bytes;
      for (auto &[category, bytes] : plan.arenaAtPeak)
        atPeak[category] = bytes;
      llvm::json::Object entry{
          {"function", func.getName().str()},
          {"arena_bytes", plan.arenaBytes},
          {"peak_live_bytes", plan.peakLiveBytes},
          {"persistent_bytes", std::move(persistent)},
          {"arena_at_peak_bytes", std::move(atPeak)},
          {"comm_at_peak_bytes", plan.commAtPeakBytes},
          {"activation_peak_bytes", plan.activationPeakBytes},
          {"peak_bytes", plan.peakBytes()},
          {"device_peak_bytes", plan.devicePeakBytes()},
          {"host_peak_bytes", plan.hostPeakBytes},
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
      if (plan.stage >= 0)
        entry["stage"] = plan.stage;
      functions.push_back(std::move(entry));
      int64_t microbatches = 1;
      if (auto m = func->getAttrOfType<IntegerAttr>("loom.microbatches"))
        microbatches = m.getInt();
      std::string over =
          checkDeviceBudget(plan, deviceMemory, microbatches);
      if (!over.empty())
        overBudget.push_back({func, over});
    }
    // The report first, so that a program over budget leaves its figures.
    if (failed(writeReport(std::move(functions))))
      return signalPassFailure();
    for (auto &[func, message] : overBudget)
      mlir::emitError(func.getLoc(), "loom-memory-plan: ") << message;
    if (!overBudget.empty())
      return signalPassFailure();
  }

  LogicalResult writeReport(llvm::json::Array functions) {
    if (report.empty())
      return success();
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}",
                        llvm::json::Value(llvm::json::Object{
                            {"device_memory", static_cast<int64_t>(deviceMemory)},
                            {"functions", std::move(functions)}}))
       << "\n";
    if (report == "-") {
      llvm::outs() << text;
      return success();
    }
    std::string error = ::loom::writeFileAtomically(report, text);
    if (!error.empty())
      return getOperation().emitError(
                 "loom-memory-plan: cannot write the report: ")
             << error;
    return success();
  }
};

} // namespace
