//===- PipelinePartition.cpp - Balanced pipeline stages by cost -----------===//
//
// Implements -loom-pipeline-partition (see Passes.td for the contract).
//
// The ops of the function that depend on some argument form a sequence in
// program order; a stage is a contiguous range of it. With N sequence ops
// and P stages:
//
//   1. Costs per op (time = 3 x forward flops, result bytes) and the bytes
//      crossing every cut position (a sweep over value live ranges).
//   2. memEnd[i]: the furthest end of a stage starting at i that fits the
//      memory budget (a two-pointer window; memory only grows with the
//      range, so the ends are monotone).
//   3. T*: the least maximum stage time, by binary search over T; for one T
//      a greedy sweep that makes every stage as long as allowed needs the
//      fewest stages, because every constraint (time <= T, memory, forced
//      cuts) holds for sub-ranges of an allowed range.
//   4. The least total cut bytes among partitions with every stage <= T*,
//      by dynamic programming over (stages left, start position); the
//      allowed ends of a stage starting at i are (i, E(i)] with E monotone,
//      so each row is a sliding-window minimum. The earliest optimal cut is
//      taken at every step.
//
//===----------------------------------------------------------------------===//

#include "PipelineUtils.h"
#include "TargetFunction.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomInterfaces.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "loom-pipeline-partition"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMPIPELINEPARTITION
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

constexpr llvm::StringLiteral kPass = "loom-pipeline-partition";
/// Larger than any reachable cost; sums of two stay representable.
constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max() / 4;
/// Forward plus backward time, in units of forward flops.
constexpr int64_t kForwardBackwardFactor = 3;

/// The partitioning problem extracted from one function. Values are
/// numbered as "items": function arguments 0 .. numArgs-1, then the results
/// of the sequence ops in program order.
struct Problem {
  SmallVector<Operation *> ops; ///< The sequence.
  SmallVector<int64_t> flops;   ///< Forward flops per op.
  SmallVector<int64_t> time;    ///< Forward + backward estimate per op.
  SmallVector<int64_t> prefixTime, prefixResultBytes; ///< N + 1 entries.
  /// Per op: the distinct items it reads (arguments and sequence values;
  /// replicated values are free), sorted.
  SmallVector<SmallVector<int64_t, 4>> inputs;
  SmallVector<int64_t> firstResult; ///< Per op: the item of its result 0.
  int64_t numArgs = 0;
  SmallVector<int64_t> itemBytes;    ///< Per item.
  SmallVector<int64_t> itemElements; ///< Per item.
  SmallVector<int64_t> itemDef;      ///< Defining position; -1: argument.
  SmallVector<int64_t> itemResultNo; ///< Result number (argument index).
  SmallVector<bool> itemIsParam;
  /// cutBytes[c]: bytes of the sequence values defined before position c
  /// and used at or after it (0 for c = 0 and c = N).
  SmallVector<int64_t> cutBytes;

  int64_t size() const { return static_cast<int64_t>(ops.size()); }
  int64_t numResults(int64_t pos) const {
    return static_cast<int64_t>(ops[pos]->getNumResults());
  }
};

/// Bytes of parameters plus activations of the stage [lo, hi), maintained
/// while the range slides forward (both ends only grow).
class MemoryWindow {
public:
  explicit MemoryWindow(const Problem &problem)
      : p(problem), uses(problem.itemBytes.size(), 0) {}

  int64_t begin() const { return lo; }
  int64_t end() const { return hi; }
  int64_t bytes() const {
    return p.prefixResultBytes[hi] - p.prefixResultBytes[lo] + external;
  }
  /// Adds op `end()` to the range.
  void pushBack() {
    for (int64_t item : p.inputs[hi])
      if (uses[item]++ == 0 && isExternal(item))
        external += p.itemBytes[item];
    ++hi;
  }
  /// Removes the op just added by pushBack.
  void popBack() {
    --hi;
    for (int64_t item : p.inputs[hi])
      if (--uses[item] == 0 && isExternal(item))
        external -= p.itemBytes[item];
  }
  /// Removes op `begin()`; its results, if still used, become received.
  void popFront() {
    for (int64_t item : p.inputs[lo])
      if (--uses[item] == 0 && isExternal(item))
        external -= p.itemBytes[item];
    for (int64_t r = 0, e = p.numResults(lo); r < e; ++r)
      if (uses[p.firstResult[lo] + r] > 0)
        external += p.itemBytes[p.firstResult[lo] + r];
    ++lo;
  }

private:
  /// Arguments and values made before the range are received (or held, for
  /// parameters) rather than produced by the range.
  bool isExternal(int64_t item) const { return p.itemDef[item] < lo; }

  const Problem &p;
  SmallVector<int32_t> uses; ///< Per item: ops of the range that read it.
  int64_t lo = 0, hi = 0;
  int64_t external = 0; ///< Bytes of external items the range reads.
};

/// The name of a location: the NameLoc's, looking through fused and
/// call-site locations; empty when there is none.
StringRef getLocationName(Location loc) {
  if (auto named = dyn_cast<NameLoc>(loc))
    return named.getName().getValue();
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return getLocationName(callSite.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (StringRef name = getLocationName(inner); !name.empty())
        return name;
  return {};
}

struct PipelinePartition
    : public loom::impl::LoomPipelinePartitionBase<PipelinePartition> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override;
  void runOnOperation() override;

private:
  FailureOr<func::FuncOp> findFunction();
  FailureOr<Problem> buildProblem(func::FuncOp func);
  FailureOr<SmallVector<int64_t>> parseBoundaries(func::FuncOp func,
                                                  const Problem &p);
  FailureOr<SmallVector<int64_t>> computeMemoryEnds(const Problem &p);
  FailureOr<SmallVector<int64_t>> solve(func::FuncOp func, const Problem &p,
                                        ArrayRef<int64_t> forced);
  LogicalResult writeReport(func::FuncOp func, const Problem &p,
                            ArrayRef<int64_t> cuts, ArrayRef<int64_t> forced);
};

} // namespace

LogicalResult PipelinePartition::initialize(MLIRContext *context) {
  auto fail = [&]() { return emitError(UnknownLoc::get(context)) << kPass; };
  if (stages < 1)
    return fail() << ": option 'stages' must be at least 1, got " << static_cast<int64_t>(stages);
  if (memoryBudget < 0)
    return fail() << ": option 'memory-budget' must be >= 0 bytes (0: no "
                     "limit), got "
                  << static_cast<int64_t>(memoryBudget);
  return success();
}

FailureOr<func::FuncOp> PipelinePartition::findFunction() {
  auto isEntry = [](func::FuncOp func) {
    return func.isPublic() && !func.isExternal();
  };
  TargetFunctionQuery query;
  query.pass = kPass;
  query.name = function;
  query.isCandidate = isEntry;
  query.candidates = "with a body and public visibility";
  query.preferred = "main";
  return findTargetFunction(getOperation(), query);
}

FailureOr<Problem> PipelinePartition::buildProblem(func::FuncOp func) {
  Problem p;
  Block &body = func.getBody().front();
  llvm::DenseSet<Operation *> replicated = pipeline::findReplicatedOps(body);

  llvm::DenseMap<Value, int64_t> itemOf;
  auto addItem = [&](Value value, int64_t def, int64_t resultNo,
                     bool isParam) -> LogicalResult {
    int64_t bytes = 0, elements = 0;
    if (auto type = dyn_cast<RankedTensorType>(value.getType())) {
      std::optional<int64_t> b = loom::detail::getNumBytes(type);
      std::optional<int64_t> n = loom::detail::getNumElements(type);
      if (!b || !n)
        return failure();
      bytes = *b;
      elements = *n;
    }
    itemOf[value] = static_cast<int64_t>(p.itemBytes.size());
    p.itemBytes.push_back(bytes);
    p.itemElements.push_back(elements);
    p.itemDef.push_back(def);
    p.itemResultNo.push_back(resultNo);
    p.itemIsParam.push_back(isParam);
    return success();
  };

  p.numArgs = func.getNumArguments();
  for (BlockArgument arg : func.getArguments()) {
    bool isParam = static_cast<bool>(
        func.getArgAttr(arg.getArgNumber(), LoomDialect::getParamAttrName()));
    if (failed(addItem(arg, -1, arg.getArgNumber(), isParam)))
      return func.emitError()
             << kPass << ": argument " << arg.getArgNumber() << " of @"
             << func.getSymName() << " has the dynamic type " << arg.getType()
             << "; run loom-shape-inference (arg-shapes=...) first";
  }

  p.prefixTime.push_back(0);
  p.prefixResultBytes.push_back(0);
  for (Operation &op : body.without_terminator()) {
    if (replicated.contains(&op))
      continue;
    int64_t pos = p.size();
    int64_t flops = 0;
    if (auto cost = dyn_cast<CostInterface>(&op)) {
      std::optional<int64_t> count = cost.getFlopCount();
      if (!count)
        return op.emitError()
               << kPass << ": the cost of this op depends on a dynamic "
               << "shape; run loom-shape-inference first";
      flops = *count;
    }
    SmallVector<int64_t, 4> inputs;
    for (Value operand : op.getOperands()) {
      auto it = itemOf.find(operand);
      if (it != itemOf.end())
        inputs.push_back(it->second);
    }
    llvm::sort(inputs);
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());

    p.firstResult.push_back(static_cast<int64_t>(p.itemBytes.size()));
    int64_t resultBytes = 0;
    for (OpResult result : op.getResults()) {
      if (failed(addItem(result, pos, result.getResultNumber(),
                         /*isParam=*/false)))
        return op.emitError()
               << kPass << ": result " << result.getResultNumber()
               << " has the dynamic type " << result.getType()
               << "; run loom-shape-inference first";
      resultBytes += p.itemBytes.back();
    }
    p.ops.push_back(&op);
    p.flops.push_back(flops);
    p.time.push_back(kForwardBackwardFactor * flops);
    p.inputs.push_back(std::move(inputs));
    p.prefixTime.push_back(p.prefixTime.back() + p.time.back());
    p.prefixResultBytes.push_back(p.prefixResultBytes.back() + resultBytes);
  }

  // Cut bytes: value v (defined at d, last read at l > d) crosses the cuts
  // d+1 .. l. Difference array over cut positions.
  int64_t n = p.size();
  SmallVector<int64_t> lastUse(p.itemBytes.size(), -1);
  for (int64_t pos = 0; pos < n; ++pos)
    for (int64_t item : p.inputs[pos])
      lastUse[item] = pos;
  SmallVector<int64_t> delta(n + 2, 0);
  for (size_t item = p.numArgs; item < p.itemBytes.size(); ++item) {
    if (lastUse[item] < 0)
      continue;
    delta[p.itemDef[item] + 1] += p.itemBytes[item];
    delta[lastUse[item] + 1] -= p.itemBytes[item];
  }
  p.cutBytes.assign(n + 1, 0);
  int64_t running = 0;
  for (int64_t c = 0; c <= n; ++c) {
    running += delta[c];
    p.cutBytes[c] = running;
  }
  return p;
}

FailureOr<SmallVector<int64_t>>
PipelinePartition::parseBoundaries(func::FuncOp func, const Problem &p) {
  int64_t n = p.size();
  SmallVector<int64_t> forced;
  for (const std::string &entry : stageBoundaries) {
    StringRef text = StringRef(entry).trim();
    int64_t pos = -1;
    if (text.consume_front("param:")) {
      // The first op reading the parameter named `text` (loom.name).
      std::optional<unsigned> argument;
      for (unsigned i = 0; i < func.getNumArguments() && !argument; ++i)
        if (auto name = func.getArgAttrOfType<StringAttr>(
                i, LoomDialect::getNameAttrName());
            name && name.getValue() == text)
          argument = i;
      if (!argument)
        return func.emitError()
               << kPass << ": option 'stage-boundaries' entry 'param:" << text
               << "' names no argument of @" << func.getSymName();
      Value arg = func.getArgument(*argument);
      auto it = llvm::find_if(p.ops, [&](Operation *op) {
        return llvm::is_contained(op->getOperands(), arg);
      });
      if (it == p.ops.end())
        return func.emitError()
               << kPass << ": option 'stage-boundaries' entry 'param:" << text
               << "': no op that can begin a stage reads it";
      pos = it - p.ops.begin();
    } else if (text.getAsInteger(10, pos)) {
      auto it = llvm::find_if(p.ops, [&](Operation *op) {
        return getLocationName(op->getLoc()) == text;
      });
      if (it == p.ops.end()) {
        bool isReplicated = false;
        for (Operation &op : func.getBody().front().without_terminator())
          isReplicated |= getLocationName(op.getLoc()) == text;
        if (isReplicated)
          return func.emitError()
                 << kPass << ": option 'stage-boundaries' entry '" << text
                 << "' names an op that depends on no argument; such ops "
                    "are computed in every stage that needs them and "
                    "cannot begin a stage";
        return func.emitError()
               << kPass << ": option 'stage-boundaries' entry '" << text
               << "' is neither a position nor the location name of an op "
                  "of @"
               << func.getSymName();
      }
      pos = it - p.ops.begin();
    }
    if (pos < 1 || pos > n - 1)
      return func.emitError()
             << kPass << ": option 'stage-boundaries' entry '" << text
             << "' is position " << pos << ", outside [1, " << n - 1
             << "] (@" << func.getSymName() << " has " << n
             << " ops that can be separated)";
    if (!forced.empty() && pos <= forced.back())
      return func.emitError()
             << kPass << ": option 'stage-boundaries' must be strictly "
             << "increasing, but entry '" << text << "' (position " << pos
             << ") follows position " << forced.back();
    forced.push_back(pos);
  }
  if (static_cast<int64_t>(forced.size()) > stages - 1)
    return func.emitError()
           << kPass << ": option 'stage-boundaries' forces "
           << forced.size() << " cuts, but stages=" << static_cast<int64_t>(stages)
           << " has at most " << stages - 1;
  return forced;
}

FailureOr<SmallVector<int64_t>>
PipelinePartition::computeMemoryEnds(const Problem &p) {
  int64_t n = p.size();
  SmallVector<int64_t> memEnd(n, n);
  if (memoryBudget == 0)
    return memEnd;
  MemoryWindow window(p);
  for (int64_t lo = 0; lo < n; ++lo) {
    while (window.end() < n) {
      window.pushBack();
      if (window.bytes() > memoryBudget) {
        if (window.end() == lo + 1)
          return p.ops[lo]->emitError()
                 << kPass << ": option 'memory-budget' (" << static_cast<int64_t>(memoryBudget)
                 << " bytes) is below the " << window.bytes()
                 << " bytes of parameters and activations this op needs "
                    "alone";
        window.popBack();
        break;
      }
    }
    memEnd[lo] = window.end();
    window.popFront();
  }
  return memEnd;
}

FailureOr<SmallVector<int64_t>>
PipelinePartition::solve(func::FuncOp func, const Problem &p,
                         ArrayRef<int64_t> forced) {
  int64_t n = p.size();
  FailureOr<SmallVector<int64_t>> memEnd = computeMemoryEnds(p);
  if (failed(memEnd))
    return failure();
  // forcedEnd[i]: the first forced cut after i (a stage starting at i must
  // end there at the latest).
  SmallVector<int64_t> forcedEnd(n, n);
  for (int64_t i = n - 1, f = static_cast<int64_t>(forced.size()) - 1; i >= 0;
       --i) {
    while (f >= 0 && forced[f] > i)
      forcedEnd[i] = forced[f--];
    if (i + 1 < n)
      forcedEnd[i] = std::min(forcedEnd[i], forcedEnd[i + 1]);
  }
  // The furthest end of an allowed stage starting at i, for a time bound.
  auto stageEnd = [&](int64_t i, int64_t bound) {
    auto first = p.prefixTime.begin() + i;
    int64_t timeEnd =
        std::upper_bound(first, p.prefixTime.end(), p.prefixTime[i] + bound) -
        p.prefixTime.begin() - 1;
    return std::min({timeEnd, (*memEnd)[i], forcedEnd[i]});
  };
  auto stagesNeeded = [&](int64_t bound) {
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++count) {
      int64_t j = stageEnd(i, bound);
      if (j <= i)
        return kInfinity;
      i = j;
    }
    return count;
  };

  int64_t total = p.prefixTime[n];
  int64_t least = stagesNeeded(total);
  if (least > stages)
    return func.emitError()
           << kPass << ": option 'memory-budget' (" << static_cast<int64_t>(memoryBudget)
           << " bytes per stage) needs at least " << least
           << " stages, but stages=" << static_cast<int64_t>(stages);
  int64_t low = *std::max_element(p.time.begin(), p.time.end()), high = total;
  while (low < high) {
    int64_t mid = low + (high - low) / 2;
    if (stagesNeeded(mid) <= stages)
      high = mid;
    else
      low = mid + 1;
  }
  int64_t bound = low;
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << n << " ops, total time "
                          << total << ", at least " << least
                          << " stage(s) for the memory budget, time bound "
                          << bound << "\n");

  // best[k][i]: least total cut bytes splitting ops [i, n) into k allowed
  // stages; reaching position j < n costs cutBytes[j].
  SmallVector<int64_t> end(n);
  for (int64_t i = 0; i < n; ++i)
    end[i] = stageEnd(i, bound);
  std::vector<SmallVector<int64_t>> best(stages + 1,
                                         SmallVector<int64_t>(n + 1, kInfinity));
  best[0][n] = 0;
  auto through = [&](int64_t k, int64_t j) {
    return best[k][j] >= kInfinity ? kInfinity : best[k][j] + p.cutBytes[j];
  };
  for (int64_t k = 1; k <= stages; ++k) {
    // Sliding minimum of through(k-1, j) over j in (i, end[i]], i falling;
    // indices increase and values strictly decrease from front to back.
    std::deque<int64_t> window;
    for (int64_t i = n - 1; i >= 0; --i) {
      int64_t j = i + 1;
      while (!window.empty() &&
             through(k - 1, window.front()) >= through(k - 1, j))
        window.pop_front();
      window.push_front(j);
      while (!window.empty() && window.back() > end[i])
        window.pop_back();
      best[k][i] = window.empty() ? kInfinity : through(k - 1, window.back());
    }
  }
  if (best[stages][0] >= kInfinity)
    return func.emitError() << kPass << ": found no partition into "
                            << static_cast<int64_t>(stages) << " stages with at most " << bound
                            << " time each (please report this)";

  SmallVector<int64_t> cuts;
  for (int64_t k = stages, i = 0; k >= 1; --k) {
    int64_t j = i + 1;
    while (through(k - 1, j) != best[k][i])
      ++j;
    if (k > 1)
      cuts.push_back(j);
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] stage " << stages - k
                            << ": ops [" << i << ", " << j << "), time "
                            << p.prefixTime[j] - p.prefixTime[i]
                            << (j < n ? ", cut bytes " +
                                            std::to_string(p.cutBytes[j])
                                      : std::string())
                            << "\n");
    i = j;
  }
  return cuts;
}

LogicalResult PipelinePartition::writeReport(func::FuncOp func,
                                             const Problem &p,
                                             ArrayRef<int64_t> cuts,
                                             ArrayRef<int64_t> forced) {
  int64_t n = p.size();
  int64_t numItems = static_cast<int64_t>(p.itemBytes.size());
  SmallVector<int64_t> starts{0};
  starts.append(cuts.begin(), cuts.end());
  starts.push_back(n);
  SmallVector<int64_t> stageOf(n);
  for (int64_t s = 0; s < stages; ++s)
    for (int64_t pos = starts[s]; pos < starts[s + 1]; ++pos)
      stageOf[pos] = s;

  struct StageStats {
    int64_t flops = 0, time = 0, params = 0, paramBytes = 0,
            activationBytes = 0;
    std::map<int64_t, int64_t> sends; ///< Destination stage -> bytes.
  };
  SmallVector<StageStats> stats(stages);
  // Stamp per item: the last stage that counted it as an input, and the
  // last stage a value was sent to.
  SmallVector<int64_t> countedIn(numItems, -1), sentTo(numItems, -1);
  for (int64_t pos = 0; pos < n; ++pos) {
    int64_t s = stageOf[pos];
    StageStats &st = stats[s];
    st.flops += p.flops[pos];
    st.time += p.time[pos];
    st.activationBytes +=
        p.prefixResultBytes[pos + 1] - p.prefixResultBytes[pos];
    for (int64_t item : p.inputs[pos]) {
      bool fromEarlierStage =
          p.itemDef[item] >= 0 && stageOf[p.itemDef[item]] < s;
      if (fromEarlierStage && sentTo[item] != s) {
        sentTo[item] = s;
        stats[stageOf[p.itemDef[item]]].sends[s] += p.itemBytes[item];
      }
      if (countedIn[item] == s || (p.itemDef[item] >= 0 && !fromEarlierStage))
        continue;
      countedIn[item] = s;
      if (p.itemIsParam[item]) {
        st.params += p.itemElements[item];
        st.paramBytes += p.itemBytes[item];
      } else {
        st.activationBytes += p.itemBytes[item];
      }
    }
  }

  int64_t maxTime = 0, totalCut = 0;
  for (const StageStats &st : stats)
    maxTime = std::max(maxTime, st.time);
  for (int64_t c : cuts)
    totalCut += p.cutBytes[c];
  double meanTime = static_cast<double>(p.prefixTime[n]) / stages;
  auto bodyOps = func.getBody().front().without_terminator();
  int64_t numBodyOps = std::distance(bodyOps.begin(), bodyOps.end());

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(report, &error);
  if (!file)
    return func.emitError() << kPass << ": cannot write the report to '"
                            << report << "': " << error;
  {
    llvm::json::OStream json(file->os(), /*IndentSize=*/2);
    json.object([&] {
      json.attribute("function", func.getSymName());
      json.attribute("stages", static_cast<int64_t>(stages));
      json.attribute("memory_budget", static_cast<int64_t>(memoryBudget));
      json.attribute("sequence_ops", n);
      json.attribute("replicated_ops", numBodyOps - n);
      json.attributeArray("cuts", [&] {
        for (int64_t c : cuts)
          json.value(c);
      });
      json.attributeArray("forced_cuts", [&] {
        for (int64_t c : forced)
          json.value(c);
      });
      json.attribute("max_stage_time", maxTime);
      json.attribute("mean_stage_time", meanTime);
      json.attribute("balance", meanTime > 0 ? maxTime / meanTime : 1.0);
      json.attribute("total_cut_bytes", totalCut);
      json.attributeArray("per_stage", [&] {
        for (int64_t s = 0; s < stages; ++s) {
          const StageStats &st = stats[s];
          json.object([&] {
            json.attribute("stage", s);
            json.attribute("first", starts[s]);
            json.attribute("last", starts[s + 1] - 1);
            json.attribute("ops", starts[s + 1] - starts[s]);
            json.attribute("flops", st.flops);
            json.attribute("time", st.time);
            json.attribute("params", st.params);
            json.attribute("param_bytes", st.paramBytes);
            json.attribute("activation_bytes", st.activationBytes);
            json.attribute("memory_bytes", st.paramBytes + st.activationBytes);
            json.attribute("cut_bytes", p.cutBytes[starts[s + 1]]);
            json.attributeArray("sends", [&] {
              for (auto [to, bytes] : st.sends)
                json.object([&] {
                  json.attribute("to", to);
                  json.attribute("bytes", bytes);
                });
            });
          });
        }
      });
      json.attributeArray("arguments", [&] {
        for (int64_t a = 0; a < p.numArgs; ++a) {
          json.object([&] {
            json.attribute("index", a);
            auto name = func.getArgAttrOfType<StringAttr>(
                a, LoomDialect::getNameAttrName());
            json.attribute("name", name ? name.getValue() : StringRef());
            json.attribute("param", static_cast<bool>(p.itemIsParam[a]));
            json.attribute("bytes", p.itemBytes[a]);
          });
        }
      });
      json.attributeArray("ops", [&] {
        for (int64_t pos = 0; pos < n; ++pos) {
          Operation *op = p.ops[pos];
          json.object([&] {
            json.attribute("pos", pos);
            json.attribute("op", op->getName().getStringRef());
            json.attribute("loc", getLocationName(op->getLoc()));
            json.attribute("stage", stageOf[pos]);
            json.attribute("flops", p.flops[pos]);
            json.attribute("time", p.time[pos]);
            json.attributeArray("results", [&] {
              for (int64_t r = 0, e = p.numResults(pos); r < e; ++r)
                json.value(p.itemBytes[p.firstResult[pos] + r]);
            });
            json.attributeArray("inputs", [&] {
              for (int64_t item : p.inputs[pos])
                if (p.itemDef[item] >= 0)
                  json.array([&] {
                    json.value(p.itemDef[item]);
                    json.value(p.itemResultNo[item]);
                  });
            });
            json.attributeArray("args", [&] {
              for (int64_t item : p.inputs[pos])
                if (p.itemDef[item] < 0)
                  json.value(item);
            });
          });
        }
      });
    });
  }
  file->os() << "\n";
  file->keep();
  return success();
}

void PipelinePartition::runOnOperation() {
  FailureOr<func::FuncOp> func = findFunction();
  if (failed(func) || failed(pipeline::checkStraightLine(*func, kPass)))
    return signalPassFailure();
  FailureOr<Problem> problem = buildProblem(*func);
  if (failed(problem))
    return signalPassFailure();
  int64_t n = problem->size();
  if (stages > n) {
    func->emitError() << kPass << ": option 'stages' is " << static_cast<int64_t>(stages)
                      << ", more than the " << n
                      << " ops of @" << func->getSymName()
                      << " that can be separated (ops that depend on no "
                         "argument are computed in every stage)";
    return signalPassFailure();
  }
  FailureOr<SmallVector<int64_t>> forced = parseBoundaries(*func, *problem);
  if (failed(forced))
    return signalPassFailure();
  FailureOr<SmallVector<int64_t>> cuts = solve(*func, *problem, *forced);
  if (failed(cuts))
    return signalPassFailure();

  // Annotate: sequence ops by range, replicated ops with the first stage
  // that uses them (visiting users first, in reverse program order).
  Builder builder(&getContext());
  llvm::DenseMap<Operation *, int64_t> stageOf;
  for (int64_t pos = 0, s = 0; pos < n; ++pos) {
    while (s < static_cast<int64_t>(cuts->size()) && (*cuts)[s] <= pos)
      ++s;
    stageOf[problem->ops[pos]] = s;
  }
  Block &body = func->getBody().front();
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (!stageOf.contains(&op)) {
      int64_t first = stages;
      for (Operation *user : op.getUsers())
        if (auto it = stageOf.find(user); it != stageOf.end())
          first = std::min(first, it->second);
      stageOf[&op] = first == stages ? 0 : first;
    }
    op.setAttr(pipeline::kStageAttrName,
               builder.getI64IntegerAttr(stageOf[&op]));
  }
  (*func)->setAttr(pipeline::kStagesAttrName,
                   builder.getI64IntegerAttr(stages));

  if (!report.empty() && failed(writeReport(*func, *problem, *cuts, *forced)))
    return signalPassFailure();
}
