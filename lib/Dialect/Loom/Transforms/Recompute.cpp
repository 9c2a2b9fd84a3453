//===- Recompute.cpp - Replay forward ops in the backward pass ------------===//
//
// Implements -loom-recompute (see Passes.td for the contract): decides which
// forward activations of a gradient function are kept for the backward pass
// and which the backward pass recomputes, and rewrites the function so the
// recomputed ones are cloned right before their first backward reader.
//
//===----------------------------------------------------------------------===//

#include "Activations.h"
#include "TargetFunction.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <map>

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_LOOMRECOMPUTE
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

constexpr StringLiteral kPass = "loom-recompute";

StringRef phaseOf(Operation *op) {
  if (auto phase = op->getAttrOfType<StringAttr>(
          LoomDialect::PhaseAttrHelper::getNameStr()))
    return phase.getValue();
  return "";
}

bool isBackward(Operation *op) { return phaseOf(op) == "backward"; }

bool isCommunication(Operation *op) {
  return isa<shard::ShardDialect>(op->getDialect());
}

bool isPointToPoint(Operation *op) {
  return isa<shard::SendOp, shard::RecvOp>(op);
}

/// What the analysis of one gradient function found.
struct Analysis {
  /// Forward values that carry activations (Activations.h).
  DenseSet<Value> activation;
  /// Forward values kept as the inputs of a layer.
  DenseSet<Value> layerInputs;
  /// The layer instance of each forward op inside one (full, comm-free):
  /// the ops with one `loom.layer` mark connected by the values they pass
  /// each other (a pipeline stage holds one instance per micro-batch), and
  /// each instance's ops in program order.
  DenseMap<Operation *, int64_t> layerOf;
  std::map<int64_t, SmallVector<Operation *>> layers;
  /// Forward ops of the attention cores (selective).
  DenseSet<Operation *> attentionCore;
};

/// The layer instances of `func` from the `loom.layer` marks of
/// loom-mark-layers, and their inputs.
void findLayers(func::FuncOp func, Analysis &analysis) {
  SmallVector<Operation *> marked;
  DenseMap<Operation *, int64_t> index;
  for (Operation &op : func.getBody().front())
    if (isForwardOp(&op) && op.hasAttr(LoomDialect::LayerAttrHelper::getNameStr())) {
      index[&op] = static_cast<int64_t>(marked.size());
      marked.push_back(&op);
    }
  auto layerMark = [](Operation *op) {
    return cast<IntegerAttr>(
               op->getAttr(LoomDialect::LayerAttrHelper::getNameStr()))
        .getInt();
  };
  // Union-find over the marked ops, joining a producer and a user with the
  // same mark that pass an activation (values of the weights alone, shared
  // by the micro-batches, join nothing).
  std::vector<int64_t> parent(marked.size());
  for (size_t i = 0; i < parent.size(); ++i)
    parent[i] = static_cast<int64_t>(i);
  auto find = [&](int64_t i) {
    while (parent[i] != i)
      i = parent[i] = parent[parent[i]];
    return i;
  };
  for (Operation *op : marked)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && index.contains(def) && layerMark(def) == layerMark(op) &&
          analysis.activation.contains(operand)) {
        int64_t a = find(index[def]), b = find(index[op]);
        if (a != b)
          parent[std::max(a, b)] = std::min(a, b);
      }
  for (Operation *op : marked) {
    int64_t instance = find(index[op]);
    analysis.layerOf[op] = instance;
    analysis.layers[instance].push_back(op);
  }
  // A layer's inputs: the activations its ops read from outside it.
  for (Operation *op : marked)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !analysis.activation.contains(operand))
        continue;
      auto it = analysis.layerOf.find(def);
      if (it == analysis.layerOf.end() || it->second != analysis.layerOf[op])
        analysis.layerInputs.insert(operand);
    }
}

/// The attention cores: each forward softmax, the chain feeding it from a
/// dot_general of two activations, and the elementwise ops after it up to
/// the next dot_general.
void findAttentionCores(func::FuncOp func, Analysis &analysis) {
  auto isActivationOp = [&](Operation *op) {
    return op && isForwardOp(op) && op->getNumResults() == 1 &&
           analysis.activation.contains(op->getResult(0));
  };
  for (Operation &op : func.getBody().front()) {
    auto softmax = dyn_cast<SoftmaxOp>(op);
    if (!softmax || !isForwardOp(softmax))
      continue;
    // Upwards: elementwise and layout ops on the activation path, to the
    // scores' dot_general.
    SmallVector<Operation *> core{softmax};
    SmallVector<Operation *> worklist{softmax};
    bool foundScores = false;
    DenseSet<Operation *> seen{softmax};
    while (!worklist.empty()) {
      Operation *current = worklist.pop_back_val();
      for (Value operand : current->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!isActivationOp(def) || !seen.insert(def).second)
          continue;
        if (auto dot = dyn_cast<DotGeneralOp>(def)) {
          if (analysis.activation.contains(dot.getLhs()) &&
              analysis.activation.contains(dot.getRhs())) {
            core.push_back(dot);
            foundScores = true;
          }
          continue;
        }
        if (def->hasTrait<::mlir::loom::OpTrait::ElementwiseMapping>() ||
            isa<ReshapeOp, TransposeOp, BroadcastOp>(def)) {
          core.push_back(def);
          worklist.push_back(def);
        }
      }
    }
    if (!foundScores)
      continue;
    analysis.attentionCore.insert(core.begin(), core.end());
    // Downwards: one-input elementwise ops (a dropout's scale, a convert).
    Operation *current = softmax;
    while (current->getResult(0).hasOneUse()) {
      Operation *user = *current->getResult(0).user_begin();
      if (!isActivationOp(user) ||
          !user->hasTrait<::mlir::loom::OpTrait::ElementwiseMapping>())
        break;
      analysis.attentionCore.insert(user);
      current = user;
    }
  }
}

/// Whether the backward pass recomputes `op` under `policy`.
bool isRecomputable(Operation *op, RecomputePolicy policy,
                    const Analysis &analysis) {
  if (!isForwardOp(op) || op->getNumRegions() != 0 ||
      op->getNumResults() == 0 || isPointToPoint(op) ||
      op->hasTrait<::mlir::OpTrait::IsTerminator>())
    return false;
  if (llvm::any_of(op->getResults(), [&](Value v) {
        return !analysis.activation.contains(v);
      }))
    return false;
  switch (policy) {
  case RecomputePolicy::none:
  case RecomputePolicy::automatic:
    return false;
  case RecomputePolicy::selective:
    return analysis.attentionCore.contains(op);
  case RecomputePolicy::CommFree:
    if (isCommunication(op))
      return false;
    break;
  case RecomputePolicy::full:
    break;
  }
  if (!analysis.layerOf.contains(op))
    return false;
  if (!isCommunication(op) && !isMemoryEffectFree(op))
    return false;
  return llvm::none_of(op->getResults(), [&](Value v) {
    return analysis.layerInputs.contains(v);
  });
}

/// Counts of what one function recomputes.
struct Counts {
  int64_t ops = 0, collectives = 0, flops = 0;
};

int64_t resultBytes(Operation *op) {
  int64_t bytes = 0;
  for (Value v : op->getResults())
    bytes += mlir::loom::detail::getNumBytes(v.getType()).value_or(0);
  return bytes;
}

/// Per tensor (policy auto with a byte target): single ops `comm-free`
/// could recompute, on operands that stay kept, whose results a backward
/// op reads, cheapest in flops per byte first, until their results reach
/// `target` bytes. Returns them, and their bytes in `chosenBytes`.
DenseSet<Operation *> chooseTensors(func::FuncOp func,
                                    const Analysis &analysis, int64_t target,
                                    int64_t &chosenBytes) {
  Block &block = func.getBody().front();
  auto readByBackward = [](Value v) {
    return llvm::any_of(v.getUsers(),
                        [](Operation *u) { return isBackward(u); });
  };
  struct Candidate {
    Operation *op;
    double flopsPerByte;
    int64_t bytes;
  };
  SmallVector<Candidate> candidates;
  DenseSet<Operation *> isCandidate;
  for (Operation &op : block) {
    if (!isRecomputable(&op, RecomputePolicy::CommFree, analysis) ||
        llvm::none_of(op.getResults(), readByBackward))
      continue;
    int64_t bytes = resultBytes(&op);
    if (bytes <= 0)
      continue;
    auto cost = dyn_cast<CostInterface>(&op);
    double flops =
        cost ? static_cast<double>(cost.getFlopCount().value_or(0)) : 0.0;
    candidates.push_back({&op, flops / static_cast<double>(bytes), bytes});
    isCandidate.insert(&op);
  }
  // Kept whatever is chosen: arguments, layer inputs, and the results of
  // ops that are not candidates that a backward op reads.
  auto keptAnyway = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || analysis.layerInputs.contains(v))
      return true;
    return !isCandidate.contains(def) && readByBackward(v);
  };
  llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) {
    return a.flopsPerByte < b.flopsPerByte;
  });
  DenseSet<Operation *> chosen;
  chosenBytes = 0;
  for (const Candidate &c : candidates) {
    if (chosenBytes >= target)
      break;
    // Each recomputation is one op on kept values: not on a chosen op's
    // results (a candidate's stay kept while it is not chosen), and no
    // chosen op reads this one's.
    bool ok = llvm::all_of(c.op->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (def && chosen.contains(def))
        return false;
      return keptAnyway(v) || (def && isCandidate.contains(def));
    });
    ok = ok && llvm::none_of(c.op->getUsers(), [&](Operation *user) {
      return chosen.contains(user);
    });
    if (!ok)
      continue;
    chosen.insert(c.op);
    chosenBytes += c.bytes;
  }
  return chosen;
}

/// Rewrites `func`: every backward read of a value of `recomputable`'s
/// ops reads a clone made right before the value's first backward reader.
Counts recompute(func::FuncOp func, RecomputePolicy policy,
                 const Analysis &analysis,
                 const DenseSet<Operation *> &recomputable) {
  Counts counts;
  Block &block = func.getBody().front();
  MLIRContext *ctx = func.getContext();
  LoomDialect::PhaseAttrHelper phase(ctx);
  StringAttr recomputed = StringAttr::get(ctx, "recompute");
  if (recomputable.empty())
    return counts;

  SmallVector<Operation *> backward;
  for (Operation &op : block)
    if (isBackward(&op))
      backward.push_back(&op);

  IRMapping clones;
  OpBuilder builder(ctx);
  // Clones `root`'s producer and the recomputable producers it needs,
  // operands first, before `before` (an explicit stack: chains of layers
  // can be long).
  auto materialize = [&](Value root, Operation *before) {
    SmallVector<std::pair<Operation *, bool>> stack{
        {root.getDefiningOp(), false}};
    while (!stack.empty()) {
      auto [op, expanded] = stack.pop_back_val();
      if (clones.contains(op->getResult(0)))
        continue;
      if (!expanded) {
        stack.push_back({op, true});
        for (Value operand : op->getOperands())
          if (Operation *def = operand.getDefiningOp();
              def && recomputable.contains(def) && !clones.contains(operand))
            stack.push_back({def, false});
        continue;
      }
      builder.setInsertionPoint(before);
      Operation *clone = builder.clone(*op, clones);
      phase.setAttr(clone, recomputed);
      clone->removeAttr(LoomDialect::FusedAttrHelper::getNameStr());
      ++counts.ops;
      if (isCommunication(op))
        ++counts.collectives;
      if (auto cost = dyn_cast<CostInterface>(op))
        counts.flops += cost.getFlopCount().value_or(0);
    }
    return clones.lookup(root);
  };

  // Megatron's full recompute replays a whole layer the first time its
  // backward pass needs any of it, including ops (the layer's last
  // collective) whose results the backward pass does not read.
  DenseSet<int64_t> replayed;
  auto replayLayer = [&](Operation *def, Operation *before) {
    if (policy != RecomputePolicy::full)
      return;
    int64_t layer = analysis.layerOf.lookup(def);
    if (!replayed.insert(layer).second)
      return;
    for (Operation *op : analysis.layers.at(layer))
      if (recomputable.contains(op))
        materialize(op->getResult(0), before);
  };
  for (Operation *op : backward)
    for (OpOperand &operand : op->getOpOperands()) {
      Operation *def = operand.get().getDefiningOp();
      if (!def || !recomputable.contains(def))
        continue;
      replayLayer(def, op);
      operand.set(materialize(operand.get(), op));
    }

  // Forward ops only the backward pass read are dead now.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (isForwardOp(&op) && isOpTriviallyDead(&op))
      op.erase();
  return counts;
}

struct LoomRecomputePass
    : public mlir::loom::impl::LoomRecomputeBase<LoomRecomputePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The policy of each target function (auto: from `policies`).
    SmallVector<RecomputePolicy> chosen;
    if (policy == RecomputePolicy::automatic) {
      if (functions.empty() || policies.size() != functions.size()) {
        module.emitError()
            << kPass
            << ": policy=auto needs one policy per function in `policies` "
               "(loomc --recompute auto chooses them by --device-memory); "
               "got "
            << policies.size() << " for " << functions.size()
            << " function(s)";
        return signalPassFailure();
      }
      for (const std::string &name : policies) {
        std::optional<RecomputePolicy> p = symbolizeRecomputePolicy(name);
        if (!p) {
          module.emitError() << kPass << ": unknown policy '" << name
                             << "' in `policies` (none, full, selective, "
                                "comm-free, or auto with `free-bytes`)";
          return signalPassFailure();
        }
        chosen.push_back(*p);
      }
      for (auto [index, p] : llvm::enumerate(chosen))
        if (p == RecomputePolicy::automatic &&
            (index >= freeBytes.size() || freeBytes[index] <= 0)) {
          module.emitError()
              << kPass << ": policy auto for @" << functions[index]
              << " recomputes single tensors and needs the bytes to free "
                 "(free-bytes: one entry per function, > 0)";
          return signalPassFailure();
        }
    }
    SmallVector<func::FuncOp> targets;
    if (functions.empty()) {
      for (auto func : module.getOps<func::FuncOp>())
        if (!func.isExternal() &&
            llvm::any_of(func.getBody().front(),
                         [](Operation &op) { return isBackward(&op); }))
          targets.push_back(func);
    } else {
      for (const std::string &name : functions) {
        FailureOr<func::FuncOp> found =
            findFunctionWithBody(module, name, kPass, "functions");
        if (failed(found))
          return signalPassFailure();
        func::FuncOp func = *found;
        if (!func.getBody().hasOneBlock() ||
            llvm::none_of(func.getBody().front(),
                          [](Operation &op) { return isBackward(&op); })) {
          func.emitError() << kPass << ": @" << name
                           << " is not a gradient function (no op has "
                              "loom.phase = \"backward\"); run loom-autodiff "
                              "or loom-pipeline-schedule first";
          return signalPassFailure();
        }
        targets.push_back(func);
      }
    }
    if (policy == RecomputePolicy::none)
      return;
    for (auto [index, func] : llvm::enumerate(targets)) {
      RecomputePolicy policy =
          chosen.empty() ? RecomputePolicy(this->policy) : chosen[index];
      if (policy == RecomputePolicy::none)
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError() << kPass << ": expects a single-block function";
        return signalPassFailure();
      }
      Analysis analysis;
      analysis.activation = findActivations(func);
      bool perTensor = policy == RecomputePolicy::automatic;
      if (policy == RecomputePolicy::selective)
        findAttentionCores(func, analysis);
      else {
        findLayers(func, analysis);
        if (analysis.layers.empty())
          func.emitWarning()
              << kPass << ": policy=" << stringifyRecomputePolicy(policy)
              << " recomputes ops inside layers, and no op of @"
              << func.getSymName()
              << " has a loom.layer mark: nothing is recomputed (run "
                 "loom-mark-layers on the forward function first)";
      }
      DenseSet<Operation *> recomputable;
      int64_t chosenBytes = 0;
      if (perTensor) {
        recomputable =
            chooseTensors(func, analysis, freeBytes[index], chosenBytes);
      } else {
        for (Operation &op : func.getBody().front())
          if (isRecomputable(&op, policy, analysis))
            recomputable.insert(&op);
      }
      Counts counts = recompute(func, policy, analysis, recomputable);
      Builder b(func.getContext());
      SmallVector<NamedAttribute> fields{
          b.getNamedAttr("policy",
                         b.getStringAttr(stringifyRecomputePolicy(policy))),
          b.getNamedAttr("ops", b.getI64IntegerAttr(counts.ops)),
          b.getNamedAttr("collectives",
                         b.getI64IntegerAttr(counts.collectives)),
          b.getNamedAttr("flops", b.getI64IntegerAttr(counts.flops))};
      if (perTensor)
        fields.push_back(
            b.getNamedAttr("bytes", b.getI64IntegerAttr(chosenBytes)));
      LoomDialect::RecomputeAttrHelper(func.getContext())
          .setAttr(func, b.getDictionaryAttr(fields));
    }
  }
};

} // namespace
