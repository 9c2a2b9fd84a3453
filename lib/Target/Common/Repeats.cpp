//===- Repeats.cpp - Repeated runs of ops printed as loops -----------------===//
//
// A pipeline schedule is unrolled in the IR: every micro-batch's forward
// and backward pass is its own run of ops, the same ops on other buffers
// (and with other tags). Printed one by one, the step grows with
// micro-batches x ops; here each run of repeats becomes one loop over a
// table of what differs, so the step grows with the distinct runs.
//
// What may differ between the repeats is printed through holes
// (EmitterBase::hole): arena offsets, transfer tags, handle slots, copy
// and kernel input offsets. To roll a run, its repeats are printed with every hole marked;
// they roll when the texts agree but for the marked integers, so the loop
// prints exactly the statements the unrolled step would, in the same
// order. Integers equal in every repeat stay literals; the others are
// columns of a static table indexed by the loop's counter. Values a repeat
// defines are its own variables; others are named by where they live
// (EmitterBase::globalName: `arena + offset`, a handle's slot), which is
// valid in every repeat and after the loop.
//
// Candidates come from a signature of each op (its name, attributes but
// the holes' own, types, nested ops, and each operand as an argument or by
// its definition: a buffer by its type and pool), compared with a rolling
// hash: a run may start where the signatures of its first ops recur, and
// repeats as long as each next slice hashes the same. Nothing rolls inside
// a loop (no nesting), and ops that define something of the whole
// translation unit (constants) never roll.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/EmitterBase.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>
#include <unordered_map>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::emit;

namespace {

/// Shortest run worth a loop, in ops per repeat, and fewest ops saved.
constexpr size_t kMinPeriod = 16;
constexpr size_t kMinSaved = 64;
/// The nearest later occurrences of the ops at a position tried as periods.
constexpr size_t kMaxCandidates = 16;

/// The attributes that print as holes: they may differ between repeats.
bool isHoleAttribute(Operation *op, StringRef attr) {
  if (isa<loomrt::AllocOp>(op))
    return attr == "offset";
  if (isa<loomrt::SendStartOp, loomrt::RecvStartOp>(op))
    return attr == "tag";
  if (isa<loomrt::CopyOp>(op))
    return attr == "source_offset" || attr == "target_offset";
  if (isa<loomrt::KernelOp>(op))
    return attr == "in_offsets";
  return false;
}

/// Ops that define something of the whole translation unit, which a
/// repeat cannot.
bool isRollable(Operation *op) { return !isa<loomrt::ConstantOp>(op); }

/// The op's name, attributes (but its holes), result types and nested ops.
llvm::hash_code shapeHash(Operation *op) {
  llvm::hash_code h = llvm::hash_value(op->getName().getStringRef());
  for (NamedAttribute attr : op->getAttrs())
    if (!isHoleAttribute(op, attr.getName().strref()))
      h = llvm::hash_combine(h, attr.getName().getAsOpaquePointer(),
                             attr.getValue().getAsOpaquePointer());
  for (Type type : op->getResultTypes())
    h = llvm::hash_combine(h, type.getAsOpaquePointer());
  for (Region &region : op->getRegions())
    region.walk([&](Operation *inner) {
      h = llvm::hash_combine(
          h, OperationEquivalence::computeHash(
                 inner, OperationEquivalence::ignoreHashValue,
                 OperationEquivalence::ignoreHashValue,
                 OperationEquivalence::IgnoreLocations));
    });
  return h;
}

/// What an operand's definition contributes to an op's signature. A
/// repeat's buffer may come from a buffer of another category (a loss
/// added to the first micro-batch's loss, then to a running sum): the
/// step names it by its address, so a buffer counts by its type and pool.
llvm::hash_code
operandKey(Value operand,
           const DenseMap<Operation *, llvm::hash_code> &shapes) {
  operand = loomrt::rootBuffer(operand);
  if (auto alloc = operand.getDefiningOp<loomrt::AllocOp>())
    return llvm::hash_combine(operand.getType().getAsOpaquePointer(),
                              alloc.getCategory() == "swap");
  return llvm::hash_combine(shapes.lookup(operand.getDefiningOp()),
                            cast<OpResult>(operand).getResultNumber());
}

/// Every op's signature: its shape and its operands, each an argument of
/// the step or the shape of the op that defined it. (Where a repeat's
/// operand was defined varies: in the repeat, in the one before, once
/// before all of them, as a mask every micro-batch shares.)
SmallVector<uint64_t> signatures(ArrayRef<Operation *> ops) {
  DenseMap<Operation *, llvm::hash_code> shapes;
  for (Operation *op : ops)
    shapes[op] = shapeHash(op);
  SmallVector<uint64_t> result;
  result.reserve(ops.size());
  for (auto [i, op] : llvm::enumerate(ops)) {
    llvm::hash_code h = shapes[op];
    for (Value operand : op->getOperands()) {
      if (auto arg = dyn_cast<BlockArgument>(operand)) {
        h = llvm::hash_combine(h, 0, arg.getArgNumber());
        continue;
      }
      h = llvm::hash_combine(h, 1, operandKey(operand, shapes));
    }
    // Unrollable ops get signatures no other op has.
    result.push_back(isRollable(op) ? static_cast<uint64_t>(h)
                                    : static_cast<uint64_t>(
                                          llvm::hash_combine(h, i)));
  }
  return result;
}

/// Prefix hashes of a sequence, for comparing any two of its slices.
class SliceHashes {
public:
  explicit SliceHashes(ArrayRef<uint64_t> values) {
    prefix.assign(values.size() + 1, 0);
    power.assign(values.size() + 1, 1);
    for (size_t i = 0; i < values.size(); ++i) {
      prefix[i + 1] = prefix[i] * kBase + values[i];
      power[i + 1] = power[i] * kBase;
    }
  }
  uint64_t of(size_t begin, size_t length) const {
    return prefix[begin + length] - prefix[begin] * power[length];
  }

private:
  static constexpr uint64_t kBase = 0x100000001b3ULL;
  std::vector<uint64_t> prefix, power;
};

/// A run of `repeats` copies of `period` ops.
struct Run {
  size_t period = 0, repeats = 0;
  size_t saved() const { return repeats ? period * (repeats - 1) : 0; }
};

/// The run at `begin` that saves the most ops, if any is worth a loop.
Run bestRun(size_t begin, ArrayRef<uint64_t> sigs, const SliceHashes &hashes,
            ArrayRef<size_t> later) {
  Run best;
  size_t n = sigs.size();
  for (size_t next : later.take_front(kMaxCandidates)) {
    size_t period = next - begin;
    if (period < kMinPeriod || begin + 2 * period > n)
      continue;
    uint64_t first = hashes.of(begin, period);
    Run run{period, 1};
    while (begin + (run.repeats + 1) * period <= n &&
           hashes.of(begin + run.repeats * period, period) == first)
      ++run.repeats;
    if (run.repeats >= 2 && run.saved() > best.saved())
      best = run;
  }
  return best.saved() >= kMinSaved ? best : Run{};
}

/// A printed repeat split into its text without the holes' integers and
/// the integers, in order.
struct Template {
  std::string skeleton;
  SmallVector<int64_t> holes;
};

Template splitHoles(StringRef text) {
  Template t;
  t.skeleton.reserve(text.size());
  while (!text.empty()) {
    size_t open = text.find('\x01');
    t.skeleton += text.take_front(open).str();
    if (open == StringRef::npos)
      break;
    size_t close = text.find('\x02', open);
    int64_t value = 0;
    (void)text.slice(open + 1, close).getAsInteger(10, value);
    t.holes.push_back(value);
    t.skeleton += '\x01';
    text = text.drop_front(close + 1);
  }
  return t;
}

} // namespace

LogicalResult EmitterBase::emitOps(ArrayRef<Operation *> ops) {
  if (!rollRepeats) {
    for (Operation *op : ops)
      if (failed(emitTimedOp(op)))
        return failure();
    return success();
  }
  SmallVector<uint64_t> sigs = signatures(ops);
  SliceHashes hashes(sigs);
  // Where each window of kMinPeriod signatures occurs, in order: a
  // repeat's next copy starts where the window at its start recurs (one
  // op's signature recurs too often within a repeat to find it).
  SmallVector<uint64_t> windows;
  std::unordered_map<uint64_t, SmallVector<size_t>> occurrences;
  for (size_t i = 0; i < ops.size(); ++i) {
    windows.push_back(hashes.of(i, std::min(kMinPeriod, ops.size() - i)));
    occurrences[windows.back()].push_back(i);
  }
  // Trial printing of repeats that then do not agree is bounded.
  size_t trialBudget = 4 * ops.size();
  for (size_t i = 0; i < ops.size();) {
    ArrayRef<size_t> at = occurrences[windows[i]];
    ArrayRef<size_t> later(std::upper_bound(at.begin(), at.end(), i),
                           at.end());
    Run run = bestRun(i, sigs, hashes, later);
    if (run.repeats && run.period * run.repeats <= trialBudget) {
      FailureOr<size_t> printed =
          emitLoop(ops.slice(i, run.period * run.repeats), run.period,
                   run.repeats);
      if (failed(printed))
        return failure();
      if (*printed) {
        i += *printed;
        continue;
      }
      trialBudget -= run.period * run.repeats;
    }
    if (failed(emitTimedOp(ops[i])))
      return failure();
    ++i;
  }
  return success();
}

FailureOr<size_t> EmitterBase::emitLoop(ArrayRef<Operation *> ops,
                                        size_t period, size_t repeats) {
  // What printing a repeat changes besides the step's text, restored when
  // the repeats do not agree.
  int counterBefore = counter;
  int kernelCounterBefore = kernelCounter;
  std::string kernelsBefore = kernels;
  llvm::StringMap<std::string> kernelByTextBefore = kernelByText;
  size_t bodyBefore = body.size();

  SmallVector<Template> repeatsPrinted;
  int counterAfter = counter;
  templating = true;
  for (size_t r = 0; r < repeats; ++r) {
    counter = counterBefore;
    iterationValues.clear();
    size_t mark = body.size();
    for (Operation *op : ops.slice(r * period, period)) {
      if (failed(emitTimedOp(op))) {
        templating = false;
        return failure();
      }
      for (Value result : op->getResults())
        iterationValues.insert(result);
    }
    Template t = splitHoles(StringRef(body).drop_front(mark));
    body.resize(mark);
    if (r == 0)
      counterAfter = counter;
    if (r > 0 && t.skeleton != repeatsPrinted.front().skeleton)
      break;
    repeatsPrinted.push_back(std::move(t));
  }
  templating = false;
  iterationValues.clear();
  counter = counterBefore;
  if (repeatsPrinted.size() < 2) {
    kernelCounter = kernelCounterBefore;
    kernels = std::move(kernelsBefore);
    kernelByText = std::move(kernelByTextBefore);
    body.resize(bodyBefore);
    return size_t(0);
  }
  size_t count = repeatsPrinted.size();

  // The table: one column per distinct sequence of a varying hole.
  std::string table = "kRepeat" + std::to_string(loopCounter++);
  std::map<SmallVector<int64_t>, size_t> columnOf;
  SmallVector<SmallVector<int64_t>> columns;
  SmallVector<std::string> fill; // what each hole prints in the loop
  for (size_t h = 0; h < repeatsPrinted.front().holes.size(); ++h) {
    SmallVector<int64_t> values;
    for (const Template &t : repeatsPrinted)
      values.push_back(t.holes[h]);
    if (llvm::all_equal(values)) {
      fill.push_back(std::to_string(values.front()));
      continue;
    }
    auto [it, inserted] = columnOf.try_emplace(values, columns.size());
    if (inserted)
      columns.push_back(values);
    fill.push_back(table + "[rep][" + std::to_string(it->second) + "]");
  }

  line() << "// " << count << " repeats of the same " << period
         << " ops on other buffers (micro-batches): one loop\n";
  if (!columns.empty()) {
    line() << "static const int64_t " << table << "[" << count << "]["
           << columns.size() << "] = {\n";
    for (size_t r = 0; r < count; ++r) {
      SmallVector<int64_t> row;
      for (const SmallVector<int64_t> &column : columns)
        row.push_back(column[r]);
      line() << "    {" << joinInts(row) << "},\n";
    }
    line() << "};\n";
  }
  line() << "for (int64_t rep = 0; rep < " << count << "; ++rep) {\n";
  const std::string &skeleton = repeatsPrinted.front().skeleton;
  size_t next = 0;
  bool atLineStart = true;
  for (char c : skeleton) {
    if (atLineStart && c != '\n')
      os << "  ";
    atLineStart = c == '\n';
    if (c == '\x01')
      os << fill[next++];
    else
      os << c;
  }
  line() << "}\n";

  // After the loop, the repeats' values are named by where they live.
  counter = counterAfter;
  for (Operation *op : ops.take_front(count * period))
    for (Value result : op->getResults())
      names[result] = globalName(result);
  return count * period;
}
